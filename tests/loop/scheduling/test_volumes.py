"""Volume topology (harness/loop/scheduling/volumes.py)."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.loop.scheduling.volumes import (BIND_COMPLETED, BIND_CONFLICT, CLAIMS, CLAIMS_AND_VOLUMES, NODE_CONFLICT,
                                  NO_CLAIM_CHECKS, VolumeModel)
from harness.model.upstream.profile import load_profile
from harness.model.labels.semantics import semantics_for

SEM = semantics_for(load_profile("upstream"))


def pv(name, *terms, local=False, claim=None):
    spec = {"nodeAffinity": {"required": {"nodeSelectorTerms": [{"matchExpressions": list(t)} for t in terms]}}}
    if local:
        spec["local"] = {"path": "/mnt"}
    if claim:
        spec["claimRef"] = {"namespace": "default", "name": claim}
    return {"kind": "PersistentVolume", "metadata": {"name": name}, "spec": spec}


def pvc(name, volume=None, sc=None):
    spec = {}
    if volume:
        spec["volumeName"] = volume
    if sc:
        spec["storageClassName"] = sc
    return {"kind": "PersistentVolumeClaim", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def pod(*claims):
    return {"metadata": {"name": "p", "namespace": "default"},
            "spec": {"volumes": [{"name": c, "persistentVolumeClaim": {"claimName": c}} for c in claims]}}


def zone(v, key="topology.disk.csi.azure.com/zone"):
    return {"key": key, "operator": "In", "values": [v]}


def model(*objs):
    m = VolumeModel()
    for o in objs:
        m.add(o)
    return m


def test_pv_controller_binds_named_and_claimref_volumes():
    m = model(pv("a", [zone("eastus-1")]), pvc("x", volume="a"), pv("b", [zone("eastus-2")], claim="y"), pvc("y"))
    for name in ("x", "y"):
        assert BIND_COMPLETED in m.pvcs[("default", name)]["metadata"]["annotations"]
    assert m.pvcs[("default", "y")]["spec"]["volumeName"] == "b"
    assert m.validate(pod("x", "y")) is None


def test_csi_zone_key_and_empty_value_are_normalized():
    m = model(pv("a", [zone("")]), pvc("x", volume="a"))
    (alt,) = m.requirements(pod("x"), SEM)
    assert str(alt["topology.kubernetes.io/zone"]) == "topology.kubernetes.io/zone In [0]"


def test_each_term_is_an_alternative_and_volumes_cross_product_keeps_compatible_branches():
    m = model(pv("a", [zone("eastus-1")], [zone("eastus-2")]), pvc("x", volume="a"),
              pv("b", [zone("eastus-2")]), pvc("y", volume="b"))
    alts = m.requirements(pod("x", "y"), SEM)
    assert [sorted(a["topology.kubernetes.io/zone"].values) for a in alts] == [["eastus-2"]]


def test_local_volume_hostname_only_term_is_unconstrained():
    m = model(pv("a", [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}], local=True),
              pvc("x", volume="a"))
    assert [len(a) for a in m.requirements(pod("x"), SEM)] == [0]


def test_kube_scheduler_checks_raw_node_labels():
    m = model(pv("a", [zone("")]), pvc("x", volume="a"))
    assert m.bind_error(pod("x"), {"topology.disk.csi.azure.com/zone": ""}) is None
    assert m.bind_error(pod("x"), {"topology.kubernetes.io/zone": "0"}) == NODE_CONFLICT


def test_unbound_claim_without_storage_class():
    assert m_validate(pvc("x")) == "unbound pvc must define a storage class (PersistentVolumeClaim=default/x, StorageClass=)"


def m_validate(claim):
    return model(claim).validate(pod(claim["metadata"]["name"]))


def immediate(name="imm"):
    return {"kind": "StorageClass", "metadata": {"name": name}, "provisioner": "example.com/none",
            "volumeBindingMode": "Immediate"}


def test_claim_checks_per_core():
    """core-behaviour.yaml unsupportedVolumePods: v1.6.2 passes an unbound Immediate claim and a claim whose
    volume lacks bind-completed; v1.7.0 refuses both; only v1.10.0 refuses a volume being deleted."""
    m = model(immediate(), pvc("x", sc="imm"))
    assert m.validate(pod("x"), NO_CLAIM_CHECKS) is None
    assert m.validate(pod("x"), CLAIMS) == ("failed to validate pvc, pvc with immediate volume binding mode must be "
                                            "bound (PersistentVolumeClaim=default/x, StorageClass=imm)")
    gone = pv("a", [zone("eastus-1")])
    gone["metadata"]["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    m = model(gone, pvc("x", volume="a"))
    m.pvcs[("default", "x")]["metadata"]["annotations"] = {BIND_COMPLETED: "yes"}
    assert m.validate(pod("x"), CLAIMS) is None
    assert m.validate(pod("x"), CLAIMS_AND_VOLUMES).startswith(
        "failed to validate pvc, persistentvolume is being deleted")
    m = model(pvc("x", volume="missing"), pvc("y"), pvc("z", sc="nope"))
    assert [m.validate(pod(c), NO_CLAIM_CHECKS) for c in "xyz"] == [
        'failed to validate pvc, PersistentVolume "missing" not found '
        "(PersistentVolume=missing, PersistentVolumeClaim=x)",
        "unbound pvc must define a storage class (PersistentVolumeClaim=y)",
        'failed to validate storage class, StorageClass.storage.k8s.io "nope" not found (PersistentVolumeClaim=z, '
        "StorageClass=nope)"]


def test_before_alternatives_only_each_volumes_first_term_counts():
    """core v1.12.0 volumetopology.go: one requirement set of every volume's first term."""
    m = model(pv("a", [zone("eastus-1")], [zone("eastus-2")]), pvc("x", volume="a"),
              pv("b", [{"key": "team", "operator": "In", "values": ["blue"]}]), pvc("y", volume="b"))
    (alt,) = m.requirements(pod("x", "y"), SEM, alternatives=False)
    assert sorted(alt["topology.kubernetes.io/zone"].values) == ["eastus-1"] and sorted(alt["team"].values) == ["blue"]
    local = model(pv("a", [{"key": "kubernetes.io/hostname", "operator": "In", "values": ["n1"]}], local=True),
                  pvc("x", volume="a"))
    assert local.requirements(pod("x"), SEM, alternatives=False) is None


