"""Find (and if asked, build) the real Karpenter-on-Azure controller binary.

The controller is `./cmd/controller` of `github.com/Azure/karpenter-provider-azure`, built from the
Go module proxy as a dependency of a generated wrapper module by build-controller.sh
(v1.14.0 is the newest version whose dependencies the proxy
serves; v1.14.2 and main need armcontainerservice/v9 v9.5.0-beta.1, which it refuses). A release
tree's module version the proxy refuses during the build is built with a substitute (substitutes.py).

Why it is built this way: docs/architecture/backends.md."""
from __future__ import annotations

import glob
import hashlib
import json
import os
import re
import subprocess
import sys
import tarfile
import time
from dataclasses import dataclass
from pathlib import Path

from harness.backends.binaries import editrules, substitutes
from harness.backends.binaries.controlplane import BUILD_SCRIPT as BINARIES_SCRIPT
from harness.backends.binaries.controlplane import (
    BinariesError,
    BuildLock,
    cache_dir,
    cached_bin_dir,
    go_binary,
    go_module_dir,
    run_logged,
    versions,
)
from harness.model.data import load_yaml

DEFAULT_PROVIDER_VERSION = "v1.14.0"
MODULE = "github.com/Azure/karpenter-provider-azure"
CORE_MODULE = "sigs.k8s.io/karpenter"      # the module a timing's edit changes when it names none
BUILD_SCRIPT = Path(__file__).with_name("build-controller.sh")
ENV_BIN = "KARPENTER_CONTROLLER_BIN"
ENV_SRC = "KARPENTER_PROVIDER_SRC"
ENV_GIT = "KARPENTER_PROVIDER_GIT"     # a clone of the provider with its tags
ENV_HISTORY = "HARNESS_PROVIDER_GIT"   # ... as CI and the nightly jobs name their checkout of it
ENV_CORE_GIT = "HARNESS_CORE_GIT"      # core's history, for a commit a release pins that the proxy does not serve
ENV_REF = "KARPENTER_PROVIDER_REF"     # a tag, branch or commit of that clone
ENV_CORE = "KARPENTER_CORE_VERSION"    # build the provider against this sigs.k8s.io/karpenter instead
ENV_TIMING = "KARPENTER_CONTROLLER_TIMING"     # fast (default) | upstream
TIMINGS = ("fast", "upstream")
TIMING_DATA = Path(__file__).resolve().parent.parent.parent / "data" / "controller-timing.yaml"
# what a checkout's content hash covers: everything that changes the binary
_HASHED_SUFFIXES = (".go", ".mod", ".sum", ".gtpl", ".toml", ".conf", ".json", ".yaml")


@dataclass(frozen=True)
class ControllerBinary:
    path: Path
    version: str          # the provider version (or `git describe` of a checkout)
    source: str           # "env", "cache", "src:<dir>" or "git:<commit>"
    tree: Path | None = None     # the source tree it was built from (None: the pinned module)
    timing: str = "upstream"     # controller-timing.yaml: `fast`: a disruption pass on request, two waits / 10
    substitutes: tuple = ()      # substitutes.Substitute: module versions the proxy refused, built with others

    @property
    def crds_dir(self) -> Path:
        """The CRDs this controller was built with (its `WaitForCRDs` waits for exactly these)."""
        if self.tree is not None:
            return self.tree / "pkg" / "apis" / "crds"
        return go_module_dir(MODULE, self.version if released(self.version) else DEFAULT_PROVIDER_VERSION) / "pkg" / "apis" / "crds"


def released(version: str) -> bool:
    """A release tag (vX.Y.Z), not a `git describe` of a commit between releases."""
    return version.startswith("v") and version.count(".") == 2 and "-" not in version


