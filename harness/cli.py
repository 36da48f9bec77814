"""`harness` / `python -m harness`: run, explain, validate and scaffold scenarios.

Exit codes: 0 success, 1 a scenario failed, 2 bad input (`file:line: reason`).
"""
from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

from harness.backends.registry import BACKEND_NAMES
from harness.runner.yamlsource import SourceError

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def _console():
    from rich.console import Console
    return Console(stderr=False, highlight=False, soft_wrap=True)


# -- validate -------------------------------------------------------------------------------------
def cmd_validate(args) -> int:
    from harness.runner.scenario import find_scenario_files, load_scenarios
    files = find_scenario_files(args.paths)
    if not files:
        print("no scenario files found", file=sys.stderr)
        return EXIT_BAD_INPUT
    bad = 0
    count = 0
    for f in files:
        try:
            count += len(load_scenarios(f))
        except SourceError as e:
            bad += 1
            print(e.render(), file=sys.stderr)
    if bad:
        return EXIT_BAD_INPUT
    print(f"{count} scenario(s) in {len(files)} file(s) are valid")
    return EXIT_OK


# -- run ------------------------------------------------------------------------------------------
def _load_all(paths: list[str]):
    from harness.runner.scenario import find_scenario_files, load_scenarios
    out = []
    for f in find_scenario_files(paths):
        out += load_scenarios(f)
    return out


