"""nodeClasses expectations, and an AKSNodeClass refusal nobody expected being a failure."""
from __future__ import annotations

from harness.backends.embedded import EmbeddedBackend
from harness.runner.engines import run
from harness.scenario.load import load_scenarios

SCENARIO = """
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: nc}
given: {profiles: [upstream], skus: [Standard_D2s_v3]}
manifests:
  - {apiVersion: karpenter.azure.com/v1beta1, kind: AKSNodeClass, metadata: {name: default}, spec: {imageFamily: Ubuntu2204, fipsMode: FIPS}}
  - {apiVersion: karpenter.azure.com/v1beta1, kind: AKSNodeClass, metadata: {name: ok}, spec: {artifactStreaming: {mode: Enabled}}}
expect:
%s
"""


def _mismatches(expect: str) -> list[str]:
    (sc,) = load_scenarios("inline.scenario.yaml", SCENARIO % expect)
    cluster = EmbeddedBackend().start()
    try:
        return [f"{m.path}: {m.detail}" for m in run(sc, "upstream", cluster).mismatches]
    finally:
        cluster.close()


def test_an_unexpected_refusal_fails_the_scenario():
    (m,) = _mismatches("  nodeCount: 0")
    assert m.startswith('expect.nodeClasses["default"]') and "FIPS is not yet supported" in m


def test_expected_refusal_pruning_and_defaults_pass():
    assert _mismatches("""  nodeClasses:
    default: {rejected: {message: FIPS is not yet supported for Ubuntu2204 or Ubuntu2404}}
    ok: {accepted: true, pruned: [spec.artifactStreaming.mode], spec: {imageFamily: Ubuntu, osDiskSizeGB: 128}}""") == []


def test_wrong_nodeclass_expectations_are_reported():
    got = _mismatches("""  nodeClasses:
    default: accepted
    ok: {pruned: [], spec: {imageFamily: AzureLinux}}""")
    assert sorted(m.split(":")[0] for m in got) == ['expect.nodeClasses["default"].accepted',
                                                    'expect.nodeClasses["ok"].pruned',
                                                    'expect.nodeClasses["ok"].spec.imageFamily']
