"""`local` backend: etcd + kube-apiserver (+ kube-scheduler, kube-controller-manager, kwok) as
processes on 127.0.0.1, from binaries found or built by `binaries/controlplane.py`.

Flags follow envtest (sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/controlplane/etcd.go
EtcdDefaultArgs, apiserver.go APIServer.defaultArgs; sigs.k8s.io/controller-runtime v0.23.1
pkg/internal/testing/controlplane/apiserver.go APIServer.defaultArgs,
https://kubernetes.io/docs/setup/best-practices/certificates/) plus the
node-identity setup (https://kubernetes.io/docs/reference/access-authn-authz/node/):
`--authorization-mode=Node,RBAC`, `--enable-admission-plugins=NodeRestriction`, and for a loopback-only
sandbox `--advertise-address=127.0.0.1`, `--endpoint-reconciler-type=none`.

    from harness.backends.local import LocalBackend
    with LocalBackend(profile="upstream").start() as cluster:
        cluster.create(nodepool, KARPENTER)

One cluster serves a whole pytest worker; between scenarios reset() empties it with one etcd
transaction (LocalCluster.reset), not a restart.

Start is health-checked (etcd /health, apiserver /readyz, default namespace, components' /healthz);
a timeout raises `StartError` naming the component with its last log lines. Every process is
stopped on close(), at exit, and when the parent is killed (PR_SET_PDEATHSIG, and the watcher of
harness/backends/lifetime.py); the temp dir (PKI, etcd data, logs) is removed the same ways unless
`keep=True` or HARNESS_KEEP_CLUSTER=1. A kept cluster is also left running when the process exits
without closing it (its location goes to stderr).
"""
from __future__ import annotations

import base64
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import requests
import yaml

from harness.backends.binaries import controlplane as binmod
from harness.backends.lifetime import sweep_stale_workdirs, tmp_root
from harness.backends.pki import PKI, CertPair, kubeconfig
from harness.backends.procs import ManagedProcess, StartError, free_port
from harness.backends.kinds import KINDS, Kind
from harness.backends.realcluster import (RESET_CLUSTER, RESET_NAMESPACED, SYSTEM_NAMESPACES, SYSTEM_PRIORITY_PREFIX,
                                          RealBackend, RealCluster, scheduler_config)

__all__ = ["LocalBackend", "LocalCluster", "StartError"]


# Where kube-apiserver keeps an object in etcd: "/registry/" + a per-resource prefix. Built-in
# resources use their plural (k8s.io/apiserver v0.36.3 pkg/server/storage/storage_factory.go
# DefaultStorageFactory.ResourcePrefix), except the renamed ones of k8s.io/kubernetes v1.36.3
# pkg/kubeapiserver/default_storage_factory_builder.go SpecialDefaultResourcePrefixes (nodes are
# "minions"); custom resources use "<group>/<plural>" (k8s.io/apiserver v0.36.3
# pkg/server/options/etcd.go SimpleStorageFactory.ResourcePrefix). Checked against etcd v3.6.8
# under kube-apiserver v1.36.3 (tests/backends/test_local_cluster.py).
ETCD_ROOT = "/registry/"
SPECIAL_PREFIXES = {("", "nodes"): "minions"}


def storage_prefix(k: Kind) -> str:
    """The etcd key prefix (ending in "/") under which the API server stores `k`'s objects. A
    custom resource's group has a dot and is not a *.k8s.io group (CRD validation requires the dot;
    *.k8s.io needs an API-review approval), the legacy built-in groups (apps) have none."""
    custom = "." in k.group and not k.group.endswith(".k8s.io")
    resource = f"{k.group}/{k.plural}" if custom else SPECIAL_PREFIXES.get((k.group, k.plural), k.plural)
    return f"{ETCD_ROOT}{resource}/"


