"""Volume topology (harness/loop/volumes.py)."""
from __future__ import annotations

from harness.loop.volumes import BIND_COMPLETED, NODE_CONFLICT, VolumeModel
from harness.model.profile import load_profile
from harness.model.semantics import semantics_for

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


def test_wffc_claim_is_provisioned_on_the_node_zone():
    sc = {"kind": "StorageClass", "metadata": {"name": "s"}, "provisioner": "disk.csi.azure.com",
          "volumeBindingMode": "WaitForFirstConsumer"}
    m = model(sc, pvc("x", sc="s"))
    assert m.requirements(pod("x"), SEM) is None
    (made,) = m.provision_for(pod("x"), {"topology.disk.csi.azure.com/zone": "eastus-3"})
    assert m.pvs[made]["spec"]["nodeAffinity"]["required"]["nodeSelectorTerms"][0]["matchExpressions"] == [
        zone("eastus-3")]
