"""Fault rules: plain data that scenario files can declare.

A rule says *what* fails (``code``), *when* (``match``, ``skip``, ``times``,
``probability``) and *how* it is delivered (``delivery: sync|async``, ``status``,
``retry_after``, ``latency``).  Example::

    {"code": "ZonalAllocationFailed", "match": {"size": "Standard_D2s_v3", "zone": "1"}, "times": 1}

Why it is built this way: docs/architecture/fakeazure.md."""
from __future__ import annotations

import fnmatch
import itertools
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Callable, Iterable, Mapping

from .arm import ARMError
from .catalog import capability

# Canonical codes and their aliases.
_ALIASES = {
    "familyquota": "FamilyQuota", "familycoresquota": "FamilyQuota", "skufamilyquota": "FamilyQuota",
    "vmfamilyquotaexceeded": "FamilyQuota",
    "regionalquota": "RegionalQuota", "totalregionalcoresquota": "RegionalQuota",
    "regionalcoresquota": "RegionalQuota",
    "lowpriorityquota": "LowPriorityQuota", "lowprioritycoresquota": "LowPriorityQuota",
    "spotquota": "LowPriorityQuota",
    "skunotavailable": "SkuNotAvailable",
    "zonalallocationfailed": "ZonalAllocationFailed",
    "allocationfailed": "AllocationFailed",
    "overconstrainedallocationrequest": "OverconstrainedAllocationRequest",
    "overconstrainedzonalallocationrequest": "OverconstrainedZonalAllocationRequest",
    "toomanyrequests": "TooManyRequests", "throttle": "TooManyRequests", "throttling": "TooManyRequests",
    "429": "TooManyRequests",
    "internalservererror": "InternalServerError", "servererror": "InternalServerError",
    "serviceunavailable": "ServiceUnavailable", "badgateway": "BadGateway",
    "gatewaytimeout": "GatewayTimeout",
    "latency": "Latency", "slow": "Latency", "slowresponse": "Latency",
    "spoteviction": "SpotEviction", "eviction": "SpotEviction", "evict": "SpotEviction",
    "requestdisallowedbypolicy": "RequestDisallowedByPolicy", "policy": "RequestDisallowedByPolicy",
    "policydeny": "RequestDisallowedByPolicy",
    "diskcontrollertypemismatch": "DiskControllerTypeMismatch", "diskcontrollermismatch":
    "DiskControllerTypeMismatch", "r09": "DiskControllerTypeMismatch",
}

ASYNC_BY_DEFAULT = {"ZonalAllocationFailed", "AllocationFailed", "OverconstrainedAllocationRequest",
                    "OverconstrainedZonalAllocationRequest"}
QUOTA_CODES = {"FamilyQuota", "RegionalQuota", "LowPriorityQuota"}
SERVER_CODES = {"InternalServerError": 500, "BadGateway": 502, "ServiceUnavailable": 503,
                "GatewayTimeout": 504}
# Azure Policy's deny: ARM refuses the write before any resource provider sees it, 403
# (https://learn.microsoft.com/azure/governance/policy/concepts/effect-deny; the error's shape:
# https://learn.microsoft.com/azure/automation/enforce-job-execution-hybrid-worker and
# https://learn.microsoft.com/troubleshoot/azure/azure-kubernetes/create-upgrade-delete/error-code-requestdisallowedbypolicy).
POLICY_CODE = "RequestDisallowedByPolicy"
# Rules evaluated around every request (before the handler runs).
REQUEST_CODES = {"TooManyRequests", "Latency", POLICY_CODE} | set(SERVER_CODES)
PROVISION_CODES = (ASYNC_BY_DEFAULT | QUOTA_CODES | {"SkuNotAvailable", "DiskControllerTypeMismatch"})

MATCH_KEYS = {"operation", "size", "zone", "priority", "resource_group", "name", "location", "method",
              "path", "body"}