# What kube-controller-manager makes from a scenario's objects, wiped with them by reset(): the
# ReplicaSets of its Deployments, the ControllerRevisions of its DaemonSets and StatefulSets (k8s.io/kubernetes
# v1.36.3 pkg/controller/deployment, pkg/controller/daemon, pkg/controller/statefulset) and the kubelets' Node leases
# (kube-node-lease; not kube-system's, which hold the components' leader election).
CONTROLLER_MADE = (f"{ETCD_ROOT}replicasets/", f"{ETCD_ROOT}controllerrevisions/", f"{ETCD_ROOT}leases/kube-node-lease/")


# the prefixes of what kube-controller-manager makes pods from (ReplicaSets, also a Deployment's; StatefulSets;
# DaemonSets)
POD_MAKERS = (f"{ETCD_ROOT}replicasets/", f"{ETCD_ROOT}statefulsets/", f"{ETCD_ROOT}daemonsets/")


def _deleted_any(ops: list[dict], answer: dict, prefixes: tuple[str, ...]) -> bool:
    """Whether the transaction's delete of any of `prefixes` removed a key (etcd's DeleteRangeResponse
    `deleted` count per op, in the order of the ops)."""
    keys = {_prefix_range(p)["key"] for p in prefixes}
    for op, resp in zip(ops, answer.get("responses") or ()):
        if op["request_delete_range"].get("key") in keys and int((resp.get("response_delete_range") or {}).get("deleted", 0)):
            return True
    return False


def _b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def _prefix_range(prefix: str) -> dict[str, str]:
    """An etcd key range covering every key that starts with `prefix` (range_end: the prefix with
    its last byte + 1; https://etcd.io/docs/v3.6/learning/api/#key-ranges)."""
    return {"key": _b64(prefix), "range_end": _b64(prefix[:-1] + chr(ord(prefix[-1]) + 1))}