def test_wffc_claim_is_provisioned_on_the_node_zone():
    sc = {"kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "disk.csi.azure.com",
          "volumeBindingMode": "WaitForFirstConsumer"}
    m = model(sc, pvc("x", sc="s"))
    assert m.requirements(pod("x"), SEM) is None
    (made,) = m.provision_for(pod("x"), {"topology.disk.csi.azure.com/zone": "eastus-3"})
    assert m.pvs[made]["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        zone("eastus-3")]


@pytest.mark.parametrize("provisioner, mode, bound, waits", [
    ("blob.csi.azure.com", "WaitForFirstConsumer", False, True),    # not running: PreBind waits
    ("disk.csi.azure.com", "WaitForFirstConsumer", False, False),   # running
    ("kubernetes.io/azure-disk", "WaitForFirstConsumer", False, False),   # in-tree name: its CSI driver
    ("kubernetes.io/no-provisioner", "WaitForFirstConsumer", False, False),   # the filter's, not PreBind's
    ("blob.csi.azure.com", "Immediate", False, False),              # the filter's (unbound immediate)
    ("blob.csi.azure.com", "WaitForFirstConsumer", True, False),    # bound already
])
def test_prebind_waits_only_for_a_provisioner_the_cluster_does_not_run(provisioner, mode, bound, waits):
    sc = {"kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": provisioner, "volumeBindingMode": mode}
    objs = [sc, pvc("x", sc="s", volume="v" if bound else None)] + ([pv("v", [zone("eastus-1")], claim="x")] if bound else [])
    got = model(*objs).unserved_provisioner(pod("x"), ("disk.csi.azure.com", "file.csi.azure.com"))
    assert got == (provisioner if waits else None)


def test_a_claim_selected_for_one_node_refuses_the_others_until_a_running_provisioner_releases_it():
    sc = {"kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "blob.csi.azure.com",
          "volumeBindingMode": "WaitForFirstConsumer"}
    m = model(sc, pvc("x", sc="s"))
    m.select_node(pod("x"), "n1")
    assert m.bind_error(pod("x"), {"kubernetes.io/hostname": "n1"}) is None
    assert m.bind_error(pod("x"), {"kubernetes.io/hostname": "n2"}) == BIND_CONFLICT
    # n1 is gone: nobody runs blob, so the claim keeps naming it; once blob runs, it is released
    assert m.reschedule({"n2"}, ("disk.csi.azure.com",)) == []
    assert m.reschedule({"n2"}, ("blob.csi.azure.com",)) == [("default", "x")]
    assert m.bind_error(pod("x"), {"kubernetes.io/hostname": "n2"}) is None


# -- PV node affinity matching is topology.match_expression (one implementation) ------------------
def _bound(*exprs):
    return model(pv("a", list(exprs)), pvc("x", volume="a"))


def test_gt_lt_on_pv_node_affinity_match_integers():
    m = _bound({"key": "rank", "operator": "Gt", "values": ["5"]})
    assert m.bind_error(pod("x"), {"rank": "6"}) is None
    assert m.bind_error(pod("x"), {"rank": "5"}) == NODE_CONFLICT
    m = _bound({"key": "rank", "operator": "Lt", "values": ["-3"]})
    assert m.bind_error(pod("x"), {"rank": "-4"}) is None
    assert m.bind_error(pod("x"), {"rank": "+0"}) == NODE_CONFLICT


@pytest.mark.parametrize("expr, labels", [
    ({"key": "rank", "operator": "Gt", "values": ["1", "2"]}, {"rank": "9"}),     # not exactly one value
    ({"key": "rank", "operator": "Gt", "values": []}, {"rank": "9"}),
    ({"key": "rank", "operator": "Gt", "values": [" 1"]}, {"rank": "9"}),         # int() would take these
    ({"key": "rank", "operator": "Gt", "values": ["1"]}, {"rank": "1_0"}),
    ({"key": "rank", "operator": "Gt", "values": ["1"]}, {"rank": "\u0669"}),     # Arabic-Indic 9
    ({"key": "rank", "operator": "Lt", "values": ["1"]}, {"rank": "-99999999999999999999"}),   # beyond int64
    ({"key": "rank", "operator": "Gt", "values": ["1"]}, {"rank": "9" * 5000}),   # past int()'s digit limit
])
def test_malformed_gt_lt_fails_the_term_as_in_component_helpers(expr, labels):
    """kube-scheduler's VolumeBinding filter (k8s.io/component-helpers v0.36.3 storage/volume
    CheckNodeAffinity -> nodeaffinity LazyErrorNodeSelector.Match): a Gt/Lt that is not exactly one
    int64 value is a parse error of its term, and the label value must parse as int64
    (k8s.io/apimachinery v0.36.3 pkg/labels/selector.go Requirement.Matches): no match, no crash."""
    assert _bound(expr).bind_error(pod("x"), labels) == NODE_CONFLICT


def _previous_match(labels: dict, expr: dict) -> bool:
    """volumes.py's own matcher before it was unified, kept here as the reference for valid input."""
    key, op, values = expr.get("key"), expr.get("operator"), [str(v) for v in expr.get("values") or []]
    if op == "In":
        return key in labels and labels[key] in values
    if op == "NotIn":
        return key not in labels or labels[key] not in values
    if op == "Exists":
        return key in labels
    if op == "DoesNotExist":
        return key not in labels
    if op in ("Gt", "Lt"):
        try:
            a, b = int(labels[key]), int(values[0])
        except (KeyError, ValueError, IndexError):
            return False
        return a > b if op == "Gt" else a < b
    return False


_INT64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)
_VALUE = st.sampled_from(["a", "b", "eastus-1", "", "0"])


