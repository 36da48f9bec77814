"""Stand-in pods: what a dump's pods do not explain of its NodeClaims' requests, held on their nodes.

A NodeClaim's spec.resources.requests is what the provisioning round that made it packed there: its pods and
the DaemonSets' overhead (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/provisioning/scheduling/nodeclaim.go
NewNodeClaim, Add, FinalizeScheduling). A dump of one namespace's pods, or of NodePools and NodeClaims only,
shows such a node empty, and the run deletes it as Empty. `harness new` (harness/dump/new.py) compares
each running, initialized NodeClaim's requests with the input's pods on it (finished ones included) and the
DaemonSets the run places, names the namespaces whose pods are evidently missing, and holds what is left on
the node: one stand-in pod per node, of a Deployment `stand-in-<NodeClaim>` the scenario carries, labelled
STANDIN. The assumption (ASSUMED) invents no protection: a controller's reschedulable pod, no PDB, no
do-not-disrupt. `--complete` says the input holds every pod. Why: docs/reproduce-a-ticket.md (An incomplete
dump).
"""
from __future__ import annotations

from dataclasses import dataclass

from harness.scenario.notices import ObjectNote

STANDIN = "harness.karpenter.azure.com/stand-in"        # the stand-in's label: the NodeClaim it stands in on
STANDS_FOR = "harness.karpenter.azure.com/stands-for"   # ... and its annotation: what it holds, and why
PREFIX = "stand-in-"
ASSUMED = ("I assumed the missing pods are reschedulable pods of a controller (one per node, a Deployment of the "
           "scenario), with no PodDisruptionBudget and no do-not-disrupt annotation, tolerating the node's taints: "
           "Karpenter may move them as it would the customer's pods, but cannot take the node for Empty")
# resources a stand-in holds: the NodeClaim's requests but the pod count (a stand-in is one pod)
NOT_HELD = ("pods",)


@dataclass
class Unexplained:
    """One NodeClaim whose requests exceed what the input explains on its node."""
    nodeclaim: str
    requested: dict[str, int]
    explained: dict[str, int]

    @property
    def held(self) -> dict[str, int]:
        return {k: v - self.explained.get(k, 0) for k, v in self.requested.items()
                if k not in NOT_HELD and v > self.explained.get(k, 0)}


def _requests(spec) -> dict[str, int]:
    """A pod spec's requests, or nothing for one the loader will refuse at its line."""
    from harness.loop.scheduling.pods import pod_requests
    from harness.model.values.resources import QuantityError
    try:
        return pod_requests(spec if isinstance(spec, dict) else {})
    except (QuantityError, ValueError, TypeError, AttributeError):
        return {}


def _add(total: dict[str, int], more: dict[str, int]) -> None:
    for k, v in more.items():
        total[k] = total.get(k, 0) + v


def unexplained(entries: list[dict], daemonsets: list[dict], finished: dict[str, list[dict]],
                node_of: dict[str, str]) -> list[tuple[int, Unexplained]]:
    """(index in `entries`, what is unexplained) for each running, initialized, not deleting managed entry
    with `requests` more than its pods, its node's `finished` pods (node name -> pods) and one pod of each
    DaemonSet explain. `node_of`: NodeClaim name -> its Node's name. In flight and deleting nodes are left
    out: their pods are still to come, or already evicted."""
    from harness.model.values.resources import parse_resource_list
    daemons: dict[str, int] = {}
    for ds in daemonsets:       # every DaemonSet of the input placed on every node: never more than it explains
        _add(daemons, _requests(((ds.get("spec") or {}).get("template") or {}).get("spec")))
    out = []
    for i, e in enumerate(entries):
        if not e.get("nodePool") or not e.get("requests") or not e.get("registered", True) \
                or not e.get("initialized", True) or e.get("deleting"):
            continue
        try:
            requested = parse_resource_list(e["requests"])
        except ValueError:
            continue
        explained = dict(daemons)
        for p in e.get("pods") or []:
            _add(explained, _requests(p.get("spec")))
        for p in finished.get(node_of.get(str(e.get("nodeClaim")), ""), ()):
            _add(explained, _requests(p.get("spec")))
        found = Unexplained(str(e.get("nodeClaim")), requested, explained)
        # as many pods as the round packed there are accounted for: what is left came from pods replaced by
        # smaller ones since, not from pods the input lacks
        if found.held and not ("pods" in requested and requested["pods"] <= explained.get("pods", 0)):
            out.append((i, found))
    return out


def missing_namespaces(pods: list[dict], manifests: list[dict]) -> str:
    """What says which pods the input lacks: no Pod at all, or the namespaces its objects name but hold no
    pod of, and kube-system's absence (every AKS node runs kube-system DaemonSets' pods)."""
    if not pods:
        return "the input holds no Pod"
    have = {str((p.get("metadata") or {}).get("namespace") or "default") for p in pods}
    named = set()
    for m in manifests:
        meta = m.get("metadata") or {}
        if m.get("kind") == "Namespace":
            named.add(str(meta.get("name")))
        elif m.get("kind") not in ("NodePool", "AKSNodeClass", "StorageClass", "PersistentVolume", "RuntimeClass",
                                   "PriorityClass"):
            named.add(str(meta.get("namespace") or "default"))
    without = sorted(named - have)
    parts = [f"its pods are of namespace(s) {', '.join(sorted(have)[:5])}"
             + (f" and {len(have) - 5:,} more" if len(have) > 5 else "") + " only"]
    if without:
        parts.append(f"it names namespace(s) {', '.join(without[:5])}" + (f" and {len(without) - 5:,} more"
                                                                          if len(without) > 5 else "")
                     + " but holds none of their pods")
    if "kube-system" not in have:
        parts.append("it holds no kube-system pod (an AKS node runs kube-system DaemonSets' pods)")
    return "; ".join(parts)