def cmd_run(args) -> int:
    from harness.backends.registry import get_backend
    from harness.runner.engine import run
    from harness.runner.report import failure_text
    try:
        scenarios = _load_all(args.paths)
    except SourceError as e:
        print(e.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    jobs = [(sc, p) for sc in scenarios for p in sc.profiles
            if (not args.profile or p in args.profile) and (not args.k or args.k in sc.name)]
    if args.engine == "real":
        from harness.runner.real.cli import run_real
        return run_real(jobs, args)
    backend = get_backend(args.backend)
    ok, why = backend.available()
    if not ok:
        print(f"backend {args.backend} unavailable: {why}", file=sys.stderr)
        return EXIT_BAD_INPUT
    cluster = backend.start()
    outcomes = []
    try:
        show_progress = not args.json and len(jobs) > 20 and sys.stdout.isatty()
        if show_progress:
            from rich.progress import Progress
            with Progress(transient=True) as prog:
                task = prog.add_task("scenarios", total=len(jobs))
                for sc, p in jobs:
                    outcomes.append(run(sc, p, cluster))
                    prog.advance(task)
        else:
            for sc, p in jobs:
                outcomes.append(run(sc, p, cluster))
    finally:
        cluster.close()
    def verdict(o) -> str:
        """pass / FAIL, with a scenario's declared xfail profiles reported as xfail or XPASS(strict)."""
        if o.profile in o.scenario.xfail:
            return "xfail" if not o.passed else "XPASS"
        return "pass" if o.passed else "FAIL"
    failed = [o for o in outcomes if verdict(o) in ("FAIL", "XPASS")]
    if args.json:
        print(json.dumps([{
            "file": str(o.scenario.file), "scenario": o.scenario.name, "profile": o.profile, "backend": o.backend,
            "passed": o.passed, "verdict": verdict(o), "seconds": round(o.seconds, 4), "nodes": len(o.result.nodes),
            "runaway": o.result.runaway, "mismatches": [m.render() for m in o.mismatches],
        } for o in outcomes], indent=2))
    else:
        from rich.table import Table
        xfailed = sum(1 for o in outcomes if verdict(o) == "xfail")
        table = Table(title=f"{len(outcomes)} run(s) on {args.backend}: {len(outcomes) - len(failed) - xfailed} passed, "
                            f"{xfailed} xfailed, {len(failed)} failed")
        for col in ("scenario", "profile", "result", "nodes", "pods pending", "ms"):
            table.add_column(col)
        for o in outcomes:
            pending = sum(1 for p in o.result.pods.values() if p.state != "scheduled" and p.owner_kind != "DaemonSet")
            colour = {"pass": "green", "xfail": "yellow"}.get(verdict(o), "red")
            table.add_row(o.scenario.name, o.profile, f"[{colour}]{verdict(o)}[/]",
                          str(len(o.result.nodes)) + (" (runaway)" if o.result.runaway else ""), str(pending),
                          f"{o.seconds * 1000:.0f}")
        con = _console()
        con.print(table)
        for o in failed:
            if verdict(o) == "XPASS":
                con.print(f"{o.scenario.file}:{o.scenario.line}: {o.scenario.name} [{o.profile}] passed but is "
                          f"declared xfail: {o.scenario.xfail[o.profile]}", markup=False)
            else:
                con.print(failure_text(o, trace=args.trace), markup=False)
    return EXIT_FAILED if failed else EXIT_OK


# -- explain --------------------------------------------------------------------------------------
EXPLAIN_TEMPLATE = """
apiVersion: {api_version}
kind: Scenario
metadata: {{name: explain}}
given:
  profiles: [{profile}]
  region: {region}
  catalog: {catalog}
  skus: [{sku}]
manifests: []
"""


def cmd_explain(args) -> int:
    import yaml

    from harness.backends.embedded import EmbeddedBackend
    from harness.parity import Probe, _nodeclass, _nodepool, _pod
    from harness.runner.engine import run
    from harness.runner.scenario import API_VERSION, Manifest, load_scenarios_text
    # the probes `harness parity` runs, pinned to the SKU and capacity type
    probe = Probe(value="", skus=[args.sku], nodeclass={"imageFamily": args.image_family},
                  capacity_types=[args.capacity_type])
    nodeclass = _nodeclass(probe)
    if args.nodeclass:
        docs = [d for d in yaml.safe_load_all(Path(args.nodeclass).read_text()) if d]
        found = [d for d in docs if d.get("kind") == "AKSNodeClass"]
        if not found:
            print(f"{args.nodeclass}: no AKSNodeClass in file", file=sys.stderr)
            return EXIT_BAD_INPUT
        nodeclass = found[0]
        nodeclass["metadata"]["name"] = "default"
    text = EXPLAIN_TEMPLATE.format(api_version=API_VERSION, profile=args.profile, region=args.region,
                                   catalog=args.catalog or args.region, sku=args.sku)
    try:
        sc = load_scenarios_text(text, "<explain>")[0]
    except SourceError as e:
        print(e.render().replace("<explain>:", "explain:"), file=sys.stderr)
        return EXIT_BAD_INPUT
    cluster_settings = dict(kv.split("=", 1) for kv in args.cluster)
    sc.given["cluster"] = cluster_settings
    extra_labels = dict(kv.split("=", 1) for kv in args.label)
    nodepool = _nodepool(probe, extra_labels, name="explain", instance_types=[args.sku])
    pod = _pod("probe", cpu="10m")
    sc.manifests = [Manifest(nodeclass, "<explain>", 1), Manifest(nodepool, "<explain>", 1), Manifest(pod, "<explain>", 1)]
    cluster = EmbeddedBackend().start()
    try:
        r = run(sc, args.profile, cluster).result
    finally:
        cluster.close()
    it = r.instance_types.get(args.sku)
    report: dict = {"sku": args.sku, "profile": args.profile, "region": args.region}
    if it is None:
        report["dropped"] = r.dropped_skus.get(args.sku, "not in the catalog")
    else:
        report["requirements"] = {k: str(it.requirements[k]) for k in sorted(it.requirements)}
        report["offerings"] = [f"{o.zone}/{o.capacity_type} price={o.price} {'available' if o.available else 'unavailable'}"
                               for o in it.offerings]
    if r.nodes:
        n = r.nodes[0]
        report["node"] = {"name": n.name, "zone": n.zone, "capacityType": n.capacity_type}
        report["labels"] = {k: {"value": v, "writer": n.writer(k),
                                "writes": [f"{w.writer}={w.value}" + ("" if w.accepted else " (refused)")
                                           for w in n.provenance.get(k, [])]}
                            for k, v in sorted(n.labels.items())}
        report["kubeletNodeLabels"] = n.kubelet_node_labels
        report["droppedFromKubelet"] = n.kubelet_dropped
        if n.kubelet_refused:
            report["kubeletRefused"] = n.kubelet_refused
    elif r.pods:
        report["pending"] = next(iter(r.pods.values())).reason
    if args.json:
        print(json.dumps(report, indent=2))
        return EXIT_OK
    con = _console()
    con.print(f"[bold]{args.sku}[/] under profile [bold]{args.profile}[/] in {args.region}")
    if "dropped" in report:
        con.print(f"  dropped: {report['dropped']}")
        return EXIT_OK
    from rich.table import Table
    t = Table(title="instance-type requirements (computeRequirements)")
    t.add_column("key")
    t.add_column("requirement")
    for k, v in report["requirements"].items():
        t.add_row(k, v.split(" ", 1)[1])
    con.print(t)
    con.print("offerings: " + ", ".join(report["offerings"]))
    if "labels" in report:
        t = Table(title=f"labels on Node {report['node']['name']} and who wrote them")
        for col in ("label", "value", "winner", "writes"):
            t.add_column(col)
        for k, v in report["labels"].items():
            t.add_row(k, v["value"], v["writer"] or "", "; ".join(v["writes"]))
        con.print(t)
        if report["droppedFromKubelet"]:
            con.print("dropped from --node-labels by the provider: " + ", ".join(report["droppedFromKubelet"]))
    if report.get("kubeletRefused"):
        con.print(f"[red]kubelet refused to start:[/] {report['kubeletRefused']}", markup=True)
    if report.get("pending"):
        con.print(f"no node: {report['pending']}")
    return EXIT_OK


# -- new ------------------------------------------------------------------------------------------
def cmd_new(args) -> int:
    import yaml

    from harness.runner.scenario import API_VERSION, SCHEMA_URL_HINT, schema_path
    objs = []
    for f in args.manifests:
        try:
            objs += [d for d in yaml.safe_load_all(Path(f).read_text()) if d]
        except (OSError, yaml.YAMLError) as e:
            line = getattr(getattr(e, "problem_mark", None), "line", None)
            print(f"{f}:{line + 1 if line is not None else 1}: {e}", file=sys.stderr)
            return EXIT_BAD_INPUT
    out = Path(args.output) if args.output else Path(f"{args.name}.scenario.yaml")
    schema_rel = os.path.relpath(schema_path(), out.resolve().parent)
    expect: dict = {}
    nodepools = [o["metadata"]["name"] for o in objs if o.get("kind") == "NodePool"]
    pods = [o["metadata"]["name"] for o in objs if o.get("kind") in ("Pod", "Deployment")]
    if nodepools:
        expect["nodePools"] = {n: "accepted" for n in nodepools}
    if pods:
        expect["pods"] = {p: "scheduled" for p in pods}
    doc = {"apiVersion": API_VERSION, "kind": "Scenario",
           "metadata": {"name": args.name, "labels": ["bug"]},
           "description": "Reproduction of: <link the issue>. Edit `expect` to what should happen.",
           "given": {"profiles": args.profile or ["upstream"], "region": args.region},
           "manifests": objs, "expect": expect}
    text = f"{SCHEMA_URL_HINT}{schema_rel}\n" + yaml.safe_dump(doc, sort_keys=False)
    out.write_text(text)
    print(f"wrote {out} ({len(objs)} manifest(s)); run it with: pytest {out}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="harness", description=__doc__)
    sub = p.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="run scenarios and print a summary")
    r.add_argument("paths", nargs="*", default=["scenarios"])
    r.add_argument("--profile", action="append", default=[])
    r.add_argument("--backend", default="embedded", choices=list(BACKEND_NAMES))
    r.add_argument("--engine", default="simulated", choices=["simulated", "real"],
                   help="real: the Karpenter-on-Azure controller on the local backend (see README)")
    r.add_argument("--conformance", default=None, metavar="DIR",
                   help="with --engine real: also run the simulation and write DIR/conformance.{md,json}")
    r.add_argument("-k", default=None, help="only scenarios whose name contains this text")
    r.add_argument("--json", action="store_true")
    r.add_argument("--trace", action="store_true", help="print the loop trace of failures")
    r.set_defaults(fn=cmd_run)
    v = sub.add_parser("validate", help="check scenario files without running them")
    v.add_argument("paths", nargs="*", default=["scenarios"])
    v.set_defaults(fn=cmd_validate)
    e = sub.add_parser("explain", help="requirements of one SKU and the labels each writer puts on its Node")
    e.add_argument("--sku", required=True)
    e.add_argument("--profile", default="upstream")
    e.add_argument("--region", default="southcentralus")
    e.add_argument("--catalog", default=None)
    e.add_argument("--image-family", default="Ubuntu2204")
    e.add_argument("--nodeclass", default=None, help="a file with an AKSNodeClass")
    e.add_argument("--capacity-type", default="on-demand", choices=["on-demand", "spot"])
    e.add_argument("--cluster", action="append", default=[], metavar="KEY=VALUE",
                   help="cluster setting, e.g. networkDataplane=cilium, kubernetesVersion=1.34.0")
    e.add_argument("--label", action="append", default=[], metavar="KEY=VALUE", help="a NodePool template label")
    e.add_argument("--json", action="store_true")
    e.set_defaults(fn=cmd_explain)
    n = sub.add_parser("new", help="scaffold a scenario from manifest files (bug reproduction)")
    n.add_argument("manifests", nargs="+")
    n.add_argument("--name", required=True)
    n.add_argument("-o", "--output", default=None)
    n.add_argument("--profile", action="append", default=[])
    n.add_argument("--region", default="southcentralus")
    n.set_defaults(fn=cmd_new)
    from harness.parity import add_parser as add_parity
    add_parity(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        return args.fn(args)
    except SourceError as e:
        print(e.render(), file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
