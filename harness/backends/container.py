"""`container` backend: the same control plane as `local`, run in Docker through testcontainers.

Why it is built this way: docs/architecture/backends.md."""
from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
import time
from contextlib import closing
from pathlib import Path

import yaml

from harness.backends.binaries import controlplane as binmod
from harness.backends.lifetime import LIFETIME, sweep_stale_workdirs, tmp_root
from harness.backends.local import COMPONENTS, apiserver_args, etcd_args, healthz, loopback_session, pki_paths
from harness.backends.pki import PKI, kubeconfig
from harness.backends.procs import StartError, free_port, pid_alive, poll_until
from harness.backends.realcluster import RealBackend, RealCluster, scheduler_config

__all__ = ["ContainerBackend", "ContainerCluster", "DockerUnavailable", "docker_status", "ensure_image",
           "require_docker"]

IMAGE_REPO = "karpenter-harness/control-plane"
LABEL = "karpenter-harness.backend"
OWNER_LABEL = "karpenter-harness.owner-pid"
DEFAULT_K3S_IMAGE = os.environ.get("HARNESS_K3S_IMAGE", "rancher/k3s:v1.36.3-k3s1")
PKI_MOUNT = "/pki"
IMAGE_BINARIES = ("etcd", "kube-apiserver", "kube-scheduler", "kube-controller-manager", "kwok")


# -- docker availability ------------------------------------------------------------------------------
def docker_status() -> tuple[bool, str]:
    """(True, "") when a Docker daemon answers; otherwise why not, and how to fix it."""
    try:
        import docker
    except ImportError:
        return False, "the `docker` Python package is not installed (pip install docker)"
    host = os.environ.get("DOCKER_HOST", "unix:///var/run/docker.sock")
    try:
        client = docker.from_env(timeout=10)
        client.ping()
        client.close()
        return True, ""
    except Exception as e:   # noqa: BLE001 - any failure means "not available"
        installed = shutil.which("dockerd") or shutil.which("docker")
        if not installed:
            return False, ("Docker is not installed (no docker/dockerd on PATH); run "
                           "harness/backends/docker-up.sh to install Debian's docker.io and start dockerd")
        return False, (f"Docker is not running: the Docker daemon is not reachable at {host} "
                       f"({type(e).__name__}: {e}); start it with `sudo bash harness/backends/docker-up.sh`")


class DockerUnavailable(RuntimeError):
    """No Docker daemon answers; the message says why and how to start one (docker_status)."""


def require_docker() -> None:
    """Raise DockerUnavailable unless a Docker daemon answers: before work that needs one (the kind
    node image), so the caller says so instead of failing deep inside docker-py."""
    ok, why = docker_status()
    if not ok:
        raise DockerUnavailable(why)


def _client():
    """A Docker client; the caller closes it (`with closing(_client()) as client`)."""
    import docker
    return docker.from_env(timeout=300)


def ryuk_setup(client) -> None:
    """Disable Ryuk unless its image is present locally (no registry pulls here)."""
    from testcontainers.core.config import testcontainers_config as tc
    if tc.ryuk_disabled:
        return
    try:
        client.images.get(tc.ryuk_image)
    except Exception:   # noqa: BLE001 - ImageNotFound or API error
        tc.ryuk_disabled = True
        os.environ["TESTCONTAINERS_RYUK_DISABLED"] = "true"


def sweep_owner(owner: int) -> None:
    """The watcher's order for a dead owner (harness/backends/lifetime.py): remove its containers
    (and any other dead owner's)."""
    with closing(_client()) as client:
        _sweep_stale(client)


def _sweep_stale(client) -> int:
    """Remove our containers whose owning process is gone (e.g. a SIGKILLed pytest worker)."""
    n = 0
    for c in client.containers.list(all=True, filters={"label": LABEL}):
        try:
            owner = int(c.labels.get(OWNER_LABEL, "0"))
        except ValueError:
            owner = 0
        if owner and owner != os.getpid() and not pid_alive(owner):
            try:
                c.remove(force=True)
                n += 1
            except Exception:   # noqa: BLE001
                pass
    return n


