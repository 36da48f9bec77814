"""Scenario loading (harness/runner/scenario.py): the JSON Schema check judges a dump's seeded pods once per
reading of what the schema sees of them, with the verdict and the errors of the pod-by-pod check."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from harness.runner.scenario import _pod_schema, _valid_judging_pods_once, _validator, schema_errors
from harness.runner.yamlsource import Document


def _scenario(pods: list) -> dict:
    return {"apiVersion": "harness.karpenter.azure.com/v1alpha1", "kind": "Scenario", "metadata": {"name": "pods"},
            "given": {"skus": ["Standard_D2s_v3"],
                      "existingNodes": [{"name": "n-1", "instanceType": "Standard_D2s_v3", "pods": pods[:1]},
                                        {"name": "n-2", "instanceType": "Standard_D2s_v3", "pods": pods[1:]}]}}


def _pod(i: int) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": f"web-{i}", "labels": {"app": "web"}},
            "spec": {"containers": [{"name": "c", "image": f"acr.io/web:{i}"}]}}


def test_the_shipped_schema_judges_seeded_pods_once():
    # a keyword _verdict_key does not read, added to podManifest or on the way there, turns the shortcut off
    # (every pod judged on its own again: correct, but a third of `harness new` at 5,000 nodes)
    assert _pod_schema() is not None


def test_a_bad_pod_among_thousands_is_named_as_the_whole_check_names_it():
    pods = [_pod(i) for i in range(3000)]
    assert schema_errors(Document("s.yaml", _scenario(pods), {}, 1)) == []
    pods[2500]["metadata"]["name"] = 5
    pods[2700]["apiVersion"] = "v2"
    errors = schema_errors(Document("s.yaml", _scenario(pods), {}, 1))
    assert [e.reason for e in errors] == ["given.existingNodes.1.pods.2499.metadata.name: 5 is not of type 'string'",
                                          "given.existingNodes.1.pods.2699.apiVersion: 'v2' is not one of ['v1']"]


_VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-1, 1), st.sampled_from([1.0, 1.5, "v1", "Pod", "v2", "", "web"])),
    lambda inner: st.one_of(st.lists(inner, max_size=2), st.dictionaries(st.sampled_from(["name", "a"]), inner, max_size=2)),
    max_leaves=3)
# where a pod differs from the one before it: each field the schema reads, one it does not, the whole pod
_FIELDS = st.sampled_from([("apiVersion",), ("kind",), ("metadata",), ("metadata", "name"), ("metadata", "namespace"),
                           ("metadata", "generateName"), ("metadata", "labels"), ("metadata", "annotations"),
                           ("metadata", "uid"), ("spec",), ()])


def _edited(pods: list, edit: tuple) -> list:
    """`pods` and one more: the last with the value at a path changed (a path through a non-mapping replaces it)."""
    (path, value) = edit
    if not path:
        return pods + [value]
    pod = dict(pods[-1]) if isinstance(pods[-1], dict) else {}
    if len(path) == 2:
        pod[path[0]] = {**(pod.get(path[0]) if isinstance(pod.get(path[0]), dict) else {}), path[1]: value}
    else:
        pod[path[0]] = value
    return pods + [pod]


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(_FIELDS, _VALUES), max_size=6))
def test_judging_pods_once_agrees_with_judging_each(edits):
    pods = [_pod(0)]
    for edit in edits:
        pods = _edited(pods, edit)
    assert _valid_judging_pods_once(_scenario(pods)) == _validator().is_valid(_scenario(pods))
