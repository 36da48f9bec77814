"""Probe scenarios for one label under one profile, run through the same runner the scenario
library uses (fakeazure -> loop -> model, embedded backend), and what they observed:

  schedulable   a pod whose nodeSelector asks for the label, with the value a Node really carries,
                against a NodePool that does not set it: does it get a node and bind? (or the exact
                pending / ignore reason, or runaway provisioning)
  written       a plain pod on a plain NodePool: is the label on the Node, with which value, and
                which writers put it there (kubelet, kubelet-node-labels, aks on an AKS machine,
                cloud-node-controller, karpenter-core)?
  nodepool      a NodePool whose template sets the label: accepted, or rejected with the message and
                the stage (admission = the CRD's CEL rules, runtime = Karpenter's Go validation);
                when accepted, whether the Node then comes up carrying it
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field
from typing import Any, Callable

import yaml

from harness.parity.labels import LabelEntry, Probe
from harness.parity.text import shorten

PROBE_POD = "probe"
PLAIN_POD = "plain"
WRITER_ORDER = ("kubelet", "kubelet-node-labels", "aks", "cloud-node-controller", "karpenter-core")


def _stored_version(profile: str | None, kind: str, default: str) -> str:
    """The version of `kind` the profile's release stores (and so serves): the probes are written in it,
    since a release refuses a version it does not serve (provider v0.x serves AKSNodeClass v1alpha2 only,
    before v0.7 NodePool karpenter.sh/v1beta1 only; harness.model.crd.apiversions)."""
    if profile is None:
        return default
    from harness.model.crd import apiversions
    from harness.model.upstream.profile import load_profile
    return apiversions.storage(load_profile(profile), kind) or default


def nodeclass_manifest(probe: Probe, profile: str | None = None) -> dict:
    version = _stored_version(profile, "AKSNodeClass", "v1beta1")
    return {"apiVersion": f"karpenter.azure.com/{version}", "kind": "AKSNodeClass", "metadata": {"name": "default"},
            "spec": copy.deepcopy(probe.nodeclass)}


def nodepool_manifest(probe: Probe, labels: dict | None = None, name: str = "default",
              instance_types: list[str] | None = None, profile: str | None = None) -> dict:
    reqs = [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": list(probe.capacity_types)}]
    if instance_types:
        reqs.insert(0, {"key": "node.kubernetes.io/instance-type", "operator": "In", "values": list(instance_types)})
    version = _stored_version(profile, "NodePool", "v1")
    # a karpenter.sh/v1beta1 nodeClassRef names the class by name (core v0.36 pkg/apis/v1beta1/nodepool.go)
    ref = ({"name": "default"} if version == "v1beta1"
           else {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"})
    tmpl: dict = {"spec": {"nodeClassRef": ref, "requirements": reqs}}
    if labels:
        tmpl["metadata"] = {"labels": dict(labels)}
    return {"apiVersion": f"karpenter.sh/{version}", "kind": "NodePool", "metadata": {"name": name},
            "spec": {"template": tmpl}}


def pod_manifest(name: str, selector: dict | None = None, cpu: str = "100m") -> dict:
    spec: dict = {"containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": cpu}}}]}
    if selector:
        spec["nodeSelector"] = dict(selector)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def scenario_text(name: str, profile: str, probe: Probe, manifests: list[dict], mode: str | None = None) -> str:
    """A probe scenario; `mode` is the PROVISION_MODE it runs in (None: the cluster's default, aksscriptless)."""
    from harness.scenario.load import API_VERSION
    given: dict = {"profiles": [profile], "region": probe.region, "skus": list(probe.skus),
                   "loop": {"runawayThreshold": 3, "maxIterations": 40}}
    if probe.catalog:
        given["catalog"] = probe.catalog
    if probe.cluster or mode:
        given["cluster"] = {**dict(probe.cluster or {}), **({"provisionMode": mode} if mode else {})}
    doc = {"apiVersion": API_VERSION, "kind": "Scenario",
           "metadata": {"name": name}, "given": given, "manifests": manifests}
    return yaml.safe_dump(doc, sort_keys=False)


def _run(text: str, name: str, profile: str, cluster):
    from harness.runner.engines import run
    from harness.scenario.load import load_scenarios_text
    sc = load_scenarios_text(text, f"<parity:{name}>")[0]
    return run(sc, profile, cluster).result


# == observations ===================================================================================
@dataclass
class NodeLabel:
    present: bool
    value: str | None = None
    writers: list = field(default_factory=list)      # accepted writers, in WRITER_ORDER
    winner: str | None = None
    refused: list = field(default_factory=list)      # writers whose write was refused
    kubelet_dropped: bool = False
    not_sent_to_aks: str | None = None               # why the provider did not send it to AKS (Machine API path)

    def text(self) -> str:
        if not self.present:
            extra = []
            if self.not_sent_to_aks:
                extra.append(f"not sent to AKS: {self.not_sent_to_aks}")
            elif self.kubelet_dropped:
                extra.append("dropped from --node-labels")
            if self.refused:
                extra.append("refused: " + ", ".join(self.refused))
            return "absent" + (f" ({'; '.join(extra)})" if extra else "")
        return f"{self.value!r} via {' + '.join(self.writers) or '?'}"


def _node_label(node, key: str) -> NodeLabel:
    if node is None:
        return NodeLabel(False)
    refused = sorted({w.writer for w in node.provenance.get(key, []) if not w.accepted})
    if key not in node.labels:
        return NodeLabel(False, None, [], None, refused, key in node.kubelet_dropped, node.not_sent_to_aks.get(key))
    return NodeLabel(True, node.labels[key], sorted(node.writers(key), key=WRITER_ORDER.index), node.writer(key),
                     refused, key in node.kubelet_dropped)


@dataclass
class Schedulable:
    outcome: str          # scheduled | pending | ignored | runaway
    reason: str | None = None
    nodes: int = 0
    nodeclaims: int = 0
    label: NodeLabel | None = None     # the key on the Node launched for the pod

    @property
    def ok(self) -> bool:
        return self.outcome == "scheduled"

    def text(self) -> str:
        if self.outcome == "scheduled":
            return "yes: binds"
        if self.outcome == "runaway":
            why = f"runaway: {self.nodeclaims} NodeClaims, never binds"
            if self.label is not None and self.label.present:
                why += f" (Node has {self.label.value!r})"
            elif self.label is not None:
                why += " (label absent on the Node)"
            return why
        return f"{self.outcome}: {self.reason}"


@dataclass
class NodePoolVerdict:
    accepted: bool
    stage: str | None = None
    message: str | None = None         # the rule's own message(s) / the runtime message
    node: str | None = None            # what happened to a plain pod on it when accepted
    label: NodeLabel | None = None

    def text(self, short: bool = True) -> str:
        if not self.accepted:
            return f"rejected ({self.stage}): {shorten(self.message) if short else self.message}"
        return "accepted" + (f"; {self.node}" if self.node else "")


@dataclass
class Cell:
    """One probe context of one label under one profile."""

    variant: str
    value: str
    aks_value: str | None
    schedulable: Schedulable
    written: NodeLabel
    nodepool: NodePoolVerdict


@dataclass
class Row:
    entry: LabelEntry
    profile: str
    cells: list                        # [Cell]; cells[0] is the main probe

    @property
    def main(self) -> Cell:
        return self.cells[0]


def _schedulable(result, key: str) -> Schedulable:
    pods = result.pods_of(PROBE_POD)
    p = pods[0]
    launched = sum(1 for c in result.nodeclaims if c.launched)
    node = next((n for n in result.nodes if n.name == p.node), None)
    if node is None:
        claims = set(p.nodeclaims)
        node = next((n for n in reversed(result.nodes) if n.nodeclaim in claims), None)
    label = _node_label(node, key) if node is not None else None
    if p.state == "scheduled":
        return Schedulable("scheduled", None, len(result.nodes), launched, label)
    if result.runaway:
        return Schedulable("runaway", result.runaway_reason, len(result.nodes), launched, label)
    return Schedulable(p.state, p.reason, len(result.nodes), launched, label)


def _nodepool_verdict(result, key: str) -> NodePoolVerdict:
    np = result.nodepools.get("default")
    if np is None:
        return NodePoolVerdict(False, "admission", "NodePool not created")
    if np.rejected:
        msg = "; ".join(np.causes) if np.stage == "admission" and np.causes else np.message
        return NodePoolVerdict(False, np.stage, msg)
    pods = result.pods_of(PLAIN_POD)
    p = pods[0]
    node = next((n for n in result.nodes if n.name == p.node), None) or (result.nodes[-1] if result.nodes else None)
    label = _node_label(node, key) if node is not None else None
    if p.state == "scheduled":
        what = f"Node has it via {' + '.join(label.writers)}" if label and label.present else "label absent on the Node"
        return NodePoolVerdict(True, node=what, label=label)
    refused = next((n.kubelet_refused for n in result.nodes if n.kubelet_refused), None)
    if refused:
        first = refused.splitlines()[0]
        return NodePoolVerdict(True, node=f"kubelet refuses to start ({first}); "
                                          + ("runaway" if result.runaway else "no node"), label=label)
    denied = next((n.node_restriction_denied for n in result.nodes if n.node_restriction_denied), None)
    if denied:
        return NodePoolVerdict(True, node=f"kubelet registration denied ({denied})", label=label)
    return NodePoolVerdict(True, node=f"pod {p.state}: {p.reason}" + ("; runaway" if result.runaway else ""),
                           label=label)


class Prober:
    """Runs probe scenarios for one profile on one embedded cluster; caches the shared `written` runs."""

    def __init__(self, profile: str, cluster=None, mode: str | None = None):
        from harness.backends.embedded import EmbeddedBackend
        self.profile, self.mode = profile, mode
        self.cluster = cluster or EmbeddedBackend().start()
        self._written: dict[str, Any] = {}
        self.runs = 0
        self.seconds = 0.0

    def _go(self, name: str, probe: Probe, manifests: list[dict]):
        t0 = time.perf_counter()
        result = _run(scenario_text(name, self.profile, probe, manifests, self.mode), name, self.profile, self.cluster)
        self.runs += 1
        self.seconds += time.perf_counter() - t0
        return result

    def _manifests(self, probe: Probe, pod: dict, labels: dict | None = None) -> list[dict]:
        """The probe's AKSNodeClass and NodePool in the versions the profile's release serves, and `pod`."""
        return [nodeclass_manifest(probe, self.profile), nodepool_manifest(probe, labels, profile=self.profile), pod]

    def written_result(self, probe: Probe):
        ck = probe.context_key()
        if ck not in self._written:
            self._written[ck] = self._go(f"written-{ck}", probe, self._manifests(probe, pod_manifest(PLAIN_POD)))
        return self._written[ck]

    def cell(self, key: str, probe: Probe) -> Cell:
        r = self._go("schedulable", probe, self._manifests(probe, pod_manifest(PROBE_POD, {key: probe.value})))
        sched = _schedulable(r, key)
        w = self.written_result(probe)
        plain = w.pods_of(PLAIN_POD)[0]
        node = next((n for n in w.nodes if n.name == plain.node), None) or (w.nodes[0] if w.nodes else None)
        written = _node_label(node, key)
        r = self._go("nodepool", probe, self._manifests(probe, pod_manifest(PLAIN_POD), {key: probe.value}))
        return Cell(probe.name, probe.value, probe.aks_value, sched, written, _nodepool_verdict(r, key))

    def row(self, entry: LabelEntry) -> Row:
        cells = [self.cell(entry.key, entry.probe)]
        for v in entry.variants:
            cells.append(self.cell(entry.key, v))
        return Row(entry, self.profile, cells)

    def close(self) -> None:
        self.cluster.close()


def run_matrix(profile: str, entries: list[LabelEntry], cluster=None,
               progress: Callable[[int, int, str], None] | None = None,
               mode: str | None = None) -> tuple[list[Row], dict]:
    """Every label's row under `profile` (in PROVISION_MODE `mode`); `progress(done, total, key)` is called after
    each label."""
    prober = Prober(profile, cluster, mode)
    t0 = time.perf_counter()
    rows = []
    try:
        for i, e in enumerate(entries, 1):
            rows.append(prober.row(e))
            if progress is not None:
                progress(i, len(entries), e.key)
    finally:
        if cluster is None:
            prober.close()
    stats = {"profile": profile, **({"mode": mode} if mode else {}), "labels": len(entries), "runs": prober.runs,
             "seconds": round(time.perf_counter() - t0, 3)}
    return rows, stats