def resolve_ref(git_dir: Path, ref: str) -> str:
    """The full commit id `ref` (tag, branch, commit) names in the clone at `git_dir`."""
    try:
        out = subprocess.run(["git", "-C", str(git_dir), "rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BinariesError(f"{git_dir}: cannot run git: {e}") from None
    if out.returncode != 0 or not out.stdout.strip():
        raise BinariesError(f"{git_dir}: no commit named {ref!r} (a tag, branch or commit of a "
                            f"karpenter-provider-azure clone; `git fetch --tags` for releases)")
    return out.stdout.strip()


def provider_tree(git_dir: Path, ref: str) -> tuple[Path, str]:
    """(the exported tree of `ref`, its `git describe`): <cache>/provider-src/<commit>/, written once
    (git archive; no work tree of the clone is touched)."""
    return export_tree(git_dir, ref, "provider-src")


def export_tree(git_dir: Path, ref: str, under: str, paths: tuple[str, ...] = ()) -> tuple[Path, str]:
    """(the tree of `ref` of the clone at `git_dir` (only `paths` when given) exported to
    <cache>/<under>/<commit>/ once, its `git describe`)."""
    commit = resolve_ref(git_dir, ref)
    dest = cache_dir() / under / commit
    if not (dest / "go.mod").is_file():
        from filelock import FileLock
        dest.parent.mkdir(parents=True, exist_ok=True)
        with FileLock(str(dest.parent / f"{commit}.lock")):
            if not (dest / "go.mod").is_file():
                tmp = dest.with_name(f"{commit}.tmp{os.getpid()}")
                tmp.mkdir(parents=True, exist_ok=True)
                arch = subprocess.run(["git", "-C", str(git_dir), "archive", "--format=tar", commit, *paths],
                                      capture_output=True, timeout=300)
                if arch.returncode != 0:
                    raise BinariesError(f"git archive {commit[:12]} failed: {arch.stderr.decode(errors='replace')[-500:]}")
                import io
                with tarfile.open(fileobj=io.BytesIO(arch.stdout)) as tf:
                    tf.extractall(tmp, filter="data")
                os.replace(tmp, dest)
    described = subprocess.run(["git", "-C", str(git_dir), "describe", "--tags", "--always", commit],
                               capture_output=True, text=True, timeout=60).stdout.strip() or commit[:12]
    (dest / ".harness-describe").write_text(described + "\n")
    return dest, described


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


def core_version() -> str | None:
    """Another sigs.k8s.io/karpenter release to build the provider with ("does core vX fix this?"),
    or None for the one its go.mod pins."""
    return os.environ.get(ENV_CORE) or None


def timing() -> str:
    """`fast` (the default) or `upstream` (harness/data/controller-timing.yaml)."""
    t = os.environ.get(ENV_TIMING) or "fast"
    if t not in TIMINGS:
        raise BinariesError(f"{ENV_TIMING}={t}: expected one of {', '.join(TIMINGS)}")
    return t


def timing_data() -> dict:
    """harness/data/controller-timing.yaml as a mapping."""
    return load_yaml(TIMING_DATA.read_text()) or {}


def provider_git() -> Path | None:
    """The provider's git history release controllers are built from: KARPENTER_PROVIDER_GIT, else
    HARNESS_PROVIDER_GIT (CI's checkout); None when neither is set."""
    for var in (ENV_GIT, ENV_HISTORY):
        if os.environ.get(var):
            return Path(os.environ[var])
    return None


def pinned_core(tree: Path) -> tuple[str, str]:
    """(module, version) of the sigs.k8s.io/karpenter a provider tree builds with: its go.mod's replace
    when it has one (provider v1.12.2 pins a commit of github.com/kubernetes-sigs/karpenter), else its
    require; KARPENTER_CORE_VERSION wins."""
    if core_version():
        return "sigs.k8s.io/karpenter", core_version()
    text = (tree / "go.mod").read_text()
    m = re.search(r"^\s*(?:replace\s+)?sigs\.k8s\.io/karpenter(?:\s+v\S+)?\s*=>\s*(\S+)\s+(v\S+)", text, re.M)
    if m:
        return m.group(1), m.group(2)
    m = re.search(r"^\s*(?:require\s+)?sigs\.k8s\.io/karpenter\s+(v\S+)", text, re.M)
    if not m:
        raise BinariesError(f"{tree / 'go.mod'}: requires no sigs.k8s.io/karpenter")
    return "sigs.k8s.io/karpenter", m.group(1)


def core_from_history(tree: Path) -> Path | None:
    """Core's tree exported from its history (HARNESS_CORE_GIT) when `tree` pins a commit of core between
    releases by pseudo-version (provider v1.12.2: v1.12.1-0.20260514173230-7e9d426919bd, which the Go
    module proxy refuses); None when it pins a release or the history is not given."""
    if core_version() or not os.environ.get(ENV_CORE_GIT):
        return None
    _, version = pinned_core(tree)
    m = re.search(r"-(?:0\.)?\d{14}-([0-9a-f]{12})$", version)
    # the module's Go source only: a clone may lack large blobs nothing builds from (kwok/examples)
    return export_tree(Path(os.environ[ENV_CORE_GIT]), m.group(1), "core-src", ("go.mod", "go.sum", "pkg"))[0] if m else None


def unapplied_edits(core_dir: Path, patches: list[dict], version: str | None = None) -> list[str]:
    """The edits of a timing for core `version` (editrules.applies) whose `find` does not occur as often as
    it must (editrules.expected) in the core module at `core_dir` (build-controller.sh would stop at the
    first), as `file: find (N times)`."""
    out = []
    for p in patches:
        if "find" not in p or p.get("module", CORE_MODULE) != CORE_MODULE:    # another module: the build checks it
            continue
        if not editrules.applies(p, version):
            continue
        f = core_dir / p["file"]
        n = f.read_text().count(p["find"]) if f.is_file() else 0
        if n != editrules.expected(p):
            out.append(f"{p['file']}: {p['find']!r} ({n} times)")
    return out


def timing_for(tree: Path | None) -> tuple[str, str]:
    """(timing, notice) a tree is built with: the asked one (KARPENTER_CONTROLLER_TIMING); by default
    `fast`, or `upstream` with a notice saying why when the core the tree pins predates the fast timing's
    oldest core (controller-timing.yaml fast-oldest-core) or lacks a line an edit for its version changes."""
    if os.environ.get(ENV_TIMING) or tree is None:
        return timing(), ""
    try:
        module, version = pinned_core(tree)
        oldest = timing_data().get("fast-oldest-core")
        if editrules.before(version, oldest):
            return "upstream", (f"core {version} predates the fast timing's edits (written for core {oldest} "
                                f"on: controller-timing.yaml fast-oldest-core): built as released (timing upstream)")
        core_dir = core_from_history(tree) or go_module_dir(module, version)
    except BinariesError:       # no core to read: the build itself says what is missing
        return timing(), ""
    missing = unapplied_edits(core_dir, timing_patches("fast"), version)
    if not missing:
        return "fast", ""
    return "upstream", (f"core {version} has no line for {len(missing)} of the fast timing's edits "
                        f"(first: {missing[0]}): built as released (timing upstream)")


def timing_patches(name: str | None = None) -> list[dict]:
    """The core edits of a timing (none for `upstream`); an added file's `add` as its absolute path."""
    patches = timing_data().get(name or timing(), []) or []
    return [{**p, "add": str(TIMING_DATA.with_suffix("") / p["add"])} if "add" in p else p for p in patches]


def _component_settings(component: str, name: str | None) -> tuple[tuple[str, object], ...]:
    settings = (timing_data().get(component) or {}).get(name or timing()) or {}
    return tuple(sorted(settings.items()))


def scheduler_settings(name: str | None = None) -> tuple[tuple[str, object], ...]:
    """kube-scheduler's settings for a timing (controller-timing.yaml `kube-scheduler`), as the
    (field, value) pairs a backend's `scheduler_config` takes."""
    return _component_settings("kube-scheduler", name)


def kcm_settings(name: str | None = None) -> tuple[tuple[str, object], ...]:
    """kube-controller-manager's flags for a timing (controller-timing.yaml `kube-controller-manager`),
    as the (flag, value) pairs a backend's `kcm_settings` takes."""
    return _component_settings("kube-controller-manager", name)


# the Kubernetes binaries a timing builds from edited source (controller-timing.yaml `<binary>-source`),
# each beside the pinned control plane: binary -> (the cache entry's prefix, build-binaries.sh's flag)
TIMED_BINARIES = {"kube-controller-manager": ("kcm", "--kcm"), "kube-apiserver": ("apiserver", "--apiserver")}


def source_edits(binary: str, name: str | None = None) -> list[dict]:
    """A Kubernetes binary's source edits for a timing (controller-timing.yaml `<binary>-source`; none for
    `upstream`); an added file's `add` as its absolute path."""
    edits = (timing_data().get(f"{binary}-source") or {}).get(name or timing()) or []
    return [{**p, "add": str(TIMING_DATA.with_suffix("") / p["add"])} if "add" in p else p for p in edits]


def kcm_source_edits(name: str | None = None) -> list[dict]:
    """kube-controller-manager's source edits for a timing (controller-timing.yaml
    `kube-controller-manager-source`; none for `upstream`)."""
    return source_edits("kube-controller-manager", name)


def timed_path(binary: str, name: str | None = None, k8s: str | None = None) -> Path | None:
    """Where a timing's `binary` is built (beside the pinned control plane, or Kubernetes `k8s`'s, keyed by
    its edits and the files they add), or None when the timing edits none."""
    edits = source_edits(binary, name)
    if not edits:
        return None
    keyed = [{**p, "add": Path(p["add"]).read_text()} if "add" in p else p for p in edits]
    digest = hashlib.sha256(json.dumps(keyed, sort_keys=True).encode()).hexdigest()[:8]
    return (cached_bin_dir(k8s).parent / f"{TIMED_BINARIES[binary][0]}-{versions(k8s)['k8s']}+{name or timing()}-"
            f"{digest}" / binary)


def timed_binary(binary: str, name: str | None = None, k8s: str | None = None) -> Path | None:
    """A timing's `binary` (of Kubernetes `k8s`, default the session's) when it is built, else None (the
    pinned one runs instead)."""
    path = timed_path(binary, name, k8s)
    return path if path is not None and path.is_file() and os.access(path, os.X_OK) else None


# apply-edits.py's last words when a release's source lacks a line an edit changes, and the file a timed
# binary's directory keeps them in (so the build is not tried again for that release and edits)
UNAPPLIED_SUFFIX = "; build with timing upstream"
UNAPPLIED_FILE = "UNAPPLIED"


def unapplied_timing(binary: str, name: str | None = None, k8s: str | None = None) -> str | None:
    """Why the timing's edits of `binary` do not apply to Kubernetes `k8s` (found by an earlier build), or None."""
    path = timed_path(binary, name, k8s)
    marker = path.parent / UNAPPLIED_FILE if path is not None else None
    return marker.read_text().strip() if marker is not None and marker.is_file() else None


def timed_kcm_path(name: str | None = None, k8s: str | None = None) -> Path | None:
    return timed_path("kube-controller-manager", name, k8s)


def timed_kcm(name: str | None = None, k8s: str | None = None) -> Path | None:
    return timed_binary("kube-controller-manager", name, k8s)


def timed_apiserver(name: str | None = None, k8s: str | None = None) -> Path | None:
    return timed_binary("kube-apiserver", name, k8s)


def build_timed(binary: str, name: str | None = None, echo: bool = False, k8s: str | None = None) -> Path | None:
    """Build (or reuse) a timing's `binary` of the session's Kubernetes (or `k8s`) (build-binaries.sh
    --kcm / --apiserver; under the control plane's lock: it reuses that build's Go cache); None when the
    timing edits none."""
    path = timed_path(binary, name, k8s)
    if path is None or timed_binary(binary, name, k8s) is not None:
        return path
    if unapplied_timing(binary, name, k8s):
        return None
    go = go_binary()
    if go is None:
        raise BinariesError(f"cannot build {binary}: no Go toolchain (go not on PATH, /usr/local/go/bin/go missing)")
    work = cache_dir() / "build"
    work.mkdir(parents=True, exist_ok=True)
    edits = work / f"{path.parent.name}.json"
    t0 = time.monotonic()
    with BuildLock(cache_dir() / "build.lock", f"{binary} ({name or timing()})", echo):
        if timed_binary(binary, name, k8s) is None:
            edits.write_text(json.dumps(source_edits(binary, name)))
            env = {**os.environ, "PATH": f"{Path(go).parent}:{os.environ.get('PATH', '')}",
                   "K8S_VERSION": versions(k8s)["k8s"], "K8S_EDITS": str(edits), "K8S_EDITS_NAME": name or timing()}
            try:
                run_logged(["bash", str(BINARIES_SCRIPT), TIMED_BINARIES[binary][1], str(path.parent), str(work)],
                           env, echo, t0)
            except BinariesError as e:
                # a release whose source lacks a line the edits change (apply-edits.py says so): that
                # binary runs as released, which the run then says (e.g. its clock is the wall clock)
                why = next((ln for ln in str(e).splitlines() if ln.endswith(UNAPPLIED_SUFFIX)), None)
                if why is None:
                    raise
                path.parent.mkdir(parents=True, exist_ok=True)
                (path.parent / UNAPPLIED_FILE).write_text(why + "\n")
                return None
    if timed_binary(binary, name, k8s) is None:
        raise BinariesError(f"build-binaries.sh {TIMED_BINARIES[binary][1]} finished but {path} is missing")
    return path


def build_timed_kcm(name: str | None = None, echo: bool = False, k8s: str | None = None) -> Path | None:
    """build_timed for kube-controller-manager, then kube-apiserver (the binaries a timing edits)."""
    build_timed("kube-apiserver", name, echo, k8s)
    return build_timed("kube-controller-manager", name, echo, k8s)


def timing_hash(name: str | None = None) -> str:
    """A digest of the timing's edits (and added files): an edited controller-timing.yaml rebuilds."""
    h = hashlib.sha256()
    for p in timing_patches(name):       # the checkout's location is not part of it
        h.update(json.dumps({**p, "add": Path(p["add"]).read_text()} if "add" in p else p, sort_keys=True).encode())
    return h.hexdigest()[:8]


def cache_entry(src: Path | None = None, tm: str | None = None, subst: str = "") -> Path:
    """<cache>/controller/<version>/ for the pinned module, git-<commit>/ for a tree exported from a
    clone (provider_tree), src-<hash>/ for a checkout; `+core-<version>` with KARPENTER_CORE_VERSION,
    `+fast-<timing_hash>` for the fast timing (`tm`, default the environment's), then `subst`
    (substitutes.suffix: built with module versions other than the release pins)."""
    root = cache_dir() / "controller"
    tm = tm or timing()
    core = (f"+core-{core_version()}" if core_version() else "") + ("" if tm == "upstream" else f"+{tm}-{timing_hash(tm)}")
    core += subst
    if src is None:
        return root / (provider_version() + core)
    if src.parent == cache_dir() / "provider-src":
        return root / f"git-{src.name}{core}"
    return root / f"src-{source_hash(src)}{core}"


def selected_source(src: Path | None = None, git_dir: Path | None = None, ref: str | None = None) -> Path | None:
    """The tree to build: `src`, else `ref` of the clone `git_dir` (or KARPENTER_PROVIDER_GIT /
    KARPENTER_PROVIDER_REF), else KARPENTER_PROVIDER_SRC; None for the pinned module."""
    if src is not None:
        return src
    ref = ref or os.environ.get(ENV_REF)
    if ref:
        git_dir = git_dir or (Path(os.environ[ENV_GIT]) if os.environ.get(ENV_GIT) else None)
        if git_dir is None:
            raise BinariesError(f"a provider ref ({ref}) needs a clone of karpenter-provider-azure: "
                                f"--provider-git DIR or {ENV_GIT}=DIR")
        return provider_tree(git_dir, ref)[0]
    return Path(os.environ[ENV_SRC]) if os.environ.get(ENV_SRC) else None


def find_controller(src: Path | None = None, tm: str | None = None) -> ControllerBinary | None:
    """The controller binary to run (built with timing `tm`, default timing_for the source), or None
    when it is not built yet."""
    env = os.environ.get(ENV_BIN)
    if env:
        p = Path(env)
        if not (p.is_file() and os.access(p, os.X_OK)):
            raise BinariesError(f"{ENV_BIN}={env} is not an executable file")
        return ControllerBinary(p, os.environ.get("PROVIDER_VERSION", "unknown"), "env")
    src = selected_source(src)
    src = src.resolve() if src else None
    tm = tm or timing_for(src)[0]
    exact = cache_entry(src, tm)
    # the release as released first; else a build that substituted modules the proxy refused here
    for d in [exact, *sorted(exact.parent.glob(f"{glob.escape(exact.name)}+subst-*"))]:
        p = d / "controller"
        if p.is_file() and os.access(p, os.X_OK):
            version = (d / "VERSION").read_text().strip() if (d / "VERSION").exists() else provider_version()
            source = "cache" if src is None else (f"git:{src.name}" if d.name.startswith("git-") else f"src:{src}")
            return ControllerBinary(p, version, source, src, tm, tuple(substitutes.recorded(d)))
    return None


def build_controller(src: Path | None = None, echo: bool = False,
                     tm: str | None = None) -> tuple[ControllerBinary, float]:
    """Build (or reuse) the controller with timing `tm` (default timing_for the source) into the cache
    under the lock; returns (binary, seconds)."""
    go = go_binary()
    if go is None:
        raise BinariesError("cannot build the Karpenter controller: no Go toolchain (go not on PATH, "
                            f"/usr/local/go/bin/go missing); set {ENV_BIN} to a built binary instead")
    src = selected_source(src)
    if src is not None:
        src = src.resolve()
        if not (src / "go.mod").is_file():
            raise BinariesError(f"{src}: no go.mod (not a karpenter-provider-azure checkout)")
    cache_dir().mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    tm = tm or timing_for(src)[0]
    found = find_controller(src, tm)
    if found is not None and found.source != "env":
        return found, time.monotonic() - t0     # built: no need to wait for another release's build
    with BuildLock(cache_dir() / "controller.lock", "the controller", echo):
        found = find_controller(src, tm)
        if found is not None and found.source != "env":
            return found, time.monotonic() - t0
        # a module version the proxy refuses now: the data's substitute, in an entry of its own
        applied = substitutes.needed(src, go) if src is not None else []
        out = cache_entry(src, tm, substitutes.suffix(applied))
        work = cache_dir() / "build" / f"controller-{out.name}"
        env = {**os.environ, "PATH": f"{Path(go).parent}:{os.environ.get('PATH', '')}"}
        env.pop("PROVIDER_SRC", None)
        env.pop("CORE_VERSION", None)
        env.pop("CORE_PATCHES", None)
        if core_version():
            env["CORE_VERSION"] = core_version()
        if timing_patches(tm):
            work.mkdir(parents=True, exist_ok=True)
            (work / "core-patches.json").write_text(json.dumps(timing_patches(tm)))
            env["CORE_PATCHES"] = str(work / "core-patches.json")
            env["CORE_PATCHES_NAME"] = tm
        env.pop("CORE_DIR", None)
        env.pop("MODULE_REPLACES", None)
        if applied:
            env["MODULE_REPLACES"] = " ".join(s.replace for s in applied)
            out.mkdir(parents=True, exist_ok=True)
            substitutes.record(out, applied)
            if echo:
                print(f"NOTICE: {substitutes.notice(applied)}", file=sys.stderr, flush=True)
        if src is not None and (core_dir := core_from_history(src)) is not None:
            env["CORE_DIR"] = str(core_dir)
        if src is not None:
            env["PROVIDER_SRC"] = str(src)
            if (src / ".harness-describe").is_file():      # an exported tree has no .git to describe
                env["PROVIDER_DESCRIBE"] = (src / ".harness-describe").read_text().strip()
        else:
            env["PROVIDER_VERSION"] = provider_version()
        run_logged(["bash", str(BUILD_SCRIPT), str(out), str(work)], env, echo, t0)
        dt = time.monotonic() - t0
    found = find_controller(src, tm)
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
    """What is missing and the command that builds it, for the source the environment selects too
    (a ref of a clone, a checkout)."""
    chosen = src or selected_source()
    chosen = chosen.resolve() if chosen else None
    where = cache_entry(chosen, timing_for(chosen)[0]) / "controller"
    if src is None and os.environ.get(ENV_REF):
        how = f" --provider-git {os.environ.get(ENV_GIT)} --provider-ref {os.environ[ENV_REF]}"
    else:
        how = f" --provider-src {chosen}" if chosen else ""
    how += f" --timing {timing()}" if timing() != "fast" else ""
    how += f" --core-version {core_version()}" if core_version() else ""
    return (f"the Karpenter-on-Azure controller is not built ({ENV_BIN} unset, {where} missing); "
            f"build it with: python -m harness.backends build --controller{how} (~10 min cold)")