# Keys known before a request body is parsed.
BASIC_KEYS = {"operation", "resource_group", "name", "location", "method", "path"}
_KEY_ALIASES = {"op": "operation", "sku": "size", "vm_size": "size", "vmsize": "size",
                "resourcegroup": "resource_group", "rg": "resource_group", "resource-group": "resource_group",
                "capacity_type": "priority", "capacitytype": "priority", "region": "location"}


def canonical_code(code: str, quota: str | None = None) -> str:
    if code == "OperationNotAllowed" and quota:
        return {"family": "FamilyQuota", "regional": "RegionalQuota", "lowpriority": "LowPriorityQuota",
                "low-priority": "LowPriorityQuota", "spot": "LowPriorityQuota"}.get(quota.lower(), code)
    return _ALIASES.get(str(code).replace("_", "").replace("-", "").lower(), str(code))


def _norm_priority(v: str) -> str:
    v = str(v).strip().lower()
    return {"on-demand": "regular", "ondemand": "regular", "regular": "regular", "spot": "spot",
            "low": "spot", "lowpriority": "spot"}.get(v, v)


def _norm_zone(v: Any) -> str:
    v = "" if v is None else str(v).strip()
    if v.lower() in ("", "0", "regional", "none"):
        return ""
    return v[-1] if "-" in v else v  # "eastus-1" -> "1" (Karpenter's zone label form)


@dataclass
class Fault:
    code: str
    match: dict = field(default_factory=dict)
    times: int | None = None
    probability: float | None = None
    skip: int = 0
    delivery: str | None = None  # "sync" | "async"
    status: int | None = None
    message: str | None = None
    target: str | None = None
    retry_after: int | None = None
    latency: float | None = None
    after_seconds: float | None = None  # SpotEviction: evict once the VM is this old
    limit: int | None = None  # quota faults: "Current Limit" in the message
    usage: int | None = None  # quota faults: "Current Usage" in the message
    quota: str | None = None
    # RequestDisallowedByPolicy: the assignment and definition the error names (policy_error)
    policy: dict | None = None
    id: int = 0
    seen: int = 0
    fired: int = 0

    def __post_init__(self) -> None:
        self.code = canonical_code(self.code, self.quota)
        self.match = {_KEY_ALIASES.get(k.lower(), k.lower()): v for k, v in (self.match or {}).items()}
        unknown = set(self.match) - MATCH_KEYS
        if unknown:
            raise ValueError(f"fault {self.code}: unknown match keys {sorted(unknown)}; "
                             f"allowed: {sorted(MATCH_KEYS)}")
        if self.delivery is not None and self.delivery not in ("sync", "async"):
            raise ValueError(f"fault {self.code}: delivery must be 'sync' or 'async', not {self.delivery!r}")
        if self.probability is not None and not 0.0 <= float(self.probability) <= 1.0:
            raise ValueError(f"fault {self.code}: probability must be within [0, 1]")
        if self.times is not None and int(self.times) < 0:
            raise ValueError(f"fault {self.code}: times must be >= 0")
        if self.code in SERVER_CODES and self.status is None:
            self.status = SERVER_CODES[self.code]
        if "body" in self.match:
            check_body_conditions(self.match["body"])
        if self.policy is not None:
            if not isinstance(self.policy, Mapping):
                raise ValueError(f"fault {self.code}: policy must be a mapping of {sorted(POLICY_KEYS)}")
            unknown = set(self.policy) - POLICY_KEYS
            if unknown:
                raise ValueError(f"fault {self.code}: unknown policy keys {sorted(unknown)}; allowed: {sorted(POLICY_KEYS)}")

    # -- classification --------------------------------------------------------------
    @property
    def kind(self) -> str:
        if self.code == "SpotEviction":
            return "eviction"
        if self.delivery == "async" and self.code != "Latency":
            return "provision"
        if self.code in REQUEST_CODES:
            return "request"
        if (self.status is not None and int(self.status) >= 500 and self.code not in PROVISION_CODES
                and self.delivery != "async"):
            return "request"
        return "provision"

    @property
    def default_operation(self) -> str:
        return "vm.create" if self.kind == "provision" else "*"

    def effective_delivery(self) -> str:
        if self.delivery:
            return self.delivery
        return "async" if self.code in ASYNC_BY_DEFAULT else "sync"

    def needs_body(self) -> bool:
        return bool(set(self.match) - BASIC_KEYS)

    @property
    def exhausted(self) -> bool:
        return self.times is not None and self.fired >= int(self.times)

    # -- matching ------------------------------------------------------------------
    def matches(self, ctx: Mapping[str, Any]) -> bool:
        # Azure/karpenter-provider-azure#616: only an NVMe-only size booted from a SCSI image fails.
        if self.code == "DiskControllerTypeMismatch" and not ctx.get("disk_controller_mismatch"):
            return False
        op_pat = self.match.get("operation", self.default_operation)
        if not _match_any(op_pat, ctx.get("operation", "")):
            return False
        # Azure Policy evaluates resource writes (PUT, PATCH), not reads or deletes
        # (https://learn.microsoft.com/azure/governance/policy/concepts/effect-deny)
        if self.code == POLICY_CODE and "method" not in self.match and ctx.get("method") not in ("PUT", "PATCH"):
            return False
        for key, pat in self.match.items():
            if key == "operation":
                continue
            if key not in ctx:
                return False
            val = ctx[key]
            if key == "body":
                if not body_matches(val, pat):
                    return False
                continue
            if key == "zone":
                pats = pat if isinstance(pat, (list, tuple)) else [pat]
                if _norm_zone(val) not in {_norm_zone(p) for p in pats}:
                    return False
            elif key == "priority":
                pats = pat if isinstance(pat, (list, tuple)) else [pat]
                if _norm_priority(val) not in {_norm_priority(p) for p in pats}:
                    return False
            elif not _match_any(pat, "" if val is None else str(val)):
                return False
        return True

    def to_dict(self) -> dict:
        d = {k: v for k, v in asdict(self).items() if v not in (None, {}) or k in ("code",)}
        return d


