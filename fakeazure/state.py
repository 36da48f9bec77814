"""``FakeAzure``: builds the models and offers the configuration API.

The models own their data (``compute``: SKUs, quota, VMs; ``network``: NICs; ``prices``);
route handlers see them through an :class:`~fakeazure.context.ArmContext`, and
:class:`~fakeazure.dispatch.Dispatcher` routes each request under one re-entrant lock, so the
loopback server can serve many threads (and through them, other processes) at once.
``handle`` is the single entry point both transports call: ``fakeazure.mock`` (``responses``,
in-process) and ``fakeazure.server`` (``http.server`` on 127.0.0.1).
"""
from __future__ import annotations

import contextlib
import copy
import random
import threading
from typing import Any, Iterable, Mapping

from . import catalog as cat
from .arm import FakeClock, Request, Response, ResourceGroups, WELL_KNOWN_SUBSCRIPTION, iso
from .compute import exceptions as compute_exc
from .compute.evictions import SpotEvictions
from .compute.galleries import CommunityGalleries
from .compute.models import ComputeModel
from .containerservice.models import ContainerServiceModel
from .context import ArmContext
from .dispatch import Dispatcher, RequestRecord
from .faults import Fault, FaultEngine, FaultService
from .lro import DEFAULT_RETRY_AFTER, Lro, parse_lro_mode
from .network.models import NetworkModel
from .network.topology import Topology
from .pricing.models import PriceBook
from .resourcegraph.models import ResourceGraph

__all__ = ["FakeAzure", "RequestRecord"]


