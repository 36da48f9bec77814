"""Karpenter core's behaviour at the core version a profile pins, as the loop reads it.

harness/data/core-behaviour.yaml names each behaviour that changed between the oldest modeled core and
v1.14.0; the value per provider release is derived from that release's core source
(harness.model.coresync) into `core.behaviour` of its facts. `CoreBehaviour.of(profile)` gives the loop
the switches it implements as typed fields, and `notices(touched)` the behaviours a run answered with
v1.14.0's although the profile's core differs (a switch known but not implemented, a core older than the
oldest modeled, an option that core does not have), by name, for the scopes the run touched.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any

from harness.model.corespec import core_spec
from harness.model.profile import DEFAULT_PROFILE, Profile, raw_profile

# what a run must have done for a switch of that scope to be able to change its outcome
SCOPES = {
    "provisioning": "pods were scheduled or NodeClaims created",
    "disruption": "a node was disrupted, or a disruption candidate was considered",
    "drift": "a NodeClaim drifted",
    "consolidation": "a NodePool with consolidation enabled had nodes",
    "deletingNodes": "a node was deleted while pods were on it",
    "termination": "a node was terminated",
    "terminationGracePeriod": "a node with a terminationGracePeriod was terminated",
    "pdb": "a PodDisruptionBudget existed",
    "doNotDisruptDuration": "a pod had a karpenter.sh/do-not-disrupt annotation other than \"true\"",
    "nodeLimits": "a NodePool limited `nodes`",
    "minValuesBestEffort": "MIN_VALUES_POLICY was BestEffort",
    "manyInstanceTypes": "a NodeClaim had more than 60 instance types to choose from",
    "preferencePolicyIgnore": "PREFERENCE_POLICY was Ignore",
    "launchFailure": "a NodeClaim failed to launch or register",
    "preferences": "a pod had preferred affinities or ScheduleAnyway spreads",
    "topologySpread": "a pod had topology spread constraints",
    "hostPorts": "a pod used a hostPort",
    "daemonSets": "a DaemonSet existed",
    "volumes": "a pod used a PersistentVolumeClaim",
    "volumeTopology": "a pod's volumes gave Karpenter topology requirements (node affinity, allowedTopologies)",
    "startupTaints": "a NodePool had taints or startupTaints",
    "podLevelResources": "a pod had pod-level resources",
    "staticCapacity": "a NodePool set spec.replicas",
    # touched by the loop where the situation arises (LoopState.touch_scope), not read from the objects
    "instanceTerminatingBudget": "a disruption budget was computed while a node of its NodePool had its instance "
                                 "being deleted",
    "nilLabelSelector": "a pod with a topology spread or pod (anti-)affinity term without a labelSelector was "
                        "scheduled",
    "unpricedCandidate": "a consolidation candidate had no offering left for its zone and capacity type when a "
                         "replacement was priced",
}


@functools.lru_cache(maxsize=None)
def _switches() -> tuple[dict, ...]:
    return tuple(core_spec()["switches"])


def _version(text: str) -> tuple[int, int, int] | None:
    m = re.match(r"^v(\d+)\.(\d+)\.(\d+)", text or "")
    return (int(m.group(1)), int(m.group(2)), int(m.group(3))) if m else None


@functools.lru_cache(maxsize=None)
def newest_values() -> dict[str, Any]:
    """The switches' values at the newest core (the `upstream` profile's derived facts)."""
    return dict((raw_profile(DEFAULT_PROFILE).get("core") or {}).get("behaviour") or {})


@functools.lru_cache(maxsize=None)
def release_values(core_version: str) -> tuple[str, dict[str, Any]] | None:
    """(a release profile, its switch values) for a release that pins `core_version`, or None."""
    from harness.model.releaseindex import release_profiles
    for name in release_profiles():
        core = raw_profile(name).get("core") or {}
        if str(core.get("version") or "") == core_version and core.get("behaviour"):
            return name, dict(core["behaviour"])
    return None


@functools.lru_cache(maxsize=None)
def fewest_instance_types() -> int:
    """The smallest maxInstanceTypes of any core: a NodeClaim with no more types than this keeps them all at
    every release, so the loop reads the switch only for one with more."""
    switch = next(s for s in _switches() if s["name"] == "maxInstanceTypes")
    return min(int(v) for v in switch["says"])


class SwitchValues(dict):
    """A profile's switch values that remember which of them, differing from the newest core's, the loop
    read: all of them (`consulted`, for harness/why/deciding.py's counterfactual runs) and those read
    since the last decision was recorded (`recent`, harness/loop/decisions.py). One dict lookup and, for a
    differing switch only, two dict stores per read."""

    __slots__ = ("differing", "recent", "consulted")

    def __init__(self, values: dict, newest: dict):
        super().__init__(values)
        self.differing = frozenset(k for k, v in values.items() if k in newest and newest[k] != v)
        self.recent: dict[str, None] = {}
        self.consulted: dict[str, None] = {}

    def __getitem__(self, key: str):
        if key in self.differing:
            self.recent[key] = None
            self.consulted[key] = None
        return dict.__getitem__(self, key)


@dataclass(frozen=True)
class CoreBehaviour:
    """The core behaviour switches of one profile (values it lacks are the newest core's)."""

    version: str
    values: dict = field(repr=False, compare=False, hash=False)
    profile: str = ""
    # a label policy (before-0006) names a core but carries upstream's behaviour: that core's release values
    policy_reference: tuple[str, dict] | None = field(default=None, repr=False, compare=False, hash=False)

    @staticmethod
    def of(profile: Profile) -> "CoreBehaviour":
        core = profile.raw.get("core") or {}
        newest = newest_values()
        values = SwitchValues({**newest, **(core.get("behaviour") or {})}, newest)
        version = str(core.get("version") or core_spec()["newest"])
        reference = None
        if (profile.raw.get("release") or {}).get("policy"):
            reference = release_values(version.split(" ", 1)[0])
        return CoreBehaviour(version, values, profile.name, reference)

    # -- which differing switches the loop read ------------------------------------------------------
    def take_reads(self) -> tuple[str, ...]:
        """The differing switches read since the last call (each decision names those it read)."""
        recent = getattr(self.values, "recent", None)
        if not recent:
            return ()
        out = tuple(recent)
        recent.clear()
        return out

    def consulted(self) -> tuple[str, ...]:
        """Every differing switch the run read, in first-read order."""
        return tuple(getattr(self.values, "consulted", ()))

    # -- the switches the loop implements ------------------------------------------------------------
    @property
    def drift_before_emptiness(self) -> bool:
        return self.values["disruptionMethodOrder"] == "driftFirst"

    @property
    def drift_empty_candidates(self) -> str:
        """batch | skip | first (harness/data/core-behaviour.yaml driftEmptyCandidates)."""
        return str(self.values["driftEmptyCandidates"])

    @property
    def emptiness_validates_subset(self) -> bool:
        return self.values["emptinessValidation"] == "subset"

    @property
    def deleting_pods_currently_reschedulable(self) -> bool:
        return self.values["deletingNodePods"] == "currentlyReschedulable"

    @property
    def do_not_disrupt_durations(self) -> bool:
        return bool(self.values["doNotDisruptDurations"])

    @property
    def consolidate_after_destinations(self) -> bool:
        return bool(self.values["consolidateAfterDestinations"])

    @property
    def node_limits(self) -> bool:
        """True: the scheduler counts every node as one `nodes` (core v1.11.0 on); False: only Provisioner.Create
        checks limits.nodes (core-behaviour.yaml nodeLimits)."""
        return bool(self.values["nodeLimits"])

    @property
    def initialized_nodes_counted(self) -> bool:
        """Before core v1.11.0: the scheduler still counts an initialized node as one `nodes` (core v1.4.0 on,
        through the capacity map cluster state writes it into: core-behaviour.yaml initializedNodesCounted)."""
        return bool(self.values["initializedNodesCounted"])

    @property
    def no_compatible_instance_types_event(self) -> str:
        """none | plain | minValuesSuffix (core-behaviour.yaml noCompatibleInstanceTypesEvent)."""
        return str(self.values["noCompatibleInstanceTypesEvent"])

    @property
    def capacity_type_from_offerings(self) -> bool:
        return bool(self.values["capacityTypeFromOfferings"])

    @property
    def ephemeral_not_ready_no_execute(self) -> bool:
        return bool(self.values["ephemeralNotReadyNoExecute"])

    @property
    def node_readiness_taints(self) -> bool:
        return bool(self.values["nodeReadinessTaints"])

    @property
    def budget_events_need_nodes(self) -> bool:
        return bool(self.values["emptyBudgetEvents"])

    @property
    def host_port_usage(self) -> str:
        """ownWithoutDaemons | sharedTemplate | perNodeClaim (core-behaviour.yaml hostPortsPerNodeClaim)."""
        return str(self.values["hostPortsPerNodeClaim"])

    @property
    def daemonset_instance_type_requirements(self) -> bool:
        return bool(self.values["daemonSetInstanceTypeRequirements"])

    @property
    def pod_level_resources(self) -> bool:
        return bool(self.values["podLevelResources"])

    @property
    def static_capacity(self) -> bool:
        """core-behaviour.yaml staticCapacity: core has the static provisioning and deprovisioning controllers."""
        return bool(self.values["staticCapacity"])

    @property
    def unmanaged_node_blocked_event(self) -> bool:
        """core-behaviour.yaml unmanagedNodeBlockedEvent: a Node without a NodeClaim gets DisruptionBlocked."""
        return bool(self.values["unmanagedNodeBlockedEvent"])

    @property
    def max_instance_types(self) -> int:
        """How many instance types a NodeClaim keeps, cheapest first (core-behaviour.yaml maxInstanceTypes)."""
        return int(self.values["maxInstanceTypes"])

    @property
    def disruption_event_reason(self) -> str:
        """reason | reasonAndDecision (core-behaviour.yaml disruptionEventReason)."""
        return str(self.values["disruptionEventReason"])

    @property
    def disruption_blocked_message(self) -> str:
        """sentence | prefixed (core-behaviour.yaml disruptionBlockedMessage)."""
        return str(self.values["disruptionBlockedMessage"])

    @property
    def blocked_reason_format(self) -> str:
        """quoted | keyValue (core-behaviour.yaml blockedReasonFormat)."""
        return str(self.values["blockedReasonFormat"])

    @property
    def when_empty_unconsolidatable_message(self) -> str:
        """nonEmptyDisabled | notEmpty (core-behaviour.yaml whenEmptyUnconsolidatableMessage)."""
        return str(self.values["whenEmptyUnconsolidatableMessage"])

    @property
    def disruption_reason_condition(self) -> bool:
        return bool(self.values["disruptionReasonCondition"])

    @property
    def multiple_pdbs_eviction(self) -> bool:
        return bool(self.values["multiplePdbsEviction"])

    @property
    def drain_conditions(self) -> bool:
        return bool(self.values["drainConditions"])

    @property
    def forced_eviction_after_node_deadline(self) -> bool:
        """core-behaviour.yaml forcedEvictionAfterNodeDeadline: a pod terminating past the node's deadline is
        deleted again with the time left."""
        return bool(self.values["forcedEvictionAfterNodeDeadline"])

    @property
    def eviction_in_priority_groups(self) -> bool:
        return bool(self.values["evictionInPriorityGroups"])

    @property
    def consolidation_order(self) -> str:
        """savingsRatio | disruptionCost (core-behaviour.yaml consolidationCandidateOrder)."""
        return str(self.values["consolidationCandidateOrder"])

    @property
    def emptiness_by_eviction_cost(self) -> bool:
        return bool(self.values["emptinessByEvictionCost"])

    @property
    def validates_preferred_node_affinity(self) -> bool:
        return bool(self.values["validatesPreferredNodeAffinity"])

    @property
    def daemonset_compatibility(self) -> str:
        """relaxed | firstTerm (core-behaviour.yaml daemonSetCompatibility)."""
        return str(self.values["daemonSetCompatibility"])

    @property
    def candidate_shuffle_by_nodepool(self) -> bool:
        return bool(self.values["candidateShuffleByNodePool"])

    @property
    def topology_spread_policies(self) -> bool:
        """core-behaviour.yaml topologySpreadPolicies: a spread reads nodeTaintsPolicy / nodeAffinityPolicy and
        discovers domains from registered Nodes; before, taints never and node affinity always filter."""
        return bool(self.values["topologySpreadPolicies"])

    @property
    def relax_preferences_per_pod(self) -> bool:
        """core-behaviour.yaml relaxPreferencesPerPod: all the way at each try, or one step per pass."""
        return bool(self.values["relaxPreferencesPerPod"])

    @property
    def volume_validation(self) -> str:
        """none | claims | claimsAndVolumes (core-behaviour.yaml unsupportedVolumePods)."""
        return str(self.values["unsupportedVolumePods"])

    @property
    def ignored_pod_events(self) -> bool:
        """An ignored pod gets a FailedScheduling event (core v1.7.0 #2480, folded into unsupportedVolumePods)."""
        return self.values["unsupportedVolumePods"] != "none"

    @property
    def volume_requirements_apart(self) -> bool:
        return bool(self.values["volumeRequirementsApart"])

    @property
    def volume_topology_alternatives(self) -> bool:
        return bool(self.values["volumeTopologyAlternatives"])

    @property
    def instance_type_drift(self) -> str:
        """none | immediate | afterOneHour (core-behaviour.yaml instanceTypeDrift)."""
        return str(self.values["instanceTypeDrift"])

    @property
    def launch_timeout(self) -> bool:
        """An unlaunched NodeClaim is deleted 5 minutes after creation (core-behaviour.yaml launchTimeout)."""
        return bool(self.values["launchTimeout"])

    def min_values_policy(self, asked: str) -> str:
        """The MIN_VALUES_POLICY in effect: the asked one, or Strict where core has no such option."""
        return asked if self.values["minValuesPolicy"] else "Strict"

    def preference_policy(self, asked: str) -> str:
        """The PREFERENCE_POLICY in effect: the asked one, or Respect where core has no such option."""
        return asked if self.values["preferencePolicy"] else "Respect"

    # -- what a run says ---------------------------------------------------------------------------------
    @property
    def modeled(self) -> bool:
        v, oldest = _version(self.version), _version(core_spec()["oldestModeled"])
        return v is not None and oldest is not None and v >= oldest

    def differs(self) -> list[dict]:
        """The switches whose value at this core is not the newest core's."""
        newest = newest_values()
        return [s for s in _switches() if s["name"] in newest and self.values.get(s["name"]) != newest[s["name"]]]

    def notices(self, touched: set[str]) -> list[str]:
        """What the run answered with another core's behaviour, by name, for the scopes it touched."""
        version = self.version.split(" ", 1)[0]
        newest = core_spec()["newest"]
        out = []
        if not self.modeled:
            out.append(f"core {version} is older than the oldest core the loop models "
                       f"({core_spec()['oldestModeled']}): provisioning, disruption and termination are modeled as "
                       f"{newest} (with the {newest} API) except the implemented switches derived for {version}; "
                       "answer with --engine real")
        if self.policy_reference is not None:
            release, ref = self.policy_reference
            for s in _switches():
                if s["name"] in ref and ref[s["name"]] != self.values.get(s["name"]) and set(s["scope"]) & touched:
                    out.append(f"{self.profile} is a label policy naming core {version}, but its core behaviour is "
                               f"{newest}'s: {s['name']} differs at core {version} (changed in {s['since']}, "
                               f"kubernetes-sigs/karpenter#{s['pr']}); run profile {release} for that core's behaviour")
        for s in self.differs():
            if not set(s["scope"]) & touched:
                continue
            if not s.get("implemented"):
                out.append(f"core {version}: {s['name']} is modeled as {newest} ({s['modeledAs']}; changed in "
                           f"{s['since']}, kubernetes-sigs/karpenter#{s['pr']}); answer with --engine real")
            elif s["name"] in _OPTION_SWITCHES:
                out.append(f"core {version} has no {_OPTION_SWITCHES[s['name']]} option (added in {s['since']}, "
                           f"kubernetes-sigs/karpenter#{s['pr']}): the setting is not applied")
        return out


_OPTION_SWITCHES = {"minValuesPolicy": "MIN_VALUES_POLICY", "preferencePolicy": "PREFERENCE_POLICY"}

