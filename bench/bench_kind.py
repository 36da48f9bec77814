"""Benchmark: real kubelets on the kind backend.

    python bench/bench_kind.py [--boots N] [--pool N] [--profile P] [--scenarios PATH ...]

Starts a kind cluster (node image from `python -m harness.backends build --kind`), then boots N
kubelets for fake VMs from the warm pool and reports, per boot: take-from-pool-to-kubelet-start,
VM-Succeeded (boot call) to Node registered, and to Node Ready; then one boot whose --node-labels the
kubelet refuses (the Node never registers); then, with --scenarios, each scenario's wall time on
kind (with the real kube-scheduler binding: how many bindings it made, and every notice where it
placed a pod elsewhere than the loop). Everything is torn down at the end (pass, fail or Ctrl-C).
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.backends.registry import get_backend  # noqa: E402
from harness.model.upstream.profile import load_profile  # noqa: E402
from harness.model.labels.writers import kubelet_self_labels  # noqa: E402

GOOD = {"example.com/team": "a", "node.kubernetes.io/instance-type": "Standard_D2s_v5",
        "karpenter.sh/nodepool": "default"}
BAD = {"kubernetes.io/foo": "bar", "example.com/team": "a"}
TAINTS = [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"}]


def node(name: str, flags: dict[str, str]) -> dict:
    """The Node the loop expects the kubelet to register: its own labels plus the flags."""
    labels = {**kubelet_self_labels(name, "amd64"), **flags}
    return {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name, "labels": labels},
            "spec": {"taints": TAINTS},
            "status": {"capacity": {"cpu": "2", "memory": "8Gi", "pods": "110"},
                       "allocatable": {"cpu": "1900m", "memory": "7Gi", "pods": "110"}}}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--boots", type=int, default=3)
    ap.add_argument("--pool", type=int, default=1)
    ap.add_argument("--scenarios", nargs="*", default=[])
    ap.add_argument("--profile", default=None, help="run the scenarios under this profile only")
    args = ap.parse_args()
    backend = get_backend("kind", profile="upstream", pool_size=args.pool)
    ok, why = backend.available()
    if not ok:
        print(f"kind backend unavailable: {why}", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    cluster = backend.start()
    report: dict = {"cluster_start_s": round(time.monotonic() - t0, 1),
                    "start_timings": {k: round(v, 1) for k, v in cluster.timings.items()}}
    up = load_profile("upstream")
    try:
        boots = []
        for i in range(args.boots):
            cluster.kubelets.wait_warm(300)     # outside the measured window: a boot from a warm pool
            name = f"aks-bench-{i:05d}"
            t = time.monotonic()
            refusal = cluster.register_kubelet(node(name, GOOD), GOOD, up, f"azure:///bench/{name}")
            t_reg = time.monotonic() - t
            cluster.wait_ready(name)
            t_ready = time.monotonic() - t
            real = cluster.admin.get("Node", name)
            boots.append({"vm": name, "refusal": refusal, "registered_s": round(t_reg, 2),
                          "ready_s": round(t_ready, 2), "labels": real["metadata"]["labels"],
                          "providerID": real["spec"].get("providerID"),
                          "taints": real["spec"].get("taints")})
        report["boots"] = boots
        if boots:
            report["ready_s_median"] = statistics.median(b["ready_s"] for b in boots)
        cluster.kubelets.wait_warm(300)
        t = time.monotonic()
        refusal = cluster.register_kubelet(node("aks-bench-refused", BAD), BAD, up, "azure:///bench/refused")
        report["refused"] = {"seconds": round(time.monotonic() - t, 2), "message": refusal,
                             "node_exists": cluster.admin.get("Node", "aks-bench-refused") is not None}
        if args.scenarios:
            report["scenarios"] = runs = run_scenarios(cluster, args.scenarios, args.profile)
            if runs:
                report["scenario_s_median"] = statistics.median(r["seconds"] for r in runs)
    finally:
        t = time.monotonic()
        cluster.close()
        report["close_s"] = round(time.monotonic() - t, 1)
    print(json.dumps(report, indent=2))
    return 0


def run_scenarios(cluster, paths: list[str], only_profile: str | None = None) -> list[dict]:
    from harness.runner.engines import run
    from harness.scenario.load import find_scenario_files, load_scenarios
    out = []
    for f in find_scenario_files(paths):
        for sc in load_scenarios(f):
            for profile in sc.profiles:
                if "kind" not in sc.backends or only_profile and profile != only_profile:
                    continue
                t = time.monotonic()
                notices, binds, mismatches = [], 0, []
                try:
                    outcome = run(sc, profile, cluster)
                    verdict = "ok" if outcome.passed else f"fail: {len(outcome.mismatches)} mismatch(es)"
                    notices = outcome.notices
                    mismatches = [m.render()[:300] for m in outcome.mismatches]
                    binds = len(cluster.placements)
                except Exception as e:   # noqa: BLE001 - reported, next scenario
                    verdict = f"error: {type(e).__name__}: {e}"[:300]
                finally:
                    cluster.reset()
                row = {"scenario": sc.name, "profile": profile, "seconds": round(time.monotonic() - t, 1),
                       "verdict": verdict, "real_bindings": binds}
                if notices:
                    row["notices"] = notices
                if mismatches:
                    row["mismatches"] = mismatches
                out.append(row)
    return out


if __name__ == "__main__":
    sys.exit(main())