class LocalCluster(RealCluster):
    backend = "local"

    def __init__(self, workdir: Path, keep: bool):
        super().__init__(workdir, keep)
        self.processes: list[ManagedProcess] = []
        self.etcd_url = ""              # etcd's client URL on loopback, once started
        # reset() deletes in etcd (see reset()); False: through the API, with a wait
        self.storage_reset = False
        self._etcd: requests.Session | None = None
        # component -> (its check, what it checks): how start() knew it was up, asked again by upgrade()
        self.health: dict[str, tuple[Callable[[], bool], str]] = {}
        self.start_timeout = 60.0

    def reset(self, timeout: float = 30.0) -> None:
        """Remove every object of the harness's kinds and every namespace created since start.

        One etcd transaction deletes those keys (etcd v3 JSON gateway, POST /v3/kv/txn:
        https://etcd.io/docs/v3.6/dev-guide/api_grpc_gateway/): no finalizers, grace periods or
        polling, ~2 calls instead of ~20. The API server's watch cache sees the deletions as
        watch events, and a list right after is served consistently (consistent reads from cache,
        KEP-2340, https://kubernetes.io/docs/reference/using-api/api-concepts/#semantics-for-get-and-list).
        With kube-controller-manager (the real engine's cluster) what its controllers made from the
        scenario's objects goes in the same transaction (CONTROLLER_MADE: no ReplicaSet is left to
        re-create a deleted pod, no orphan for the garbage collector); the real engine resets only
        while no Karpenter controller runs. `storage_reset` False takes the API's own deletes and a wait."""
        if not self.storage_reset:
            return super().reset(timeout)
        ops = [{"request_delete_range": _prefix_range(storage_prefix(KINDS[k]))}
               for k in RESET_NAMESPACED + RESET_CLUSTER]
        ops += [{"request_delete_range": _prefix_range(prefix)} for prefix in CONTROLLER_MADE]
        ns_prefix = storage_prefix(KINDS["Namespace"])
        keep = SYSTEM_NAMESPACES | self.baseline_namespaces
        for key in self._etcd_keys(ns_prefix):
            if key[len(ns_prefix):] not in keep:
                ops.append({"request_delete_range": {"key": _b64(key)}})
        pc_prefix = storage_prefix(KINDS["PriorityClass"])     # a scenario's, not the API server's own
        for key in self._etcd_keys(pc_prefix):
            if not key[len(pc_prefix):].startswith(SYSTEM_PRIORITY_PREFIX):
                ops.append({"request_delete_range": {"key": _b64(key)}})
        answer = self._etcd_call("txn", {"success": ops})
        if "kube-controller-manager" in self.pids and _deleted_any(ops, answer, POD_MAKERS):
            self._sweep_orphan_pods()

    # kube-controller-manager's ReplicaSet controller watches pods and ReplicaSets on separate
    # informers: when it sees the transaction's pod deletions before its ReplicaSet's, it replaces the
    # pods from its cached copy (k8s.io/kubernetes v1.36.3 pkg/controller/replicaset replica_set.go
    # manageReplicas), and those orphans live until the garbage collector finds their owner gone - long
    # enough to be the next scenario's pending pods (Karpenter provisions for them, kube-scheduler binds
    # them). Found by the differential fuzzer (tools/fuzz_engines.py): a one-replica Deployment whose name
    # and template the previous scenario also had counted two pods.
    # Only a run that deleted a pod maker needs them: with none, nothing can make a pod (1 s a scenario).
    ORPHAN_CHECKS = (0.25, 0.25, 0.5)        # seconds between the checks after the transaction

    def _sweep_orphan_pods(self) -> None:
        pods = _prefix_range(storage_prefix(KINDS["Pod"]))
        for pause in self.ORPHAN_CHECKS:
            time.sleep(pause)
            if self._etcd_call("range", {**pods, "keys_only": True, "count_only": True}).get("count", "0") != "0":
                self._etcd_call("txn", {"success": [{"request_delete_range": pods}]})

    def _etcd_keys(self, prefix: str) -> list[str]:
        out = self._etcd_call("range", {**_prefix_range(prefix), "keys_only": True})
        return [base64.b64decode(kv["key"]).decode() for kv in out.get("kvs") or ()]

    def _etcd_call(self, what: str, body: dict) -> dict:
        if self._etcd is None:
            self._etcd = loopback_session()
        r = self._etcd.post(f"{self.etcd_url}/v3/kv/{what}", json=body, timeout=30)
        if r.status_code != 200:
            raise RuntimeError(f"reset: etcd {what} answered {r.status_code}: {r.text[:500]}")
        return r.json()

    def upgrade(self, binaries: dict[str, Path]) -> list[str]:
        """Restart the components `binaries` names at those binaries, in the order they started
        (kube-apiserver before kube-controller-manager and kube-scheduler, as a control plane is
        upgraded: https://kubernetes.io/releases/version-skew-policy/#supported-component-upgrade-order),
        over the same etcd, ports, certificates, flags and clock file; each is waited for as at start.
        Returns the components restarted. The cluster is `retired` then: it no longer is the version its
        cache key says (lifetime.py ClusterCache starts another for the next run that asks)."""
        done = []
        for i, p in enumerate(self.processes):
            if p.name not in binaries:
                continue
            self.processes[i] = new = p.replaced(binaries[p.name])
            check, what = self.health[p.name]
            new.wait_until(check, self.start_timeout, what)
            done.append(p.name)
        self._server_version = None
        self.retired = True
        return done

    @property
    def pids(self) -> dict[str, int]:
        return {p.name: p.pid for p in self.processes}

    def _stop_components(self) -> None:
        if self._etcd is not None:
            self._etcd.close()
        for p in reversed(self.processes):
            p.stop()
        self.processes.clear()

    def _stop_command(self) -> str:
        return "kill -KILL -- " + " ".join(f"-{p.pid}" for p in self.processes)     # process groups


def pki_paths(pki: PKI, root: str | None = None) -> dict[str, str]:
    """File paths of the server-side PKI, optionally as seen under `root` inside a container."""
    def p(path: Path) -> str:
        return str(path) if root is None else f"{root}/{path.relative_to(pki.dir)}"
    return {"ca": p(pki.ca.cert), "ca_key": p(pki.ca.key), "tls_cert": p(pki.serving.cert),
            "tls_key": p(pki.serving.key), "sa_pub": p(pki.sa_pub), "sa_key": p(pki.sa_key)}


