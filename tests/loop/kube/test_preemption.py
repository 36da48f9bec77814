"""harness/loop/kube/preemption.py and its use by loop/kube/binding.py: kube-scheduler's DefaultPreemption
(k8s.io/kubernetes v1.36.3 pkg/scheduler/framework/plugins/defaultpreemption, pkg/scheduler/framework/
preemption) in the loop, and Karpenter leaving a nominated pod alone (core pkg/utils/pod/scheduling.go
IsPreempting). End to end: scenarios/workloads/priority-preemption.scenario.yaml."""
from __future__ import annotations

from harness.loop.kube.preemption import Candidate, Preemption, resolvable
from tests.loop.loopkit import deployment, nodeclass, nodepool, pod, simulation

HIGH = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "high"}, "value": 1000}
MID = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "mid"}, "value": 500}
NEVER = {"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": "never"}, "value": 1000,
         "preemptionPolicy": "Never"}
D2 = nodepool(requirements=[{"key": "node.kubernetes.io/instance-type", "operator": "In", "values": ["Standard_D2s_v3"]}])


def live(sim, owner: str) -> list:
    return [p for p in sim.result.pods.values() if p.owner_name == owner and p.state != "deleted"]


def test_a_high_priority_pod_preempts_and_its_victims_replacement_gets_a_node(embedded):
    with simulation(embedded, [nodeclass(), D2, deployment("batch", replicas=1, cpu="1500m")]) as sim:
        sim.converge()
        (batch,) = live(sim, "batch")
        node = batch.node
        sim.apply([HIGH, pod("urgent", "1500m", priorityClassName="high")])
        sim.converge()
        urgent = sim.result.pods["default/urgent"]
        assert urgent.node == node and not urgent.nodeclaims
        assert sim.result.pods[f"default/{batch.name}"].state == "deleted"
        (again,) = live(sim, "batch")
        assert again.node not in (None, node)
        assert [e["message"] for e in sim.result.events if e["reason"] == "Preempted"] == [
            f"Preempted by pod {sim.cluster.get('Pod', 'urgent', 'default')['metadata']['uid']} on node {node}"]
        acts = [(d.controller, d.action, d.subject) for d in sim.result.decisions if d.controller == "kube-scheduler"]
        assert acts == [("kube-scheduler", "pod-preempting", "Pod/default/urgent"),
                        ("kube-scheduler", "pod-preempted", f"Pod/default/{batch.name}")]


def test_the_fewest_and_least_important_victims(embedded):
    """Three 500m pods and room for 400m: a 1-CPU pod needs two of them gone; the oldest is the most
    important (MoreImportantPod: earlier start) and is given back first."""
    with simulation(embedded, [nodeclass(), D2, MID, deployment("low", replicas=3, cpu="500m")]) as sim:
        sim.converge()
        pods = sorted(live(sim, "low"), key=lambda p: sim.pod_views[f"default/{p.name}"].order)
        assert len({p.node for p in pods}) == 1
        sim.apply([HIGH, pod("urgent", "1", priorityClassName="high")])
        sim.converge()
        gone = {p.name for p in pods if sim.result.pods[f"default/{p.name}"].state == "deleted"}
        assert len(gone) == 2 and pods[0].name not in gone


def test_a_lower_priority_victim_before_a_higher_one(embedded):
    mid = pod("mid", "900m", priorityClassName="mid")
    with simulation(embedded, [nodeclass(), D2, MID, deployment("low", replicas=1, cpu="900m"), mid]) as sim:
        sim.converge()
        assert sim.result.pods["default/mid"].node == live(sim, "low")[0].node
        sim.apply([HIGH, pod("urgent", "900m", priorityClassName="high")])
        sim.converge()
        assert sim.result.pods["default/mid"].state == "scheduled"
        assert sim.result.pods["default/urgent"].node == sim.result.pods["default/mid"].node


def test_preemption_policy_never_preempts_nothing(embedded):
    with simulation(embedded, [nodeclass(), D2, deployment("batch", replicas=1, cpu="1500m")]) as sim:
        sim.converge()
        (batch,) = live(sim, "batch")
        sim.apply([NEVER, pod("urgent", "1500m", priorityClassName="never")])
        sim.converge()
        assert sim.result.pods[f"default/{batch.name}"].state == "scheduled"
        assert sim.result.pods["default/urgent"].node not in (None, batch.node)
        assert not any(e["reason"] == "Preempted" for e in sim.result.events)


def test_karpenter_leaves_a_nominated_pod_alone_while_its_victim_terminates(embedded):
    """The victim sleeps 20 s in preStop: the preemptor waits nominated to its Node, and Karpenter provisions for the
    victim's replacement only (IsPreempting). The replacement's new Node is Ready before the victim has gone, and
    kube-scheduler, finding the nominated Node still full, binds the higher-priority preemptor there first
    (schedule_one.go: the nominated Node is only tried first); the replacement gets a Node of its own after."""
    slow = deployment("batch", replicas=1, cpu="1500m")
    slow["spec"]["template"]["spec"]["containers"][0]["lifecycle"] = {"preStop": {"sleep": {"seconds": 20}}}
    with simulation(embedded, [nodeclass(), D2, slow]) as sim:
        sim.converge()
        (batch,) = live(sim, "batch")
        node = batch.node
        sim.apply([HIGH, pod("urgent", "1500m", priorityClassName="high")])
        sim.converge()
        urgent = sim.result.pods["default/urgent"]
        assert not urgent.nodeclaims and urgent.node not in (None, node)
        assert any(d.action == "pod-not-provisionable" and d.subject == "Pod/default/urgent"
                   for d in sim.result.decisions)
        assert sim.state.preempting == {}
        (again,) = live(sim, "batch")
        assert again.node not in (None, node, urgent.node)


def test_only_resolvable_failures_are_candidates():
    from tests.loop.loopkit import pod as mk
    from harness.loop.scheduling.pods import PodView
    pv = PodView(mk("p", "1"), 1)
    alloc = {"cpu": 1900, "pods": 110}
    assert resolvable(["Insufficient cpu"], pv, alloc)
    assert not resolvable(["Insufficient cpu"], pv, {"cpu": 900})          # more than the Node has at all
    assert not resolvable(["node(s) had untolerated taint(s)"], pv, alloc)
    assert not resolvable([], pv, alloc)


def test_pick_one_node_prefers_no_pdb_violation_then_lower_priorities(embedded):
    with simulation(embedded, [MID, pod("a", priorityClassName="mid"), pod("b"), pod("c")]) as sim:
        pick = Preemption(sim.state, None).pick
        a, b, c = (f"default/{n}" for n in "abc")
        assert pick([Candidate("n1", [b], 1), Candidate("n2", [a], 0)]).node == "n2"
        assert pick([Candidate("n1", [a], 0), Candidate("n2", [b], 0)]).node == "n2"
        assert pick([Candidate("n1", [b, c], 0), Candidate("n2", [c], 0)]).node == "n2"
