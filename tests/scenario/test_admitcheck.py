"""A manifest the release's API server refuses: said by `harness validate` at its line, and a run that does not
expect the refusal fails (harness/scenario/admitcheck.py, harness/scenario/expect/match.py unexpected_refusals)."""
from __future__ import annotations

from pathlib import Path

from harness.backends.embedded import EmbeddedBackend
from harness.scenario.admitcheck import unexpected_refusals
from harness.runner.engines import run
from harness.scenario.load import load_scenarios

SCENARIO = """
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: np}
given: {profiles: [upstream, v1.4.1], skus: [Standard_D2s_v3]}
manifests:
  - {apiVersion: karpenter.azure.com/v1beta1, kind: AKSNodeClass, metadata: {name: default}, spec: {imageFamily: Ubuntu2204}}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: default}
    spec:
      disruption: {consolidationPolicy: WhenUnderutilized, consolidateAfter: 30s}
      template:
        spec:
          nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
          requirements: [{key: kubernetes.io/os, operator: In, values: [linux]}]
  - {apiVersion: v1, kind: Pod, metadata: {name: p}, spec: {containers: [{name: a, image: nginx}]}}
expect:
%s
"""


def _scenario(expect: str):
    (sc,) = load_scenarios("inline.scenario.yaml", SCENARIO % expect)
    return sc


def test_validate_names_each_release_that_refuses_it_in_its_own_words():
    lines = unexpected_refusals(_scenario("  pods: {p: {pending: true}}"))
    assert [x.split(": NodePool.karpenter.sh")[0] for x in lines] == [
        "inline.scenario.yaml:8: NodePool default: refused by the API server at upstream",
        "inline.scenario.yaml:8: NodePool default: refused by the API server at v1.4.1"]
    # each release's CRD lists its own policies: Balanced only from core v1.14.0
    assert '"WhenEmptyOrUnderutilized", "Balanced"' in lines[0] and "Balanced" not in lines[1]
    assert all("nodePools.default.rejected" in x for x in lines)


def test_an_expected_refusal_is_the_point():
    sc = _scenario("  nodePools: {default: {rejected: true}}")
    assert unexpected_refusals(sc) == []


def test_a_run_that_does_not_expect_the_refusal_fails():
    sc = _scenario("  pods: {p: {pending: true}}")
    cluster = EmbeddedBackend().start()
    try:
        got = [f"{m.path}: {m.detail}" for m in run(sc, "upstream", cluster).mismatches]
    finally:
        cluster.close()
    (m,) = got
    assert m.startswith('expect.nodePools["default"]') and "WhenUnderutilized" in m


RESTRICTED = """
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: np}
given: {profiles: [upstream], skus: [Standard_D2s_v3]%s}
manifests:
  - {apiVersion: karpenter.azure.com/v1beta1, kind: AKSNodeClass, metadata: {name: default}, spec: {imageFamily: Ubuntu2204}}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: default}
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
          requirements: [{key: karpenter.azure.com/sku-hyperv-gen, operator: In, values: ["2"]}]
expect: {}
"""


def test_validate_words_a_refusal_as_the_run_s_api_server_does():
    # a failed rule names a string's type up to Kubernetes 1.34 and quotes it from 1.35 (crd/schema.py): validate
    # speaks for the version the run emulates, the scenario's (1.33.0 unless given.cluster says)
    cluster = EmbeddedBackend().start()
    try:
        for extra, value in (("", '"string"'), (", cluster: {kubernetesVersion: 1.36.3}",
                                                 '"karpenter.azure.com/sku-hyperv-gen"')):
            (sc,) = load_scenarios("inline.scenario.yaml", RESTRICTED % extra)
            (line,) = unexpected_refusals(sc)
            said = line.split(": refused by the API server at upstream: ")[1].split("; expect it with")[0]
            assert f"Invalid value: {value}: label domain" in said
            (m,) = run(sc, "upstream", cluster).mismatches
            assert said in m.detail
    finally:
        cluster.close()


def test_a_priority_class_or_limit_range_the_api_server_refuses_is_named(tmp_path):
    from harness.scenario.admitcheck import unexpected_refusals
    from harness.scenario.load import load_scenarios_text
    text = """apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: s}
manifests:
  - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: a}, value: 1, globalDefault: true}
  - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: b}, value: 2, globalDefault: true}
  - apiVersion: v1
    kind: LimitRange
    metadata: {name: l}
    spec: {limits: [{type: Pod, default: {cpu: "1"}}]}
"""
    (sc,) = load_scenarios_text(text, str(tmp_path / "x.scenario.yaml"), tmp_path)
    got = unexpected_refusals(sc)
    assert got == [
        f"{tmp_path / 'x.scenario.yaml'}:6: PriorityClass b: refused by the API server: priorityclasses.scheduling.k8s.io "
        '"b" is forbidden: PriorityClass a is already marked as default. Only one default can exist',
        f"{tmp_path / 'x.scenario.yaml'}:7: LimitRange l: refused by the API server at upstream: "
        "LimitRange \"l\" is invalid: spec.limits[0].default: Forbidden: may not be specified when `type` is 'Pod'"]


def test_a_run_reports_a_refused_priority_class_as_the_real_engine_does():
    from harness.backends.embedded import EmbeddedBackend
    from harness.runner.engines import run
    from harness.scenario.load import load_scenarios_text
    text = """apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: s}
given: {skus: [Standard_D2s_v3]}
manifests:
  - {apiVersion: scheduling.k8s.io/v1, kind: PriorityClass, metadata: {name: huge}, value: 2000000000}
"""
    (sc,) = load_scenarios_text(text, "x.scenario.yaml", Path(__file__).resolve().parents[2] / "scenarios")
    c = EmbeddedBackend().start()
    try:
        out = run(sc, "upstream", c)
    finally:
        c.close()
    assert [(m.path, m.expected) for m in out.mismatches] == [("manifests", "applied")]
    assert "maximum allowed value of a user defined priority is 1000000000" in str(out.mismatches[0].actual)
