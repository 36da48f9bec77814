"""The NodeClaimTemplate a NodePool gives the scheduler, and the daemon overhead it carries per
instance type and per group of instance types.

Karpenter core sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go
(NewNodeClaimTemplate) and scheduler.go (NewScheduler, buildDaemonOverheadGroups, DaemonOverheadGroup;
before v1.14.0 getDaemonOverhead: one overhead per template).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from harness.loop.scheduling.pods import PodView, Taint, tolerates, untolerated
from harness.model.upstream.profile import Profile
from harness.model.labels.requirements import LABEL_REQUIREMENTS, Requirements
from harness.model.values.resources import add
from harness.model.labels.semantics import Semantics
from harness.model.labels.writers import nodeclaim_template_labels


@dataclass(frozen=True)
class DaemonOverheadGroup:
    """One group of buildDaemonOverheadGroups (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/provisioning/scheduling/scheduler.go DaemonOverheadGroup): the instance types on which
    the same DaemonSet pods run, and those pods' requests (RequestsForPods, `pods` included; empty when
    none runs there)."""
    instance_types: frozenset[str]
    overhead: Mapping[str, int]


@dataclass
class Template:
    """A NodeClaimTemplate built from a NodePool (sigs.k8s.io/karpenter v1.14.0
    pkg/controllers/provisioning/scheduling/nodeclaimtemplate.go NewNodeClaimTemplate)."""

    nodepool: dict
    requirements: Requirements
    labels: dict[str, str]
    taints: list[Taint]
    startup_taints: list[Taint]
    instance_types: list                      # harness.model.azure.instancetypes.InstanceType
    daemon_pods: list[PodView] = field(default_factory=list)
    options: list | None = None               # InstanceTypeOptions: prefiltered by the template alone
    # core v1.14.0 (#2975; core-behaviour.yaml daemonSetInstanceTypeRequirements): a DaemonSet pod counts on an
    # instance type only if its requirements intersect the type's; before, every compatible one counts on every
    # type. A callable is read where it decides (per_instance_type): a run whose DaemonSets fit every type never
    # reads the switch
    daemons_per_instance_type: object = True
    # core v1.1.1 (#1727; core-behaviour.yaml daemonSetCompatibility): a DaemonSet pod is judged on its strict
    # requirements, relaxing its required terms, with PreferNoSchedule tolerated; before, on its first required
    # term and heaviest preference, every template taint to be tolerated
    daemons_relaxed: bool = True
    _overhead: dict[str, dict[str, int]] = field(default_factory=dict, repr=False)
    _daemons: dict[str, list] = field(default_factory=dict, repr=False)
    _groups: tuple[list, list[DaemonOverheadGroup]] | None = field(default=None, repr=False)   # (options, groups)
    # scheduling.Scheduler's TypeIndex of this template and the compatibility masks it answered, per (well-known
    # labels, semantics): shared by the Schedulers a disruption pass builds over the same templates
    _indexed: dict = field(default_factory=dict, repr=False)

    @property
    def name(self) -> str:
        return self.nodepool["metadata"]["name"]

    def per_instance_type(self) -> bool:
        """daemons_per_instance_type, read (a callable: the core switch) only when asked."""
        v = self.daemons_per_instance_type
        return bool(v() if callable(v) else v)

    @property
    def weight(self) -> int:
        return int((self.nodepool.get("spec") or {}).get("weight") or 0)

    @staticmethod
    def from_nodepool(nodepool: dict, instance_types: list, profile: Profile, sem: Semantics) -> "Template":
        spec = ((nodepool.get("spec") or {}).get("template") or {}).get("spec") or {}
        labels = nodeclaim_template_labels(nodepool, profile)
        reqs = Requirements.from_node_selector_terms(spec.get("requirements") or [], sem)
        sem.note_keys(labels)
        reqs.add(*(LABEL_REQUIREMENTS.get(k, v, sem) for k, v in labels.items()))
        reqs.add(*(LABEL_REQUIREMENTS.get(k, "true", sem) for k in profile.scheduling_simulation_keys))
        return Template(
            nodepool=nodepool, requirements=reqs, labels=labels,
            taints=[Taint.from_dict(t) for t in spec.get("taints") or []],
            startup_taints=[Taint.from_dict(t) for t in spec.get("startupTaints") or []],
            instance_types=instance_types,
        )

    def daemon_overhead(self, it, well_known: frozenset[str], sem: Semantics) -> dict[str, int]:
        """buildDaemonOverheadGroups / isDaemonPodCompatible (sigs.k8s.io/karpenter v1.14.0
        pkg/controllers/provisioning/scheduling/scheduler.go): DaemonSet pods that tolerate the template taints, whose
        strict requirements
        are compatible with the template, and that intersect the instance type (core v1.14.0 on; before, the
        template's one overhead: sigs.k8s.io/karpenter v1.13.0 scheduling/scheduler.go getDaemonOverhead)."""
        cached = self._overhead.get(it.name)
        if cached is not None:
            return cached
        total: dict[str, int] = {}
        for ds in self.compatible_daemons(it, well_known, sem):
            total = add(total, ds.requests)
        self._overhead[it.name] = total
        return total

    def daemon_overhead_groups(self, well_known: frozenset[str], sem: Semantics) -> list[DaemonOverheadGroup]:
        """buildDaemonOverheadGroups: the template's instance type options (InstanceTypeOptions; all its
        types before the scheduler's prefilter) grouped by the DaemonSet pods that run on each (podSetKey:
        their sorted namespace/name), in the order each set is first met. Before core v1.14.0 every type
        has the template's one set, so there is one group (cached for the options it was built over)."""
        options = self.options if self.options is not None else self.instance_types
        if self._groups is None or self._groups[0] is not options:
            groups: dict[tuple, tuple[list[str], dict[str, int]]] = {}
            for it in options:
                key = tuple(sorted((ds.namespace, ds.name) for ds in self.compatible_daemons(it, well_known, sem)))
                if key in groups:
                    groups[key][0].append(it.name)
                else:
                    groups[key] = ([it.name], self.daemon_overhead(it, well_known, sem))
            self._groups = (options, [DaemonOverheadGroup(frozenset(names), overhead)
                                      for names, overhead in groups.values()])
        return self._groups[1]

    def daemon_ports(self, it, well_known: frozenset[str], sem: Semantics) -> list:
        """The host ports the compatible DaemonSet pods hold on this instance type (core v1.14.0
        scheduling/scheduler.go buildDaemonOverheadGroups: each group's HostPortUsage)."""
        return [hp for ds in self.compatible_daemons(it, well_known, sem) for hp in ds.host_ports]

    def compatible_daemons(self, it, well_known: frozenset[str], sem: Semantics) -> list[PodView]:
        """The DaemonSet pods that would run on a node of this instance type (cached)."""
        cached = self._daemons.get(it.name)
        if cached is not None:
            return cached
        out: list[PodView] = []
        for ds in self.daemon_pods:
            if not self.daemons_relaxed:
                # sigs.k8s.io/karpenter v1.0.6 scheduling/scheduler.go getDaemonOverhead: Taints.Tolerates (every
                # effect), Requirements.Compatible(NewPodRequirements(p)), no relaxation
                if all(tolerates(ds.tolerations, t) for t in self.taints) and \
                        self.requirements.is_compatible(ds.requirements(sem), well_known):
                    out.append(ds)
                continue
            # the template's taints only: a startup taint does not keep a DaemonSet off the node
            # (core v1.14.0 scheduling/scheduler.go isDaemonPodCompatible checks Spec.Taints)
            if untolerated(ds.tolerations, self.taints):
                continue
            # removeRequiredNodeAffinityTerm drops term 0 only when another term remains
            # (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/preferences.go;
            # sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/preferences.go Relax)
            for relaxed in ((0, 1) if len(ds.required_terms()) > 1 else (0,)):
                ds.relaxed_required = relaxed
                dreqs = ds.requirements(sem, strict=True)
                if self.requirements.is_compatible(dreqs, well_known) and \
                        (it.requirements.intersects_ok(dreqs) or not self.per_instance_type()):
                    out.append(ds)
                    break
            ds.relaxed_required = 0
        self._daemons[it.name] = out
        return out
