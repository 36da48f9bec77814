"""`local` backend: etcd + kube-apiserver (+ kube-scheduler, kube-controller-manager, kwok) as
processes on 127.0.0.1, from binaries found or built by `binaries.py`.

Flags follow envtest (reference/cluster-backends.md §4.1-§4.3) plus the node-identity setup of §4.4:
`--authorization-mode=Node,RBAC`, `--enable-admission-plugins=NodeRestriction`, and for a loopback-only
sandbox `--advertise-address=127.0.0.1`, `--endpoint-reconciler-type=none`.

    from harness.backends.local import LocalBackend
    with LocalBackend(profile="upstream").start() as cluster:
        cluster.create(nodepool, KARPENTER)

Start is health-checked (etcd /health, apiserver /readyz, default namespace, components' /healthz);
a timeout raises `StartError` naming the component with its last log lines. Every process is
stopped on close(), at interpreter exit (atexit) and when the parent dies (PR_SET_PDEATHSIG); the
temp dir (PKI, etcd data, logs) is removed unless `keep=True` or HARNESS_KEEP_CLUSTER=1.
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from pathlib import Path

import requests
import yaml

from harness.backends import binaries as binmod
from harness.backends.pki import PKI, kubeconfig
from harness.backends.procs import ManagedProcess, StartError, free_port, pid_alive
from harness.backends.realcluster import RealCluster

__all__ = ["LocalBackend", "LocalCluster", "StartError"]


def _env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def _tmp_root() -> str | None:
    # etcd data and logs on tmpfs when available: start-up and writes are I/O bound otherwise.
    return os.environ.get("HARNESS_TMPDIR") or ("/dev/shm" if os.access("/dev/shm", os.W_OK) else None)


class LocalCluster(RealCluster):
    backend = "local"

    def __init__(self, workdir: Path, keep: bool):
        self.processes: list[ManagedProcess] = []
        self._track(workdir, keep)

    def _init_cluster(self, server: str, pki: PKI, capabilities: frozenset[str]) -> None:
        RealCluster.__init__(self, server, pki, capabilities)

    @property
    def pids(self) -> dict[str, int]:
        return {p.name: p.pid for p in self.processes}

    def logs(self) -> dict[str, Path]:
        return {p.name: p.log_path for p in self.processes}

    def kubeconfig_path(self) -> Path:
        return self.workdir / "admin.kubeconfig"

    def close(self) -> None:
        if getattr(self, "_closed", False) and not self.processes:
            return
        try:
            if hasattr(self, "_clients"):
                RealCluster.close(self)
        finally:
            for p in reversed(self.processes):
                p.stop()
            self.processes.clear()
            self._release()


def sweep_stale_workdirs(prefix: str) -> list[str]:
    """Remove temp dirs of clusters whose owning process died without cleaning up (SIGKILL);
    kept dirs (HARNESS_KEEP_CLUSTER / keep=True) have no owner file and are never swept."""
    removed = []
    root = Path(_tmp_root() or tempfile.gettempdir())
    for d in root.glob(prefix + "*"):
        try:
            owner = int((d / "owner.pid").read_text())
        except (OSError, ValueError):
            continue
        if owner != os.getpid() and not pid_alive(owner):
            shutil.rmtree(d, ignore_errors=True)
            removed.append(str(d))
    return removed


def pki_paths(pki: PKI, root: str | None = None) -> dict[str, str]:
    """File paths of the server-side PKI, optionally as seen under `root` inside a container."""
    def p(path: Path) -> str:
        return str(path) if root is None else f"{root}/{path.relative_to(pki.dir)}"
    return {"ca": p(pki.ca.cert), "ca_key": p(pki.ca.key), "tls_cert": p(pki.serving.cert),
            "tls_key": p(pki.serving.key), "sa_pub": p(pki.sa_pub), "sa_key": p(pki.sa_key)}


def etcd_args(data_dir: str | Path, client_url: str, peer_url: str) -> list[str]:
    """envtest's etcd flags (§4.1) plus a standalone member on loopback peer URLs."""
    return ["--name=harness", f"--data-dir={data_dir}",
            f"--listen-client-urls={client_url}", f"--advertise-client-urls={client_url}",
            f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=harness={peer_url}", "--unsafe-no-fsync=true", "--log-level=warn"]


def apiserver_args(paths: dict[str, str], *, etcd_url: str, port: int, bind: str, issuer: str,
                   cert_dir: str, service_account_admission: bool = False,
                   extra: dict[str, str] | None = None) -> list[str]:
    """envtest's kube-apiserver flags (§4.2) + Node,RBAC and NodeRestriction (§4.4) + loopback-only
    sandbox flags (--advertise-address=127.0.0.1, --endpoint-reconciler-type=none)."""
    args = {
        "etcd-servers": etcd_url,
        "secure-port": str(port),
        "bind-address": bind,
        "advertise-address": "127.0.0.1",
        "cert-dir": cert_dir,
        "tls-cert-file": paths["tls_cert"],
        "tls-private-key-file": paths["tls_key"],
        "client-ca-file": paths["ca"],
        "service-account-issuer": issuer,
        "service-account-key-file": paths["sa_pub"],
        "service-account-signing-key-file": paths["sa_key"],
        "service-cluster-ip-range": "10.0.0.0/24",
        "allow-privileged": "true",
        "authorization-mode": "Node,RBAC",
        "enable-admission-plugins": "NodeRestriction",
        # No controller-manager => no default ServiceAccount; envtest disables the plugin (§4.2).
        "disable-admission-plugins": "" if service_account_admission else "ServiceAccount",
        "endpoint-reconciler-type": "none",
        "enable-priority-and-fairness": "false",
        "profiling": "false",
    }
    args.update(extra or {})
    return [f"--{k}={v}" for k, v in args.items() if v != ""]


def scheduler_args(kubeconfig_path: str, port: int, cert_dir: str, bind: str = "127.0.0.1") -> list[str]:
    """§4.3 step 5: CN=system:kube-scheduler has bootstrap RBAC; no leader election."""
    kc = kubeconfig_path
    return [f"--kubeconfig={kc}", f"--authentication-kubeconfig={kc}", f"--authorization-kubeconfig={kc}",
            "--leader-elect=false", f"--bind-address={bind}", f"--secure-port={port}", f"--cert-dir={cert_dir}"]


def kcm_args(kubeconfig_path: str, port: int, cert_dir: str, paths: dict[str, str],
             bind: str = "127.0.0.1") -> list[str]:
    """§4.3 step 5: kube-controller-manager with SA tokens and the cluster signer."""
    kc = kubeconfig_path
    return [f"--kubeconfig={kc}", f"--authentication-kubeconfig={kc}", f"--authorization-kubeconfig={kc}",
            "--leader-elect=false", f"--bind-address={bind}", f"--secure-port={port}", f"--cert-dir={cert_dir}",
            f"--service-account-private-key-file={paths['sa_key']}", f"--root-ca-file={paths['ca']}",
            "--use-service-account-credentials=true",
            f"--cluster-signing-cert-file={paths['ca']}", f"--cluster-signing-key-file={paths['ca_key']}"]


def kwok_args(kubeconfig_path: str, stages: str, port: int, bind: str = "127.0.0.1") -> list[str]:
    """§3.3: kwok out of cluster, managing only Nodes annotated kwok.x-k8s.io/node=fake (as
    Karpenter's kwok provider marks them), status heartbeats (no leases), stages from --config
    (v0.8.0 has no built-in stages, §3.2); --server-address pinned to loopback."""
    return [f"--kubeconfig={kubeconfig_path}", f"--config={stages}",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-lease-duration-seconds=0", f"--server-address={bind}:{port}"]


class LocalBackend:
    name = "local"

    def __init__(self, *, scheduler: bool = False, controller_manager: bool = False, kwok: bool = False,
                 profile: str | None = "upstream", keep: bool | None = None, build: bool = False,
                 start_timeout: float = 90.0, apiserver_args: dict[str, str] | None = None):
        self.scheduler = scheduler
        self.controller_manager = controller_manager
        self.kwok = kwok
        self.profile = profile
        self.keep = _env_flag("HARNESS_KEEP_CLUSTER") if keep is None else keep
        self.build = build or _env_flag("HARNESS_BUILD_BINARIES")
        self.start_timeout = start_timeout
        self.apiserver_args = apiserver_args or {}

    def _needed(self) -> tuple[str, ...]:
        need = ["etcd", "kube-apiserver"]
        if self.scheduler:
            need.append("kube-scheduler")
        if self.controller_manager:
            need.append("kube-controller-manager")
        if self.kwok:
            need.append("kwok")
        return tuple(need)

    def available(self) -> tuple[bool, str]:
        try:
            bs = binmod.find_binaries()
        except binmod.BinariesError as e:
            return False, str(e)
        missing = bs.missing(self._needed())
        if missing and not (self.build and binmod.go_binary()):
            return False, binmod._missing_message(bs, self._needed())
        if self.kwok and not missing and bs.kwok_stages is None:
            return False, "kwok v0.8.0+ needs stage configs (kustomize/stage of the kwok Go module) and none were found"
        return True, ""

    # -- start ------------------------------------------------------------------------------------------
    def start(self) -> LocalCluster:
        t_start = time.monotonic()
        bs = binmod.ensure_binaries(build=self.build, need=self._needed())
        sweep_stale_workdirs("harness-local-")
        for attempt in range(3):
            workdir = Path(tempfile.mkdtemp(prefix="harness-local-", dir=_tmp_root()))
            (workdir / "owner.pid").write_text(str(os.getpid()))
            cluster = LocalCluster(workdir, self.keep)
            try:
                self._start(cluster, bs, t_start)
                return cluster
            except StartError as e:
                cluster.close()
                # free_port() can race with another process (e.g. another xdist worker): retry.
                if "address already in use" not in str(e) or attempt == 2:
                    raise
            except BaseException:
                cluster.close()
                raise
        raise AssertionError("unreachable")

    def _start(self, cluster: LocalCluster, bs: binmod.BinarySet, t_start: float) -> None:
        wd = cluster.workdir
        (wd / "logs").mkdir()
        t0 = time.monotonic()
        pki = PKI(wd / "pki")
        t_pki = time.monotonic() - t0

        # etcd (§4.1)
        etcd_port, peer_port = free_port(), free_port()
        client_url = f"http://127.0.0.1:{etcd_port}"
        etcd = ManagedProcess("etcd", [str(bs["etcd"])] + etcd_args(wd / "etcd", client_url,
                                                                    f"http://127.0.0.1:{peer_port}"),
                              wd / "logs" / "etcd.log")
        cluster.processes.append(etcd)

        # kube-apiserver (§4.2 + §4.4). Started right away: it retries etcd until it answers.
        port = free_port()
        server = f"https://127.0.0.1:{port}"
        args = apiserver_args(pki_paths(pki), etcd_url=client_url, port=port, bind="127.0.0.1",
                              issuer=server + "/", cert_dir=str(wd / "apiserver-certs"),
                              service_account_admission=self.controller_manager, extra=self.apiserver_args)
        apiserver = ManagedProcess("kube-apiserver", [str(bs["kube-apiserver"])] + args,
                                   wd / "logs" / "kube-apiserver.log")
        cluster.processes.append(apiserver)

        plain = requests.Session()
        plain.trust_env = False     # loopback: never through an HTTP(S)_PROXY from the environment
        etcd.wait_until(lambda: plain.get(client_url + "/health", timeout=1).json().get("health") == "true",
                        self.start_timeout, "healthy (GET /health)")
        t_etcd = time.monotonic() - t0

        probe = requests.Session()
        probe.verify = str(pki.ca.cert)
        probe.trust_env = False

        def readyz() -> bool:
            r = probe.get(server + "/readyz", timeout=2)
            self._last_readyz = r.text
            return r.status_code == 200

        self._last_readyz = ""
        try:
            apiserver.wait_until(readyz, self.start_timeout, "ready (GET /readyz)")
        except StartError as e:
            raise StartError(f"{e}\nlast /readyz answer:\n{self._last_readyz[-1500:]}") from None
        t_api = time.monotonic() - t0

        capabilities = {"real-apiserver", "etcd", "cel", "node-restriction", "node-authorizer", "rbac"}
        cluster._init_cluster(server, pki, frozenset())
        admin = cluster.admin
        apiserver.wait_until(lambda: admin.get("Namespace", "default") is not None, self.start_timeout,
                             "serving the default namespace")
        cluster.bootstrap()
        cluster.write_kubeconfig(wd / "admin.kubeconfig")

        # Optional components (§4.3 step 5-6), each with its own identity and /healthz.
        if self.controller_manager:
            self._start_kcm(cluster, bs, pki, server)
            capabilities.add("kube-controller-manager")
            # Readiness with KCM includes serviceaccount/default (§5.4 "Readiness").
            cluster.processes[-1].wait_until(
                lambda: admin.request("GET", "/api/v1/namespaces/default/serviceaccounts/default",
                                      ok_missing=True) is not None,
                self.start_timeout, "creating serviceaccount/default")
        if self.scheduler:
            self._start_scheduler(cluster, bs, pki, server)
            capabilities.add("kube-scheduler")
        if self.kwok:
            self._start_kwok(cluster, bs, pki, server)
            capabilities.add("kwok")
        cluster.capabilities = frozenset(capabilities)
        t_components = time.monotonic() - t0

        if self.profile:
            cluster.install_profile(self.profile)
            capabilities.add("crds")
            cluster.capabilities = frozenset(capabilities)
        cluster.timings.update({
            "pki": t_pki, "etcd_ready": t_etcd, "apiserver_ready": t_api, "components_ready": t_components,
            "total": time.monotonic() - t_start,
        })

    def _kubeconfig(self, cluster: LocalCluster, name: str, pair) -> Path:
        path = cluster.workdir / f"{name}.kubeconfig"
        path.write_text(yaml.safe_dump(kubeconfig(cluster.server, cluster.pki.ca.cert, pair)))
        return path

    def _https_healthz(self, port: int):
        s = requests.Session()
        s.verify = False      # the component's self-signed serving cert
        s.trust_env = False
        import urllib3
        urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
        return lambda: s.get(f"https://127.0.0.1:{port}/healthz", timeout=2).status_code == 200

    def _start_scheduler(self, cluster, bs, pki, server) -> None:
        kc = self._kubeconfig(cluster, "kube-scheduler", pki.kube_scheduler())
        port = free_port()
        p = ManagedProcess("kube-scheduler", [str(bs["kube-scheduler"])] +
                           scheduler_args(str(kc), port, str(cluster.workdir / "scheduler-certs")),
                           cluster.workdir / "logs" / "kube-scheduler.log")
        cluster.processes.append(p)
        p.wait_until(self._https_healthz(port), self.start_timeout, "healthy (GET /healthz)")

    def _start_kcm(self, cluster, bs, pki, server) -> None:
        kc = self._kubeconfig(cluster, "kube-controller-manager", pki.kube_controller_manager())
        port = free_port()
        p = ManagedProcess("kube-controller-manager", [str(bs["kube-controller-manager"])] +
                           kcm_args(str(kc), port, str(cluster.workdir / "kcm-certs"), pki_paths(pki)),
                           cluster.workdir / "logs" / "kube-controller-manager.log")
        cluster.processes.append(p)
        p.wait_until(self._https_healthz(port), self.start_timeout, "healthy (GET /healthz)")

    def _start_kwok(self, cluster, bs, pki, server) -> None:
        # kwok acts as a controller (it is not a kubelet): RBAC through the controllers group (§3.3).
        kc = self._kubeconfig(cluster, "kwok", pki.controller("kwok"))
        port = free_port()
        p = ManagedProcess("kwok", [str(bs["kwok"])] + kwok_args(str(kc), str(bs.kwok_stages), port),
                           cluster.workdir / "logs" / "kwok.log", cwd=str(cluster.workdir))
        cluster.processes.append(p)
        s = requests.Session()
        s.trust_env = False
        p.wait_until(lambda: s.get(f"http://127.0.0.1:{port}/healthz", timeout=2).status_code == 200,
                     self.start_timeout, "healthy (GET /healthz)")
