"""Find (and if asked, build) the real Karpenter-on-Azure controller binary.

The controller is `./cmd/controller` of `github.com/Azure/karpenter-provider-azure`, built from the
Go module proxy as a dependency of a generated wrapper module by build-controller.sh
(reference/real-controller.md "Recipe 1": v1.14.0 is the newest version whose dependencies the proxy
serves; v1.14.2 and main need armcontainerservice/v9 v9.5.0-beta.1, which it refuses).

Lookup order:
  1. KARPENTER_CONTROLLER_BIN (an explicit binary; a typo is an error, never a silent fallback);
  2. the build cache: <cache>/controller/<PROVIDER_VERSION>/controller (pinned, default v1.14.0), or
     <cache>/controller/src-<content hash>/controller for a maintainer's checkout (--provider-src).
The build runs under a file lock (<cache>/controller.lock), so concurrent pytest-xdist workers
build once.
"""
from __future__ import annotations

import hashlib
import os
import time
from dataclasses import dataclass
from pathlib import Path

from harness.backends.binaries import BinariesError, BuildLock, cache_dir, go_binary, run_logged

DEFAULT_PROVIDER_VERSION = "v1.14.0"
MODULE = "github.com/Azure/karpenter-provider-azure"
BUILD_SCRIPT = Path(__file__).with_name("build-controller.sh")
ENV_BIN = "KARPENTER_CONTROLLER_BIN"
ENV_SRC = "KARPENTER_PROVIDER_SRC"
# what a checkout's content hash covers: everything that changes the binary
_HASHED_SUFFIXES = (".go", ".mod", ".sum", ".gtpl", ".toml", ".conf", ".json", ".yaml")


@dataclass(frozen=True)
class ControllerBinary:
    path: Path
    version: str          # the provider version (or `git describe` of a checkout)
    source: str           # "env", "cache" or "src:<dir>"


def provider_version() -> str:
    return os.environ.get("PROVIDER_VERSION", DEFAULT_PROVIDER_VERSION)


def source_hash(src: Path) -> str:
    """A content hash of a provider checkout: the build-relevant files (not .git, not tests), so an
    unchanged working copy reuses its cached binary and any edit rebuilds."""
    h = hashlib.sha256()
    for p in sorted(src.rglob("*")):
        rel = p.relative_to(src)
        if (not p.is_file() or rel.parts[0] in (".git", "test", "hack", "docs", "charts")
                or p.name.endswith("_test.go") or not p.name.endswith(_HASHED_SUFFIXES)):
            continue
        h.update(str(rel).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()[:16]


def cache_entry(src: Path | None = None) -> Path:
    """<cache>/controller/<version>/ for the pinned module, src-<hash>/ for a checkout."""
    root = cache_dir() / "controller"
    return root / (f"src-{source_hash(src)}" if src is not None else provider_version())


def find_controller(src: Path | None = None) -> ControllerBinary | None:
    """The controller binary to run, or None when it is not built yet."""
    env = os.environ.get(ENV_BIN)
    if env:
        p = Path(env)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise BinariesError(f"{ENV_BIN}={env} is not an executable file")
        return ControllerBinary(p, os.environ.get("PROVIDER_VERSION", "unknown"), "env")
    src = src or (Path(os.environ[ENV_SRC]) if os.environ.get(ENV_SRC) else None)
    d = cache_entry(src.resolve() if src else None)
    p = d / "controller"
    if p.is_file() and os.access(p, os.X_OK):
        version = (d / "VERSION").read_text().strip() if (d / "VERSION").exists() else provider_version()
        return ControllerBinary(p, version, f"src:{src}" if src else "cache")
    return None


def build_controller(src: Path | None = None, echo: bool = False) -> tuple[ControllerBinary, float]:
    """Build (or reuse) the controller into the cache under the lock; returns (binary, seconds)."""
    go = go_binary()
    if go is None:
        raise BinariesError("cannot build the Karpenter controller: no Go toolchain (go not on PATH, "
                            f"/usr/local/go/bin/go missing); set {ENV_BIN} to a built binary instead")
    if src is not None:
        src = src.resolve()
        if not (src / "go.mod").is_file():
            raise BinariesError(f"{src}: no go.mod (not a karpenter-provider-azure checkout)")
    cache_dir().mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    with BuildLock(cache_dir() / "controller.lock", "the controller", echo):
        found = find_controller(src)
        if found is not None and found.source != "env":
            return found, time.monotonic() - t0
        out = cache_entry(src)
        work = cache_dir() / "build" / f"controller-{out.name}"
        env = {**os.environ, "PATH": f"{Path(go).parent}:{os.environ.get('PATH', '')}"}
        env.pop("PROVIDER_SRC", None)
        if src is not None:
            env["PROVIDER_SRC"] = str(src)
        else:
            env["PROVIDER_VERSION"] = provider_version()
        run_logged(["bash", str(BUILD_SCRIPT), str(out), str(work)], env, echo, t0)
        dt = time.monotonic() - t0
    found = find_controller(src)
    if found is None:
        raise BinariesError(f"{BUILD_SCRIPT.name} finished but {out / 'controller'} is missing")
    return found, dt


def ensure_controller(build: bool = False, src: Path | None = None) -> ControllerBinary:
    """The controller binary; built first when missing and `build` (or HARNESS_BUILD_CONTROLLER=1)."""
    found = find_controller(src)
    if found is not None:
        return found
    if build or os.environ.get("HARNESS_BUILD_CONTROLLER", "").lower() in ("1", "true", "yes"):
        return build_controller(src)[0]
    raise BinariesError(missing_message(src))


def missing_message(src: Path | None = None) -> str:
    where = cache_entry(src.resolve() if src else None) / "controller"
    how = f" --provider-src {src}" if src else ""
    return (f"the Karpenter-on-Azure controller is not built ({ENV_BIN} unset, {where} missing); "
            f"build it with: python -m harness.backends build --controller{how} (~10 min cold)")
