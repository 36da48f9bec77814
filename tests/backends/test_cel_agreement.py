"""The embedded CRD judge against a real API server on every x-kubernetes-validations rule of the
provider v1.14.0 CRDs (github.com/Azure/karpenter-provider-azure v1.14.0 pkg/apis/crds: NodePool,
NodeClaim, AKSNodeClass), installed verbatim on the `local` backend's kube-apiserver (v1.36.3).

1,200 seeded objects aimed at the rules' fields (tests/backends/crd_cases.py), creates and updates:
admitted or refused alike, with the same status, reason and causes (field, message), and an
admitted AKSNodeClass stored with the same defaults. Every rule must have been broken by at least
one object and held on another. `python bench/cel_agreement.py` runs the same with more seeds.
Skipped only when the local control plane cannot be built (CI builds it).
"""
from __future__ import annotations

from crd_cases import cases, judge_all, rule_coverage

from harness.model.crd import rules as crdrules
from harness.model.upstream.profile import load_profile

N = 1200
SEED = 26


def test_embedded_judge_agrees_with_api_server(local_cluster):
    up = load_profile("upstream")
    results = judge_all(local_cluster, cases(SEED, N, up.aks_nodeclass_schema))
    bad = [r for r in results if not r.agree]
    assert not bad, f"{len(bad)}/{len(results)} disagree; first: " + "; ".join(
        f"{r.case.target}: {r.case.obj.get('spec')} real={r.real} embedded={r.embedded}" for r in bad[:3])
    coverage = rule_coverage(results, up.aks_nodeclass_schema, crdrules.spec_schema(up, "NodePool"),
                             crdrules.spec_schema(up, "NodeClaim"))
    assert len(coverage) == 67      # 22 AKSNodeClass + 30 NodePool + 15 NodeClaim rules
    never_broken = [k for k, (broken, _held) in coverage.items() if not broken]
    never_held = [k for k, (_broken, held) in coverage.items() if not held]
    assert not never_broken, never_broken
    assert not never_held, never_held
