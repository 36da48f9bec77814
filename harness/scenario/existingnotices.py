"""What a scenario's existing state leaves to assumption, said once per scenario wherever it runs (`harness run`,
`harness validate`, the pytest plugin): nodes seeded not Ready (given.existingNodes[].ready), whose aftermath on a
real cluster the simulation does not play, pods seeded terminating until a time `harness new` assumed
(harness/model/kube/podtermination.py STOPS_AT), and stand-in pods `harness new` made for pods a dump lacks
(harness/scenario/standins.py)."""
from __future__ import annotations

from harness.model.kube.podtermination import STOPS_AT
from harness.scenario.notices import Notice

# what follows a Node's Ready False or Unknown on a cluster that neither engine plays: the taint-eviction controller
# (k8s.io/kubernetes v1.36.3 pkg/controller/tainteviction) evicts a pod once its toleration of the NoExecute
# not-ready or unreachable taint runs out, 300 s by default (plugin/pkg/admission/defaulttolerationseconds
# defaultNotReadyTolerationSeconds, defaultUnreachableTolerationSeconds). Core's node repair is simulated
# (harness/loop/lifecycle/health.py) with its feature gate on; a seeded node's condition dates from the run's start.
NOT_SIMULATED = ("not simulated: kube-controller-manager's taint-based eviction of their pods once the pods' "
                 "NoExecute tolerations run out (300 s by default): they stay as seeded, their pods bound, unless "
                 "node repair replaces them (core's NodeRepair feature gate, off by default: given.featureGates."
                 "NodeRepair; with it the provider repairs a node NotReady or Unknown for 10 minutes, counted from "
                 "the run's start)")


def existing_notices(sc) -> list[Notice]:
    from harness.scenario import standins
    out: list[Notice] = []
    entries = (sc.given or {}).get("existingNodes") or []
    down = [(i, e) for i, e in enumerate(entries) if isinstance(e, dict) and e.get("ready", True) is not True]
    if down:
        i, _ = down[0]
        names = [f"{e.get('nodeClaim') or e.get('name') or f'existingNodes[{j}]'} Ready "
                 f"{'Unknown' if str(e.get('ready')) == 'Unknown' else 'False'}" for j, e in down]
        out.append(Notice(str(sc.file), sc.doc.line(("given", "existingNodes", i, "ready")),
                          f"{len(down):,} existing node(s) not Ready ({', '.join(names[:3])}"
                          + (f" and {len(names) - 3:,} more" if len(names) > 3 else "") + "): Karpenter counts a "
                          "managed one as disrupting in its NodePool's budget and no pod schedules to it; "
                          + NOT_SIMULATED, "unmodeled"))
    stopping = [(i, j, p) for i, e in enumerate(entries) if isinstance(e, dict)
                for j, p in enumerate(e.get("pods") or []) if isinstance(p, dict)
                and STOPS_AT in (((p.get("metadata") or {}).get("annotations")) or {})]
    for i, j, p in stopping:
        meta = p["metadata"]
        out.append(Notice(str(sc.file), sc.doc.line(("given", "existingNodes", i, "pods", j, "metadata", "annotations",
                                                      STOPS_AT)),
                          f"Pod {meta.get('name')} is terminating and its containers are assumed to stop at "
                          f"{meta['annotations'][STOPS_AT]} ({STOPS_AT}), not at its delete plus its preStop sleep: "
                          "the dump showed it still terminating later than that; its drain, and the node's, wait "
                          "until then unless Karpenter deletes it again", "assumed"))
    names = standins.in_scenario(sc.given, sc.manifests)
    if names:
        first = next(m for m in sc.manifests if m.obj.get("kind") == "Deployment"
                     and m.obj["metadata"].get("name") == names[0])
        out.append(Notice(str(first.file), first.line, standins.said(names), "assumed"))
    return out
