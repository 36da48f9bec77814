"""`-v/--verbose` for the command-line tools (`harness`, `python -m harness.backends`), through the
standard `logging` module: the harness's modules log under the `harness.` logger names; a library user
configures logging as usual, these helpers only serve the tools' own switch.

    -v    INFO: what is being built, started, reused, and how long it took
    -vv   DEBUG: also the commands run and the files found
"""
from __future__ import annotations

import argparse
import logging
import sys

FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"
HELP = "log what happens to stderr (-v: steps and timings, -vv: also commands and paths)"


def add_verbose(parser: argparse.ArgumentParser, sub: bool = False) -> None:
    """`-v/--verbose` (repeatable). On a subcommand's parser the default is left unset, so `tool -v cmd`
    and `tool cmd -v` both count (a subparser's default would overwrite the main parser's value)."""
    parser.add_argument("-v", "--verbose", action="count", default=argparse.SUPPRESS if sub else 0, help=HELP)


def setup(verbosity: int) -> None:
    """Send the harness's log records to stderr at the level `verbosity` (-v count) asks for; without
    -v only warnings and errors are shown."""
    level = logging.WARNING if verbosity <= 0 else logging.INFO if verbosity == 1 else logging.DEBUG
    logger = logging.getLogger("harness")
    logger.setLevel(level)
    if not any(getattr(h, "harness_cli", False) for h in logger.handlers):
        handler = logging.StreamHandler(sys.stderr)
        handler.setFormatter(logging.Formatter(FORMAT, datefmt="%H:%M:%S"))
        handler.harness_cli = True          # type: ignore[attr-defined]
        logger.addHandler(handler)