@settings(max_examples=300, deadline=None)
@given(op=st.sampled_from(["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte"]),
       values=st.lists(_VALUE, max_size=3), have=st.one_of(st.none(), _VALUE, _INT64.map(str)),
       want=_INT64)
def test_same_verdict_as_before_on_valid_input(op, values, have, want):
    """On valid input (Gt/Lt: one decimal int64 value) the unified matcher agrees with the old one."""
    from harness.loop.scheduling.topology import match_expression
    expr = {"key": "k", "operator": op, "values": [str(want)] if op in ("Gt", "Lt") else values}
    labels = {} if have is None else {"k": have}
    assert match_expression(labels, expr) == _previous_match(labels, expr)


def test_kube_scheduler_nominates_a_pod_waiting_in_prebind_from_1_35():
    from harness.loop.kube.binding import writes_nominated_node
    assert [writes_nominated_node(v) for v in ("1.33.0", "1.34.2", "1.35.0", "1.36.3")] == [False, False, True, True]


def test_before_v1_9_the_volume_zone_is_injected_into_karpenters_copy_of_the_pod():
    """core v1.7.1 VolumeTopology.Inject: the first term goes into every required term (one made if none),
    where Karpenter's requirements see it; v1.10.0 keeps it apart as the NodeClaim's alternative."""
    from harness.loop.scheduling.pods import PodView, admission_error
    from harness.model.upstream.corebehaviour import CoreBehaviour
    key = "topology.kubernetes.io/zone"
    m = model(pv("a", [zone("eastus-1", key)], [zone("eastus-2", key)]), pvc("x", volume="a"))
    view = PodView(pod("x"), 0)
    m.plan(view, SEM, CoreBehaviour.of(load_profile("v1.7.2")))
    assert view.volume_requirements is None
    assert view.required_terms() == [{"matchExpressions": [zone("eastus-1", key)]}]
    assert sorted(view.requirements(SEM, strict=True)[key].values) == ["eastus-1"]
    assert view.own_required_terms() == [] and admission_error(view, load_profile("v1.7.2"), SEM) is None
    m.plan(view, SEM, CoreBehaviour.of(load_profile("v1.10.2")))
    assert view.volume_affinity == () and key not in view.requirements(SEM)
    assert [sorted(a[key].values) for a in view.volume_requirements] == [["eastus-1"]]
