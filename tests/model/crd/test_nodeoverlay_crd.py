"""harness/model/crd/nodeoverlay.py and apiversions.overlay_rejection: a NodeOverlay as each release's API server
judges it (the CRD from provider v1.7.2, core v1.7.0+; none before)."""
from __future__ import annotations

import pytest

from harness.backends.embedded import EmbeddedCluster
from harness.model.crd import nodeoverlay, rules as crdrules
from harness.model.crd.apiversions import overlay_rejection
from harness.model.kube.apistatus import APIRejected
from harness.model.upstream.profile import load_profile


def _overlay(**spec):
    return {"apiVersion": "karpenter.sh/v1alpha1", "kind": "NodeOverlay", "metadata": {"name": "o"},
            "spec": {"requirements": [{"key": "node.kubernetes.io/instance-type", "operator": "In",
                                       "values": ["Standard_D4s_v3"]}], **spec}}


def test_a_release_without_the_kind_refuses_it():
    err = overlay_rejection(_overlay(price="1"), load_profile("v1.6.8"))
    assert err is not None and err.message == 'no matches for kind "NodeOverlay" in version "karpenter.sh/v1alpha1"'
    assert overlay_rejection(_overlay(price="1"), load_profile("v1.7.2")) is None


@pytest.mark.parametrize("spec,message", [
    ({"price": "1", "priceAdjustment": "+1"}, "cannot set both 'price' and 'priceAdjustment'"),
    ({"capacity": {"cpu": "1"}}, "invalid resource restricted"),
    ({"price": "cheap"}, 'should match \'^\\d+(\\.\\d+)?$\''),
    ({"weight": 0}, "should be greater than or equal to 1"),
    ({"requirements": [{"key": "kubernetes.io/hostname", "operator": "Exists"}]},
     'label "kubernetes.io/hostname" is restricted'),
])
def test_the_crd_refuses_what_core_s_schema_refuses(spec, message):
    schema = crdrules.spec_schema(load_profile("v1.14.2"), "NodeOverlay")
    assert schema is not None
    admitted = nodeoverlay.admit(_overlay(**spec), schema)
    assert admitted.errors, spec
    err = nodeoverlay.rejection(_overlay(**spec), admitted.errors)
    assert err.message.startswith('NodeOverlay.karpenter.sh "o" is invalid: ') and message in err.message


def test_the_embedded_api_server_stores_a_valid_overlay_and_refuses_it_before_v1_7():
    cluster = EmbeddedCluster("v1.14.2")
    assert cluster.create(_overlay(price="0.01", weight=5))["spec"]["price"] == "0.01"
    with pytest.raises(APIRejected, match="cannot set both"):
        cluster.create({**_overlay(price="1", priceAdjustment="+1"), "metadata": {"name": "both"}})
    with pytest.raises(APIRejected, match="no matches for kind"):
        EmbeddedCluster("v1.6.8").create(_overlay(price="0.01"))
