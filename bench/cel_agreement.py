"""The embedded CRD judge against a real API server, at scale: every x-kubernetes-validations rule of
the provider v1.14.0 NodePool, NodeClaim and AKSNodeClass CRDs (installed verbatim on the `local`
backend's kube-apiserver), on seeded objects aimed at each rule (tests/backends/crd_cases.py).

    python bench/cel_agreement.py [--n 2000] [--seeds 1,2,3] [--show 5]

Prints the agreement count (admit/refuse, status, reason, causes; an admitted AKSNodeClass's stored
defaults), the disagreements (the first --show of them in full) and, per rule, how many objects
broke it and how many were admitted with the rule's node present. Exits 1 on any disagreement or a
rule never broken. Needs the local control plane (`python -m harness.backends build`).
"""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "backends"))

import crd_cases  # noqa: E402

from harness.backends.local import LocalBackend  # noqa: E402
from harness.model.crd import rules as crdrules  # noqa: E402
from harness.model.upstream.profile import load_profile  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", type=int, default=2000, help="objects per seed")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--show", type=int, default=5)
    args = ap.parse_args()
    up = load_profile("upstream")
    backend = LocalBackend(profile="upstream")
    ok, why = backend.available()
    if not ok:
        print(f"local backend unavailable: {why}")
        return 2
    cluster = backend.start()
    results = []
    t0 = time.monotonic()
    try:
        for seed in (int(s) for s in args.seeds.split(",")):
            results += crd_cases.judge_all(cluster, crd_cases.cases(seed, args.n, up.aks_nodeclass_schema))
    finally:
        cluster.close()
    elapsed = time.monotonic() - t0
    bad = [r for r in results if not r.agree]
    refused = sum(r.real[0] == "refused" for r in results)
    updates = sum(r.case.old is not None for r in results)
    print(f"{len(results) - len(bad)}/{len(results)} objects agree ({refused} refused by the API server, "
          f"{len(results) - refused} admitted, {updates} updates) in {elapsed:.0f} s")
    per_target = collections.Counter(r.case.target for r in results)
    bad_target = collections.Counter(r.case.target for r in bad)
    for target, n in sorted(per_target.items()):
        print(f"  {n:6d} {target}" + (f"  ({bad_target[target]} disagree)" if bad_target[target] else ""))
    for r in bad[:args.show]:
        print(f"--- {r.case.target}\n  spec: {json.dumps(r.case.obj.get('spec'))[:800]}")
        if r.case.old is not None:
            print(f"  old spec: {json.dumps(r.case.old.get('spec'))[:400]}")
        print(f"  real:     {r.real}\n  embedded: {r.embedded}")
    coverage = crd_cases.rule_coverage(results, up.aks_nodeclass_schema, crdrules.spec_schema(up, "NodePool"),
                                       crdrules.spec_schema(up, "NodeClaim"))
    print(f"rules: {len(coverage)} (broken / held-and-admitted)")
    for (kind, path, msg), (broken, held) in coverage.items():
        print(f"  {broken:6d} {held:6d}  {kind} {path}: {msg}")
    never = [k for k, (broken, _) in coverage.items() if not broken]
    return 1 if bad or never else 0


if __name__ == "__main__":
    sys.exit(main())