def _match_any(pat: Any, value: str) -> bool:
    pats = pat if isinstance(pat, (list, tuple, set)) else [pat]
    v = value.lower()
    return any(fnmatch.fnmatchcase(v, str(p).lower()) for p in pats)


# -- request-body conditions (Azure Policy's vocabulary) ------------------------------------------
BODY_OPERATORS = ("equals", "notEquals", "in", "notIn", "exists", "like", "notLike")
_SEGMENT = re.compile(r"^([^\[\]]+)((?:\[(?:\*|\d+)\])*)$")
_MISSING = object()


def _parse_path(path: str) -> list[tuple[str, list[str]]]:
    if not isinstance(path, str) or not path:
        raise ValueError(f"body path {path!r}: expected a dotted path such as properties.securityProfile.encryptionAtHost")
    if "/" in path:
        raise ValueError(f"body path {path!r}: give the path in the request body (properties.x.y), not a policy alias")
    out = []
    for seg in path.split("."):
        m = _SEGMENT.match(seg)
        if not m:
            raise ValueError(f"body path {path!r}: bad segment {seg!r} (a name, optionally [*] or [N])")
        out.append((m.group(1), re.findall(r"\[(\*|\d+)\]", m.group(2))))
    return out


def _condition(cond: Any) -> tuple[str, Any]:
    """(operator, target) of a condition: a bare value is `equals`."""
    if isinstance(cond, Mapping):
        if len(cond) != 1 or next(iter(cond)) not in BODY_OPERATORS:
            raise ValueError(f"body condition {dict(cond)!r}: one of {', '.join(BODY_OPERATORS)} (or a bare value)")
        op, target = next(iter(cond.items()))
        if op in ("in", "notIn") and not isinstance(target, (list, tuple)):
            raise ValueError(f"body condition {op}: expects a list, not {target!r}")
        if op == "exists" and not isinstance(target, bool) and str(target).lower() not in ("true", "false"):
            raise ValueError(f"body condition exists: expects true or false, not {target!r}")
        return op, target
    if isinstance(cond, (list, tuple)):
        return "in", list(cond)
    return "equals", cond


