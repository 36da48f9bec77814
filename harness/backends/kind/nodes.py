"""Node containers of the kind backend, and the warm pool of workers whose kubelet boots for a fake VM.

A node container runs the node image the way kind runs it (sigs.k8s.io/kind v0.33.0
pkg/cluster/internal/providers/docker/provision.go): privileged
through the `runc-nosysresource` runtime, a private cgroup namespace, tmpfs on /run and /tmp and a
volume on /var (containerd's overlay snapshotter cannot nest on the container's own overlay rootfs).

A worker of the pool is started ahead of time (systemd up, containerd running, the CNI config, the
cluster CA, the bootstrap kubeconfig and the kubelet's config in place) with its kubelet stopped, so a
boot is: write the VM's kubelet flags, `systemctl start kubelet`. The kubelet then joins the way
`kubeadm join` does: TLS bootstrap with a bootstrap token (its CSR approved by kube-controller-manager
under kubeadm's auto-approve RBAC), then registration under its own identity system:node:<VM name>.
"""
from __future__ import annotations

import ast
import io
import os
import re
import shlex
import tarfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.kind.errors import KindStartError

RUNTIME = "runc-nosysresource"
CAP_SYS_RESOURCE = 24


def has_cap_sys_resource() -> bool:
    """Whether this host's capability bounding set has CAP_SYS_RESOURCE (so `--privileged` works with
    plain runc; the Docker daemon is assumed to run on this host)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapBnd:"):
                return bool(int(line.split()[1], 16) >> CAP_SYS_RESOURCE & 1)
    except (OSError, ValueError):
        pass
    return True


def node_runtime(client) -> str:
    """The runtime for privileged node containers: the runc wrapper when dockerd has it registered,
    "" (Docker's default) where the host has CAP_SYS_RESOURCE; ValueError with the fix otherwise."""
    try:
        registered = RUNTIME in (client.info().get("Runtimes") or {})
    except Exception:   # noqa: BLE001
        registered = False
    if registered:
        return RUNTIME
    if has_cap_sys_resource():
        return ""
    raise ValueError(f"the Docker runtime {RUNTIME} is not registered and this host lacks CAP_SYS_RESOURCE, so "
                     "privileged node containers cannot start; run harness/backends/docker-up.sh as root")
LABEL = "karpenter-harness.kind"
OWNER_LABEL = "karpenter-harness.owner-pid"
REFUSED = "failed to validate kubelet flags"
KUBELET_FLAGS_FILE = "/var/lib/kubelet/kubeadm-flags.env"


class NodeContainer:
    """One node container (testcontainers' DockerContainer) and its /var volume."""

    def __init__(self, client, image: str, name: str, network: str, labels: dict[str, str],
                 host_port: int | None = None, runtime: str = RUNTIME):
        from testcontainers.core.container import DockerContainer
        self.client, self.name = client, name
        self.pod_subnet = ""
        self.volume = client.volumes.create(name=f"{name}-var", labels=labels)
        c = DockerContainer(image)
        c.with_name(name)
        c.with_tmpfs_mount("/run")
        c.with_tmpfs_mount("/tmp")
        c.with_volume_mapping(self.volume.name, "/var", "rw")
        if host_port is not None:        # the API server, on the host's loopback only
            c.ports["6443/tcp"] = ("127.0.0.1", host_port)
        kwargs = {"runtime": runtime} if runtime else {}
        c.with_kwargs(privileged=True, cgroupns="private", tty=True, hostname=name, network=network,
                      labels=labels, security_opt=["seccomp=unconfined", "apparmor=unconfined"], **kwargs)
        self.container = c
        try:
            c.start()
        except BaseException:
            self.remove()
            raise

    @property
    def docker(self):
        return self.container.get_wrapped_container()

    def ip(self, network: str) -> str:
        self.docker.reload()
        return self.docker.attrs["NetworkSettings"]["Networks"][network]["IPAddress"]

    def exec(self, cmd: list[str] | str, check: bool = True, what: str = "") -> str:
        argv = ["bash", "-c", cmd] if isinstance(cmd, str) else cmd
        rc, out = self.docker.exec_run(argv)
        text = (out or b"").decode("utf-8", "replace")
        if check and rc != 0:
            raise KindStartError(f"{self.name}: {what or ' '.join(argv)} failed (exit {rc}):\n{text[-2000:]}")
        return text

    def put(self, path: str, data: str | bytes, mode: int = 0o644) -> None:
        raw = data.encode() if isinstance(data, str) else data
        buf = io.BytesIO()
        with tarfile.open(fileobj=buf, mode="w") as tar:
            info = tarfile.TarInfo(os.path.basename(path))
            info.size, info.mode, info.mtime = len(raw), mode, int(time.time())
            tar.addfile(info, io.BytesIO(raw))
        self.exec(["mkdir", "-p", os.path.dirname(path)])
        self.docker.put_archive(os.path.dirname(path), buf.getvalue())

    def wait_systemd(self, timeout: float) -> None:
        """Until systemd has started containerd (the node's runtime)."""
        deadline = time.monotonic() + timeout
        while True:
            rc, _ = self.docker.exec_run(["systemctl", "is-active", "--quiet", "containerd"])
            if rc == 0:
                return
            self.docker.reload()
            if self.docker.status != "running":
                raise KindStartError(f"{self.name}: node container {self.docker.status}:\n{self.logs()}")
            if time.monotonic() > deadline:
                raise KindStartError(f"{self.name}: containerd not active within {timeout:.0f}s:\n{self.logs()}")
            time.sleep(0.2)

    def ensure_cri(self, attempts: int = 2) -> None:
        """containerd's CRI plugin is loaded (`ctr plugins ls`: io.containerd.grpc.v1 cri ok). Under
        heavy load a node's containerd was seen running without it, and its kubelet then exits with
        "unknown service runtime.v1.RuntimeService" (harness observation); a restart loads it."""
        for attempt in range(attempts + 1):
            out = self.exec(["ctr", "plugins", "ls"], check=False)
            if any(ln.split()[:2] == ["io.containerd.grpc.v1", "cri"] and ln.split()[-1] == "ok"
                   for ln in out.splitlines()):
                return
            if attempt == attempts:
                log = self.exec("journalctl -u containerd --no-pager -o cat | grep -i cri | tail -5", check=False)
                raise KindStartError(f"{self.name}: containerd's CRI plugin did not load:\n{out[-800:]}\n{log}")
            self.exec("systemctl restart containerd", check=False)
            self.wait_systemd(60)

    def logs(self, lines: int = 30) -> str:
        try:
            return "\n".join(self.docker.logs().decode("utf-8", "replace").splitlines()[-lines:])
        except Exception as e:   # noqa: BLE001
            return f"(no logs: {e})"

    def remove(self) -> None:
        if self.container.get_wrapped_container() is not None:
            remove_container(self.docker)
        try:
            self.volume.remove(force=True)
        except Exception:   # noqa: BLE001
            pass


def thaw(container, freezer: Path = Path("/sys/fs/cgroup/freezer"), proc: Path = Path("/proc")) -> int:
    """Thaw every frozen cgroup-v1 freezer cgroup below the container's own; returns how many.

    Debian's runc 1.1.5 inside a node can leave a pod container's cgroup FROZEN with its `runc init`
    in uninterruptible sleep (seen with the systemd cgroup driver on a cgroup v1 host); the node's
    PID 1 then never dies and `docker rm -f` fails with "tried to kill container, but did not receive
    an exit event" (harness observation, Docker 20.10.24)."""
    try:
        container.reload()
        pid = container.attrs["State"]["Pid"]
        lines = (proc / str(pid) / "cgroup").read_text().splitlines()
    except Exception:   # noqa: BLE001 - gone, or not on this host
        return 0
    rel = next((ln.split(":", 2)[2] for ln in lines if ln.split(":")[1:2] == ["freezer"]), None)
    if not rel or not pid:
        return 0
    n = 0
    for state in (freezer / rel.lstrip("/")).rglob("freezer.state"):
        try:
            if state.read_text().strip() != "THAWED":
                state.write_text("THAWED")
                n += 1
        except OSError:
            pass
    return n


def remove_container(container, attempts: int = 3) -> None:
    """`docker rm -f -v`, thawing frozen cgroups first (see thaw) and retrying; gone is fine."""
    for attempt in range(attempts):
        thaw(container)
        try:
            container.remove(force=True, v=True)
            return
        except Exception as e:   # noqa: BLE001
            if "No such container" in str(e) or "404" in str(e) or attempt == attempts - 1:
                return
            time.sleep(1)


@dataclass
class JoinFiles:
    """What `kubeadm join` writes on a node before it starts the kubelet: the cluster CA, a
    bootstrap kubeconfig holding a bootstrap token, and the kubelet's config (the cluster's
    kube-system/kubelet-config ConfigMap) - kubeadm's runKubeletStartJoinPhase (k8s.io/kubernetes
    v1.36.3 cmd/kubeadm/app/cmd/phases/join/kubelet.go), which then starts the kubelet and waits for
    its TLS bootstrap (runKubeletWaitBootstrapPhase); here the harness waits for the Node instead."""
    ca_crt: str
    bootstrap_kubeconfig: str
    kubelet_config: str


@dataclass
class Boot:
    """A kubelet started for a VM: the Node it registered, or why it exited."""
    vm_name: str
    worker: NodeContainer
    started: float
    refusal: str | None = None
    registered: float | None = None
    ready: float | None = None
    flags: list[str] = field(default_factory=list)
    machine: "Machine | None" = None


@dataclass(frozen=True)
class Machine:
    """The VM a kubelet is to report as its own: cAdvisor is shown `cpus` and `memory_kib`
    (machine-view.sh) and the kubelet's config gets the VM's reservations, so the kubelet itself
    computes capacity and allocatable (allocatable = capacity - kubeReserved - systemReserved -
    evictionHard: k8s.io/kubernetes v1.36.3 pkg/kubelet/cm/node_container_manager_linux.go
    GetNodeAllocatableAbsolute)."""
    cpus: int                               # shown to cAdvisor: the VM's vCPUs, at most the host's
    memory_kib: int                         # MemTotal
    max_pods: int
    kube_reserved: dict[str, str]           # KubeletConfiguration kubeReserved
    eviction_hard: dict[str, str]           # merged into the cluster's evictionHard
    status_sync: dict[str, str] = field(default_factory=dict)   # status-sync periods, when overridden

    def kubelet_config(self, base: str) -> str:
        """The cluster's KubeletConfiguration (kube-system/kubelet-config) with this VM's pod limit
        and reservations."""
        import yaml
        cfg = yaml.safe_load(base) or {}
        cfg.update(self.status_sync)
        cfg["maxPods"] = self.max_pods
        cfg["kubeReserved"] = dict(self.kube_reserved)
        cfg["evictionHard"] = {**(cfg.get("evictionHard") or {}), **self.eviction_hard}
        return yaml.safe_dump(cfg, sort_keys=False)


MACHINE_VIEW = Path(__file__).with_name("machine-view.sh")


def host_cpus() -> int:
    return os.cpu_count() or 1


def kubelet_flags(vm_name: str, node_ip: str, node_labels: dict[str, str], taints: list[str],
                  provider_id: str) -> list[str]:
    """The flags a VM's bootstrap data gives its kubelet (github.com/Azure/karpenter-provider-azure v1.14.0
    pkg/providers/launchtemplate/launchtemplate.go getStaticParameters: --node-labels and
    --register-with-taints), plus the VM's name and providerID (kubelet flag names: k8s.io/kubernetes
    v1.36.3 cmd/kubelet/app/options/options.go KubeletFlags.AddFlags)."""
    flags = [f"--hostname-override={vm_name}", f"--node-ip={node_ip}", f"--provider-id={provider_id}"]
    if node_labels:
        flags.append("--node-labels=" + ",".join(f"{k}={v}" for k, v in node_labels.items()))
    if taints:
        flags.append("--register-with-taints=" + ",".join(taints))
    return flags


CONTROL_PLANE_POD_SUBNET = "10.244.0.0/24"      # the control-plane node's CNI range (cluster.py)
CNI_CONFLIST = """{{
  "cniVersion": "0.4.0",
  "name": "harness",
  "plugins": [
    {{"type": "ptp", "ipMasq": false,
      "ipam": {{"type": "host-local", "ranges": [[{{"subnet": "{subnet}"}}]], "routes": [{{"dst": "0.0.0.0/0"}}]}}}},
    {{"type": "portmap", "capabilities": {{"portMappings": true}}}}
  ]
}}
"""


class WorkerPool:
    """Warm worker containers: `boot()` takes one and starts its kubelet for a VM; `release()` stops
    the kubelet and removes the container (the cluster deletes the Node); the pool refills in the
    background."""

    def __init__(self, client, image: str, network: str, cluster_name: str, labels: dict[str, str],
                 join: JoinFiles, size: int = 1, start_timeout: float = 120.0, runtime: str = RUNTIME,
                 control_plane: "tuple[NodeContainer, str] | None" = None):
        """`control_plane`: (its container, its IP) for the pod routes between it and each worker
        (what kindnetd would set up: pods on a worker reach CoreDNS on the control plane)."""
        self.control_plane = control_plane
        self.client, self.image, self.network, self.cluster_name = client, image, network, cluster_name
        self.runtime = runtime
        self.labels, self.join, self.size, self.start_timeout = labels, join, size, start_timeout
        self._warm: list[NodeContainer] = []
        self._booted: dict[str, Boot] = {}
        self._lock = threading.Condition()
        self._seq = 0
        self._closed = False
        self._errors: list[BaseException] = []
        self._threads: list[threading.Thread] = []
        self._removals: list[threading.Thread] = []
        self.refill()

    # -- the pool --------------------------------------------------------------------------------------
    def _next_name(self) -> tuple[str, int]:
        with self._lock:
            self._seq += 1
            return f"{self.cluster_name}-worker{self._seq}", self._seq

    WARM_ATTEMPTS = 2       # a worker that fails to come up is replaced once before boot() hears of it

    def _warm_one(self, attempt: int = 1) -> None:
        name, seq = self._next_name()
        node = None
        try:
            node = NodeContainer(self.client, self.image, name, self.network, self.labels, runtime=self.runtime)
            node.wait_systemd(self.start_timeout)
            node.ensure_cri()
            node.put("/etc/kubernetes/pki/ca.crt", self.join.ca_crt)
            node.put("/etc/kubernetes/bootstrap-kubelet.conf", self.join.bootstrap_kubeconfig, 0o600)
            node.put("/var/lib/kubelet/config.yaml.harness", self.join.kubelet_config)
            # one /24 of pod addresses per worker (kube-controller-manager's podCIDRs are not needed
            # for pause pods that never talk across nodes)
            node.pod_subnet = f"10.244.{1 + seq % 250}.0/24"
            node.put("/etc/cni/net.d/10-harness.conflist", CNI_CONFLIST.format(subnet=node.pod_subnet))
            if self.control_plane is not None:
                node.exec(["ip", "route", "replace", CONTROL_PLANE_POD_SUBNET, "via", self.control_plane[1]])
        except BaseException as e:   # noqa: BLE001 - reported by the next boot()
            if node is not None:
                node.remove()
            if attempt < self.WARM_ATTEMPTS and isinstance(e, Exception) and not self._closed:
                return self._warm_one(attempt + 1)
            with self._lock:
                self._errors.append(e)
                self._lock.notify_all()
            return
        with self._lock:
            if self._closed:
                node.remove()
                return
            self._warm.append(node)
            self._lock.notify_all()

    def refill(self) -> None:
        with self._lock:
            missing = self.size - len(self._warm) - sum(t.is_alive() for t in self._threads)
            self._threads = [t for t in self._threads if t.is_alive()]
        for _ in range(max(0, missing)):
            t = threading.Thread(target=self._warm_one, daemon=True, name="kind-warm-worker")
            self._threads.append(t)
            t.start()

    def take(self, timeout: float) -> NodeContainer:
        deadline = time.monotonic() + timeout
        with self._lock:
            while not self._warm:
                if self._errors:
                    raise KindStartError(f"warming a worker failed: {self._errors.pop(0)}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise KindStartError(f"no warm worker within {timeout:.0f}s")
                if not any(t.is_alive() for t in self._threads):
                    self._lock.release()
                    try:
                        self.refill()
                    finally:
                        self._lock.acquire()
                self._lock.wait(min(left, 0.5))
            node = self._warm.pop(0)
        self.refill()
        return node

    def wait_warm(self, timeout: float) -> None:
        """Until a warm worker is ready (e.g. before a measured boot)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while not self._warm:
                if self._errors:
                    raise KindStartError(f"warming a worker failed: {self._errors.pop(0)}")
                if time.monotonic() > deadline:
                    raise KindStartError(f"no warm worker within {timeout:.0f}s")
                self._lock.wait(0.5)

    # -- kubelets --------------------------------------------------------------------------------------
    def boot(self, vm_name: str, node_labels: dict[str, str], taints: list[str], provider_id: str,
             machine: Machine | None = None) -> Boot:
        """Start a kubelet for `vm_name` (shown `machine`, when given, as its own); returns once it
        started (the caller waits for its Node or its exit message)."""
        t0 = time.monotonic()
        worker = self.take(self.start_timeout)
        flags = kubelet_flags(vm_name, worker.ip(self.network), node_labels, taints, provider_id)
        boot = Boot(vm_name, worker, t0, flags=flags, machine=machine)
        with self._lock:
            self._booted[vm_name] = boot
        worker.put(KUBELET_FLAGS_FILE, f"KUBELET_KUBEADM_ARGS={shlex.quote(' '.join(flags))}\n")
        if machine is not None:
            worker.put("/var/lib/kubelet/config.yaml", machine.kubelet_config(self.join.kubelet_config))
            worker.put("/kind/machine-view.sh", MACHINE_VIEW.read_text(), 0o755)
            worker.exec(["/kind/machine-view.sh", str(machine.cpus), str(machine.memory_kib)],
                        what="showing the kubelet the VM's machine")
            start = "rm -f /var/lib/kubelet/config.yaml.harness && systemctl start kubelet"
        else:
            start = "mv /var/lib/kubelet/config.yaml.harness /var/lib/kubelet/config.yaml && systemctl start kubelet"
        worker.exec(start, what="starting the kubelet")
        if self.control_plane is not None:
            self.control_plane[0].exec(["ip", "route", "replace", worker.pod_subnet, "via", worker.ip(self.network)],
                                       check=False)
        return boot

    @staticmethod
    def journal(boot: Boot) -> str:
        return boot.worker.exec(["journalctl", "-u", "kubelet", "--no-pager", "-o", "cat"], check=False)

    def kubelet_exit(self, boot: Boot, out: str | None = None) -> str | None:
        """The kubelet's flag-validation error from its journal, if it exited with one."""
        out = self.journal(boot) if out is None else out
        if REFUSED not in out:
            return None
        from harness.backends.kubeletjudge import error_text
        return error_text(out) or out[out.index(REFUSED):].split("\n")[0]

    def registration_refusal(self, boot: Boot, out: str | None = None) -> str | None:
        """What the kubelet logged when the API server refused its Node, or None. kubelet v1.36.3
        tryRegisterWithAPIServer (pkg/kubelet/kubelet_node_status.go) logs "Unable to register node
        with API server[, <why>]" and retries; on a Forbidden create it logs the follow-up Get's error,
        not the refusal itself (the caller asks the API server for that)."""
        out = self.journal(boot) if out is None else out
        m = re.search(r'"Unable to register node with API server[^"]*" err=("(?:[^"\\]|\\.)*")', out)
        return ast.literal_eval(m.group(1)) if m else None

    def stop_kubelet(self, boot: Boot) -> None:
        boot.worker.exec("systemctl stop kubelet", check=False)

    def release(self, vm_name: str) -> None:
        """Stop the VM's kubelet now (so it writes nothing more); remove its worker in the background."""
        with self._lock:
            boot = self._booted.pop(vm_name, None)
        if boot is not None:
            self.stop_kubelet(boot)
            t = threading.Thread(target=boot.worker.remove, daemon=True, name="kind-remove-worker")
            with self._lock:
                self._removals.append(t)
            t.start()

    def booted(self) -> list[str]:
        with self._lock:
            return list(self._booted)

    def close(self) -> None:
        with self._lock:
            self._closed = True
            nodes = self._warm + [b.worker for b in self._booted.values()]
            self._warm, self._booted = [], {}
        for t in self._threads + self._removals:
            t.join(timeout=self.start_timeout)
        for n in nodes:
            n.remove()
