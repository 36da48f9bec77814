"""Real-engine smoke per provider release: each release's own controller built from the provider's git
history and run on a small smoke set (one provisioning, one consolidation, one drift scenario), written in
an API the release's own CRDs serve (the current one; scenarios/releases/smoke/<api>/ for v0.5-v0.7).

    python bench/real_releases.py --provider-git DIR [--release v1.6.8 ...] [--json FILE]

Without --release: the newest patch of every release line from v0.5 to v1.14 (releasectl.newest_patches).
Per release it prints the build seconds (0 when cached), whether the controller started, and each smoke
scenario's verdict and wall seconds; a release that cannot run says why. Builds are ~10 min cold on 2
cores each (the Go build cache is shared, so later releases build faster). Timings are printed, never
asserted; write the load average beside them (bench/README.md).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from harness.backends.binaries.controller import ENV_GIT  # noqa: E402
from harness.backends.registry import close_shared, shared_cluster  # noqa: E402
from harness.runner.engines import get_engine  # noqa: E402
from harness.runner.engines.base import execute_guarded, verdict  # noqa: E402
from harness.runner.engines.real.controller.releasectl import newest_patches, tags_of  # noqa: E402
from harness.scenario.load import find_scenario_files, load_scenarios  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SMOKE = {   # name -> file: small, no seeded history, no knobs, judged on every release line (the current API)
    "should-launch-in-the-nodepool-requested-zone": "scenarios/upstream-tests/zone-aware-provisioning.scenario.yaml",
    "underutilized-node-deleted-when-pods-fit-elsewhere": "scenarios/disruption/consolidation.scenario.yaml",
    "nodepool-template-change-drifts-node": "scenarios/disruption/drift.scenario.yaml",
}
# the same three in older releases' APIs, tried after the current set, newest API first: a release runs the
# first set whose every NodePool/AKSNodeClass apiVersion its own CRDs serve
OLDER_SETS = ("scenarios/releases/smoke/v1-v1alpha2", "scenarios/releases/smoke/v1beta1")
CRD_KINDS = ("NodePool", "NodeClaim", "AKSNodeClass")


def smoke_sets() -> list[tuple[str, list]]:
    """(name, scenarios) of every smoke set, the current API's first."""
    current = []
    for name, file in SMOKE.items():
        current += [sc for f in find_scenario_files([str(ROOT / file)]) for sc in load_scenarios(f) if sc.name == name]
    out = [("current", current)]
    for d in OLDER_SETS:
        out.append((Path(d).name, [sc for f in find_scenario_files([str(ROOT / d)]) for sc in load_scenarios(f)]))
    return out


def api_of(scenarios) -> set[tuple[str, str]]:
    """The (kind, apiVersion) of every Karpenter object a set writes."""
    return {(m.obj["kind"], m.obj.get("apiVersion", "")) for sc in scenarios
            for m in [*sc.manifests, *(m for ms in sc.step_manifests for m in ms)] if m.obj.get("kind") in CRD_KINDS}


def served_by(ctl) -> dict[str, set[str]]:
    """kind -> the group/versions a controller's own CRDs serve ({} when it has no CRD directory)."""
    import yaml
    out: dict[str, set[str]] = {}
    for f in sorted(ctl.crds_dir.glob("*.yaml")) if ctl.crds_dir.is_dir() else ():
        for crd in yaml.safe_load_all(f.read_text()):
            if (crd or {}).get("kind") != "CustomResourceDefinition":
                continue
            spec = crd["spec"]
            out.setdefault(spec["names"]["kind"], set()).update(
                f"{spec['group']}/{v['name']}" for v in spec.get("versions") or [] if v.get("served"))
    return out


def pick_set(sets: list[tuple[str, list]], served: dict[str, set[str]]) -> tuple[str, list] | None:
    """The first set every apiVersion of which the release serves (the current one when `served` is
    empty: the default controller's CRDs are the harness's own), else None."""
    if not served:
        return sets[0]
    return next(((name, scs) for name, scs in sets
                 if all(v in served.get(kind, ()) for kind, v in api_of(scs))), None)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--provider-git", default=os.environ.get(ENV_GIT) or os.environ.get("HARNESS_PROVIDER_GIT"))
    ap.add_argument("--release", action="append", default=[], help="a release tag (repeatable)")
    ap.add_argument("--json", default=None, help="write the per-release rows here")
    ap.add_argument("--build-only", action="store_true",
                    help="build (or find) each release's controller, as a run under its profile picks it, and stop")
    args = ap.parse_args()
    if not args.provider_git:
        print("--provider-git DIR (or HARNESS_PROVIDER_GIT): a karpenter-provider-azure clone with its tags", file=sys.stderr)
        return 2
    os.environ[ENV_GIT] = args.provider_git
    from harness.model.upstream.releases import release_profiles
    releases = args.release or newest_patches(tags_of(Path(args.provider_git)))
    engine = get_engine("real")
    if args.build_only:
        os.environ.setdefault("HARNESS_BUILD_CONTROLLER", "1")
        bad = 0
        for rel in releases:
            t0 = time.monotonic()
            try:
                ctl = engine.controller_for(rel)
                print(f"{rel}: {ctl.version} (timing {ctl.timing}) {ctl.path} in {time.monotonic() - t0:.0f}s", flush=True)
            except Exception as e:      # noqa: BLE001 - each release says its own reason
                bad += 1
                print(f"{rel}: {e}", flush=True)
        return 1 if bad else 0
    ok, why = engine.available("local")
    if not ok:
        print(f"real engine unavailable: {why}", file=sys.stderr)
        return 2
    sets = smoke_sets()
    rows = []
    cluster = shared_cluster("local", **engine.cluster_options)
    try:
        for rel in releases:
            row = {"release": rel, "load": round(os.getloadavg()[0], 1)}
            rows.append(row)
            if rel not in release_profiles():
                row["skip"] = f"no release profile {rel}"
                print(f"{rel}: {row['skip']}", flush=True)
                continue
            t0 = time.monotonic()
            choice = engine.releases.choice(rel)
            ctl, why = (engine.releases.controller(choice.ref) if choice.ref else (None, choice.skip))
            row["build_s"] = round(time.monotonic() - t0, 1)
            if choice.ref is None and not choice.skip:
                ctl, why = engine.controller_for(rel), None
            if ctl is None:
                row["skip"] = why
                print(f"{rel}: cannot run: {why}", flush=True)
                continue
            row["controller"] = f"{ctl.version} (timing {ctl.timing})"
            row["runs"] = []
            picked = pick_set(sets, served_by(ctl))
            if picked is None:
                row["skip"] = "no smoke set in an API its CRDs serve"
                print(f"{rel}: {row['skip']}", flush=True)
                continue
            row["set"] = picked[0]
            print(f"{rel}: smoke set {picked[0]}", flush=True)
            for sc in picked[1]:
                o = execute_guarded(engine, sc, rel, cluster)
                v = verdict(o)
                reason = (o.skipped or o.error or "")[:300] if v in ("skipped", "ERROR") else ""
                if v == "FAIL":
                    reason = "; ".join(str(m) for m in o.mismatches[:2])[:300]
                row["runs"].append({"scenario": sc.name, "verdict": v, "seconds": round(o.seconds, 1),
                                    "timings": {k: round(x, 1) for k, x in (getattr(o.result, "timings", None) or {}).items()},
                                    "reason": reason})
                print(f"{rel}: {v:8} {o.seconds:6.1f}s {sc.name} {reason}", flush=True)
            row["started"] = any(r["verdict"] != "ERROR" for r in row["runs"])
    finally:
        close_shared()
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
