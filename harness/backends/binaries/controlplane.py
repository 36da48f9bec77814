"""Find (and if asked, build) the control-plane binaries the real backends run.

Lookup order for each binary (envtest's $KUBEBUILDER_ASSETS convention: sigs.k8s.io/controller-runtime
v0.23.1 pkg/internal/testing/process/bin_path_finder.go BinPathFinder; sigs.k8s.io/controller-runtime v0.23.1
pkg/internal/testing/process/process.go
"LocalBinariesBackend"):
  1. its own env override: KUBE_APISERVER_BIN, ETCD_BIN, KUBE_SCHEDULER_BIN,
     KUBE_CONTROLLER_MANAGER_BIN, KWOK_BIN;
  2. $KUBEBUILDER_ASSETS (envtest's layout: a flat dir with kube-apiserver, etcd, kubectl);
  3. $HARNESS_BIN_DIR;
  4. the build cache, keyed by versions: <cache>/bin/k8s-<K8S_VERSION>-etcd-<ETCD_VERSION>-kwok-<KWOK_VERSION>/
     (written by `python -m harness.backends build`, which runs build-binaries.sh: the Go module
     proxy, k8s.io/kubernetes v1.36.3 go.mod, go.etcd.io/etcd/server/v3 v3.6.4 go.mod, sigs.k8s.io/kwok v0.8.0
     pkg/kwok/cmd/root.go).
Another Kubernetes version than the session's (`k8s=`: a scenario's given.cluster.kubernetesVersion) is looked
up in its own cache dir only, and built there on request. The pinned default versions and the cache layout
live here only, the etcd paired with each Kubernetes minor in harness/data/kubernetes-versions.yaml;
build-binaries.sh gets them from build(). Every binary found is validated with `--version` (once per
path+mtime per process).
"""
from __future__ import annotations

import collections
import functools
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.model.data import load_yaml

log = logging.getLogger(__name__)

DEFAULT_K8S_VERSION = "v1.36.3"
DEFAULT_KWOK_VERSION = "v0.8.0"
# the Kubernetes release started for each minor and its etcd (k8s.io/kubernetes <tag> hack/lib/etcd.sh)
VERSIONS_DATA = Path(__file__).resolve().parent.parent.parent / "data" / "kubernetes-versions.yaml"

BUILD_SCRIPT = Path(__file__).with_name("build-binaries.sh")

ENV_OVERRIDES = {
    "kube-apiserver": "KUBE_APISERVER_BIN",
    "etcd": "ETCD_BIN",
    "kube-scheduler": "KUBE_SCHEDULER_BIN",
    "kube-controller-manager": "KUBE_CONTROLLER_MANAGER_BIN",
    "kwok": "KWOK_BIN",
}
REQUIRED = ("kube-apiserver", "etcd")
OPTIONAL = ("kube-scheduler", "kube-controller-manager", "kwok")


class BinariesError(RuntimeError):
    pass


def cache_dir() -> Path:
    """The harness cache (outside the repo): $HARNESS_CACHE or $XDG_CACHE_HOME/karpenter-harness."""
    env = os.environ.get("HARNESS_CACHE")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "karpenter-harness"


@dataclass(frozen=True)
class KubernetesRelease:
    """The control plane started for one Kubernetes minor (harness/data/kubernetes-versions.yaml)."""
    minor: str              # "1.33"
    kubernetes: str         # "v1.33.13": the patch release built and started
    etcd: str               # "v3.5.24": the etcd that release is tested against


@functools.lru_cache(maxsize=1)
def kubernetes_releases() -> dict[str, KubernetesRelease]:
    """minor -> KubernetesRelease, from harness/data/kubernetes-versions.yaml."""
    rows = (load_yaml(VERSIONS_DATA.read_text()) or {}).get("releases") or []
    return {str(r["minor"]): KubernetesRelease(str(r["minor"]), r["kubernetes"], r["etcd"]) for r in rows}