class FakeAzure:
    """The fake's state: SKUs, prices, quota, VMs, NICs, operations, faults, request log.

    Parameters
    ----------
    region: default region (used by ``skus()``, quota setters, and as the catalog to
        load when neither ``skus`` nor ``catalog`` is given).
    subscription_id: the subscription the fake serves; other subscriptions get 404.
    seed: seeds GUIDs and fault probabilities: same seed, same run.
    skus: ResourceSku dicts to serve instead of a bundled catalog.
    catalog: a catalog name (``"eastus"``) or a path (file/dir), or a list of them.
    lro: ``"immediate"`` (first status poll finishes), ``{"after_polls": N}``
        (default ``N=2``: one ``InProgress`` then ``Succeeded``) or ``"sync"`` (no
        long-running operations: 200 with the final state).
    clock: time source (default :class:`~fakeazure.arm.FakeClock`, which never sleeps).
    page_size: page ARM lists (SKUs, usages, VMs, NICs) by this many items (default: one page,
        as the real SKU API does).
    prices_page_size: Retail Prices page size (100 as the classic API).
    resource_graph_lag: seconds (state clock) before a VM/NIC change shows in Resource Graph.
    lro_retry_after: the ``Retry-After`` (integer seconds) sent while an operation runs, so SDK
        clients poll that often instead of every 30 s (default 1; None: no header).
    """

    def __init__(self, region: str = "southcentralus", subscription_id: str = WELL_KNOWN_SUBSCRIPTION,
                 seed: int = 0, skus: list[dict] | None = None, catalog: str | list | None = None,
                 lro: str | Mapping | None = None, clock=None, page_size: int | None = None,
                 prices_page_size: int = 100, faults: Iterable | None = None,
                 resource_groups: Iterable[str] | None = None, resource_graph_lag: float = 0.0,
                 lro_retry_after: int | None = DEFAULT_RETRY_AFTER):
        self.lock = threading.RLock()
        self.region = region.lower()
        self.subscription_id = subscription_id
        self.seed = seed
        self.rng = random.Random(seed)
        self._own_clock = clock is None
        self.clock = clock if clock is not None else FakeClock()
        self._clock_start = self.clock.time()
        self.network = NetworkModel(self.rng, self.clock)
        self.topology = Topology(self.network.known_refs, self.region)
        self.compute = ComputeModel(self.rng, self.clock, self.network)
        self.aks = ContainerServiceModel(self.rng, self.clock, self.compute)
        self.price_book = PriceBook(self.compute.skus.families, prices_page_size)
        self.faults = FaultEngine(self.rng)
        self.lro = Lro(self.rng, self.clock, subscription_id, lro, lro_retry_after)
        self.operations = self.lro.store
        self.spot_evictions = SpotEvictions(self.compute, self.faults, self.clock)
        self.ctx = ArmContext(
            subscription=subscription_id, region=self.region, compute=self.compute, network=self.network,
            topology=self.topology, galleries=CommunityGalleries(),
            resource_graph=ResourceGraph(self.compute, self.network, self.clock, subscription_id, resource_graph_lag),
            prices=self.price_book, faults=FaultService(self.faults, self._provision_error), lro=self.lro,
            resource_groups=ResourceGroups(resource_groups), page_size=page_size, aks=self.aks)
        self.dispatcher = Dispatcher(self.ctx, self, self.lock, self.rng, self.clock, self._tick)
        if skus is not None:
            self.add_skus(skus)
        if catalog is not None:
            for c in ([catalog] if isinstance(catalog, (str, bytes)) or hasattr(catalog, "__fspath__")
                      else catalog):
                self.load_catalog(c)
        if skus is None and catalog is None and self.region in cat.available_catalogs():
            self.load_catalog(self.region)
        self.add_faults(faults or [])

    def _provision_error(self, f: Fault, ctx: dict, sku: dict | None, parsed: dict | None):
        return self.compute.fault_error(f, ctx, sku, parsed, self.subscription_id, self.region)

    # ================================================================== settings
    @property
    def page_size(self) -> int | None:
        return self.ctx.page_size

    @page_size.setter
    def page_size(self, value: int | None) -> None:
        self.ctx.page_size = value

    @property
    def prices_page_size(self) -> int:
        return self.price_book.page_size

    @prices_page_size.setter
    def prices_page_size(self, value: int) -> None:
        self.price_book.page_size = int(value)

    @property
    def lro_after_polls(self) -> int | None:
        return self.lro.after_polls

    @property
    def resource_groups(self) -> set[str] | None:
        return self.ctx.resource_groups.names

    @property
    def requests(self) -> list[RequestRecord]:
        """``(method, path, status)`` of every request served (oldest dropped past ``max_log``)."""
        return self.dispatcher.requests

    @property
    def request_details(self) -> list[dict]:
        return self.dispatcher.request_details

    @property
    def internal_errors(self) -> list[str]:
        return self.dispatcher.internal_errors

    # ================================================================== configuration
    def set_lro(self, lro: str | Mapping | None, retry_after_ms: int | None = None) -> None:
        """Change LRO progression (see class docstring); `retry_after_ms` also sends that poll hint in
        milliseconds on running operations (fakeazure/lro.py RETRY_AFTER_MS_HEADER)."""
        with self.lock:
            self.lro.after_polls = parse_lro_mode(lro)
            self.lro.retry_after_ms = retry_after_ms

    def set_operation_seconds(self, kind: str, seconds: float | None) -> None:
        """Operations of ``kind`` (``vm.delete``, ``vm.create``, ...) run ``seconds`` on the state clock, however
        often they are polled (None: back to the LRO mode's polls). With ``lro="sync"`` there is no operation."""
        with self.lock:
            if seconds is None:
                self.lro.seconds.pop(kind, None)
            else:
                self.lro.seconds[kind] = float(seconds)

    def load_catalog(self, name_or_path) -> list[dict]:
        """Load a bundled catalog by name or a catalog file/dir; returns the SKUs added."""
        added = []
        with self.lock:
            for f in cat.resolve_catalog(name_or_path):
                skus, prices = cat.load_catalog_file_shared(f)  # add_skus copies
                added += self.add_skus(skus)
                for region, table in prices.items():
                    self.set_prices(region, table)
        return added

    def add_skus(self, skus: Iterable[dict]) -> list[dict]:
        """Add (or replace, by region and name) ResourceSku dicts."""
        with self.lock:
            return self.compute.skus.add(skus, self.region)

    def restrict_sku(self, size: str, zones: Iterable[str] | None = None, region: str | None = None) -> dict:
        """Take a VM size away from the subscription as Azure does: a NotAvailableForSubscription
        restriction on its ResourceSku (https://learn.microsoft.com/rest/api/compute/resource-skus/list
        `restrictions`), of type Location for the whole region, or of type Zone for `zones` ("1" or
        "southcentralus-1"). What lists SKUs afterwards sees it (github.com/Azure/skewer@v0.0.24/sku.go
        HasLocationRestriction, AvailabilityZones) and a VM create of it is refused (SkuNotAvailable).
        KeyError for a size the region's catalog does not have. Returns a copy of the SKU as it now reads."""
        with self.lock:
            where = (region or self.region).lower()
            sku = self.compute.skus.find(where, size)
            if sku is None:
                raise KeyError(size)
            restriction: dict = {"type": "Location", "values": [where], "reasonCode": "NotAvailableForSubscription",
                                 "restrictionInfo": {"locations": [where]}}
            if zones:
                restriction = {"type": "Zone", "values": [where], "reasonCode": "NotAvailableForSubscription",
                               "restrictionInfo": {"locations": [where],
                                                   "zones": sorted({str(z).rsplit("-", 1)[-1] for z in zones})}}
            changed = {**sku, "restrictions": [*sku.get("restrictions", []), restriction]}
            self.compute.skus.replace(sku, changed)       # the stored dicts are shared (compute/skus.py)
            return copy.deepcopy(changed)

    @property
    def sku_changes(self) -> int:
        """How often the SKU catalog changed (added to, a size restricted): a harness that read the list when it
        was N reads it again only to see a change when it is no longer N (a simulation's SKU refresh timer)."""
        return self.compute.skus.changes

    def skus(self, region: str | None = None) -> list[dict]:
        """The catalog of ``region`` (default: the state's region; ``"*"``: every region)."""
        with self.lock:
            return copy.deepcopy(self.compute.skus.list(None if region == "*" else (region or self.region)))

    @property
    def prices(self) -> dict[str, dict[str, dict]]:
        """region -> {sku: {"on-demand": float, "spot": float}} (a copy)."""
        with self.lock:
            return copy.deepcopy(self.price_book.table)

    def region_prices(self, region: str) -> dict[str, dict]:
        """One region's table, {sku: {"on-demand": float, "spot": float}}: a copy of the table whose entries
        are the price book's own, shared (``set_prices`` replaces an entry, never changes one): read them,
        never change them. Cheaper than ``prices`` when one region is wanted."""
        with self.lock:
            return dict(self.price_book.table.get(region.lower()) or {})

    def set_prices(self, region: str, table: Mapping[str, Mapping[str, float]], replace: bool = False) -> None:
        with self.lock:
            self.price_book.set(region, table, replace)

    def set_usage(self, family: str, limit: int | None, current: int = 0, region: str | None = None) -> None:
        """Quota for a VM family: ``limit`` cores, ``current`` cores already used elsewhere."""
        with self.lock:
            self.compute.quota.set_usage(region or self.region, family, limit, current)

    def publish_node_image(self, version: str) -> None:
        """AKS releases node image `version`: a new version of every community gallery image, published now
        on this fake's clock (the newest, which the provider lists next)."""
        import datetime
        when = datetime.datetime.fromtimestamp(self.clock.time(), datetime.timezone.utc).isoformat()
        with self.lock:
            self.ctx.galleries.publish(version, when)

    def set_regional_quota(self, limit: int, region: str | None = None) -> None:
        with self.lock:
            self.compute.quota.regional_limit[(region or self.region).lower()] = int(limit)

    def set_low_priority_quota(self, limit: int, region: str | None = None) -> None:
        with self.lock:
            self.compute.quota.lowpri_limit[(region or self.region).lower()] = int(limit)

    def usages(self, region: str | None = None) -> list[dict]:
        with self.lock:
            return copy.deepcopy(self.compute.quota.usage_rows(region or self.region))

    def add_resource_group(self, name: str) -> None:
        """Opt into resource-group checks: once any group is added, others are 404."""
        with self.lock:
            self.ctx.resource_groups.add(name)

    def add_subnet(self, subnet_id: str) -> None:
        """Opt into subnet reference checks on NIC PUT (400 InvalidResourceReference)."""
        with self.lock:
            self.network.known_refs["subnet"].add(subnet_id.lower())

    def add_backend_pool(self, pool_id: str) -> None:
        """Register a load-balancer backend pool: NIC PUTs referencing other pools get 400, and
        its load balancer appears in the load-balancer list."""
        with self.lock:
            self.network.known_refs["pool"].add(pool_id.lower())
            self.topology.add_pool(pool_id)

    def set_network_security_groups(self, names: Iterable[str], resource_group: str | None = None) -> None:
        """The NSGs listed in ``resource_group`` (default: every group).  Without this, each group
        has exactly one ``aks-agentpool-<8 digits>-nsg``; give ``[]`` or two names to test
        Karpenter's "exactly one managed NSG" check."""
        with self.lock:
            self.topology.set_nsgs(list(names), resource_group)

    def set_resource_graph_lag(self, seconds: float) -> None:
        """Resource Graph answers as of ``seconds`` ago on the state clock (eventual consistency)."""
        with self.lock:
            self.ctx.resource_graph.lag = float(seconds)

    def add_network_security_group(self, nsg_id: str) -> None:
        with self.lock:
            self.network.known_refs["nsg"].add(nsg_id.lower())

    # ================================================================== faults
    def add_fault(self, spec: Fault | Mapping[str, Any]) -> Fault:
        """Add one fault rule (dict or :class:`~fakeazure.faults.Fault`)."""
        with self.lock:
            return self.faults.add(spec)

    def add_faults(self, specs: Iterable) -> list[Fault]:
        with self.lock:
            return self.faults.extend(specs)

    def clear_faults(self) -> None:
        with self.lock:
            self.faults.clear()

    def faults_settled(self) -> tuple | None:
        """FaultEngine.settled: the rules a repeated request meets, when they answer it as before."""
        with self.lock:
            return self.faults.settled()

    @contextlib.contextmanager
    def faults_held(self, names=None):
        """Within: no request or create fault rule counts a request or fires (`times` and `skip`
        are left for later; Spot eviction rules still run on the clock). What exists before a
        scenario starts (its existing nodes) was created before its faults began. `names`: only
        requests on resources of these names (case-insensitive) are held, everything else meets the
        faults - a live controller's own requests go on while one existing node is launched."""
        with self.lock:
            before = (self.faults.held, self.faults.held_names)
            if names is None:
                self.faults.held = True
            else:
                self.faults.held_names = before[1] | {str(n).lower() for n in names}
        try:
            yield self
        finally:
            with self.lock:
                self.faults.held, self.faults.held_names = before

    # ================================================================== inspection
    def add_agent_pool(self, resource_group: str, cluster: str, name: str, node_resource_group: str,
                       node_labels: Mapping[str, str] | None = None, mode: str = "Machines",
                       subnet_id: str | None = None, labeler=None) -> None:
        """An AKS cluster's agent pool the AKS Machine API provision modes create machines in (the provider's
        AKS_MACHINES_POOL_NAME; a pool in ``Machines`` mode, as provider v1.14.0 hack/deploy/add-aks-machines-pool.sh
        adds it). `node_labels`: what AKS writes on every node of the cluster besides each machine's own
        (containerservice/models.py aks_labels); `labeler(properties, sku)`: instead, the labels AKS writes on a
        machine's node; `subnet_id`: the subnet of a machine's NIC when the machine names none (default:
        aks-vnet/aks-subnet in the node resource group)."""
        from .containerservice.models import AgentPool
        with self.lock:
            self.aks.add_pool(AgentPool(resource_group, cluster, name, node_resource_group, self.region, mode,
                                        dict(node_labels or {}), subnet_id, labeler))

    def machines(self) -> list[dict]:
        """Every AKS machine as the machines API shows it."""
        with self.lock:
            self._tick()
            return [m.view(self.subscription_id) for m in self.aks.machines.values()]

    def set_machine_drift(self, name: str, action: str = "Recreate", reason: str = "") -> None:
        """AKS marks the machine `name` (of any pool) drifted: its status.driftAction and driftReason from now on,
        as AKS sets them after a change of the cluster's configuration (the provider's isMachineDrifted reads
        them). An unknown machine is Azure's not-found error."""
        from .containerservice import exceptions as aks_exc
        with self.lock:
            self._tick()
            found = [m for m in self.aks.machines.values() if m.name.lower() == name.lower()]
            if not found:
                raise aks_exc.not_found("Machine", name)
            for m in found:
                m.drift_action, m.drift_reason = action, (reason or None)

    def machine_vm_bodies(self) -> dict[str, dict]:
        """VM name -> the VM body AKS made for a machine, customData (the kubelet's bootstrap) kept. The bodies are
        shared, not copied: the kubelet stand-in reads them on every poll, and nothing changes one once made."""
        with self.lock:
            return dict(self.aks.bootstraps)

    def vms(self, resource_group: str | None = None) -> list[dict]:
        """VMs as ARM resources (the GET body, with ``provisioningState``)."""
        with self.lock:
            self._tick()
            return [self.compute.view(vm) for vm in self.compute.list(resource_group)]

    def nics(self, resource_group: str | None = None) -> list[dict]:
        with self.lock:
            self._tick()
            return [self.network.view(n) for n in self.network.list(resource_group)]

    def vm_names(self, rg: str) -> set[str]:
        """The names of the VMs in resource group `rg`, lower case: one look for many VMs (get_vm builds each
        one's view)."""
        with self.lock:
            self._tick()
            return {vm.name.lower() for vm in self.compute.list(rg)}

    def get_vm(self, rg: str, name: str) -> dict | None:
        with self.lock:
            self._tick()
            vm = self.compute.get(rg, name)
            return None if vm is None else self.compute.view(vm, "instanceView")

    def get_nic(self, rg: str, name: str) -> dict | None:
        with self.lock:
            self._tick()
            nic = self.network.get(rg, name)
            return None if nic is None else self.network.view(nic)

    def evict(self, rg: str, name: str) -> dict:
        """Evict a Spot VM now (as Azure does when it needs the capacity back)."""
        with self.lock:
            vm = self.compute.require(rg, name)
            if not vm.spot:
                raise compute_exc.eviction_not_spot(rg, name, vm.priority or "Regular")
            return dict(self.compute.evict(vm, "manual"))

    @property
    def evictions(self) -> list[dict]:
        with self.lock:
            self._tick()
            return copy.deepcopy(self.compute.evictions)

    def running_operations(self, kind: str | None = None) -> list[dict]:
        """The operations not finished yet (of ``kind``, when given), with when each falls due on the state clock:
        what a harness waits for while Azure is still at work (a VM's deletion held by ``set_operation_seconds``)."""
        with self.lock:
            self._tick()
            return [{**op.to_dict(), "due": op.due} for op in self.operations.pending() if kind in (None, op.kind)]

    def next_eviction(self) -> float | None:
        """When the clock next brings a Spot eviction a rule makes (``SpotEvictions.next_due``), so a
        simulation moving the shared clock can stop there; None when no rule will evict a running VM."""
        with self.lock:
            return self.spot_evictions.next_due()

    def _tick(self) -> None:
        """What time did since the last look: operations that fell due finish, Spot VMs whose
        eviction time came are evicted. Called under the lock, before serving and inspecting."""
        self.operations.complete_due(self.clock.time())
        self.spot_evictions.apply()

    def settle(self) -> int:
        """Complete every pending long-running operation; returns how many."""
        with self.lock:
            return self.operations.settle()

    def advance(self, seconds: float) -> None:
        """Move the (fake) clock forward: operations that fall due finish, time-based faults (Spot
        eviction) apply."""
        with self.lock:
            self.clock.advance(seconds)
            self._tick()

    def reset(self) -> None:
        """Forget resources, operations, faults, quota settings and the request log; keep
        the catalogs and prices.  Re-seeds the RNG (and rewinds the default clock)."""
        with self.lock:
            self.compute.clear()
            self.aks.clear()
            self.aks.pools.clear()
            self.compute.quota.clear()
            self.network.clear()
            self.topology.clear()
            self.operations.clear()
            self.faults.clear()
            self.dispatcher.clear_log()
            self.spot_evictions.clear()
            self.rng.seed(self.seed)
            if self._own_clock and isinstance(self.clock, FakeClock):
                self.clock.rewind(self._clock_start)

    def snapshot(self) -> dict:
        """JSON-able picture of the state for reports and diffs."""
        with self.lock:
            self._tick()
            sub = self.subscription_id
            quota = self.compute.quota
            regions = sorted(set(self.compute.skus.regions()) | {vm.location.lower() for vm in self.compute.vms.values()})
            return {
                "subscription_id": sub,
                "region": self.region,
                "time": iso(self.clock.time()),
                "vms": [self.compute.snapshot_vm(sub, vm) for vm in self.compute.list()],
                "nics": [self.network.snapshot_nic(sub, n) for n in self.network.list()],
                "machines": [m.view(sub) for m in self.aks.machines.values()],
                "usages": {r: [{"name": u["name"]["value"], "current": u["currentValue"], "limit": u["limit"]}
                               for u in quota.usage_rows(r)
                               if u["currentValue"] or quota.explicit(r, u["name"]["value"])]
                           for r in regions},
                "operations": [o.to_dict() for o in self.operations.ops.values()],
                "pending_operations": len(self.operations.pending()),
                "faults": self.faults.to_list(),
                "fault_log": list(self.faults.log),
                "evictions": list(self.compute.evictions),
                "requests": len(self.requests),
                "skus": self.compute.skus.counts(),
            }

    # ================================================================== HTTP entry point
    def handle(self, method: str, url: str, headers: Mapping[str, str] | None = None,
               body: bytes | str | None = None) -> tuple[int, dict[str, str], bytes]:
        resp = self.handle_request(Request(method, url, dict(headers or {}), body))
        return resp.status, resp.all_headers(), resp.body_bytes()

    def handle_request(self, req: Request) -> Response:
        return self.dispatcher.handle(req)