# -- the image ----------------------------------------------------------------------------------------
def image_tag(bs: binmod.BinarySet) -> str:
    h = hashlib.sha256()
    for name in IMAGE_BINARIES:
        if bs.has(name):
            st = bs[name].stat()
            h.update(f"{name}:{st.st_size}:{int(st.st_mtime)};".encode())
    v = binmod.versions()
    return f"{IMAGE_REPO}:k8s-{v['k8s']}-etcd-{v['etcd']}-{h.hexdigest()[:12]}"


DOCKERFILE = """\
# Built by harness/backends/container.py: static binaries only, no base image (no registry needed).
FROM scratch
COPY bin/ /usr/local/bin/
COPY kwok-stages.yaml /etc/kwok/stages.yaml
"""


def prebuilt_image(client) -> str | None:
    """A control-plane image built earlier for the configured versions (binaries may be gone since)."""
    v = binmod.versions()
    prefix = f"{IMAGE_REPO}:k8s-{v['k8s']}-etcd-{v['etcd']}-"
    try:
        images = client.images.list(filters={"label": f"{LABEL}=image"})
    except Exception:   # noqa: BLE001
        return None
    for img in sorted(images, key=lambda i: i.attrs.get("Created", ""), reverse=True):
        for tag in img.tags:
            if tag.startswith(prefix):
                return tag
    return None


def ensure_image(bs: binmod.BinarySet, client) -> tuple[str, float]:
    """Build the control-plane image from the cached binaries unless it exists; (tag, seconds)."""
    tag = image_tag(bs)
    try:
        client.images.get(tag)
        return tag, 0.0
    except Exception:   # noqa: BLE001 - ImageNotFound
        pass
    from filelock import FileLock
    lockdir = binmod.cache_dir()
    lockdir.mkdir(parents=True, exist_ok=True)
    with FileLock(str(lockdir / "image.lock")):
        try:
            client.images.get(tag)
            return tag, 0.0
        except Exception:   # noqa: BLE001
            pass
        t0 = time.monotonic()
        for stale in lockdir.glob("image-ctx-*"):     # left by a crashed build (we hold the lock)
            shutil.rmtree(stale, ignore_errors=True)
        ctx = Path(tempfile.mkdtemp(prefix="image-ctx-", dir=str(lockdir)))
        try:
            (ctx / "bin").mkdir()
            for name in IMAGE_BINARIES:
                if not bs.has(name):
                    continue
                try:
                    os.link(bs[name], ctx / "bin" / name)      # same filesystem: no copy
                except OSError:
                    shutil.copy2(bs[name], ctx / "bin" / name)
            stages = bs.kwok_stages
            (ctx / "kwok-stages.yaml").write_text(stages.read_text() if stages else "")
            (ctx / "Dockerfile").write_text(DOCKERFILE)
            client.images.build(path=str(ctx), tag=tag, rm=True, labels={LABEL: "image"})
        finally:
            shutil.rmtree(ctx, ignore_errors=True)
        return tag, time.monotonic() - t0


# -- the cluster --------------------------------------------------------------------------------------
class ContainerCluster(RealCluster):
    backend = "container"

    def __init__(self, workdir: Path, keep: bool):
        super().__init__(workdir, keep)
        self.containers: dict = {}        # name -> testcontainers DockerContainer, in start order

    def container_ids(self) -> dict[str, str]:
        return {name: c.get_container_id() for name, c in self.containers.items()
                if c.get_wrapped_container() is not None}

    def logs(self, name: str, lines: int = 20) -> str:
        c = self.containers.get(name)
        if c is None or c.get_wrapped_container() is None:
            return "(no such container)"
        try:
            out, err = c.get_logs()
            text = (out or b"").decode("utf-8", "replace") + (err or b"").decode("utf-8", "replace")
            return "\n".join(text.splitlines()[-lines:])
        except Exception as e:   # noqa: BLE001
            return f"(no logs: {e})"

    def _stop_components(self) -> None:
        for c in reversed(list(self.containers.values())):
            if c.get_wrapped_container() is None:
                continue
            try:
                if self.keep:
                    c.get_wrapped_container().stop(timeout=5)
                else:
                    c.stop(force=True)
            except Exception:   # noqa: BLE001 - already gone
                pass
        self.containers.clear()

    def _stop_command(self) -> str:
        return "docker rm -f " + " ".join(self.container_ids().values())