def minor_of(version: str) -> str | None:
    """"1.33" for "1.33.0", "v1.33.13" or "v1.33.13+k3s1"; None when `version` names no minor."""
    m = re.match(r"^v?(\d+)\.(\d+)(?:\.|$)", str(version).strip())
    return f"{m[1]}.{m[2]}" if m else None


def release_for(version: str) -> KubernetesRelease | None:
    """The control plane the harness starts for `version`'s minor, or None for a minor it has none for."""
    minor = minor_of(version)
    return kubernetes_releases().get(minor) if minor else None


def paired_etcd(k8s: str) -> str:
    """The etcd paired with Kubernetes `k8s` (by its minor)."""
    rel = release_for(k8s)
    if rel is None:
        raise BinariesError(f"no etcd is paired with Kubernetes {k8s} in {VERSIONS_DATA.name} (minors "
                            f"{', '.join(kubernetes_releases())}); set ETCD_VERSION")
    return rel.etcd


def versions(k8s: str | None = None) -> dict[str, str]:
    """The session's versions (K8S_VERSION, ETCD_VERSION, KWOK_VERSION, else the pinned Kubernetes and the
    etcd paired with it), or with `k8s` another Kubernetes version's (its paired etcd; ETCD_VERSION is the
    session's)."""
    if k8s is None:
        k8s = os.environ.get("K8S_VERSION", DEFAULT_K8S_VERSION)
        etcd = os.environ.get("ETCD_VERSION") or paired_etcd(k8s)
    else:
        etcd = paired_etcd(k8s)
    return {"k8s": k8s, "etcd": etcd, "kwok": os.environ.get("KWOK_VERSION", DEFAULT_KWOK_VERSION)}


def cached_bin_dir(k8s: str | None = None) -> Path:
    v = versions(k8s)
    return cache_dir() / "bin" / f"k8s-{v['k8s']}-etcd-{v['etcd']}-kwok-{v['kwok']}"


# The node binaries (built like kind's node image carries them: sigs.k8s.io/kind v0.33.0
# pkg/build/nodeimage/build.go; k8s.io/kubernetes v1.36.3 cmd/kubeadm/app/constants/constants.go): the same
# wrapper-module build, its own bin dir,
# so the control-plane dir above keeps its name (and cache key).
NODE_BINARIES = ("kubelet", "kubeadm", "kubectl", "kube-proxy")
NODE_ENV_OVERRIDES = {n: n.upper().replace("-", "_") + "_BIN" for n in NODE_BINARIES}    # KUBELET_BIN, ...


def node_bin_dir() -> Path:
    return cache_dir() / "bin" / f"k8s-node-{versions()['k8s']}"


def find_node_binary(name: str) -> Path | None:
    """A node binary from its env override (KUBELET_BIN, ...), $HARNESS_BIN_DIR or node_bin_dir()."""
    env = os.environ.get(NODE_ENV_OVERRIDES[name])
    if env:
        if not (Path(env).is_file() and os.access(env, os.X_OK)):
            raise BinariesError(f"{NODE_ENV_OVERRIDES[name]}={env} is not an executable file")
        return Path(env)
    for d in (os.environ.get("HARNESS_BIN_DIR"), node_bin_dir()):
        if d and (p := Path(d) / name).is_file() and os.access(p, os.X_OK):
            return p
    return None


def build_node(echo: bool = False) -> tuple[Path, float]:
    """Build (or reuse) kubelet, kubeadm, kubectl and kube-proxy of the pinned Kubernetes version into
    node_bin_dir() (build-binaries.sh --node; under its own lock, so it can run beside a
    control-plane build); returns (bin dir, seconds)."""
    go = go_binary()
    if go is None:
        raise BinariesError("cannot build the node binaries: no Go toolchain (go not on PATH, /usr/local/go/bin/go "
                            "missing); set KUBELET_BIN or HARNESS_BIN_DIR instead")
    out = node_bin_dir()
    cache_dir().mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PATH": f"{Path(go).parent}:{os.environ.get('PATH', '')}", "K8S_VERSION": versions()["k8s"]}
    t0 = time.monotonic()
    with BuildLock(cache_dir() / "node-build.lock", "the node binaries", echo):
        run_logged(["bash", str(BUILD_SCRIPT), "--node", str(out), str(cache_dir() / "build")], env, echo, t0)
    return out, time.monotonic() - t0


