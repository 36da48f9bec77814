"""Module substitutes for a controller build: a module version a provider release's go.mod pins that the
Go module proxy refuses ("403 Forbidden: This module version is not available"), built with the nearest
version a later release moved to instead (harness/data/controller-module-substitutes.yaml).

A substitute applies only when the proxy refuses that exact version during the build (`refused`), so a
machine with full proxy access builds the release exactly as released. The build records what it
substituted in its cache entry (`SUBSTITUTES`), and every run on that controller says so (`notice`).
Mirrors nothing upstream: it is how the harness builds provider v1.12.x here
(docs/real-controller-releases.md)."""
from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

from harness.model.data import load_yaml

DATA = Path(__file__).resolve().parent.parent.parent / "data" / "controller-module-substitutes.yaml"
RECORD = "SUBSTITUTES"        # in a cache entry: the substitutes its binary was built with (JSON)
# what the proxy answers for a version it will not serve (a network failure is not a refusal)
_REFUSAL = re.compile(r"\b(403 Forbidden|404 Not Found|410 Gone)\b")


@dataclass(frozen=True)
class Substitute:
    module: str
    version: str          # as a release's go.mod pins it
    substitute: str       # the version built instead
    moved_in: str = ""    # the provider release that moved to `substitute`
    reason: str = ""

    @property
    def replace(self) -> str:
        """The wrapper module's `go mod edit -replace` argument."""
        return f"{self.module}@{self.version}={self.module}@{self.substitute}"

    def describe(self) -> str:
        return f"{self.module} {self.substitute} for {self.version}"


def load(path: Path = DATA) -> list[Substitute]:
    """Every substitute the data file lists; a malformed entry is `file:line: reason`."""
    import yaml

    from harness.backends.binaries.controlplane import BinariesError
    try:
        doc = yaml.compose(path.read_text())
    except yaml.YAMLError as e:
        raise BinariesError(f"{path}: {e}") from None
    data = load_yaml(path.read_text()) or {}
    nodes = []
    if doc is not None:
        for k, v in doc.value:
            if k.value == "substitutes":
                nodes = v.value
    out = []
    for node, entry in zip(nodes, data.get("substitutes") or []):
        line = node.start_mark.line + 1
        missing = [f for f in ("module", "version", "substitute", "reason") if not entry.get(f)]
        if missing:
            raise BinariesError(f"{path}:{line}: substitute entry lacks {', '.join(missing)}")
        out.append(Substitute(entry["module"], entry["version"], entry["substitute"],
                              entry.get("movedIn", ""), " ".join(str(entry["reason"]).split())))
    return out


def pinned(go_mod: str, table: list[Substitute]) -> list[Substitute]:
    """The substitutes whose exact module version `go_mod` (a go.mod's text) requires."""
    required = set(re.findall(r"^\s*(?:require\s+)?(\S+)\s+(v\S+)", go_mod, re.MULTILINE))
    return [s for s in table if (s.module, s.version) in required]


def refused(go: str, module: str, version: str) -> bool:
    """True when the Go module proxy refuses `module@version` now (`go mod download` answers 403, 404
    or 410); a version it serves, or a network failure, is not refused."""
    env = {**os.environ, "GOWORK": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod",
           "PATH": f"{Path(go).parent}:{os.environ.get('PATH', '')}"}
    with tempfile.TemporaryDirectory() as tmp:
        try:
            out = subprocess.run([go, "mod", "download", "-json", f"{module}@{version}"], cwd=tmp, env=env,
                                 capture_output=True, text=True, timeout=300, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return False
    if out.returncode == 0:
        return False
    try:
        error = json.loads(out.stdout).get("Error", "")
    except ValueError:
        error = out.stdout + out.stderr
    return bool(_REFUSAL.search(error))


def needed(tree: Path, go: str, table: list[Substitute] | None = None, probe=refused) -> list[Substitute]:
    """The substitutes a build of `tree` needs now: those its go.mod pins whose version the proxy
    refuses (`probe(go, module, version)`)."""
    table = load() if table is None else table
    return [s for s in pinned((tree / "go.mod").read_text(), table) if probe(go, s.module, s.version)]


def suffix(applied: list[Substitute]) -> str:
    """The cache entry's suffix for a build with `applied` ("" for none)."""
    if not applied:
        return ""
    h = hashlib.sha256(json.dumps(sorted(s.replace for s in applied)).encode()).hexdigest()[:8]
    return f"+subst-{h}"


def record(entry: Path, applied: list[Substitute]) -> None:
    (entry / RECORD).write_text(json.dumps([asdict(s) for s in applied], indent=2) + "\n")


def recorded(entry: Path) -> list[Substitute]:
    """The substitutes the build in cache entry `entry` used (none for an exact build)."""
    p = entry / RECORD
    return [Substitute(**d) for d in json.loads(p.read_text())] if p.is_file() else []


def notice(applied: list[Substitute]) -> str:
    """What a run on a substituted controller says ("" for none)."""
    if not applied:
        return ""
    return ("built with " + ", ".join(s.describe() for s in applied)
            + ", which the Go module proxy refuses here (harness/data/controller-module-substitutes.yaml; "
              "a machine with full proxy access builds the release as released)")