class ContainerBackend(RealBackend):
    name = "container"

    def __init__(self, *, flavor: str = "binaries", k3s_image: str = DEFAULT_K3S_IMAGE, start_timeout: float = 120.0,
                 **options):
        """`options`: those of RealBackend (scheduler, controller_manager, kwok, profile, keep, build,
        apiserver_args)."""
        if flavor not in ("binaries", "k3s"):
            raise ValueError(f"unknown container flavor {flavor!r} (binaries | k3s)")
        super().__init__(start_timeout=start_timeout, **options)
        self.flavor = flavor
        self.k3s_image = k3s_image

    def available(self) -> tuple[bool, str]:
        if self.k8s_version:
            return False, self.one_version_only()
        ok, why = docker_status()
        if not ok:
            return False, why
        if self.flavor == "k3s":
            return self._k3s_image_available()
        bs, why = self._binaries()
        if bs is None:
            return False, why
        if bs.missing(binmod.REQUIRED + binmod.OPTIONAL):
            with closing(_client()) as client:
                if prebuilt_image(client):                # a previously built image is enough
                    return True, ""
        if why:
            return False, "no control-plane image and " + why
        return True, ""

    def _k3s_image_available(self) -> tuple[bool, str]:
        with closing(_client()) as client:
            try:
                client.images.get(self.k3s_image)
                return True, ""
            except Exception:   # noqa: BLE001
                pass
            try:
                repo, _, tag = self.k3s_image.rpartition(":")
                client.images.pull(repo, tag=tag)
                return True, ""
            except Exception as e:   # noqa: BLE001
                return False, (f"image {self.k3s_image} is not present locally and cannot be pulled "
                               f"(no registry reachable?): {e}")

    # -- start ------------------------------------------------------------------------------------------
    def start(self) -> ContainerCluster:
        t0 = time.monotonic()
        with closing(_client()) as client:
            ryuk_setup(client)
            _sweep_stale(client)
            sweep_stale_workdirs("harness-container-")
            if not self.keep:       # should this process be killed: the watcher removes the containers
                LIFETIME.order("container", "call", "harness.backends.container:sweep_owner")
            workdir = Path(tempfile.mkdtemp(prefix="harness-container-", dir=tmp_root()))
            os.chmod(workdir, 0o755)
            cluster = ContainerCluster(workdir, self.keep)
            # k3s runs its own controller manager with its own flags
            cluster.kcm_settings = self.kcm_settings if self.controller_manager and self.flavor != "k3s" else ()
            try:
                if self.flavor == "k3s":
                    self._start_k3s(cluster)
                else:
                    self._start_binaries(cluster, client)
                if self.profile:
                    cluster.install_profile(self.profile)
                    cluster.capabilities = cluster.capabilities | {"crds"}
            except BaseException:
                cluster.close()
                raise
        cluster.timings["total"] = time.monotonic() - t0
        return cluster

    def _labels(self, name: str) -> dict[str, str]:
        # A kept cluster's containers have no owner: _sweep_stale never removes them.
        return {LABEL: name} if self.keep else {LABEL: name, OWNER_LABEL: str(os.getpid())}

    def _container(self, cluster: ContainerCluster, image: str, name: str, argv: list[str], *,
                   netns_of=None, ports: dict | None = None, tmpfs: tuple[str, ...] = ()):
        from testcontainers.core.container import DockerContainer
        c = DockerContainer(image)
        c.with_volume_mapping(str(cluster.pki.dir), PKI_MOUNT, "ro")
        for path in tmpfs:
            c.with_tmpfs_mount(path)
        kwargs = {"labels": self._labels(name), "entrypoint": [argv[0]]}
        c.with_command(argv[1:])
        if netns_of is not None:
            kwargs["network_mode"] = f"container:{netns_of.get_container_id()}"
        for cport, host_port in (ports or {}).items():
            # Published on the host's loopback only. (with_bind_ports() cannot take a host IP; the
            # docker SDK's `ports` accepts (ip, port), so set the mapping directly.)
            c.ports[f"{cport}/tcp"] = ("127.0.0.1", host_port)
        c.with_kwargs(**kwargs)
        cluster.containers[name] = c
        c.start()
        return c

    def _wait(self, cluster: ContainerCluster, name: str, check, what: str) -> None:
        """Poll `check` until true; StartError with the container's log tail when it exits or times out."""
        wrapped = cluster.containers[name].get_wrapped_container()     # docker-py's Container

        def gone() -> bool:
            wrapped.reload()
            return wrapped.status in ("exited", "dead")

        def fail(exited: bool) -> StartError:
            state = f"container {wrapped.status}" if exited else \
                f"not {what} within {self.start_timeout:.0f}s"
            return StartError(f"{name} (container) {state}; last log lines:\n{cluster.logs(name)}")

        poll_until(check, self.start_timeout, fail, gone=gone, interval=0.1)

    def _start_binaries(self, cluster: ContainerCluster, client) -> None:
        bs = binmod.find_binaries()
        image, t_build = None, 0.0
        if bs.missing(binmod.REQUIRED + binmod.OPTIONAL):
            image = prebuilt_image(client)
            if image is None:
                bs = binmod.ensure_binaries(build=self.build, need=self.needed())
        if image is None:
            image, t_build = ensure_image(bs, client)
        t1 = time.monotonic()
        pki = PKI(cluster.workdir / "pki")
        os.chmod(pki.dir, 0o755)
        cluster.pki = pki               # mounted at /pki by _container()
        paths = pki_paths(pki, PKI_MOUNT)
        enabled = [c for c in COMPONENTS if getattr(self, c.option)]
        host = {"kube-apiserver": free_port()} | {c.name: free_port() for c in enabled}
        inner_ports = {"kube-apiserver": 6443} | {c.name: c.port for c in enabled}
        server = f"https://127.0.0.1:{host['kube-apiserver']}"
        inner = "https://127.0.0.1:6443"

        # etcd owns the network namespace and publishes every component's port, on host loopback only.
        # Inside that private namespace the servers bind 0.0.0.0 so the published ports reach them.
        etcd = self._container(cluster, image, "etcd",
                               ["/usr/local/bin/etcd"] + etcd_args("/var/lib/etcd", "http://127.0.0.1:2379",
                                                                   "http://127.0.0.1:2380"),
                               ports={inner_ports[n]: p for n, p in host.items()}, tmpfs=("/var/lib/etcd",))
        self._container(cluster, image, "kube-apiserver",
                              ["/usr/local/bin/kube-apiserver"] + apiserver_args(
                                  paths, etcd_url="http://127.0.0.1:2379", port=6443, bind="0.0.0.0",
                                  issuer="https://127.0.0.1:6443/", cert_dir="/tmp/apiserver",
                                  service_account_admission=self.controller_manager, extra=self.apiserver_args),
                              netns_of=etcd, tmpfs=("/tmp",))
        probe = loopback_session(verify=str(pki.ca.cert))
        self._wait(cluster, "kube-apiserver", lambda: probe.get(server + "/readyz", timeout=2).status_code == 200,
                   "ready (GET /readyz)")
        t_api = time.monotonic() - t1

        cluster.connect(server, pki, lambda check, what: self._wait(cluster, "kube-apiserver", check, what))
        caps = {"real-apiserver", "etcd", "cel", "node-restriction", "node-authorizer", "rbac", "docker"}

        def inner_kubeconfig(name: str, pair) -> str:
            kc = kubeconfig(inner, Path(paths["ca"]), pair)
            kc["users"][0]["user"] = {
                "client-certificate": f"{PKI_MOUNT}/{pair.cert.relative_to(pki.dir)}",
                "client-key": f"{PKI_MOUNT}/{pair.key.relative_to(pki.dir)}"}
            (pki.dir / f"{name}.kubeconfig").write_text(yaml.safe_dump(kc))
            return f"{PKI_MOUNT}/{name}.kubeconfig"

        for comp in enabled:
            kc = inner_kubeconfig(comp.name, comp.identity(pki))
            config = None
            if comp.name == "kube-scheduler" and self.scheduler_config:
                (pki.dir / "kube-scheduler-config.yaml").write_text(scheduler_config(kc, self.scheduler_config))
                config = f"{PKI_MOUNT}/kube-scheduler-config.yaml"
            self._container(cluster, image, comp.name,
                                [f"/usr/local/bin/{comp.name}"] + comp.args(
                                    kc, comp.port, f"/tmp/{comp.name}", paths, "/etc/kwok/stages.yaml",
                                    bind="0.0.0.0", config=config, controllers=self.kcm_controllers,
                                    settings=self.kcm_settings),
                                netns_of=etcd, tmpfs=("/tmp",))
            self._wait(cluster, comp.name, healthz(host[comp.name], comp.scheme), "healthy (GET /healthz)")
            if comp.name == "kube-controller-manager":
                self._wait(cluster, comp.name, cluster.default_service_account_exists, "creating serviceaccount/default")
            caps.add(comp.name)
        cluster.capabilities = frozenset(caps)
        cluster.timings.update({"image_build": t_build, "apiserver_ready": t_api,
                                "start_after_image": time.monotonic() - t1})

    def _start_k3s(self, cluster: ContainerCluster) -> None:
        """k3s through testcontainers' K3SContainer (testcontainers 4.15.0
        testcontainers/community/k3s/__init__.py). Needs a registry or a preloaded
        image."""
        from testcontainers.community.k3s import K3SContainer
        ok, why = self._k3s_image_available()
        if not ok:
            raise StartError(why)
        t1 = time.monotonic()
        k3s = K3SContainer(self.k3s_image, enable_cgroup_mount=False)
        host_port = free_port()
        k3s.ports = {"6443/tcp": ("127.0.0.1", host_port)}
        # with_kwargs() replaces K3SContainer's own kwargs, so privileged=True is repeated here.
        k3s.with_kwargs(privileged=True, cgroupns="host", labels=self._labels("k3s"))
        k3s.with_command("server --disable traefik --disable=servicelb,metrics-server,local-storage "
                         "--tls-san=127.0.0.1")
        cluster.containers["k3s"] = k3s
        k3s.start()
        tls = "/var/lib/rancher/k3s/server/tls"

        def read(path: str) -> bytes:
            code, out = k3s.exec(["cat", path])
            if code != 0:
                raise StartError(f"k3s: cannot read {path}: {out!r}")
            return out

        pki = PKI(cluster.workdir / "pki", ca=(read(f"{tls}/client-ca.crt"), read(f"{tls}/client-ca.key")),
                  server_side=False)
        server_ca = cluster.workdir / "server-ca.crt"
        server_ca.write_bytes(read(f"{tls}/server-ca.crt"))
        cluster.connect(f"https://127.0.0.1:{host_port}", pki,
                        lambda check, what: self._wait(cluster, "k3s", check, what), server_ca=str(server_ca))
        cluster.capabilities = frozenset({"real-apiserver", "cel", "node-restriction", "node-authorizer", "rbac",
                                          "docker", "k3s", "kube-scheduler", "kube-controller-manager"})
        cluster.timings["start_after_image"] = time.monotonic() - t1