HEARTBEAT_SECONDS = 15.0
# a build script's log line that starts a step worth naming in the heartbeat:
# "[build-binaries] building kube-apiserver ...", "[build-controller] resolving the module graph", ...
STEP_LINE = re.compile(r"^\[(?P<tag>[\w-]+)\] (?P<step>(?:building|resolving|downloading) .*?)(?: \(.*\))?\s*$")


class Heartbeat:
    """While a long step runs (a Go build prints nothing for minutes), say every `every` seconds what it
    is doing and how long it has taken so far: to stderr with `echo` (the tools' own output), else as an
    INFO log record (`-v`, or pytest's log capture)."""

    def __init__(self, what: str, echo: bool, tag: str = "build", every: float | None = None):
        self.tag, self.what, self.echo, self.every = tag, what, echo, every or HEARTBEAT_SECONDS
        self.t0 = self.step_t0 = time.monotonic()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"heartbeat-{tag}", daemon=True)

    def step(self, tag: str, what: str) -> None:
        """A new step began (its own clock starts)."""
        self.tag, self.what, self.step_t0 = tag, what, time.monotonic()

    def line(self) -> str:
        now = time.monotonic()
        total = "" if self.step_t0 == self.t0 else f"; {_minutes(now - self.t0)} in all"
        return f"[{self.tag}] still {self.what}: {_minutes(now - self.step_t0)} so far{total}"

    def _run(self) -> None:
        while not self._stop.wait(self.every):
            if self.echo:
                print(self.line(), file=sys.stderr, flush=True)
            else:
                log.info("%s", self.line())

    def __enter__(self) -> "Heartbeat":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()


class BuildLock:
    """The file lock a build holds (concurrent pytest-xdist workers, checkouts and CI chains build once);
    when another process holds it, say so and keep saying how long we have waited (Heartbeat)."""

    def __init__(self, path: Path, what: str, echo: bool = False):
        from filelock import FileLock
        self.lock, self.what, self.echo = FileLock(str(path)), what, echo

    def __enter__(self) -> "BuildLock":
        from filelock import Timeout
        try:
            self.lock.acquire(timeout=0)
        except Timeout:
            message = f"[build] another build holds {self.lock.lock_file}; waiting for it ({self.what})"
            print(message, file=sys.stderr, flush=True) if self.echo else log.info("%s", message)
            with Heartbeat(f"waiting for another build of {self.what}", self.echo):
                self.lock.acquire()
        return self

    def __exit__(self, *exc) -> None:
        self.lock.release()


def _minutes(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}m{s:02d}s" if m else f"{s}s"


