"""The fast timing's edits (harness/data/controller-timing.yaml) against the source of every release the
nightly release-controllers job builds: for each release, its core as its go.mod pins it (read from core's
history, HARNESS_CORE_GIT) takes every edit whose `since`/`until` covers that core, each `find` as often as
the edit says, each added file new to a package core has; a core older than `fast-oldest-core` is built
as released. The other modules an edit names are read from the Go module cache at the version the
release requires, where it is there (never downloaded here). No build: a build is ~10-15 min a release."""
from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from harness.backends.binaries import controller, editrules

NIGHTLY = Path(__file__).resolve().parents[2] / ".github" / "workflows" / "nightly.yml"


def _history(env: str) -> Path:
    d = os.environ.get(env)
    if not d or not Path(d).exists():
        # worded as scripts/junit-summary.py BY_DESIGN knows it: CI cannot reach GitHub, the nightly job sets it
        whose = "the provider's" if env == controller.ENV_HISTORY else "core's"
        pytest.skip(f"{env} ({whose} git history) not given")
    return Path(d)


def _show(git: Path, ref: str, path: str) -> str | None:
    out = subprocess.run(["git", "-C", str(git), "show", f"{ref}:{path}"], capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else None


def _has_dir(git: Path, ref: str, path: str) -> bool:
    out = subprocess.run(["git", "-C", str(git), "ls-tree", ref, path.rstrip("/") + "/"], capture_output=True, text=True)
    return bool(out.stdout.strip())


def matrix_releases() -> list[str]:
    jobs = yaml.safe_load(NIGHTLY.read_text())["jobs"]
    return list(jobs["release-controllers"]["strategy"]["matrix"]["release"])


def _core_ref(version: str) -> str:
    """The core commit a version names: a pseudo-version's commit, else the tag."""
    m = re.search(r"-(?:0\.)?\d{14}-([0-9a-f]{12})$", version)
    return m.group(1) if m else version


def _required(gomod: str, module: str) -> str | None:
    m = re.search(rf"^\s*(?:require\s+)?{re.escape(module)} (v\S+)", gomod, re.M)
    return m.group(1) if m else None


def _module_cache(module: str, version: str) -> Path | None:
    escaped = re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), module)
    root = Path(os.environ.get("GOMODCACHE") or Path(os.environ.get("GOPATH") or Path.home() / "go") / "pkg" / "mod")
    d = root / f"{escaped}@{version}"
    return d if d.is_dir() else None


@pytest.mark.parametrize("release", matrix_releases())
def test_every_fast_edit_finds_its_line_in_the_release_s_source(release, tmp_path, monkeypatch):
    provider = _history(controller.ENV_HISTORY)
    core = _history(controller.ENV_CORE_GIT)
    monkeypatch.delenv(controller.ENV_CORE, raising=False)
    gomod = _show(provider, release, "go.mod")
    if gomod is None:
        pytest.skip(f"{provider} has no tag {release} (`git fetch --tags`)")
    (tmp_path / "go.mod").write_text(gomod)
    _, version = controller.pinned_core(tmp_path)
    oldest = controller.timing_data()["fast-oldest-core"]
    if editrules.before(version, oldest):
        monkeypatch.delenv(controller.ENV_TIMING, raising=False)
        monkeypatch.delenv(controller.ENV_CORE_GIT, raising=False)     # the notice comes before any core is read
        tm, notice = controller.timing_for(tmp_path)
        assert tm == "upstream" and f"core {version} predates the fast timing's edits" in notice
        return
    ref = _core_ref(version)
    wrong = []
    for p in controller.timing_patches("fast"):
        module = p.get("module", controller.CORE_MODULE)
        if module == controller.CORE_MODULE:
            at = version
            read = lambda f: _show(core, ref, f)                    # noqa: E731
            has_dir = lambda d: _has_dir(core, ref, d)              # noqa: E731
        else:
            at = _required(gomod, module)
            assert at, f"provider {release} requires no {module}, which an edit names"
            root = _module_cache(module, at)
            if root is None:
                continue            # not in the Go module cache here: the build checks it
            read = lambda f: (root / f).read_text() if (root / f).is_file() else None   # noqa: E731
            has_dir = lambda d: (root / d).is_dir()                 # noqa: E731
        if not editrules.applies(p, at):
            continue
        if "add" in p:
            parent = p["file"].rpartition("/")[0]
            if read(p["file"]) is not None or (parent and not has_dir(parent)):
                wrong.append(f"{module} {at}: add {p['file']}")
            continue
        text = read(p["file"]) or ""
        if text.count(p["find"]) != editrules.expected(p):
            wrong.append(f"{module} {at}: {p['file']}: {p['find']!r} {text.count(p['find'])} times, "
                         f"not {editrules.expected(p)}")
    assert not wrong, f"provider {release}: " + "; ".join(wrong)


def test_an_edit_s_range_reads_module_versions_in_order():
    """editrules: a pseudo-version sorts before its release and after the one before; `until` excludes."""
    key = editrules.version_key
    assert key("v1.12.0") < key("v1.12.1-0.20260514173230-7e9d426919bd") < key("v1.12.1")
    assert key("v2.1.0+incompatible") == key("v2.1.0")
    edit = {"since": "v1.7.0", "until": "v1.12.0"}
    assert [editrules.applies(edit, v) for v in ("v1.6.2", "v1.7.0", "v1.11.9", "v1.12.0")] == [False, True, True, False]
    assert editrules.applies({}, None) and not editrules.applies(edit, None)
    assert editrules.expected({}) == 1 and editrules.expected({"count": 8}) == 8
    assert editrules.before("v1.0.6", "v1.1.0") and not editrules.before("v1.1.0", "v1.1.0")
    assert not editrules.before("v0.36.1", None)