def check_body_conditions(conds: Any) -> None:
    """Raise ValueError unless `conds` is `{dotted path: condition}` with conditions of BODY_OPERATORS."""
    if not isinstance(conds, Mapping) or not conds:
        raise ValueError("match.body: expected {<path in the request body>: <condition>}, e.g. "
                         "{properties.securityProfile.encryptionAtHost: {notEquals: true}}")
    for path, cond in conds.items():
        _parse_path(path)
        _condition(cond)


def _values_at(node: Any, steps: list[tuple[str, list[str]]]) -> list[Any]:
    """Every value at the path (`[*]` fans out); a missing field is _MISSING. ARM property names are
    case-insensitive (https://learn.microsoft.com/azure/azure-resource-manager/management/resource-name-rules)."""
    if not steps:
        return [node]
    (name, indexes), rest = steps[0], steps[1:]
    if not isinstance(node, Mapping):
        return [_MISSING]
    key = next((k for k in node if str(k).lower() == name.lower()), None)
    if key is None:
        return [_MISSING]
    nodes = [node[key]]
    for ix in indexes:
        nxt = []
        for n in nodes:
            if not isinstance(n, list):
                nxt.append(_MISSING)
            elif ix == "*":
                nxt += n if n else [_MISSING]
            else:
                nxt.append(n[int(ix)] if int(ix) < len(n) else _MISSING)
        nodes = nxt
    out = []
    for n in nodes:
        out += [_MISSING] if n is _MISSING else _values_at(n, rest)
    return out


def _text(v: Any) -> str:
    if v is _MISSING or v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (dict, list)):
        return json.dumps(v, separators=(",", ":"), sort_keys=True).lower()
    return str(v).lower()


def _holds(op: str, target: Any, value: Any) -> bool:
    if op == "exists":
        return (value is not _MISSING and value is not None) == (str(target).lower() == "true")
    if op in ("equals", "notEquals"):
        eq = value is not _MISSING and _text(value) == _text(target)
        return eq if op == "equals" else not eq
    if op in ("in", "notIn"):
        hit = value is not _MISSING and _text(value) in {_text(t) for t in target}
        return hit if op == "in" else not hit
    like = value is not _MISSING and fnmatch.fnmatchcase(_text(value), _text(target))
    return like if op == "like" else not like


def body_condition(body: Any, path: str, cond: Any) -> tuple[bool, list[Any]]:
    """(holds, the values found). With `[*]` every element must hold, as Azure Policy evaluates a
    condition on an array alias (https://learn.microsoft.com/azure/governance/policy/concepts/definition-structure-alias#understanding-the-array-alias)."""
    op, target = _condition(cond)
    values = _values_at(body, _parse_path(path))
    return all(_holds(op, target, v) for v in values), [None if v is _MISSING else v for v in values]


def body_matches(body: Any, conds: Mapping) -> bool:
    """Every condition holds for the request body (a body that is no JSON object holds none)."""
    if not isinstance(body, Mapping):
        return False
    return all(body_condition(body, path, cond)[0] for path, cond in conds.items())


def evaluated_expressions(body: Any, conds: Mapping) -> list[dict]:
    """The conditions as Azure Policy's `evaluationDetails.evaluatedExpressions` entries."""
    out = []
    for path, cond in conds.items():
        op, target = _condition(cond)
        holds, values = body_condition(body, path, cond)
        entry = {"result": "True" if holds else "False", "expressionKind": "Field", "expression": path, "path": path}
        if op != "exists" and any(v is not None for v in values):
            entry["expressionValue"] = values[0] if len(values) == 1 else values
        entry["targetValue"] = target
        entry["operator"] = op[0].upper() + op[1:]
        out.append(entry)
    return out


POLICY_KEYS = {"assignment", "assignmentId", "assignmentDisplayName", "definition", "definitionId",
               "definitionDisplayName", "effect", "reason", "scope"}