def run_logged(argv: list[str], env: dict, echo: bool, t0: float) -> None:
    """Run a build script; its log goes to stderr with `echo` (at DEBUG otherwise), its tail into the
    error when it fails; a heartbeat names the step it is in every 15 s."""
    tail: collections.deque[str] = collections.deque(maxlen=25)
    name = Path(argv[1]).name
    log.info("running %s", " ".join(argv))
    cpu0 = _children_cpu()
    with subprocess.Popen(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as proc, \
            Heartbeat(f"running {name}", echo) as beat:
        for line in proc.stdout:
            tail.append(line.rstrip("\n"))
            if m := STEP_LINE.match(line):
                beat.step(m["tag"], m["step"])
            if echo:
                sys.stderr.write(line)
            else:
                log.debug("%s", line.rstrip("\n"))
    if proc.returncode != 0:
        raise BinariesError(f"{name} failed (exit {proc.returncode}) after "
                            f"{time.monotonic() - t0:.0f}s:\n" + "\n".join(tail).strip())
    # CPU seconds of the script and everything it waited for (go build's compilers and linkers): the
    # figure that does not depend on how busy the machine was
    cpu = _children_cpu() - cpu0
    message = f"{name} done in {time.monotonic() - t0:.0f} s ({cpu:.0f} CPU-s)"
    if echo:
        print(f"[build] {message}", file=sys.stderr, flush=True)
    log.info("%s", message)


def _children_cpu() -> float:
    import resource
    r = resource.getrusage(resource.RUSAGE_CHILDREN)
    return r.ru_utime + r.ru_stime


def go_binary() -> str | None:
    return shutil.which("go") or (str(p) if (p := Path("/usr/local/go/bin/go")).exists() else None)


@functools.lru_cache(maxsize=64)
def _version_of(path: str, mtime: float) -> str:
    name = Path(path).name
    try:
        out = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=30)
    except (OSError, subprocess.TimeoutExpired) as e:
        raise BinariesError(f"{path}: cannot run --version: {e}") from None
    text = (out.stdout + out.stderr).strip()
    if out.returncode != 0:
        raise BinariesError(f"{path} --version exited {out.returncode}: {text[-300:]}")
    # "Kubernetes v1.36.3" | "etcd Version: 3.6.8" | "kwok version v0.8.0 ..."
    m = re.search(r"v?(\d+\.\d+\.\d+[-+.\w]*)", text)
    if not m or (name.startswith("kube-") and "v0.0.0" in text):
        # an unstamped k8s build reports v0.0.0-master+$Format:%H$ (k8s.io/component-base v0.36.3
        # version/base.go gitVersion); tools that parse it break (k8s.io/kubernetes v1.36.3 hack/lib/version.sh).
        raise BinariesError(f"{path} --version gave no usable version: {text[:200]!r}")
    return m.group(0) if m.group(0).startswith("v") else "v" + m.group(1)


def binary_version(path: str | os.PathLike) -> str:
    p = Path(path)
    return _version_of(str(p), p.stat().st_mtime)


@dataclass
class BinarySet:
    paths: dict[str, Path]                       # name -> path, only those found
    sources: dict[str, str] = field(default_factory=dict)   # name -> where it came from
    versions: dict[str, str] = field(default_factory=dict)  # name -> validated version

    def __getitem__(self, name: str) -> Path:
        return self.paths[name]

    def has(self, name: str) -> bool:
        return name in self.paths

    def missing(self, names=REQUIRED) -> list[str]:
        return [n for n in names if n not in self.paths]

    @property
    def kwok_stages(self) -> Path | None:
        """Stage config for kwok >= v0.8.0 (which has no built-in stages: sigs.k8s.io/kwok v0.8.0
        kustomize/stage/node/fast/node-initialize.yaml and the like are opt-in)."""
        if "kwok" not in self.paths:
            return None
        return kwok_stages_file(self.paths["kwok"].parent)


def _candidates(name: str, k8s: str | None = None) -> list[tuple[str, Path]]:
    """Where `name` may be, in order; for another Kubernetes version (`k8s`) only its cache dir: the
    overrides and asset dirs are the session's control plane."""
    if k8s is not None:
        return [("cache", cached_bin_dir(k8s) / name)]
    out: list[tuple[str, Path]] = []
    env = os.environ.get(ENV_OVERRIDES[name])
    if env:
        out.append((ENV_OVERRIDES[name], Path(env)))
    for var in ("KUBEBUILDER_ASSETS", "HARNESS_BIN_DIR"):
        d = os.environ.get(var)
        if d:
            out.append((var, Path(d) / name))
    out.append(("cache", cached_bin_dir() / name))
    return out


