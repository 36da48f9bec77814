"""Compute quota (usages): per-family, regional and low-priority (Spot) core limits, and
the cores the VMs hold against them.

Model: a VM consumes its SKU family's quota and the regional ``cores`` total (Spot VMs
consume ``lowPriorityCores`` instead) from PUT acceptance until it is deleted, evicted or its
creation fails (github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instancetype/instancetypes.go
createOfferings).  Documented usages API:
https://learn.microsoft.com/rest/api/compute/usage/list
"""
from __future__ import annotations

from typing import TYPE_CHECKING

from .. import catalog as cat
from ..arm import ARMError
from . import exceptions as exc
from .skus import SkuCatalog

if TYPE_CHECKING:  # pragma: no cover
    from .models import VirtualMachine

DEFAULT_LIMIT = 100000  # quota limit when none was configured (effectively unlimited)
VM_COUNT_LIMIT = 25000


# what decides the cores a VM holds against which quota (VirtualMachine.__setattr__ reports their changes)
HELD_FIELDS = frozenset({"holds_quota", "vcpus", "family", "location", "priority"})


class HeldCores:
    """The cores the compute model's VMs hold, per (region, family, spot), kept as they change: a create checks
    quota against these totals, not a sum over every VM (which made seeding N VMs N x N)."""

    def __init__(self) -> None:
        self.cores: dict[tuple[str, str, bool], int] = {}

    @staticmethod
    def _key(vm: "VirtualMachine") -> tuple[str, str, bool]:
        return vm.location.lower(), vm.family.lower(), vm.spot

    def add(self, vm: "VirtualMachine") -> None:
        if vm.holds_quota:
            k = self._key(vm)
            self.cores[k] = self.cores.get(k, 0) + vm.vcpus

    def drop(self, vm: "VirtualMachine") -> None:
        if vm.holds_quota:
            k = self._key(vm)
            self.cores[k] -= vm.vcpus

    def track(self, vm: "VirtualMachine") -> None:
        """`vm` entered the model's VMs."""
        object.__setattr__(vm, "_held", self)
        self.add(vm)

    def forget(self, vm: "VirtualMachine") -> None:
        """`vm` left the model's VMs."""
        if vm.__dict__.get("_held") is self:
            self.drop(vm)
            object.__setattr__(vm, "_held", None)

    def usage(self, region: str, spot: bool, family: str | None = None) -> int:
        r, f = region.lower(), None if family is None else family.lower()
        return sum(n for (kr, kf, ks), n in self.cores.items() if kr == r and ks == spot and (f is None or kf == f))


