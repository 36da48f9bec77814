"""Customer dumps made by the real Karpenter-on-Azure controller: a source scenario runs on the real engine
(`--engine real`: the release's own controller against fakeazure on the `local` backend), and once it has
settled, before the run lets go of its cluster, every object of the kinds a ticket sends is written as a
`kind: List`, the way `kubectl get ... -o yaml` prints it (without managedFields, as kubectl does by default).
Unlike tools/make_dumps.py, whose cases write Karpenter's part through the API, here the controller reached the
state itself: its NodeClaims, their names, provider IDs and annotations, the Nodes the fake's AKS wrote, its
events and the overlays' status.

    python3 tools/make_engine_dumps.py --provider-git DIR [--out tests/dump/dumps/real-engine] [CASE ...]

DIR: a karpenter-provider-azure clone or mirror with its tags (also HARNESS_PROVIDER_GIT), for the release's
controller. Each case's source scenario is tests/dump/dumps/real-engine/sources/<case>.scenario-source.yaml.
"""
from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from harness.backends.binaries.controller import ENV_GIT  # noqa: E402
from harness.backends.kinds import KINDS  # noqa: E402
from tools.make_dumps import dump  # noqa: E402

OUT = ROOT / "tests" / "dump" / "dumps" / "real-engine"
SOURCES = OUT / "sources"
# what `kubectl get` lists for a ticket, in its order
DUMP_KINDS = ("NodePool", "AKSNodeClass", "NodeOverlay", "NodeClaim", "Node", "Deployment", "Pod",
              "PodDisruptionBudget", "Event")
HEADER = ("# Made by tools/make_engine_dumps.py with the real Karpenter-on-Azure controller: {what}\n"
          "# The controller ran {source} (--engine real, local backend) to its settled state;\n"
          "# then `kubectl get {kinds} -o yaml`.\n"
          "# Remake: python3 tools/make_engine_dumps.py --provider-git DIR {case}\n")

# name -> what the file shows (its source scenario: SOURCES/<name>.scenario-source.yaml)
CASES = {
    "machine-api-limit": "provider v1.14.0 in PROVISION_MODE aksmachineapi with the NodeOverlay gate on: one AKS "
                         "machine holds three of api's four pods, the fourth is pending at NodePool web's cpu "
                         "limit",
    "bootstrap-limit": "provider v1.14.0 in PROVISION_MODE bootstrappingclient (NAP's today) with the NodeOverlay "
                       "gate on: one VM holds three of api's four pods, the fourth is pending at NodePool web's cpu "
                       "limit",
}


class DumpingEngine:
    """The real engine, whose runs list the cluster's objects once every step was checked (Run.finish), before
    they release it."""

    def __init__(self, engine, kinds: tuple[str, ...]):
        self.engine = engine
        self.kinds = kinds
        self.listed: dict | None = None

    def __getattr__(self, name):
        return getattr(self.engine, name)

    def start(self, scenario, profile, cluster, outcome, **options):
        run = self.engine.start(scenario, profile, cluster, outcome, **options)
        finish = run.finish

        def listing_finish(outcome, why):
            self.listed = dump(cluster, self.kinds)
            for item in self.listed["items"]:       # kubectl leaves them out (--show-managed-fields=false, 1.21+)
                item["metadata"].pop("managedFields", None)
            finish(outcome, why)
        run.finish = listing_finish
        return run


def make(case: str, out: Path) -> Path:
    from harness.backends.registry import close_shared, shared_cluster
    from harness.runner.engines import get_engine
    from harness.runner.engines.base import execute
    from harness.scenario.load import load_scenarios
    source = SOURCES / f"{case}.scenario-source.yaml"
    (scenario,) = load_scenarios(source)
    (profile,) = scenario.profiles
    engine = DumpingEngine(get_engine("real"), DUMP_KINDS)
    ok, why = engine.available("local")
    if not ok:
        raise SystemExit(f"the real engine is unavailable: {why}")
    try:
        cluster = shared_cluster("local", **engine.cluster_options_for(scenario, profile, "local"))
        outcome = execute(engine, scenario, profile, cluster)
    finally:
        close_shared()
    if not outcome.passed or engine.listed is None:
        raise SystemExit(f"{source}: the real run did not reach the state the source expects: "
                         + "; ".join(m.render() for m in outcome.mismatches) + (outcome.error or ""))
    kinds = ",".join(KINDS[k].plural for k in DUMP_KINDS)
    text = HEADER.format(what=CASES[case], source=source.relative_to(ROOT), kinds=kinds, case=case) \
        + yaml.safe_dump(engine.listed, sort_keys=False)
    path = out / f"{case}.yaml"
    path.write_text(text)
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=str(OUT))
    ap.add_argument("--provider-git", default=os.environ.get(ENV_GIT) or os.environ.get("HARNESS_PROVIDER_GIT"),
                    help="a karpenter-provider-azure git history with its tags (the release's controller)")
    ap.add_argument("cases", nargs="*", metavar="CASE", help=", ".join(CASES))
    args = ap.parse_args(argv)
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        ap.error(f"unknown case(s) {', '.join(unknown)}; choose from {', '.join(CASES)}")
    if args.provider_git:
        os.environ[ENV_GIT] = args.provider_git
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for case in args.cases or list(CASES):
        print(f"wrote {make(case, out)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