class PolicyDisallowed(ARMError):
    """Azure Policy's deny, in ARM's envelope with `additionalInfo` (ARMError has no such field)."""

    def __init__(self, message: str, target: str, additional_info: list[dict]):
        super().__init__(POLICY_CODE, message, 403, target=target)
        self.additional_info = additional_info

    def error_body(self) -> dict:
        err = super().error_body()
        err["additionalInfo"] = self.additional_info
        return err


def policy_error(f: Fault, ctx: Mapping[str, Any]) -> PolicyDisallowed:
    """403 RequestDisallowedByPolicy as ARM answers a write an assigned deny policy refuses. Message:
    `Resource '<name>' was disallowed by policy. Policy identifiers: '<json>'.`, or with the assignment's
    non-compliance message `... Reasons: '<message>'. See error details for policy resource IDs.`; one
    `additionalInfo` entry of type PolicyViolation with the assignment, definition and evaluated
    expressions (shapes: https://learn.microsoft.com/azure/automation/enforce-job-execution-hybrid-worker,
    https://learn.microsoft.com/azure/governance/policy/concepts/assignment-structure#non-compliance-messages).
    Ids default to a custom definition and an assignment at the subscription."""
    p = dict(f.policy or {})
    m = re.search(r"/subscriptions/([^/]+)", str(ctx.get("path") or ""), re.I)
    sub = m.group(1) if m else "00000000-0000-0000-0000-000000000000"
    scope = p.get("scope") or f"/subscriptions/{sub}"
    assignment = p.get("assignment") or "deny-policy"
    assignment_id = p.get("assignmentId") or f"{scope}/providers/Microsoft.Authorization/policyAssignments/{assignment}"
    definition = p.get("definition") or assignment
    definition_id = p.get("definitionId") or (definition if definition.startswith("/") else
                                              f"/subscriptions/{sub}/providers/Microsoft.Authorization/policyDefinitions/{definition}")
    definition_name = definition_id.rsplit("/", 1)[-1]
    shown_assignment = p.get("assignmentDisplayName") or assignment
    shown_definition = p.get("definitionDisplayName") or definition_name
    name = str(ctx.get("name") or "")
    reason = p.get("reason") or f.message
    if reason:
        message = f"Resource '{name}' was disallowed by policy. Reasons: '{reason}'. See error details for policy resource IDs."
    else:
        ids = [{"policyAssignment": {"name": shown_assignment, "id": assignment_id},
                "policyDefinition": {"name": shown_definition, "id": definition_id}}]
        message = (f"Resource '{name}' was disallowed by policy. Policy identifiers: "
                   f"'{json.dumps(ids, separators=(',', ':'))}'.")
    info: dict[str, Any] = {}
    if "body" in f.match:
        info["evaluationDetails"] = {"evaluatedExpressions": evaluated_expressions(ctx.get("body"), f.match["body"])}
    info.update({
        "policyDefinitionId": definition_id, "policyDefinitionName": definition_name,
        "policyDefinitionDisplayName": shown_definition, "policyDefinitionEffect": p.get("effect") or "Deny",
        "policyAssignmentId": assignment_id, "policyAssignmentName": assignment,
        "policyAssignmentDisplayName": shown_assignment, "policyAssignmentScope": scope,
        "policyAssignmentParameters": {}})
    return PolicyDisallowed(message, f.target or name, [{"type": "PolicyViolation", "info": info}])


def make_fault(spec: "Fault | Mapping[str, Any]") -> Fault:
    """Build a :class:`Fault` from a YAML-like dict (unknown keys are an error)."""
    if isinstance(spec, Fault):
        return spec
    if not isinstance(spec, Mapping):
        raise TypeError(f"a fault must be a dict or Fault, not {type(spec).__name__}")
    data = dict(spec)
    if "code" not in data:
        raise ValueError(f"fault needs a 'code': {data!r}")
    allowed = {f for f in Fault.__dataclass_fields__} - {"id", "seen", "fired"}
    extra = set(data) - allowed
    if extra:
        raise ValueError(f"fault {data['code']}: unknown keys {sorted(extra)}; allowed: {sorted(allowed)}")
    return Fault(**data)


