"""Azure Resource Graph, the subset Karpenter-on-Azure v1.14.0 queries.

Its garbage-collection controllers and ``CloudProvider.List`` list the node VMs and NICs with
one KQL shape (pkg/providers/instance/azureresourcegraphlist.go ``getResourceListQueryBuilder``,
strings quoted by github.com/Azure/azure-kusto-go v0.16.1 kusto/kql ``QuoteString``)::

    Resources | where type == "microsoft.compute/virtualmachines"
              | where resourceGroup == "<node resource group, lowercased>"
              | where tags has_cs "karpenter.sh_nodepool"
              | where not(tags has_cs "karpenter.azure.com_aksmachine_nodeclaim")

Only that shape (any subset and order of those ``where`` clauses) is understood; anything else
is a 400.  Rows are the resources' ARM views with ARG's lowercased ``type`` and
``resourceGroup`` (the provider lowercases IDs it reads back, azureresourcegraphlist.go).

Resource Graph is eventually consistent (https://learn.microsoft.com/azure/governance/resource-graph/overview):
with ``lag`` seconds, a query sees the resources as they existed ``lag`` seconds ago on the
state clock (created before then; deleted ones still listed until ``lag`` has passed).
Changes to a resource that still exists are visible at once (harness simplification).
"""
from __future__ import annotations

import copy
import re
from dataclasses import dataclass

from ..arm import ARMError

VM_TYPE = "microsoft.compute/virtualmachines"
NIC_TYPE = "microsoft.network/networkinterfaces"

_STR = r'"((?:[^"\\]|\\.)*)"'
_CLAUSES = [
    ("type", re.compile(r"type\s*==\s*" + _STR + r"\s*$")),
    ("resourceGroup", re.compile(r"resourceGroup\s*==\s*" + _STR + r"\s*$")),
    ("has", re.compile(r"tags\s+has_cs\s+" + _STR + r"\s*$")),
    ("not_has", re.compile(r"not\s*\(\s*tags\s+has_cs\s+" + _STR + r"\s*\)\s*$")),
]


def invalid_query(detail: str) -> ARMError:
    # ARG's envelope for a query it cannot parse: BadRequest with InvalidQuery details
    # (shape from https://learn.microsoft.com/azure/governance/resource-graph/troubleshoot/general;
    # wording partly unverified).
    return ARMError("BadRequest", "Please provide below info when asking for support: timestamp, correlationId.",
                    400, details=[{"code": "InvalidQuery",
                                   "message": "Query is invalid. Please refer to the documentation for the Azure "
                                              "Resource Graph service and fix the error before retrying."},
                                  {"code": "UnsupportedQueryInFakeAzure", "message": detail}])


def _unquote(s: str) -> str:
    return re.sub(r"\\(.)", r"\1", s)


@dataclass(frozen=True)
class Query:
    """The parsed query: ``where`` clauses as (kind, value) pairs, all of which must hold."""

    clauses: tuple[tuple[str, str], ...]

    @classmethod
    def parse(cls, text: str) -> "Query":
        if not isinstance(text, str):
            raise invalid_query("query must be a string")
        parts = [p.strip() for p in text.split("|")]
        if not parts or parts[0] != "Resources":
            raise invalid_query(f"fakeazure serves only 'Resources | where ...' queries, not {text!r}")
        clauses = []
        for part in parts[1:]:
            m = re.match(r"where\s+(.*)$", part, re.DOTALL)
            if not m:
                raise invalid_query(f"unsupported operator in {part!r} (fakeazure serves only 'where')")
            cond = m.group(1).strip()
            for kind, rx in _CLAUSES:
                cm = rx.match(cond)
                if cm:
                    clauses.append((kind, _unquote(cm.group(1))))
                    break
            else:
                raise invalid_query(f"unsupported condition {cond!r}")
        return cls(tuple(clauses))

    def matches(self, row: dict) -> bool:
        tags = row.get("tags") or {}
        for kind, value in self.clauses:
            if kind == "type" and row.get("type") != value:
                return False
            if kind == "resourceGroup" and row.get("resourceGroup") != value:
                return False
            # has_cs on a property bag: a key or a value equal to the term, case-sensitively
            # (term matching simplified to whole keys/values; harness simplification)
            hit = value in tags or value in {str(v) for v in tags.values()}
            if kind == "has" and not hit:
                return False
            if kind == "not_has" and hit:
                return False
        return True


class ResourceGraph:
    """Reads the compute and network models (VMs, NICs and their removal records)."""

    def __init__(self, compute, network, clock, subscription: str, lag: float = 0.0):
        self.compute = compute
        self.network = network
        self.clock = clock
        self.subscription = subscription
        self.lag = float(lag)

    def _row(self, view: dict, rtype: str, rg: str) -> dict:
        row = copy.deepcopy(view)
        row["type"] = rtype
        row["resourceGroup"] = rg.lower()
        row["subscriptionId"] = self.subscription
        row.setdefault("tags", {})
        return row

    def rows(self) -> list[dict]:
        """Every VM and NIC visible ``lag`` seconds ago."""
        seen_at = self.clock.time() - self.lag
        out = []
        for vm in self.compute.list():
            if vm.created <= seen_at:
                out.append(self._row(self.compute.view(vm), VM_TYPE, vm.rg))
        for nic in self.network.list():
            if nic.created <= seen_at:
                out.append(self._row(self.network.view(nic), NIC_TYPE, nic.rg))
        if self.lag > 0:
            for removed, rtype in ((self.compute.removed, VM_TYPE), (self.network.removed, NIC_TYPE)):
                for created, gone, view in removed:
                    if created <= seen_at < gone:
                        rg = view["id"].split("/")[4] if view.get("id", "").count("/") > 4 else ""
                        out.append(self._row(view, rtype, rg))
        return out

    def query(self, text: str, subscriptions: list[str] | None) -> list[dict]:
        q = Query.parse(text)
        if subscriptions is not None and self.subscription.lower() not in {str(s).lower() for s in subscriptions}:
            return []
        return [r for r in self.rows() if q.matches(r)]
