"""The switch table of harness/data/core-behaviour.yaml: Karpenter core's behaviour changes between the
oldest modeled core and v1.14.0, each a probe over core's source (read by harness.model.upstream.releasesync and
harness.model.coresync, which derive the values per release, and harness.model.upstream.corebehaviour, which the
loop reads them through)."""
from __future__ import annotations

import functools
from pathlib import Path

from harness.model.data import DATA_DIR, load_yaml

CORE_FILE = "core-behaviour.yaml"


@functools.lru_cache(maxsize=None)
def core_spec(data_dir: str = str(DATA_DIR)) -> dict:
    return load_yaml((Path(data_dir) / CORE_FILE).read_text())


def core_probes(data_dir: str = str(DATA_DIR)) -> tuple[dict, ...]:
    """The switches that carry a probe (every one does today), in file order."""
    return tuple(s for s in core_spec(data_dir)["switches"] if s.get("files"))
