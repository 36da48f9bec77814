"""How much the fuzzer's generated worlds schedule (harness/judge/fuzz.py):

    python3 bench/fuzz_worlds.py [--count 200] [--seed 1] [--in-flight] [--json FILE] [--list]

Generates `--count` distinct documents the way tools/fuzz_engines.py does (Hypothesis, `--seed`, generate
phase only), runs each once on the simulated engine (embedded backend, upstream profile) and sorts it by
what its pods ended as: all scheduled, some, none. A world that schedules nothing is sorted by why: the
misfit the generator drew it with (the document's fuzz.misfit annotation), else a launch that failed on
the world's fault, else its pods' reasons (Karpenter's FailedScheduling text, else kube-scheduler's):
the first of WHY that applies. `--list` prints one line per world. Measures only; asserts nothing. The numbers and what they mean: docs/engines/fuzzer.md."""
from __future__ import annotations

import argparse
import collections
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402

from harness.backends.embedded import EmbeddedBackend  # noqa: E402
from harness.judge import fuzz  # noqa: E402
from harness.runner.engines import get_engine  # noqa: E402
from harness.runner.engines.base import execute  # noqa: E402

# why a world scheduled nothing: (name, words one of its pods' reasons holds), first match wins
WHY = [
    ("taint", ("did not tolerate", "untolerated taint")),
    ("limits", ("exceeds limit", "exceed limit", "limits")),
    ("filtered out every size", ("filtered out all available instance types",)),
    ("requirements", ("incompatible requirements", "no instance type satisfied", "incompatible with nodepool",
                      "did not have", "affinity", "no instance type met")),
    ("resources", ("no instance type has enough resources", "insufficient")),
    ("topology", ("topology", "anti-affinity", "spread")),
    ("offerings", ("required offering", "unavailable")),
]


class _Enough(Exception):
    """Stops generation once `count` distinct documents are in."""


def generate(count: int, seed_: int, in_flight: bool = False) -> list[dict]:
    docs: dict[str, dict] = {}

    @seed(seed_)
    @settings(max_examples=count * 5, deadline=None, database=None, derandomize=False, print_blob=False,
              suppress_health_check=list(HealthCheck), phases=[Phase.generate])
    @given(fuzz.scenarios(in_flight=in_flight))
    def collect(doc):
        docs.setdefault(doc["metadata"]["name"], doc)
        if len(docs) >= count:
            raise _Enough

    try:
        collect()
    except _Enough:
        pass
    return list(docs.values())


def classify(result, doc: dict) -> tuple[str, str]:
    """(all | some | none | no pods, why for `none`) of one run's result."""
    pods = [p for p in result.pods.values() if p.state != "deleted"]
    if not pods:
        return "no pods", ""
    bound = sum(1 for p in pods if p.state == "scheduled")
    if bound == len(pods):
        return "all", ""
    if bound:
        return "some", ""
    misfit = doc["metadata"].get("annotations", {}).get("fuzz.misfit")
    if misfit:
        return "none", f"misfit: {misfit}"
    if doc["given"].get("faults") and result.nodeclaims and any(c.failures for c in result.nodeclaims):
        return "none", "fault"
    text = " | ".join(f"{p.reason or ''} {p.karpenter_error or ''} {p.scheduler_error or ''}" for p in pods).lower()
    for why, words in WHY:
        if any(w in text for w in words):
            return "none", why
    return "none", "other: " + (pods[0].reason or "")[:100]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--in-flight", action="store_true", help="as tools/fuzz_engines.py --in-flight")
    ap.add_argument("--json", type=Path, default=None, help="write every world's row here")
    ap.add_argument("--list", action="store_true", help="one line per world")
    args = ap.parse_args()
    t0 = time.monotonic()
    docs = generate(args.count, args.seed, args.in_flight)
    t_gen = time.monotonic() - t0
    engine = get_engine("simulated")
    cluster = EmbeddedBackend().start()
    rows = []
    try:
        for doc in docs:
            sc = fuzz.load(doc, ROOT / "scenarios")
            o = execute(engine, sc, "upstream", cluster)
            what, why = classify(o.final, doc)
            pods = [p for p in o.final.pods.values() if p.state != "deleted"]
            rows.append({"name": doc["metadata"]["name"], "class": what, "why": why,
                         "misfit": doc["metadata"].get("annotations", {}).get("fuzz.misfit"),
                         "pods": len(pods), "scheduled": sum(p.state == "scheduled" for p in pods),
                         "reasons": sorted({p.reason or "" for p in pods if p.state != "scheduled"})[:3]})
            if args.list:
                print(f"{doc['metadata']['name']}  {what:5} {why:14} {rows[-1]['scheduled']}/{rows[-1]['pods']}  "
                      f"{'; '.join(r[:90] for r in rows[-1]['reasons'])}", flush=True)
    finally:
        cluster.close()
    seconds = time.monotonic() - t0
    classes = collections.Counter(r["class"] for r in rows)
    whys = collections.Counter(r["why"] for r in rows if r["class"] == "none")
    n = len(rows)
    print(f"generator {fuzz.GENERATOR}, seed {args.seed}{' (in-flight)' if args.in_flight else ''}: {n} worlds "
          f"({t_gen:.1f} s to generate, {seconds:.0f} s in all)")
    for k in ("all", "some", "none", "no pods"):
        if classes[k]:
            print(f"  {k:8} {classes[k]:4}  {100 * classes[k] / n:5.1f}%")
    some = classes["all"] + classes["some"]
    print(f"  at least one pod scheduled: {some} ({100 * some / n:.1f}%)")
    for why, c in whys.most_common():
        print(f"    none, {why}: {c}")
    stray = [r["name"] for r in rows if r["misfit"] and r["class"] != "none"]
    if stray:       # a misfit drawn so that nothing fits, where something did: the generator's bug
        print(f"  misfits that scheduled a pod: {len(stray)} ({', '.join(stray[:5])})")
    if args.json:
        args.json.write_text(json.dumps({"generator": fuzz.GENERATOR, "seed": args.seed, "rows": rows}, indent=1)
                             + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