class FaultEngine:
    """Holds rules and decides which fires.  Not thread-safe by itself: the state's lock
    serialises every call."""

    def __init__(self, rng):
        self.rng = rng
        self.rules: list[Fault] = []
        self.log: list[dict] = []
        self.held = False                 # request and create rules neither count nor fire (FakeAzure.faults_held)
        self.held_names: frozenset[str] = frozenset()   # ... for requests on resources of these names only
        self._ids = itertools.count(1)    # per fake, so a run's result does not depend on earlier runs

    def add(self, spec) -> Fault:
        f = make_fault(spec)
        if not f.id:
            f.id = next(self._ids)
        self.rules.append(f)
        return f

    def extend(self, specs: Iterable) -> list[Fault]:
        return [self.add(s) for s in specs]

    def clear(self) -> None:
        self.rules.clear()
        self.log.clear()

    def settled(self) -> tuple | None:
        """Which request and create rules still answer, when no such rule counts towards a `times` or
        `skip` or draws a `probability`: a later request meets these rules as an earlier one did while
        the value stays the same (a rule used up in between changes it). None while some rule still
        counts or draws. Spot evictions, on the clock, are not asked."""
        live = [f for f in self.rules if f.kind != "eviction" and not f.exhausted]
        if any(f.times is not None or f.probability is not None or f.seen < int(f.skip or 0) for f in live):
            return None
        return tuple(f.id for f in live)

    def _candidates(self, kind: str, ctx: Mapping[str, Any], body_pass: bool | None):
        if self.held or str(ctx.get("name") or "").lower() in self.held_names:
            return
        for f in self.rules:
            if f.kind != kind or f.exhausted:
                continue
            if body_pass is not None and f.needs_body() != body_pass:
                continue
            if f.matches(ctx):
                yield f

    def fire(self, f: Fault, ctx: Mapping[str, Any]) -> bool:
        """Count ``f`` as seen for ``ctx``; True (and logged) when it decides to fire."""
        if self._fires(f):
            self._record(f, ctx)
            return True
        return False

    def _fires(self, f: Fault) -> bool:
        f.seen += 1
        if f.seen <= int(f.skip or 0):
            return False
        if f.probability is not None and self.rng.random() >= float(f.probability):
            return False
        f.fired += 1
        return True

    def first(self, kind: str, ctx: Mapping[str, Any], body_pass: bool | None = None) -> Fault | None:
        """The first matching rule of ``kind`` that decides to fire (later rules are not consulted)."""
        for f in list(self._candidates(kind, ctx, body_pass)):
            if self._fires(f):
                self._record(f, ctx)
                return f
        return None

    def request_phase(self, ctx: Mapping[str, Any], body_pass: bool | None) -> tuple[float, Fault | None]:
        """Latency rules all add up; the first throttling/5xx rule that fires ends the scan."""
        if not self.rules:
            return 0.0, None
        latency = 0.0
        for f in list(self._candidates("request", ctx, body_pass)):
            if not self._fires(f):
                continue
            self._record(f, ctx)
            latency += float(f.latency or 0.0)
            if f.code != "Latency":
                return latency, f
        return latency, None

    def _record(self, f: Fault, ctx: Mapping[str, Any]) -> None:
        self.log.append({"fault": f.id, "code": f.code, "operation": ctx.get("operation"),
                         "name": ctx.get("name")})

    def eviction_rules(self) -> list[Fault]:
        return [f for f in self.rules if f.kind == "eviction" and not f.exhausted]

    def to_list(self) -> list[dict]:
        return [f.to_dict() for f in self.rules]


# 5xx texts: (harness assumption, not in reference).
_SERVER_MESSAGES = {
    "InternalServerError": "The server encountered an internal error. Please retry the request.",
    "BadGateway": "The gateway did not receive a response from the service. Please retry the request.",
    "ServiceUnavailable": "The service is currently unavailable. Please retry the request.",
    "GatewayTimeout": "The gateway did not receive a response within the specified time period.",
}

# (fault, ctx, sku, parsed) -> the ARMError a provisioning fault stands for
ProvisionError = Callable[[Fault, dict, "dict | None", "dict | None"], ARMError]


