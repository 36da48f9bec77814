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


class _Stderr(logging.StreamHandler):
    """Writes to whatever sys.stderr is when a record is emitted (not the stream of the moment the
    handler was made: under pytest's capture that one is closed later)."""

    def __init__(self) -> None:
        super().__init__()
        self.harness_cli = True

    @property
    def stream(self):                       # type: ignore[override]
        return sys.stderr

    @stream.setter
    def stream(self, value) -> None:
        pass


def setup(verbosity: int) -> None:
    """Send the harness's log records to stderr at the level `verbosity` (-v count) asks for. Without
    -v logging is left as Python has it (warnings and errors reach stderr through its last-resort
    handler); calling it again replaces what an earlier call set."""
    logger = logging.getLogger("harness")
    for h in [h for h in logger.handlers if getattr(h, "harness_cli", False)]:
        logger.removeHandler(h)
    if verbosity <= 0:
        logger.setLevel(logging.NOTSET)
        return
    logger.setLevel(logging.INFO if verbosity == 1 else logging.DEBUG)
    handler = _Stderr()
    handler.setFormatter(logging.Formatter(FORMAT, datefmt="%H:%M:%S"))
    logger.addHandler(handler)
