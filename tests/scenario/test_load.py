"""Scenario loading (harness/scenario/load.py): explicit nulls read as the API server reads them; the JSON Schema check judges the items of a dump scenario's
long lists (manifests, existing nodes and their pods, the expectations per node and per pod) once per verdict key, with the verdict and the errors of
the item-by-item check."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from harness.scenario.load import _item_schemas, _judged_alike, _validator, load_scenarios, schema_errors
from harness.scenario.yamlsource import Document, SourceError


def _scenario(pods: list) -> dict:
    return {"apiVersion": "harness.karpenter.azure.com/v1alpha1", "kind": "Scenario", "metadata": {"name": "pods"},
            "given": {"skus": ["Standard_D2s_v3"],
                      "existingNodes": [{"name": "n-1", "instanceType": "Standard_D2s_v3", "pods": pods[:1]},
                                        {"name": "n-2", "instanceType": "Standard_D2s_v3", "pods": pods[1:]}]}}


def _pod(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"web-{i}", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": f"acr.io/web:{i}"}]}}


def test_the_shipped_schema_judges_long_lists_alike():
    # a keyword verdictkey does not read, added to the items' schema or on the way there, turns this off for
    # that list (its items judged one by one again: correct, but most of the check at 5,000 nodes)
    assert set(_item_schemas()) == {("manifests",), ("given", "existingNodes"), ("expect", "nodes"), ("expect", "pods")}


def test_a_bad_pod_among_thousands_is_named_as_the_whole_check_names_it():
    pods = [_pod(i) for i in range(3000)]
    assert schema_errors(Document("s.yaml", _scenario(pods), {}, 1)) == []
    pods[2700]["apiVersion"] = "v2"
    errors = schema_errors(Document("s.yaml", _scenario(pods), {}, 1))
    assert [e.reason for e in errors] == ["given.existingNodes.1.pods.2699.apiVersion: 'v2' is not one of ['v1']"]
    pods[2500]["metadata"]["name"] = 5
    errors = schema_errors(Document("s.yaml", _scenario(pods), {}, 1))
    assert [e.reason for e in errors] == ["given.existingNodes.1.pods.2499.metadata.name: 5 is not of type 'string'",
                                          "given.existingNodes.1.pods.2699.apiVersion: 'v2' is not one of ['v1']"]


_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-1, 1), st.sampled_from([1.0, 1.5, "v1", "Pod", "v2", "", "web"])),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["name", "a"]), inner, max_size=2)),
    max_leaves=3)
# where an item differs from the one before it: a pod's fields the schema reads, one it does not, the whole pod;
# a node's fields (a time's pattern, an enum, a closed mapping) and a manifest's
_FIELDS = st.sampled_from([("pods", "apiVersion"), ("pods", "kind"), ("pods", "metadata"), ("pods", "metadata", "name"),
                           ("pods", "metadata", "labels"), ("pods", "metadata", "uid"), ("pods", "spec"), ("pods",),
                           ("node", "createdAt"), ("node", "capacityType"), ("node", "nodePool"), ("node", "extra"),
                           ("node",), ("manifest", "kind"), ("manifest", "file"), ("manifest", "metadata", "name"),
                           ("manifest",)])
_VALUES = st.one_of(st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-1, 1), st.sampled_from([1.0, 1.5, "v1", "Pod", "v2", "", "web",
                                                                             "spot", "2026-11-20T10:00:00Z", "x.yaml"])),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["name", "a"]), inner,
                                                                         max_size=2)),
    max_leaves=3))


def _edited(items: list, path: tuple, value) -> list:
    """`items` and one more: the last with the value at `path` set (a path through a non-mapping replaces it)."""
    if not path:
        return items + [value]
    item = dict(items[-1]) if isinstance(items[-1], dict) else {}
    if len(path) == 2:
        item[path[0]] = {**(item.get(path[0]) if isinstance(item.get(path[0]), dict) else {}), path[1]: value}
    else:
        item[path[0]] = value
    return items + [item]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_FIELDS, _VALUES), max_size=6))
def test_judging_items_alike_agrees_with_judging_each(edits):
    pods, nodes = [_pod(0)], [{"name": "n-1", "instanceType": "Standard_D2s_v3", "createdAt": "2026-11-20T09:00:00Z"}]
    manifests = [{"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "web"}}]
    for (where, *path), value in edits:
        if where == "pods":
            pods = _edited(pods, tuple(path), value)
        elif where == "node":
            nodes = _edited(nodes, tuple(path), value)
        else:
            manifests = _edited(manifests, tuple(path), value)
    data = _scenario(pods)
    data["given"]["existingNodes"] += nodes
    data["manifests"] = manifests
    assert _validator().is_valid(_judged_alike(data)) == _validator().is_valid(data)


_EXPECTED = st.one_of(st.sampled_from(["scheduled", "pending", "running", 1, None, True]),
                      st.dictionaries(st.sampled_from(["scheduled", "pending", "reason", "count", "node", "extra"]),
                                      st.sampled_from([True, False, 1, 0, -1, "x", None]), max_size=3))
_NODE = st.dictionaries(st.sampled_from(["pod", "nodePool", "index", "labels", "zone", "extra"]),
                        st.sampled_from([True, 1, 0, "web", "1", None, {}, {"a": "b"}, {"a": 1}]), max_size=3)


@settings(max_examples=300, deadline=None)
@given(st.lists(_EXPECTED, max_size=5), st.one_of(st.lists(_NODE, max_size=5), _NODE))
def test_judging_expectations_alike_agrees_with_judging_each(pods, nodes):
    data = _scenario([_pod(0)])
    data["expect"] = {"pods": {f"web-{i}": p for i, p in enumerate(pods)}, "nodes": nodes}
    assert _validator().is_valid(_judged_alike(data)) == _validator().is_valid(data)


HELM_NULLS = """
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: helm-nulls}
given:
  skus: [Standard_D2s_v3]
  existingNodes:
    - name: other
      labels: {kubernetes.io/os: linux}
      capacity: {cpu: "2", memory: 8Gi, pods: "110"}
      pods: [{apiVersion: v1, kind: Pod, metadata: {name: old, labels: null}, spec: {containers: [{name: a, image: x}]}}]