class Quota:
    """Limits set by configuration; usage counted from ``vms`` (the compute model's own dict), through
    ``held``, which the model keeps as its VMs come, change and go."""

    def __init__(self, vms: "dict[tuple[str, str], VirtualMachine]", skus: SkuCatalog):
        self.vms = vms
        self.skus = skus
        self.held = HeldCores()
        # (region, family_lower) -> {"family": name, "limit": int|None, "current": int}
        self.family_quota: dict[tuple[str, str], dict] = {}
        self.regional_limit: dict[str, int] = {}
        self.lowpri_limit: dict[str, int] = {}

    def clear(self) -> None:
        self.family_quota.clear()
        self.regional_limit.clear()
        self.lowpri_limit.clear()

    def explicit(self, region: str, name: str) -> bool:
        """Whether the usage row ``name`` of ``region`` was configured (the snapshot lists those)."""
        n = name.lower()
        if n == "cores":
            return region in self.regional_limit
        if n == "lowprioritycores":
            return region in self.lowpri_limit
        return (region, n) in self.family_quota

    def set_usage(self, region: str, family: str, limit: int | None, current: int = 0) -> None:
        self.family_quota[(region.lower(), family.lower())] = {"family": family, "limit": limit,
                                                              "current": int(current)}

    def _family_entry(self, region: str, family: str) -> dict:
        return self.family_quota.get((region.lower(), family.lower())) or {"family": family, "limit": None,
                                                                          "current": 0}

    def family_limit(self, region: str, family: str) -> int:
        lim = self._family_entry(region, family)["limit"]
        return DEFAULT_LIMIT if lim is None else int(lim)

    def family_usage(self, region: str, family: str) -> int:
        base = self._family_entry(region, family)["current"]
        return base + self.held.usage(region, False, family)

    def regional_usage(self, region: str) -> int:
        base = sum(e["current"] for (r, _), e in self.family_quota.items() if r == region.lower())
        return base + self.held.usage(region, False)

    def lowpri_usage(self, region: str) -> int:
        return self.held.usage(region, True)

    def usage_rows(self, region: str) -> list[dict]:
        """The Compute usages list (https://learn.microsoft.com/rest/api/compute/usage/list): cores, lowPriorityCores,
        virtualMachines, then one entry per VM family of the region."""
        region = region.lower()
        rows = [
            _usage("cores", "Total Regional vCPUs", self.regional_usage(region),
                   self.regional_limit.get(region, DEFAULT_LIMIT)),
            _usage("lowPriorityCores", "Total Regional Spot vCPUs", self.lowpri_usage(region),
                   self.lowpri_limit.get(region, DEFAULT_LIMIT)),
            _usage("virtualMachines", "Virtual Machines",
                   sum(1 for vm in self.vms.values() if vm.location.lower() == region), VM_COUNT_LIMIT),
        ]
        families: dict[str, str] = {}
        for sku in self.skus.list(region):
            fam = cat.sku_family(sku)
            if fam:
                families.setdefault(fam.lower(), fam)
        for (r, fl), e in self.family_quota.items():
            if r == region:
                families.setdefault(fl, e["family"])
        for fl in sorted(families):
            fam = families[fl]
            rows.append(_usage(fam, _family_display(fam), self.family_usage(region, fam),
                               self.family_limit(region, fam)))
        return rows

    def check(self, sub: str, region: str, sku: dict, spot: bool, delta: int) -> None:
        """Real quota from usages (as karpenter-provider-azure v1.14.0 pkg/providers/quota/quota.go
        DefaultProvider.HasQuotaFor reads them; github.com/Azure/karpenter-provider-azure v1.14.0
        pkg/providers/instancetype/instancetypes.go createOfferings; messages
        https://learn.microsoft.com/azure/azure-resource-manager/troubleshooting/common-deployment-errors)."""
        if delta <= 0:
            return
        if spot:
            limit = self.lowpri_limit.get(region.lower(), DEFAULT_LIMIT)
            usage = self.lowpri_usage(region)
            if usage + delta > limit:
                raise exc.low_priority_quota(sub, region, limit, usage, delta)
            return
        fam = cat.sku_family(sku)
        if fam:
            limit = self.family_limit(region, fam)
            usage = self.family_usage(region, fam)
            if usage + delta > limit:
                raise exc.family_quota(sub, region, fam, limit, usage, delta)
        limit = self.regional_limit.get(region.lower(), DEFAULT_LIMIT)
        usage = self.regional_usage(region)
        if usage + delta > limit:
            raise exc.regional_quota(sub, region, limit, usage, delta)

    def fault_error(self, fault, sub: str, region: str, sku: dict, spot: bool) -> ARMError:
        """The error an injected quota fault raises: real numbers unless the rule overrides them."""
        need = cat.sku_vcpus(sku)
        if fault.code == "LowPriorityQuota":
            usage = self.lowpri_usage(region) if fault.usage is None else fault.usage
            limit = usage if fault.limit is None else fault.limit
            return exc.low_priority_quota(sub, region, limit, usage, need)
        if fault.code == "RegionalQuota":
            usage = self.regional_usage(region) if fault.usage is None else fault.usage
            limit = usage if fault.limit is None else fault.limit
            return exc.regional_quota(sub, region, limit, usage, need)
        fam = cat.sku_family(sku) or "standardFamily"
        usage = self.family_usage(region, fam) if fault.usage is None else fault.usage
        limit = usage if fault.limit is None else fault.limit
        return exc.family_quota(sub, region, fam, limit, usage, need)


def _usage(name: str, localized: str, current: int, limit: int) -> dict:
    return {"unit": "Count", "currentValue": int(current), "limit": int(limit),
            "name": {"value": name, "localizedValue": localized}}


def _family_display(fam: str) -> str:
    # "standardDSv3Family" -> "Standard DSv3 Family vCPUs" (typical localizedValue of
    # https://learn.microsoft.com/rest/api/compute/usage/list).
    if " " in fam:
        return f"{fam} vCPUs"
    return f"Standard {cat.family_core(fam)} Family vCPUs"
