"""``python -m fakeazure serve [--port 0] [--host 127.0.0.1] [--catalog NAME|PATH] ...``

Prints the server URL on the first line of stdout, then serves until interrupted.
"""
from __future__ import annotations

import argparse
import json
import signal
import sys
import time

from .arm import WELL_KNOWN_SUBSCRIPTION
from .catalog import available_catalogs
from .server import LOOPBACK, FakeAzureServer, is_loopback_host
from .state import FakeAzure


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fakeazure", description="A fake Azure Compute/Network/Prices endpoint.")
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
    sub.add_parser("catalogs", help="list the bundled catalogs")
    return p


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.cmd == "catalogs":
        for name in available_catalogs():
            print(name)
        return 0
    if not is_loopback_host(args.host):
        parser.error(f"--host {args.host!r} is not a loopback address; fakeazure serves loopback only "
                     f"(127.0.0.0/8 or localhost)")  # exits 2 with the message, no traceback
    lro = args.lro
    if lro is not None and lro.isdigit():
        lro = {"after_polls": int(lro)}
    faults = []
    if args.faults:
        with open(args.faults) as fh:
            faults = json.load(fh)
        if isinstance(faults, dict):
            faults = faults.get("faults", [faults])
    state = FakeAzure(region=args.region, subscription_id=args.subscription, seed=args.seed,
                      catalog=args.catalog or None, lro=lro, page_size=args.page_size, faults=faults)
    server = FakeAzureServer(state, host=args.host, port=args.port, verbose=args.verbose)
    url = server.start()
    print(url, flush=True)

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