manifests:
  - apiVersion: apps/v1
    kind: Deployment
    metadata: {name: web, labels: null, annotations: null}
    spec:
      replicas: 1
      selector: {matchLabels: {app: web}}
      template:
        metadata: {labels: {app: web}, annotations: null}
        spec:
          nodeSelector: null
          affinity: null
          containers: [{name: app, image: nginx, resources: {requests: {cpu: 100m}, limits: null}, env: null}]
steps:
  - apply:
      - {apiVersion: v1, kind: Pod, metadata: {name: late, annotations: null}, spec: {tolerations: null, containers: [{name: a, image: x}]}}
"""


def test_explicit_nulls_helm_renders_are_the_field_left_out():
    (sc,) = load_scenarios("helm.scenario.yaml", HELM_NULLS)
    web = sc.manifests[0].obj
    assert "labels" not in web["metadata"] and "annotations" not in web["metadata"]
    pod = web["spec"]["template"]["spec"]
    assert "nodeSelector" not in pod and "affinity" not in pod
    assert pod["containers"][0] == {"name": "app", "image": "nginx", "resources": {"requests": {"cpu": "100m"}}}
    assert "tolerations" not in sc.step_manifests[0][0].obj["spec"]
    assert "labels" not in sc.given["existingNodes"][0]["pods"][0]["metadata"]


def test_a_null_list_item_is_still_refused():
    text = HELM_NULLS.replace("containers: [{name: a, image: x}]}}]", "containers: [null]}}]", 1)
    with pytest.raises(SourceError):
        load_scenarios("helm.scenario.yaml", text)