def find_binaries(validate: bool = True, k8s: str | None = None) -> BinarySet:
    """Locate every known binary (of Kubernetes `k8s` when given, else the session's); missing ones are
    simply absent from `.paths`.

    An explicit env override that points at a non-executable file is an error (a typo should not
    silently fall back to another binary).
    """
    bs = BinarySet({})
    for name in REQUIRED + OPTIONAL:
        for source, path in _candidates(name, k8s):
            if path.is_file() and os.access(path, os.X_OK):
                bs.paths[name] = path
                bs.sources[name] = source
                if validate:
                    bs.versions[name] = binary_version(path)
                break
            if source == ENV_OVERRIDES[name]:
                raise BinariesError(f"{source}={path} is not an executable file")
    return bs


def build(echo: bool = False, k8s: str | None = None, need: tuple[str, ...] | None = None) -> tuple[Path, float]:
    """Build (or reuse) the pinned versions (or Kubernetes `k8s` and its etcd) into cached_bin_dir() with
    build-binaries.sh, then write kwok's stage config beside kwok; returns (bin dir, seconds). `need`: only
    those binaries (default: the whole set). `echo` streams the build log to stderr (it is otherwise only
    shown, its tail, when the build fails)."""
    go = go_binary()
    if go is None:
        raise BinariesError("cannot build control-plane binaries: no Go toolchain (go not on PATH, "
                            "/usr/local/go/bin/go missing); set KUBEBUILDER_ASSETS or HARNESS_BIN_DIR instead")
    v = versions(k8s)
    out = cached_bin_dir(k8s)
    env = {**os.environ, "PATH": f"{Path(go).parent}:{os.environ.get('PATH', '')}",
           "K8S_VERSION": v["k8s"], "ETCD_VERSION": v["etcd"], "KWOK_VERSION": v["kwok"]}
    if need is not None:
        env["K8S_BINARIES"] = " ".join(n for n in REQUIRED + OPTIONAL if n in need)
    t0 = time.monotonic()
    run_logged(["bash", str(BUILD_SCRIPT), str(out), str(cache_dir() / "build")], env, echo, t0)
    dt = time.monotonic() - t0
    if (out / "kwok").exists():
        kwok_stages_file(out)
    return out, dt


def ensure_binaries(build: bool = True, need: tuple[str, ...] = REQUIRED, echo: bool = False,
                    k8s: str | None = None) -> BinarySet:
    """Binaries for `need` (of Kubernetes `k8s` when given), building the pinned versions (or `k8s`'s
    `need` alone) into the cache first if any is missing (and `build`). The build goes through a file
    lock so concurrent pytest-xdist workers build once; another version's build says first what it costs."""
    bs = find_binaries(k8s=k8s)
    if bs.missing(need) and build:
        cache_dir().mkdir(parents=True, exist_ok=True)
        what = "the control plane" if k8s is None else f"the Kubernetes {k8s} control plane"
        with BuildLock(cache_dir() / "build.lock", what, echo):
            bs = find_binaries(k8s=k8s)
            if bs.missing(need):
                if k8s is not None:
                    message = build_notice(k8s, bs.missing(need))
                    print(message, file=sys.stderr, flush=True)
                    log.warning("%s", message)
                _build_fn(echo=echo, k8s=k8s, need=None if k8s is None else need)
                bs = find_binaries(k8s=k8s)
    if bs.missing(need):
        raise BinariesError(missing_message(bs, need, k8s))
    return bs


_build_fn = build    # keep a handle: ensure_binaries' `build` parameter shadows the function name

# what a control-plane build of one Kubernetes version takes, cold, on 2 cores (docs/engines/backends.md)
BUILD_COST = "~10-15 min of every core"


def build_notice(k8s: str, missing: list[str]) -> str:
    """What is about to be built for another Kubernetes version, and what it costs."""
    return (f"[build] Kubernetes {k8s} is not built ({', '.join(missing)} missing from {cached_bin_dir(k8s)}): "
            f"building it now for a scenario's given.cluster.kubernetesVersion, {BUILD_COST}, once "
            f"(cached; HARNESS_BUILD_K8S_VERSIONS=0 skips such scenarios instead)")


