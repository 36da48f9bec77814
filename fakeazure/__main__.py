"""``python -m fakeazure serve [--port 0] [--host 127.0.0.1] [--catalog NAME|PATH] [--tls] ...``

Prints the server URL on the first line of stdout (with ``--tls``, the CA certificate's path
on the second), then serves until interrupted.  ``python -m fakeazure az-shim DIR`` writes a
fake ``az`` executable into DIR (see ``fakeazure.azshim``).
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import time

from . import azshim
from .arm import WELL_KNOWN_SUBSCRIPTION, RealClock
from .catalog import available_catalogs
from .server import LOOPBACK, FakeAzureServer, is_loopback_host
from .state import FakeAzure


def _version() -> str:
    """The installed distribution's version (fakeazure ships in karpenter-azure-harness)."""
    from importlib.metadata import PackageNotFoundError, version
    try:
        return version("karpenter-azure-harness")
    except PackageNotFoundError:
        return "unknown (not installed)"


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fakeazure", description="A fake Azure Compute/Network/Prices endpoint.")
    p.add_argument("--version", action="version", version=f"fakeazure {_version()}")
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("serve", help="serve the fake on a loopback port")
    s.add_argument("--host", default=LOOPBACK,
                   help="loopback address to bind: 127.0.0.0/8 or localhost (default 127.0.0.1)")
    s.add_argument("--port", type=int, default=0, help="port (default 0: pick a free one)")
    s.add_argument("--catalog", action="append", default=[],
                   help=f"catalog name {available_catalogs()} or path; repeatable")
    s.add_argument("--region", default="southcentralus", help="default region (default southcentralus)")
    s.add_argument("--subscription", default=WELL_KNOWN_SUBSCRIPTION)
    s.add_argument("--seed", type=int, default=0)
    s.add_argument("--lro", default=None, help="'immediate', 'sync' or a number of polls")
    s.add_argument("--faults", help="JSON file with a list of fault rules")
    s.add_argument("--page-size", type=int, default=None)
    s.add_argument("--verbose", action="store_true", help="log each request to stderr")
    s.add_argument("--clock", choices=("fake", "real"), default="fake",
                   help="'fake' (default): time moves only through /_fakeazure/advance; 'real': wall-clock time "
                        "(Resource Graph lag and eviction ages then pass by themselves; latency faults really sleep)")
    s.add_argument("--resource-graph-lag", type=float, default=0.0,
                   help="seconds before a VM/NIC change shows in Resource Graph (default 0)")
    s.add_argument("--tls", action="store_true",
                   help="serve https with a generated CA + server certificate; prints the CA path on line 2")
    s.add_argument("--tls-dir", default=None,
                   help="write ca.pem/server.pem/server-key.pem here and keep them (implies --tls; "
                        "default: a temporary directory removed at exit)")
    sub.add_parser("catalogs", help="list the bundled catalogs")
    a = sub.add_parser("az-shim", help="write a fake `az` (Azure CLI) that prints a fake access token")
    a.add_argument("dir", help="directory to write the `az` executable into (put it first on PATH)")
    a.add_argument("--subscription", default=WELL_KNOWN_SUBSCRIPTION)
    a.add_argument("--tenant", default=azshim.WELL_KNOWN_TENANT)
    a.add_argument("--token", default=azshim.FAKE_TOKEN)
    return p


def _fail(message: str) -> int:
    """Bad input: one line on stderr, exit status 2, no traceback."""
    print(f"fakeazure: {message}", file=sys.stderr)
    return 2


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.cmd == "catalogs":
        for name in available_catalogs():
            print(name)
        return 0
    if args.cmd == "az-shim":
        try:
            print(azshim.write(args.dir, subscription=args.subscription, tenant=args.tenant, token=args.token))
        except OSError as exc:
            return _fail(f"{args.dir}: {exc.strerror or exc}")
        return 0
    if not is_loopback_host(args.host):
        parser.error(f"--host {args.host!r} is not a loopback address; fakeazure serves loopback only "
                     f"(127.0.0.0/8 or localhost)")  # exits 2 with the message, no traceback
    lro = args.lro
    if lro is not None and lro.isdigit():
        lro = {"after_polls": int(lro)}
    faults = []
    if args.faults:
        try:
            with open(args.faults) as fh:
                faults = json.load(fh)
        except json.JSONDecodeError as exc:
            return _fail(f"{args.faults}:{exc.lineno}: {exc.msg}")
        except OSError as exc:
            return _fail(f"{args.faults}: {exc.strerror or exc}")
        if isinstance(faults, dict):
            faults = faults.get("faults", [faults])
        if not isinstance(faults, list):
            return _fail(f"{args.faults}:1: expected a list of fault rules or {{\"faults\": [...]}}")
    if not 0 <= args.resource_graph_lag < 1e9:
        parser.error("--resource-graph-lag must be between 0 and 1e9 seconds")
    try:
        state = FakeAzure(region=args.region, subscription_id=args.subscription, seed=args.seed,
                          catalog=args.catalog or None, lro=lro, page_size=args.page_size,
                          clock=RealClock() if args.clock == "real" else None,
                          resource_graph_lag=args.resource_graph_lag)
    except (OSError, ValueError) as exc:  # an unknown catalog or --lro value
        parser.error(str(exc))
    try:
        state.add_faults(faults)
    except (TypeError, ValueError) as exc:
        return _fail(f"{args.faults}: {exc}")
    server = FakeAzureServer(state, host=args.host, port=args.port, verbose=args.verbose, tls=args.tls,
                             tls_dir=args.tls_dir)
    url = server.start()
    print(url, flush=True)
    if server.ca_path:
        print(server.ca_path, flush=True)

    stop = {"done": False}

    def _term(signum, frame):
        stop["done"] = True
    signal.signal(signal.SIGTERM, _term)
    signal.signal(signal.SIGINT, _term)
    try:
        while not stop["done"]:
            time.sleep(0.2)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