class FaultService:
    """Faults as handlers use them (``ctx.faults``): raise the request-phase rule that fires,
    find the provisioning rule that fires for a write, and add up simulated latency.

    ``provision_error`` builds the error a provisioning rule stands for; the compute model
    provides it (it knows the SKU, the quota and CRP's wording)."""

    def __init__(self, engine: FaultEngine, provision_error: ProvisionError):
        self.engine = engine
        self.provision_error = provision_error
        self.pending_latency = 0.0  # simulated seconds of the request being served

    def check_request(self, ctx: dict, body_pass: bool) -> None:
        """Raise the throttling/5xx rule that fires for this request
        (https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling;
        https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors, azure-core
        1.41.0 azure/core/pipeline/policies/_retry.py)."""
        latency, f = self.engine.request_phase(ctx, body_pass)
        self.pending_latency += latency
        if f is None:
            return
        if f.code == POLICY_CODE:
            err = policy_error(f, ctx)
            if f.status:
                err.status = int(f.status)
            raise err
        status = int(f.status or (429 if f.code == "TooManyRequests" else SERVER_CODES.get(f.code, 500)))
        headers = {}
        if f.code == "TooManyRequests":
            # Retry-After (integer seconds) makes SDKs retry (azure-core 1.41.0
            # azure/core/pipeline/policies/_retry.py RetryPolicy.get_retry_after).
            headers["Retry-After"] = str(int(f.retry_after if f.retry_after is not None else 10))
            headers["x-ms-ratelimit-remaining-subscription-reads"] = "0"
            # Throttling text: (harness assumption, not in reference;
            # https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors says
            # only
            # "throttling";
            # https://learn.microsoft.com/azure/azure-resource-manager/management/request-limits-and-throttling)
            msg = f.message or ("The request is being throttled as the limit has been reached for operation type - "
                                f"{'Write' if ctx.get('method') in ('PUT', 'DELETE', 'PATCH') else 'Read'}"
                                "_ObservationWindow_00:05:00. For more information, see - "
                                "https://aka.ms/srpthrottlinglimits")
            raise ARMError("TooManyRequests", msg, status, headers=headers)
        if f.retry_after is not None:
            headers["Retry-After"] = str(int(f.retry_after))
        raise ARMError(f.code, f.message or _SERVER_MESSAGES.get(f.code, f"Injected fault {f.code}."), status,
                       target=f.target, headers=headers)

    def provision(self, ctx: dict, sku: dict | None = None, parsed: dict | None = None) -> ARMError | None:
        """Fire the first provisioning fault rule that matches a write.  A synchronous fault is
        raised here; an asynchronous one is returned for the operation to deliver
        (https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors says which
        is which; the async path is the Failed status of
        https://learn.microsoft.com/azure/azure-resource-manager/management/async-operations).  None: no
        fault fired."""
        ctx = dict(ctx)
        if sku is not None and parsed is not None:
            ctx["disk_controller_mismatch"] = disk_controller_mismatch(sku, parsed)
        f = self.engine.first("provision", ctx)
        if f is None:
            return None
        self.pending_latency += float(f.latency or 0.0)
        err = self.provision_error(f, ctx, sku, parsed)
        if f.message:
            err.message = f.message
        if f.target:
            err.target = f.target
        if f.effective_delivery() == "async":
            return err
        if f.status:
            err.status = int(f.status)
            raise err
        raise err.as_sync()  # e.g. an allocation failure forced to arrive synchronously


def disk_controller_mismatch(sku: dict, parsed: dict) -> bool:
    """Azure/karpenter-provider-azure#616: an NVMe-only size (``DiskControllerTypes`` without SCSI) booted
    without ``storageProfile.diskControllerType: NVMe``."""
    ctrl = (capability(sku, "DiskControllerTypes") or "").replace(" ", "").lower().split(",")
    return ctrl != [""] and "scsi" not in ctrl and (parsed.get("disk_controller") or "").lower() != "nvme"
