"""NodeClaim disruption conditions (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/disruption/):
the Drifted and Consolidatable status conditions the disruption controller's methods filter on.

- drift.go Drift.Reconcile / isDrifted: not launched -> no condition; else the first of
  NodePoolDrifted (the NodePool's hash differs from the one stamped on the NodeClaim, same hash
  version: areStaticFieldsDrifted), RequirementsDrifted (the NodeClaim's labels as requirements are
  not Compatible with the NodePool's requirements: areRequirementsDrifted), InstanceTypeNotFound (the
  instance type or a compatible offering is gone: instanceTypeNotFound; when it is checked is the core
  release's, core-behaviour.yaml instanceTypeDrift) and the provider's reasons (harness/loop/azure/drift.py).
  Upstream re-checks on NodePool, NodeClass and pod events and every 5 minutes; the harness checks every pass.
- consolidation.go Consolidation.Reconcile: Consolidatable=True once the NodeClaim is initialized and
  consolidateAfter has passed since status.lastPodEventTime (or initialization); cleared while
  consolidation is disabled (consolidateAfter Never), before initialization, or under
  consolidateAfter (pkg/utils/disruption/disruption.go IsUnderConsolidateAfter).
The provider's Create stamps the AKSNodeClass hash and records the VM's image (launch facts, taken the
pass the NodeClaim launched).
"""
from __future__ import annotations

from harness.loop.azure import drift as azuredrift
from harness.loop.disruption.budgets import disruption_spec
from harness.loop.provisioning.nodepool import is_static, nodeclass_params
from harness.loop.state import Claim, LoopState
from harness.loop.lifecycle.hashes import NODEPOOL_HASH, NODEPOOL_HASH_VERSION, nodepool_hash
from harness.model.labels.requirements import Requirements
from harness.model.labels.wellknown import CAPACITY_TYPE, INSTANCE_TYPE

NODEPOOL_DRIFTED = "NodePoolDrifted"           # nodeclaim/disruption/drift.go
REQUIREMENTS_DRIFTED = "RequirementsDrifted"
INSTANCE_TYPE_NOT_FOUND = "InstanceTypeNotFound"
# what each core reason means, for the decision record (the provider's: harness/loop/azure/drift.py why)
DRIFT_WHY = {NODEPOOL_DRIFTED: "the NodePool's template hash differs from the one stamped on the NodeClaim",
             REQUIREMENTS_DRIFTED: "the NodeClaim's labels no longer satisfy the NodePool's requirements",
             INSTANCE_TYPE_NOT_FOUND: "its instance type, or an offering compatible with its labels, is gone"}
# sigs.k8s.io/karpenter v1.6.1 drift.go isDrifted: instanceTypeNotFoundCheckCache (30 minutes per NodeClaim),
# not before an hour after creation
INSTANCE_TYPE_CHECK_AFTER = 3600.0
INSTANCE_TYPE_CHECK_EVERY = 1800.0


