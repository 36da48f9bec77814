"""The switch table of harness/data/core-behaviour.yaml: Karpenter core's behaviour changes between the
oldest modeled core and v1.14.0, each a probe over core's source (read by harness.model.upstream.releasesync and
harness.model.coresync, which derive the values per release, and harness.model.upstream.corebehaviour, which the
loop reads them through), and what each entry must hold (`entry_problems`, said by `coresync`)."""
from __future__ import annotations

import functools
import re
from pathlib import Path

from harness.model.data import DATA_DIR, load_yaml

CORE_FILE = "core-behaviour.yaml"


@functools.lru_cache(maxsize=None)
def core_spec(data_dir: str = str(DATA_DIR)) -> dict:
    return load_yaml((Path(data_dir) / CORE_FILE).read_text())


def core_probes(data_dir: str = str(DATA_DIR)) -> tuple[dict, ...]:
    """The switches that carry a probe (every one does today), in file order."""
    return tuple(s for s in core_spec(data_dir)["switches"] if s.get("files"))


# what every entry holds (the file's header says what each means); an implemented switch adds the generated
# table's `pair`, one the loop answers with v1.14.0's behaviour what it does instead and where it meets it
ENTRY_KEYS = ("name", "fact", "about", "decides", "scope", "since", "pr", "commit", "before", "after", "module",
              "files")
UNIMPLEMENTED_KEYS = ("modeledAs", "touched")


def entry_problems(data_dir: str = str(DATA_DIR)) -> list[str]:
    """Each switch entry that lacks what its kind needs, as `core-behaviour.yaml:LINE: name: what` (the line of
    its `- name:`): said by `coresync` before a run reads the entry, rather than a KeyError in the run."""
    text = (Path(data_dir) / CORE_FILE).read_text()
    starts = {m.group(1): text.count("\n", 0, m.start()) + 1
              for m in re.finditer(r"^  - name:\s*(\S+)", text, re.M)}
    out = []
    for s in core_spec(data_dir)["switches"]:
        name = str(s.get("name", "?"))
        where = f"{CORE_FILE}:{starts.get(name, 1)}: {name}"
        missing = [k for k in ENTRY_KEYS if not s.get(k)]
        if "implemented" not in s:
            missing.append("implemented")
        elif s["implemented"]:
            missing += [] if s.get("pair") else ["pair"]
        else:
            missing += [k for k in UNIMPLEMENTED_KEYS if not s.get(k)]
        if missing:
            why = " (implemented: false is a switch the loop answers with v1.14.0's behaviour: set true once " \
                  "the loop reads it)" if "modeledAs" in missing else ""
            out.append(f"{where}: lacks {', '.join(missing)}{why}")
        if s.get("fact") and s["fact"] != f"core.behaviour.{name}":
            out.append(f"{where}: fact is {s['fact']!r}, not 'core.behaviour.{name}'")
        if s.get("module") and s["module"] != "core":
            out.append(f"{where}: module is {s['module']!r}, not 'core'")
    return out