def _text(resources: dict[str, int]) -> str:
    from harness.model.values.resources import format_resource
    return ", ".join(f"{k} {format_resource(k, v)}" for k, v in sorted(resources.items()) if v)


def deployment(found: Unexplained, taints: list[dict], namespace: str = "default") -> tuple[dict, dict]:
    """The stand-in's Deployment and its one pod, bound where the entry runs (owned as a Deployment's pod
    is, through a ReplicaSet `<Deployment>-dump`: dumpplacement.py does the same)."""
    from harness.model.values.resources import format_resource_list
    name = PREFIX + found.nodeclaim
    label = found.nodeclaim if len(found.nodeclaim) <= 63 else "true"
    why = (f"NodeClaim {found.nodeclaim}'s spec.resources.requests less what the input's pods on its node and "
           f"its DaemonSets explain: {_text(found.held)}")
    template = {"metadata": {"labels": {STANDIN: label}, "annotations": {STANDS_FOR: why}},
                "spec": {"containers": [{"name": "stand-in", "image": "stand-in",
                                         "resources": {"requests": format_resource_list(found.held)}}],
                         # the pods that ran there tolerated its taints; nothing else is known of them
                         "tolerations": [{"key": t["key"], "operator": "Exists", "effect": t["effect"]}
                                         for t in taints if t.get("key") and t.get("effect")]}}
    if not template["spec"]["tolerations"]:
        del template["spec"]["tolerations"]
    import copy
    dep = {"apiVersion": "apps/v1", "kind": "Deployment",
           "metadata": {"name": name, "namespace": namespace, "labels": {STANDIN: label},
                        "annotations": {STANDS_FOR: why}},
           "spec": {"replicas": 1, "selector": {"matchLabels": {STANDIN: label}}, "template": template}}
    pod = {"apiVersion": "v1", "kind": "Pod",
           "metadata": {**copy.deepcopy(template["metadata"]), "name": f"{name}-dump-0", "namespace": namespace,
                        "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": f"{name}-dump",
                                             "controller": True}]},
           "spec": copy.deepcopy(template["spec"])}
    return dep, pod


def hold(entries: list[dict], found: list[tuple[int, Unexplained]], manifests: list[dict], expect: dict,
         notes: list[str], evidence: str, complete: bool) -> None:
    """Each found NodeClaim held as busy as it says (a stand-in Deployment in `manifests`, its pod on the
    entry, `expect.pods` naming it), with a note per node and one saying what was assumed; with `complete`
    (--complete) only said."""
    if not found:
        return
    if complete:
        notes.append(f"{len(found):,} NodeClaim(s) ask for more than the input's pods on them and its DaemonSets "
                     f"explain ({', '.join(f.nodeclaim for _, f in found[:3])}"
                     + (f" and {len(found) - 3:,} more" if len(found) > 3 else "")
                     + "); --complete: the input holds every pod, so the rest is taken as pods gone since: no stand-in")
        return
    for i, f in found:
        entry = entries[i]
        dep, pod = deployment(f, entry.get("taints") or [])
        manifests.append(dep)
        entry.setdefault("pods", []).append(pod)
        expect.setdefault("pods", {})[dep["metadata"]["name"]] = {"scheduled": True}
        text = (f"NodeClaim {f.nodeclaim}: spec.resources.requests {_text({k: v for k, v in f.requested.items() if k not in NOT_HELD})}; "
                f"the input's pods there and its DaemonSets explain {_text({k: v for k, v in f.explained.items() if k not in NOT_HELD}) or 'nothing'}: "
                f"stand-in pod {pod['metadata']['name']} holds {_text(f.held)}")
        notes.append(ObjectNote(text, f.nodeclaim, ("stand-in",), "", "NodeClaims",
                                ": their requests less what the input's pods and DaemonSets explain are held by "
                                "stand-in pods (Deployments stand-in-<NodeClaim>)"))
    notes.append(f"the input is incomplete: {len(found):,} NodeClaim(s) ask for more than its pods on them and its "
                 f"DaemonSets explain ({evidence}); each is kept as busy as it says by a stand-in pod labelled "
                 f"{STANDIN}. {ASSUMED}. Pass --complete if the input holds every pod")


def in_scenario(given: dict, manifests) -> list[str]:
    """The stand-in Deployments a scenario carries (by their label), by name."""
    out = []
    for m in manifests:
        obj = getattr(m, "obj", m)
        if obj.get("kind") == "Deployment" and STANDIN in ((obj.get("metadata") or {}).get("labels") or {}):
            out.append(str(obj["metadata"].get("name")))
    return out


def said(names: list[str]) -> str:
    """What a run says of a scenario with stand-ins, wherever it gives a verdict."""
    return (f"{len(names):,} stand-in pod(s) ({', '.join(names[:3])}" + (f" and {len(names) - 3:,} more" if len(names) > 3 else "")
            + ") hold NodeClaim requests the dump's pods do not explain (the dump was incomplete); " + ASSUMED)