def missing_message(bs: BinarySet, need, k8s: str | None = None) -> str:
    if k8s is not None:
        return (f"missing Kubernetes {k8s} binaries {bs.missing(need)} (looked in {cached_bin_dir(k8s)}); "
                f"build them with: python -m harness.backends build --k8s-version {k8s} ({BUILD_COST})")
    where = ", ".join(f"{n}: {ENV_OVERRIDES[n]}" for n in bs.missing(need))
    return (f"missing control-plane binaries {bs.missing(need)} (looked in env overrides [{where}], "
            f"$KUBEBUILDER_ASSETS, $HARNESS_BIN_DIR, {cached_bin_dir()}); "
            f"build them with: python -m harness.backends build (runs {BUILD_SCRIPT.name})")


def session_version() -> str:
    """The Kubernetes version of the session's control plane: what its kube-apiserver says (an override or
    $KUBEBUILDER_ASSETS may hold another than K8S_VERSION), else K8S_VERSION or the pinned default."""
    try:
        found = find_binaries(validate=False)
        if found.has("kube-apiserver"):
            return binary_version(found["kube-apiserver"])
    except BinariesError:
        pass
    return versions()["k8s"]


# -- kwok stages (kwok v0.8.0 ships no default stages; these are sigs.k8s.io/kwok v0.8.0
#    kustomize/stage/node/fast/node-initialize.yaml and its siblings) --
KWOK_STAGE_DIRS = ("kustomize/stage/node/fast", "kustomize/stage/node/heartbeat", "kustomize/stage/pod/fast")


def go_module_dir(module: str, version: str) -> Path:
    """The unpacked module from the Go module cache, downloading it through the proxy if needed."""
    escaped = re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), module)
    go = go_binary()
    modcache = os.environ.get("GOMODCACHE")
    if not modcache and go:
        try:
            modcache = subprocess.run([go, "env", "GOMODCACHE"], capture_output=True, text=True,
                                      timeout=30).stdout.strip()
        except (OSError, subprocess.TimeoutExpired):
            modcache = None
    modcache = modcache or str(Path(os.environ.get("GOPATH") or Path.home() / "go") / "pkg" / "mod")
    d = Path(modcache) / f"{escaped}@{version}"
    if d.is_dir():
        return d
    if go is None:
        raise BinariesError(f"{module}@{version} is not in the Go module cache ({d}) and there is no Go toolchain")
    import json
    env = {**os.environ, "GOTOOLCHAIN": "local", "GOWORK": "off", "GOFLAGS": "-mod=mod"}
    proc = subprocess.run([go, "mod", "download", "-json", f"{module}@{version}"], capture_output=True,
                          text=True, env=env, cwd=str(cache_dir()) if cache_dir().exists() else None)
    try:
        info = json.loads(proc.stdout)
    except ValueError:
        info = {}
    if proc.returncode != 0 or "Dir" not in info:
        raise BinariesError(f"go mod download {module}@{version} failed: "
                            f"{info.get('Error') or proc.stderr.strip()[-400:]}")
    return Path(info["Dir"])


def kwok_stages_file(bin_dir: Path) -> Path | None:
    """`kwok-stages.yaml` beside the kwok binary, or in the cache when that dir is not writable;
    assembled once from the kwok module's node-fast, node-heartbeat and pod-fast stages."""
    kwok = versions()["kwok"]
    beside, cached = bin_dir / "kwok-stages.yaml", cache_dir() / f"kwok-stages-{kwok}.yaml"
    for path in (beside, cached):
        if path.exists():
            return path
    try:
        mod = go_module_dir("sigs.k8s.io/kwok", kwok)
    except BinariesError:
        return None
    docs = []
    for sub in KWOK_STAGE_DIRS:
        for f in sorted((mod / sub).glob("*.yaml")):
            if f.name != "kustomization.yaml":
                docs.append(f.read_text().strip())
    if not docs:
        return None
    target = beside if os.access(bin_dir, os.W_OK) else cached
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text("\n---\n".join(docs) + "\n")
    os.replace(tmp, target)
    return target