class NodeClaimDisruption:
    def __init__(self, state: LoopState):
        self.state = state
        # claim -> (what its drift depends on, the reason): drift is recomputed only when a NodePool,
        # an AKSNodeClass, the cluster settings, the SKU list or the claim's own state changed
        self._drift_memo: dict[str, tuple[tuple, str]] = {}
        self._hash_memo: dict[tuple[str, str], str] = {}
        # claim -> (check period, the instance type was gone): one instanceTypeNotFound check per period
        self._type_checks: dict[str, tuple[int, bool]] = {}
        # next_type_check's verdicts: claim -> ((SKU list read, NodePool, cluster, AKSNodeClass), instance type gone)
        self._gone_memo: dict[str, tuple[tuple, bool]] = {}

    def observe(self) -> None:
        """Every iteration: the provider's launch facts and the Initialized transition time, which
        later passes count consolidateAfter from."""
        s = self.state
        now = s.clock.now()
        nodeclasses: dict[str, dict | None] = {}
        for c in s.claims:
            if c.done or c.refused or c.launched is None:
                continue
            if not c.dis.launch_recorded:
                self.record_launch(c, nodeclasses)
            if c.initialized and c.dis.initialized_at is None:
                c.dis.initialized_at = now

    def reconcile(self, nodepool_list: list[dict] | None = None) -> bool:
        s = self.state
        live = [c for c in s.claims if not (c.done or c.refused or c.launched is None or c.dis.deleting_since is not None)]
        if not live:
            return False
        now = s.clock.now()
        # isDrifted lists the instance types (cloudProvider.GetInstanceTypes): a SKU list due to be read again is
        # read before drift is judged, not after (provider.skuRefresh; harness/loop/azure/provider.py skus)
        s.provider.skus()
        if nodepool_list is None:
            nodepool_list = s.cluster.list("NodePool")
        nodepools = {np["metadata"]["name"]: np for np in nodepool_list}
        nodeclasses: dict[str, dict | None] = {}
        world = (tuple((n, np["metadata"].get("resourceVersion")) for n, np in sorted(nodepools.items())),
                 s.cfg.cluster, s.provider.sku_seq)
        for c in live:
            if not c.dis.launch_recorded:
                self.record_launch(c, nodeclasses)
            if c.initialized and c.dis.initialized_at is None:
                c.dis.initialized_at = now
            np = nodepools.get(c.template.name)
            if np is None:
                continue                  # the NodePool is gone: nothing to reconcile against
            reason = self._drift_cached(c, np, nodeclasses, world, now)
            if reason and c.dis.drifted != reason:
                if c.dis.drifted is None:
                    c.dis.drifted_since = now
                    s.trace(f"NodeClaim {c.result.name} drifted: {reason}")
                c.dis.drifted = reason
                if s.decisions.enabled:
                    why = DRIFT_WHY.get(reason) or azuredrift.why(reason, s.profile) or "the provider finds it drifted"
                    s.decide("disruption", "drifted", f"NodeClaim/{c.result.name}", f"Drifted={reason}: {why}",
                             (f"NodePool/{c.template.name}",), {"reason": reason})
            elif not reason and c.dis.drifted is not None:
                c.dis.drifted = c.dis.drifted_since = None
                if s.decisions.enabled:
                    s.decide("disruption", "drift-cleared", f"NodeClaim/{c.result.name}",
                             "no longer drifted: the NodeClaim matches its NodePool and AKSNodeClass again",
                             (f"NodePool/{c.template.name}",))
            self._consolidatable(c, np, now)
        return False

    def _drift_cached(self, c: Claim, np: dict, nodeclasses: dict, world: tuple, now: float) -> str:
        ref = ((((np.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}).get("name", "")
        nodeclass = self._nodeclass(ref, nodeclasses)
        key = (world, (nodeclass or {}).get("metadata", {}).get("resourceVersion"), c.registered, c.node_name,
               self._type_check_period(c, now))
        hit = self._drift_memo.get(c.result.name)
        if hit is not None and hit[0] == key:
            return hit[1]
        reason = self._drift(c, np, nodeclasses)
        self._drift_memo[c.result.name] = (key, reason)
        return reason

    def _nodepool_hash(self, np: dict) -> str:
        key = (np["metadata"]["name"], np["metadata"].get("resourceVersion") or "")
        h = self._hash_memo.get(key)
        if h is None:
            h = self._hash_memo[key] = nodepool_hash(np, self.state.profile)
        return h

    # -- launch facts ----------------------------------------------------------------------------
    def _nodeclass(self, name: str, cache: dict) -> dict | None:
        if name not in cache:
            cache[name] = self.state.cluster.get("AKSNodeClass", name) if name else None
        return cache[name]

    def record_launch(self, c: Claim, nodeclasses: dict) -> None:
        s = self.state
        facts = azuredrift.launch_facts(self._nodeclass(c.nodeclass_name, nodeclasses), s.cfg.cluster, s.profile)
        c.dis.launch_recorded = True
        c.dis.kubelet_version, c.dis.image_id, c.dis.subnet = facts["kubelet_version"], facts["image_id"], facts["subnet"]
        ann = c.obj["metadata"].setdefault("annotations", {})
        ann.update(facts["annotations"])
        if NODEPOOL_HASH not in ann:
            # claims created without the provisioner's stamp (the seam in provisioner.create_nodeclaim)
            np = s.cluster.get("NodePool", c.template.name)
            if np is not None:
                ann[NODEPOOL_HASH] = nodepool_hash(np, s.profile)
                ann[NODEPOOL_HASH_VERSION] = s.profile.nodepool_hash_version

    # -- drift ---------------------------------------------------------------------------------------
    def _drift(self, c: Claim, np: dict, nodeclasses: dict) -> str:
        s = self.state
        ann = c.obj["metadata"].get("annotations") or {}
        have = ann.get(NODEPOOL_HASH)
        # the hash switches are read through the profile (the hash functions are shared with the real engine's
        # history); read here too, where drift compares, so a run that compared them names them (--deciding)
        if have is not None and ann.get(NODEPOOL_HASH_VERSION) == s.core["nodePoolHashVersion"] \
                and (s.core["nodePoolHashedFields"], s.core["nodePoolHashIgnored"]) \
                and have != self._nodepool_hash(np):
            return NODEPOOL_DRIFTED
        labels = c.obj["metadata"].get("labels") or {}
        spec = ((np.get("spec") or {}).get("template") or {}).get("spec") or {}
        np_reqs = Requirements.from_node_selector_terms(spec.get("requirements") or [], s.sem)
        if Requirements.from_labels(labels, s.sem).compatible(np_reqs) is not None:
            return REQUIREMENTS_DRIFTED
        if self._instance_type_not_found(c, np):
            return INSTANCE_TYPE_NOT_FOUND
        ref = spec.get("nodeClassRef") or {}
        nodeclass = self._nodeclass(ref.get("name", ""), nodeclasses)
        node = s.cluster.get("Node", c.node_name) if c.node_name else None
        if node is not None and (node["metadata"].get("deletionTimestamp")):
            node = None
        node_labels = (node["metadata"].get("labels") or {}) if node is not None else None
        facts = {"kubelet_version": c.dis.kubelet_version, "image_id": c.dis.image_id,
                 "subnet": c.dis.subnet}
        return azuredrift.is_drifted(s.profile, s.provider, s.cfg.cluster, ann, facts, nodeclass, node_labels,
                                     c.launched.arch, c.result.labels, machine_name=c.launched.machine_name)

    def _type_check_period(self, c: Claim, now: float) -> int | None:
        """Which instanceTypeNotFound check of the NodeClaim is due (None: none is made). `none` (core v1.0.x,
        sigs.k8s.io/karpenter v1.0.6 drift.go isDrifted) never checks; `immediate` (v1.1.0-v1.5.x, v1.4.0 same
        file) checks on every drift check; `afterOneHour` (v1.6.0, #2271) checks from an hour after creation,
        then once per 30 minutes."""
        mode = self.state.core["instanceTypeDrift"]
        if mode == "none":
            return None
        if mode == "immediate":
            return 0
        age = now - c.created_at
        return int((age - INSTANCE_TYPE_CHECK_AFTER) // INSTANCE_TYPE_CHECK_EVERY) if age > INSTANCE_TYPE_CHECK_AFTER else None

    def _instance_type_not_found(self, c: Claim, np: dict) -> bool:
        """InstanceTypeNotFound at the check due now. Upstream's check cache makes the drift checks between two
        instance-type checks skip it, which clears the condition at the next reconcile; here the verdict of a
        check holds until the next one (harness simplification: the disruption controller's 10 s poll acts on
        the condition before it is cleared)."""
        s = self.state
        period = self._type_check_period(c, s.clock.now())
        if period is None:
            return False
        if s.core["instanceTypeDrift"] == "immediate":
            return self._instance_type_gone(c, np)
        last = self._type_checks.get(c.result.name)
        if last is None or last[0] != period:
            last = self._type_checks[c.result.name] = (period, self._instance_type_gone(c, np))
        return last[1]

    def next_type_check(self, nodepool_list: list[dict]) -> float | None:
        """When the next instanceTypeNotFound check (`afterOneHour`: _type_check_period) finds gone the instance
        type of a live NodeClaim whose last check did not: the clock alone drifts it then. None under the other
        modes (every drift check looks at once) and when no live NodeClaim's instance type is gone."""
        s = self.state
        if s.core["instanceTypeDrift"] != "afterOneHour":
            return None
        nodepools = {np["metadata"]["name"]: np for np in nodepool_list}
        now, out = s.clock.now(), []
        for c in s.claims:
            np = nodepools.get(c.template.name) if c.template is not None else None
            if c.done or c.refused or c.launched is None or c.dis.deleting_since is not None or np is None \
                    or c.dis.drifted is not None:
                continue
            period, last = self._type_check_period(c, now), self._type_checks.get(c.result.name)
            if period is not None and (last is None or last[0] != period):
                continue                  # a check is due now: the next pass makes it
            ref = ((((np.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}).get("name", "")
            nodeclass = s.cluster.get("AKSNodeClass", ref, shared=True) if ref else None
            key = (s.provider.sku_seq, np["metadata"].get("resourceVersion"), s.cfg.cluster,
                   (nodeclass or {}).get("metadata", {}).get("resourceVersion"))
            memo = self._gone_memo.get(c.result.name)
            if memo is None or memo[0] != key:
                memo = self._gone_memo[c.result.name] = (key, self._instance_type_gone(c, np))
            if not memo[1]:
                continue
            # the first instant of the next period (a check is due once the age is past the hour)
            out.append(c.created_at + INSTANCE_TYPE_CHECK_AFTER + (0 if period is None else period + 1)
                       * INSTANCE_TYPE_CHECK_EVERY + 1)
        return min(out, default=None)

    def _instance_type_gone(self, c: Claim, np: dict) -> bool:
        """drift.go instanceTypeNotFound: the instance type is not listed, or no offering (available
        or not) is compatible with the NodeClaim's labels."""
        s = self.state
        ref = (((np.get("spec") or {}).get("template") or {}).get("spec") or {}).get("nodeClassRef") or {}
        params = nodeclass_params(s, ref.get("name", ""))
        if params is None:
            return False
        labels = c.obj["metadata"].get("labels") or {}
        name = labels.get(INSTANCE_TYPE)
        it = next((i for i in s.provider.instance_types(params).instance_types if i.name == name), None)
        if it is None:
            return True
        reqs = Requirements.from_labels({k: v for k, v in labels.items() if k != CAPACITY_TYPE or v != "reserved"},
                                        s.sem)
        return not any(reqs.is_compatible(o.requirements, s.profile.well_known_labels) for o in it.offerings)

    # -- consolidatable ------------------------------------------------------------------------------
    def _consolidatable(self, c: Claim, np: dict, now: float) -> None:
        after = disruption_spec(np).consolidate_after
        # a static NodePool's NodeClaims are never Consolidatable (sigs.k8s.io/karpenter v1.14.0
        # pkg/controllers/nodeclaim/disruption/controller.go runReconcilers; core-behaviour.yaml staticCapacity)
        if after is None or c.dis.initialized_at is None or is_static(np):
            c.dis.consolidatable_since = None
            return
        since = c.dis.last_pod_event if c.dis.last_pod_event is not None else c.dis.initialized_at
        if after > 0 and now - since < after:
            c.dis.consolidatable_since = None
            return
        if c.dis.consolidatable_since is None:
            c.dis.consolidatable_since = now


def next_consolidatable(s: LoopState, nodepool_list: list[dict]) -> float | None:
    """The next moment a live NodeClaim's consolidateAfter passes (None: none is waiting for it)."""
    nodepools = {np["metadata"]["name"]: np for np in nodepool_list}
    now = s.clock.now()
    out = []
    for c in s.claims:
        np = nodepools.get(c.template.name) if c.template is not None else None
        if c.done or c.refused or c.launched is None or c.dis.deleting_since is not None or np is None:
            continue
        at = consolidatable_at(c, np)
        if at is not None and at > now:
            out.append(at)
    return min(out, default=None)


def consolidatable_at(c: Claim, np: dict) -> float | None:
    """When the NodeClaim becomes consolidatable if nothing changes (None: never / unknown)."""
    after = disruption_spec(np).consolidate_after
    if after is None or c.dis.initialized_at is None or is_static(np):
        return None
    since = c.dis.last_pod_event if c.dis.last_pod_event is not None else c.dis.initialized_at
    return since + after