def etcd_args(data_dir: str | Path, client_url: str, peer_url: str) -> list[str]:
    """envtest's etcd flags (sigs.k8s.io/controller-runtime v0.23.1
    pkg/internal/testing/controlplane/etcd.go EtcdDefaultArgs) plus a standalone
    member on loopback peer URLs."""
    return ["--name=harness", f"--data-dir={data_dir}",
            f"--listen-client-urls={client_url}", f"--advertise-client-urls={client_url}",
            f"--listen-peer-urls={peer_url}", f"--initial-advertise-peer-urls={peer_url}",
            f"--initial-cluster=harness={peer_url}", "--unsafe-no-fsync=true", "--log-level=warn"]


def apiserver_args(paths: dict[str, str], *, etcd_url: str, port: int, bind: str, issuer: str,
                   cert_dir: str, service_account_admission: bool = False,
                   extra: dict[str, str] | None = None) -> list[str]:
    """envtest's kube-apiserver flags (sigs.k8s.io/controller-runtime v0.23.1
    pkg/internal/testing/controlplane/apiserver.go APIServer.defaultArgs) +
    Node,RBAC and NodeRestriction (https://kubernetes.io/docs/reference/access-authn-authz/node/) +
    loopback-only
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
        # No controller-manager => no default ServiceAccount; envtest disables the plugin
        # (sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/controlplane/apiserver.go
        # APIServer.defaultArgs).
        "disable-admission-plugins": "" if service_account_admission else "ServiceAccount",
        "endpoint-reconciler-type": "none",
        "enable-priority-and-fairness": "false",
        "profiling": "false",
    }
    args.update(extra or {})
    return [f"--{k}={v}" for k, v in args.items() if v != ""]


def scheduler_args(kubeconfig_path: str, port: int, cert_dir: str, bind: str = "127.0.0.1",
                   config: str | None = None) -> list[str]:
    """CN=system:kube-scheduler has bootstrap RBAC
    (https://kubernetes.io/docs/reference/access-authn-authz/rbac/#core-component-roles;
    https://kubernetes.io/docs/setup/best-practices/certificates/); no leader election. `config`: a --config file
    (realcluster.scheduler_config), which then names the kubeconfig."""
    kc = kubeconfig_path
    return [f"--config={config}" if config else f"--kubeconfig={kc}", f"--authentication-kubeconfig={kc}",
            f"--authorization-kubeconfig={kc}", "--leader-elect=false", f"--bind-address={bind}",
            f"--secure-port={port}", f"--cert-dir={cert_dir}"]


def kcm_args(kubeconfig_path: str, port: int, cert_dir: str, paths: dict[str, str],
             bind: str = "127.0.0.1", controllers: tuple[str, ...] = (),
             settings: tuple[tuple[str, object], ...] = ()) -> list[str]:
    """kube-controller-manager with SA tokens and the cluster signer
    (https://kubernetes.io/docs/reference/command-line-tools-reference/kube-controller-manager/;
    https://kubernetes.io/docs/setup/best-practices/certificates/); `controllers`: its --controllers list, when not
    the defaults;
    `settings`: (flag, value) pairs over its defaults."""
    chosen = ([f"--controllers={','.join(controllers)}"] if controllers else []) + [f"--{k}={v}" for k, v in settings]
    return scheduler_args(kubeconfig_path, port, cert_dir, bind) + chosen + [
        f"--service-account-private-key-file={paths['sa_key']}", f"--root-ca-file={paths['ca']}",
        "--use-service-account-credentials=true",
        f"--cluster-signing-cert-file={paths['ca']}", f"--cluster-signing-key-file={paths['ca_key']}"]


def kwok_args(kubeconfig_path: str, stages: str, port: int, bind: str = "127.0.0.1") -> list[str]:
    """kwok out of cluster (sigs.k8s.io/kwok v0.8.0 pkg/kwok/cmd/root.go flags),
    managing only Nodes annotated kwok.x-k8s.io/node=fake (as
    Karpenter's kwok provider marks them), status heartbeats (no leases), stages from --config
    (v0.8.0 has no built-in stages, sigs.k8s.io/kwok v0.8.0 kustomize/stage/node/fast/node-initialize.yaml);
    --server-address pinned to loopback."""
    return [f"--kubeconfig={kubeconfig_path}", f"--config={stages}",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-lease-duration-seconds=0", f"--server-address={bind}:{port}"]


@dataclass(frozen=True)
class Component:
    """An optional component with its own client identity and /healthz
    (https://kubernetes.io/docs/setup/best-practices/certificates/)."""
    name: str                                 # also its binary's name
    option: str                               # the backend flag that turns it on
    identity: Callable[[PKI], CertPair]
    scheme: str                               # of its /healthz
    port: int                                 # its port inside a container's network namespace

    def args(self, kubeconfig_path: str, port: int, cert_dir: str, paths: dict[str, str], stages: str,
             bind: str = "127.0.0.1", config: str | None = None, controllers: tuple[str, ...] = (),
             settings: tuple[tuple[str, object], ...] = ()) -> list[str]:
        """`config`: kube-scheduler's --config file, if any; `controllers`, `settings`: kube-controller-manager's."""
        if self.name == "kube-controller-manager":
            return kcm_args(kubeconfig_path, port, cert_dir, paths, bind, controllers, settings)
        if self.name == "kube-scheduler":
            return scheduler_args(kubeconfig_path, port, cert_dir, bind, config)
        return kwok_args(kubeconfig_path, stages, port, bind)


# Start order. kwok acts as a controller (it is not a kubelet): RBAC through the controllers group
# (sigs.k8s.io/kwok v0.8.0 pkg/kwok/cmd/root.go).
COMPONENTS = (
    Component("kube-controller-manager", "controller_manager", PKI.kube_controller_manager, "https", 10257),
    Component("kube-scheduler", "scheduler", PKI.kube_scheduler, "https", 10259),
    Component("kwok", "kwok", lambda pki: pki.controller("kwok"), "http", 10247),
)


def loopback_session(verify: bool | str = True) -> requests.Session:
    """An HTTP session for probes on 127.0.0.1: never through an HTTP(S)_PROXY from the environment."""
    s = requests.Session()
    s.trust_env = False
    s.verify = verify
    return s


def healthz(port: int, scheme: str = "https") -> Callable[[], bool]:
    """A /healthz probe of a component on host loopback (its self-signed serving cert is not verified)."""
    import urllib3
    urllib3.disable_warnings(urllib3.exceptions.InsecureRequestWarning)
    s = loopback_session(verify=False)
    url = f"{scheme}://127.0.0.1:{port}/healthz"
    return lambda: s.get(url, timeout=2).status_code == 200


class LocalBackend(RealBackend):
    name = "local"

    def available(self) -> tuple[bool, str]:
        bs, why = self._binaries()
        if why:
            return False, why
        if self.kwok and not bs.missing(self.needed()) and bs.kwok_stages is None:
            return False, "kwok v0.8.0+ needs stage configs (kustomize/stage of the kwok Go module) and none were found"
        return True, ""

    # -- start ------------------------------------------------------------------------------------------
    def start(self) -> LocalCluster:
        t_start = time.monotonic()
        bs = binmod.ensure_binaries(build=self.build, need=self.needed(), k8s=self.k8s_version)
        sweep_stale_workdirs("harness-local-")
        for attempt in range(3):
            cluster = LocalCluster(Path(tempfile.mkdtemp(prefix="harness-local-", dir=tmp_root())), self.keep)
            cluster.kcm_settings = self.kcm_settings if self.controller_manager else ()
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

        timed = {"kube-controller-manager": self.kcm_binary, "kube-apiserver": self.apiserver_binary}
        if self.apiserver_binary:
            # a timing's API server stamps times on the clock the harness advances (controller-timing.yaml)
            cluster.clock_file = wd / "harness-clock"
            cluster.clock_file.write_text("0\n")

        def process(name: str, args: list[str]) -> ManagedProcess:
            binary = timed.get(name) or bs[name]
            # the API server's stamps and kube-controller-manager's Job, CronJob and TTL controllers read it
            env = {"KARPENTER_HARNESS_CLOCK_FILE": str(cluster.clock_file)} \
                if timed.get(name) and cluster.clock_file else None
            p = ManagedProcess(name, [str(binary)] + args, wd / "logs" / f"{name}.log", cwd=str(wd),
                               keep=self.keep, env=env)
            cluster.processes.append(p)
            return p

        # etcd (envtest's sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/controlplane/etcd.go;
        # sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/controlplane/etcd.go EtcdDefaultArgs)
        etcd_port, peer_port = free_port(), free_port()
        client_url = f"http://127.0.0.1:{etcd_port}"
        etcd = process("etcd", etcd_args(wd / "etcd", client_url, f"http://127.0.0.1:{peer_port}"))
        cluster.etcd_url, cluster.storage_reset = client_url, True

        # kube-apiserver (sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/controlplane/apiserver.go;
        # sigs.k8s.io/controller-runtime v0.23.1 pkg/internal/testing/controlplane/apiserver.go APIServer.defaultArgs,
        # https://kubernetes.io/docs/reference/access-authn-authz/node/). Started right away: it retries etcd until it
        # answers.
        port = free_port()
        server = f"https://127.0.0.1:{port}"
        apiserver = process("kube-apiserver", apiserver_args(
            pki_paths(pki), etcd_url=client_url, port=port, bind="127.0.0.1", issuer=server + "/",
            cert_dir=str(wd / "apiserver-certs"), service_account_admission=self.controller_manager,
            extra=self.apiserver_args))

        plain = loopback_session()
        etcd.wait_until(lambda: plain.get(client_url + "/health", timeout=1).json().get("health") == "true",
                        self.start_timeout, "healthy (GET /health)")
        t_etcd = time.monotonic() - t0

        probe = loopback_session(verify=str(pki.ca.cert))
        last_readyz = ""

        def readyz() -> bool:
            nonlocal last_readyz
            r = probe.get(server + "/readyz", timeout=2)
            last_readyz = r.text
            return r.status_code == 200

        cluster.start_timeout = self.start_timeout
        cluster.health["kube-apiserver"] = (readyz, "ready (GET /readyz)")
        try:
            apiserver.wait_until(readyz, self.start_timeout, "ready (GET /readyz)")
        except StartError as e:
            raise StartError(f"{e}\nlast /readyz answer:\n{last_readyz[-1500:]}") from None
        t_api = time.monotonic() - t0

        cluster.connect(server, pki, lambda check, what: apiserver.wait_until(check, self.start_timeout, what))
        capabilities = {"real-apiserver", "etcd", "cel", "node-restriction", "node-authorizer", "rbac"}
        stages = str(bs.kwok_stages) if self.kwok else ""
        for comp in COMPONENTS:
            if not getattr(self, comp.option):
                continue
            kc = wd / f"{comp.name}.kubeconfig"
            kc.write_text(yaml.safe_dump(kubeconfig(server, pki.ca.cert, comp.identity(pki))))
            port = free_port()
            config = None
            if comp.name == "kube-scheduler" and self.scheduler_config:
                config = wd / "kube-scheduler-config.yaml"
                config.write_text(scheduler_config(str(kc), self.scheduler_config))
            p = process(comp.name, comp.args(str(kc), port, str(wd / f"{comp.name}-certs"), pki_paths(pki), stages,
                                             config=config and str(config), controllers=self.kcm_controllers,
                                             settings=self.kcm_settings))
            check, what = cluster.health[comp.name] = (healthz(port, comp.scheme), "healthy (GET /healthz)")
            p.wait_until(check, self.start_timeout, what)
            if comp.name == "kube-controller-manager":
                p.wait_until(cluster.default_service_account_exists, self.start_timeout,
                             "creating serviceaccount/default")
            capabilities.add(comp.name)
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
