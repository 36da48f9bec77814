"""The DaemonSet controller's tolerations on the pods it makes (AddOrUpdateDaemonPodTolerations)."""
from harness.model.kube.daemonsetpods import with_daemon_tolerations


def _keys(spec):
    return [(t["key"], t["effect"], t.get("tolerationSeconds")) for t in spec["tolerations"]]


def test_every_daemon_pod_tolerates_the_node_condition_taints():
    out = with_daemon_tolerations({"containers": [{"name": "a"}]})
    assert _keys(out) == [
        ("node.kubernetes.io/not-ready", "NoExecute", None), ("node.kubernetes.io/unreachable", "NoExecute", None),
        ("node.kubernetes.io/disk-pressure", "NoSchedule", None),
        ("node.kubernetes.io/memory-pressure", "NoSchedule", None),
        ("node.kubernetes.io/pid-pressure", "NoSchedule", None),
        ("node.kubernetes.io/unschedulable", "NoSchedule", None)]


def test_a_matching_template_toleration_is_replaced_in_place_and_host_network_adds_one():
    spec = {"hostNetwork": True, "tolerations": [
        {"key": "example.com/x", "operator": "Exists"},
        {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}]}
    out = with_daemon_tolerations(spec)
    assert out["tolerations"][:2] == [{"key": "example.com/x", "operator": "Exists"},
                                      {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute"}]
    assert out["tolerations"][-1]["key"] == "node.kubernetes.io/network-unavailable"
    assert spec["tolerations"][1]["tolerationSeconds"] == 60          # the template is not touched
