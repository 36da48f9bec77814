"""The built-in kinds' field trees (harness/model/kube/kubefields.py): derived from Kubernetes' OpenAPI documents, and
what a manifest holds beyond them, named as the API server names it."""
from __future__ import annotations

import pytest

from harness.model.kube import kubefields
from harness.model.data import DATA_DIR
from tests.model.upstream.test_releases import _go_module_dir

K8S = _go_module_dir(*kubefields.KUBERNETES)


@pytest.mark.skipif(K8S is None, reason=f"{kubefields.KUBERNETES[0]}@{kubefields.KUBERNETES[1]} not in the Go "
                                        "module cache (the control-plane build puts it there)")
def test_the_data_file_is_what_kubernetes_openapi_documents_derive():
    tree = kubefields.derive(K8S / "api" / "openapi-spec" / "v3")
    assert (DATA_DIR / kubefields.FILE).read_text() == kubefields.file_text(tree)


def test_unknown_fields_are_named_with_their_list_indices_outermost_only():
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labelz": {"a": "b"}},
           "spec": {"containers": [{"name": "a", "image": "x"},
                                   {"name": "b", "image": "x", "madeUp": {"deeper": 1},
                                    "resources": {"requests": {"cpu": "1", "anything/goes": "1"}}}],
                    "nodeSelector": {"any-key": "v"}}}
    assert kubefields.unknown_fields(pod) == [(("metadata", "labelz"), "metadata.labelz"),
                                               (("spec", "containers", 1, "madeUp"), "spec.containers[1].madeUp")]


def test_pod_templates_and_known_fields_are_quiet():
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
              "spec": {"replicas": 2, "selector": {"matchLabels": {"a": "b"}}, "template": {
                  "metadata": {"labels": {"a": "b"}},
                  "spec": {"containers": [{"name": "c", "image": "i", "env": [{"name": "X", "value": "1"}],
                                           "livenessProbe": {"httpGet": {"path": "/", "port": 80}},
                                           "restartPolicyRules": []}],
                           "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "k",
                                                          "whenUnsatisfiable": "DoNotSchedule"}]}}},
              "status": {"replicas": 2}}
    assert kubefields.unknown_fields(deploy) == []
    bad = {**deploy, "spec": {**deploy["spec"], "template": {**deploy["spec"]["template"], "sepc": {}}}}
    assert kubefields.unknown_fields(bad) == [(("spec", "template", "sepc"), "spec.template.sepc")]


def test_kinds_it_does_not_hold_are_left_to_their_own_checks():
    assert kubefields.unknown_fields({"kind": "NodePool", "spec": {"x": 1}}) == []
    assert kubefields.known_kind("Pod") and not kubefields.known_kind("AKSNodeClass")
