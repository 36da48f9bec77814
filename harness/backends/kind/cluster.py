"""`kind` backend: a kubeadm control plane and real kubelets in Docker node containers, through
testcontainers and docker-py, from the node image `python -m harness.backends build --kind` makes
(the container settings of sigs.k8s.io/kind v0.33.0 pkg/cluster/internal/providers/docker/provision.go;
sigs.k8s.io/kind v0.33.0 pkg/cluster/internal/providers/docker/provision.go).

    from harness.backends.registry import get_backend
    with get_backend("kind").start() as cluster:
        boot = cluster.kubelets.boot("vm-1", {"example.com/team": "a"}, [], "azure:///.../vm-1")

Why it is built this way: docs/architecture/backends.md."""
from __future__ import annotations

import os
import secrets
import tempfile
import time
from contextlib import closing
from pathlib import Path


from harness.backends.binaries import controlplane as binmod
from harness.backends.kind import image as imagemod
from harness.backends.kind.errors import KindStartError
from harness.backends.kind.kubeadm import SCHEDULER_CONFIG, bootstrap_kubeconfig, kubeadm_config
from harness.backends.kind.nodes import (CNI_CONFLIST, CONTROL_PLANE_POD_SUBNET, LABEL, OWNER_LABEL, JoinFiles,
                                         NodeContainer, WorkerPool, host_cpus, node_runtime)
from harness.backends.kind import reaper
from harness.backends.kind.reaper import docker_client, sweep_stale
from harness.backends.kind.pods import Finding, Placement, machine_for, pause_pod, unscheduled_message
from harness.backends.kind.writers import field_manager, writer_of
from harness.backends.lifetime import sweep_stale_workdirs, tmp_root
from harness.backends.pki import PKI
from harness.backends.procs import free_port, pid_alive
from harness.backends.realcluster import RealBackend, RealCluster, scheduler_config

__all__ = ["KindBackend", "KindCluster"]

ADDON_APPS = ("kube-dns", "kube-proxy")      # kubeadm's addons, by their k8s-app label
# A registration error the kubelet logs that means "refused", not "not yet" (a Forbidden create is
# logged as the follow-up Get's NotFound: kubelet v1.36.3 tryRegisterWithAPIServer).
REFUSED_REGISTRATION = ("forbidden", "is invalid", "not found")
REFUSAL_PERSISTS = 10.0       # seconds (harness assumption: longer than a transient refusal at first boot)


def _taint_flag(t: dict) -> str:
    """A taint in --register-with-taints syntax: key[=value]:Effect."""
    value = f"={t['value']}" if t.get("value") else ""
    return f"{t['key']}{value}:{t.get('effect') or 'NoSchedule'}"


class KindCluster(RealCluster):
    backend = "kind"

    def __init__(self, workdir: Path, keep: bool, client):
        super().__init__(workdir, keep)
        self.docker = client
        self.name = ""
        self.network = None
        self.control_plane: NodeContainer | None = None
        self.kubelets: WorkerPool | None = None
        self.baseline_nodes: frozenset[str] = frozenset()
        self.kubelet_timeout = 120.0
        # a real kubelet's Node is NotReady until its CNI config and containerd are up: seconds, and more
        # than the settle's 15 s fallback on a busy machine (a pod then left pending for the taint)
        self.node_ready_seconds = 45.0
        self.pause_image = ""                               # what every pod container runs
        self.boots: list = []                               # nodes.Boot of every kubelet started
        self._resources: dict[str, dict] = {}               # Node name -> the VM's capacity/allocatable
        self.real_scheduler = False                         # kube-scheduler binds the pods (not the loop)
        self.bind_timeout = 30.0
        self.placements: list[Placement] = []               # every bind the loop asked for, and the real one
        self.reported: dict[str, dict] = {}                 # Node name -> capacity/allocatable its kubelet reported
        self.machines = True                                # show each kubelet its VM's machine (machine-view.sh)

    # -- real kubelets ----------------------------------------------------------------------------------
    def register_kubelet(self, node: dict, node_labels: dict[str, str], profile, provider_id: str) -> str | None:
        """Boot a warm worker's kubelet for the VM named by `node` with its --node-labels, the taints
        of `node` as --register-with-taints and the VM's providerID; wait until the kubelet's Node
        is registered (None) or the kubelet exited at flag validation (its message). The kubelet
        itself registers: `node`'s labels beyond the flags are what the kubelet writes on its own."""
        name = node["metadata"]["name"]
        taints = [_taint_flag(t) for t in (node.get("spec") or {}).get("taints") or []]
        self._resources[name] = {k: node["status"][k] for k in ("capacity", "allocatable") if k in node.get("status", {})}
        machine = machine_for(node, host_cpus()) if self.machines else None
        boot = self.kubelets.boot(name, node_labels, taints, provider_id, machine)
        deadline = time.monotonic() + self.kubelet_timeout
        refused_since = None
        while True:
            real = self.admin.get("Node", name)
            if real is not None:
                boot.registered = time.monotonic()
                self.boots.append(boot)
                self._check_kubelet_labels(real, node["metadata"].get("labels") or {})
                return None
            journal = self.kubelets.journal(boot)
            refusal = self.kubelets.kubelet_exit(boot, journal)
            if refusal is not None:
                self.kubelets.stop_kubelet(boot)
                self.boots.append(boot)
                return refusal
            why = self.kubelets.registration_refusal(boot, journal) or ""
            if any(w in why for w in REFUSED_REGISTRATION):
                # a refusal that persists (the kubelet retries; a transient one clears within seconds)
                refused_since = refused_since or time.monotonic()
                if time.monotonic() - refused_since > REFUSAL_PERSISTS:
                    self._replay_registration(node, boot)
                    refused_since = None
            if time.monotonic() > deadline:
                tail = "\n".join(journal.splitlines()[-30:])
                raise KindStartError(f"the kubelet for {name} neither registered nor exited within "
                                     f"{self.kubelet_timeout:.0f}s; its journal:\n{tail}")
            time.sleep(0.1)

    def _replay_registration(self, node: dict, boot) -> None:
        """The API server refused the kubelet's Node (e.g. NodeRestriction); the kubelet does not log
        the refusal itself, so the same create under the same node identity asks for the answer and
        raises it (APIRejected). AlreadyExists means the kubelet got through meanwhile (a transient
        error): back to waiting."""
        from harness.backends.base import APIRejected, Identity
        name = node["metadata"]["name"]
        try:
            super().create(node, Identity.node(name))
        except APIRejected as e:
            if e.status == 409:
                return
            self.kubelets.stop_kubelet(boot)
            self.boots.append(boot)
            raise
        self.kubelets.stop_kubelet(boot)
        self.admin.delete("Node", name, ok_missing=True)
        raise KindStartError(f"the kubelet of {name} could not register, but the same Node was accepted under "
                             f"its identity; its journal:\n{self.kubelets.journal(boot)[-1500:]}")

    @staticmethod
    def label_writers(node: dict) -> dict[str, str]:
        """Label key -> the field manager that owns it, from the Node's managedFields (the kubelet's
        manager is "kubelet"; the harness's clients are named after their identity, see client())."""
        out: dict[str, str] = {}
        for entry in (node.get("metadata") or {}).get("managedFields") or []:
            labels = ((entry.get("fieldsV1") or {}).get("f:metadata") or {}).get("f:labels") or {}
            for f in labels:
                if f.startswith("f:"):
                    out[f[2:]] = entry.get("manager", "")
        return out

    def _check_kubelet_labels(self, real: dict, recorded: dict[str, str]) -> None:
        """The loop records the kubelet's label writes from the model (its own labels + the flags);
        here the real Node must agree: the labels owned by the "kubelet" field manager and their
        values are exactly those, but for labels another writer has already changed. A difference
        is a finding, raised rather than papered over."""
        writers = self.label_writers(real)
        labels = real["metadata"].get("labels") or {}
        by_kubelet = {k: labels.get(k) for k, m in writers.items() if m == "kubelet"}
        # a label another writer has changed since (the real controller, concurrently) is theirs now
        taken = {k for k in recorded if k in writers and writers[k] != "kubelet"}
        diff = {k: (by_kubelet.get(k), recorded.get(k)) for k in sorted((by_kubelet.keys() | recorded.keys()) - taken)
                if by_kubelet.get(k) != recorded.get(k)}
        if diff:
            owners = {k: (labels.get(k), writers.get(k)) for k in diff}
            raise KindStartError(f"the real kubelet of {real['metadata']['name']} wrote labels the loop does not "
                                 f"record (key: (real kubelet, loop)): {diff}; on the Node (value, field manager): "
                                 f"{owners}")

    def client(self, identity=None):
        """Each identity's requests carry its field manager (field-managers.yaml) as User-Agent, which
        the API server records in managedFields for what it writes, so the real Node tells the
        writers apart."""
        from harness.backends.base import ADMIN
        c = super().client(identity or ADMIN)
        c.s.headers["User-Agent"] = f"{field_manager(identity or ADMIN)}/harness"
        return c

    def wait_ready(self, name: str) -> dict:
        """The Node once its kubelet reports Ready (the CNI config is in place and containerd runs)."""
        deadline = time.monotonic() + self.kubelet_timeout
        while True:
            node = super().get("Node", name)
            conds = {c["type"]: c["status"] for c in ((node or {}).get("status") or {}).get("conditions") or []}
            if conds.get("Ready") == "True":
                for b in self.boots:
                    if b.vm_name == name and b.ready is None:
                        b.ready = time.monotonic()
                        node = self._node_status_stand_in(node, b) or node
                        self.reported[name] = {k: dict(node["status"].get(k) or {}) for k in ("capacity", "allocatable")}
                return node
            if time.monotonic() > deadline:
                raise KindStartError(f"Node {name} not Ready within {self.kubelet_timeout:.0f}s: {conds}")
            time.sleep(0.1)

    def _node_status_stand_in(self, node: dict, boot) -> dict | None:
        """For a VM with more vCPUs than the host (its kubelet reports the host's count): write the
        VM's CPU capacity and allocatable into the Node's status (see SLOW_STATUS_SYNC)."""
        want = self._resources.get(node["metadata"]["name"]) or {}
        if boot.machine is None or not boot.machine.status_sync or not want:
            return None
        from harness.backends.base import Identity
        patch = {"status": {k: {"cpu": want[k]["cpu"]} for k in ("capacity", "allocatable") if "cpu" in want.get(k, {})}}
        return self.client(Identity("admin", "node-status")).patch("Node", node["metadata"]["name"], patch, sub="status")

    # -- the real kube-scheduler ---------------------------------------------------------------------
    def bind(self, pod: dict, node_name: str, identity=None, *, read_back: bool = True) -> dict:
        """With the real kube-scheduler, the loop's bind is its prediction: wait (bind_timeout) for
        the real binding and record both (placements); the pod is never bound by the harness.
        Without it, the loop binds as on the other backends."""
        from harness.backends.base import ADMIN
        if not self.real_scheduler:
            return super().bind(pod, node_name, identity or ADMIN)
        md = pod["metadata"]
        ns = md.get("namespace") or "default"
        deadline = time.monotonic() + self.bind_timeout
        while True:
            real = self.admin.get("Pod", md["name"], ns) or {}
            got = (real.get("spec") or {}).get("nodeName")
            if got or not real or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        self.placements.append(Placement(f"{ns}/{md['name']}", node_name, got, "" if got else unscheduled_message(real)))
        return real

    def read_back(self, result) -> list[Finding]:
        """Put the real cluster into the loop's result and say where they differ:
        - every pod's node is the one the real kube-scheduler bound it to (a pod the loop placed but
          the real scheduler left pending, or the reverse, is blocking; the same pod on another
          node is a notice: the loop binds the first fitting node, kube-scheduler scores them);
        - every Node label's owner in the real Node's managedFields (NodeResult.field_owners)."""
        findings: list[Finding] = []
        if self.real_scheduler:
            findings += self._read_back_pods(result)
        for nr in result.nodes:
            real = self.admin.get("Node", nr.name)
            if real is None:
                continue
            flags = nr.kubelet_node_labels or {}
            # (NodeResult has no field for it: a field would change every run's digest on every backend)
            nr.field_owners = owners = {k: writer_of(m, k, flags) for k, m in self.label_writers(real).items()}
            for key in sorted(real["metadata"].get("labels") or {}):
                run = nr.current_writers(key) if key in nr.labels else []
                if owners.get(key) not in run:
                    findings.append(Finding(f"nodes[{nr.index}].labels[{key}].writer", run, owners.get(key),
                                            "the real Node's managedFields name another writer than the loop records",
                                            True))
        return findings

    def _read_back_pods(self, result) -> list[Finding]:
        findings: list[Finding] = []
        by_node = {nr.name: nr for nr in result.nodes}
        for key, pr in sorted(result.pods.items()):
            if pr.state == "deleted":
                continue
            real = self.admin.get("Pod", pr.name, pr.namespace)
            if real is None:
                continue
            got = (real.get("spec") or {}).get("nodeName")
            if got == pr.node:
                continue
            path = f"pods[{key}].node"
            if got and pr.node:
                findings.append(Finding(path, pr.node, got, "the real kube-scheduler chose another node", False))
            elif pr.node:
                findings.append(Finding(path, pr.node, None, "the real kube-scheduler left it pending: "
                                        + (unscheduled_message(real) or "no binding"), True))
            else:
                findings.append(Finding(path, None, got, "the real kube-scheduler bound a pod the loop left "
                                        f"{pr.state} ({pr.reason or pr.scheduler_error or 'no reason'})", True))
            for nr in by_node.values():
                if key in nr.pods and nr.name != got:
                    nr.pods.remove(key)
            if got in by_node and key not in by_node[got].pods:
                by_node[got].pods.append(key)
            pr.node = got
            pr.state = "scheduled" if got else "pending"
            if not got and pr.reason is None:
                pr.reason = unscheduled_message(real) or None
        return findings

    def _overlay(self, obj: dict | None) -> dict | None:
        """A Node's capacity and allocatable as the VM's instance type has them: the kubelet reports
        the Docker host's, which is not the VM the scenario launched (harness assumption: only the
        labels, taints and identities are under test on this backend)."""
        if obj is not None and obj.get("kind", "Node") == "Node" and obj["metadata"]["name"] in self._resources:
            obj.setdefault("status", {}).update(self._resources[obj["metadata"]["name"]])
        return obj

    # -- the Cluster calls, adjusted for Nodes a real kubelet owns ------------------------------------
    def get(self, kind: str, name: str, namespace: str | None = None, *, shared: bool = False) -> dict | None:
        obj = super().get(kind, name, namespace)
        return self._overlay(obj) if kind == "Node" else obj

    def list(self, kind: str, namespace: str | None = None, *, shared: bool = False) -> list[dict]:
        """The harness's control-plane Node is infrastructure, not part of a scenario's world ..."""
        objs = super().list(kind, namespace)
        if kind == "Node":
            objs = [self._overlay(o) for o in objs if o["metadata"]["name"] not in self.baseline_nodes]
        elif kind in ("Pod", "Deployment", "DaemonSet"):   # nor are its static pods and kubeadm's addons
            objs = [o for o in objs if not self._infrastructure(o)]
        return objs

    def _infrastructure(self, obj: dict) -> bool:
        """The control plane's static pods and kubeadm's addons: CoreDNS (k8s-app=kube-dns) and
        kube-proxy (k8s-app=kube-proxy, a DaemonSet with a pod on every node)."""
        meta = obj.get("metadata") or {}
        if meta.get("namespace") == "kube-system" and (meta.get("labels") or {}).get("k8s-app") in ADDON_APPS:
            return True
        return obj.get("kind", "Pod") == "Pod" and (obj.get("spec") or {}).get("nodeName") in self.baseline_nodes

    def update(self, obj: dict, identity=None) -> dict:
        """A Node update that lost a race with its kubelet's status writes (409) is applied again
        on the current object: the harness's writers own the Node's metadata and spec, the kubelet
        its status."""
        from harness.backends.base import ADMIN, APIRejected
        identity = identity or ADMIN
        for attempt in range(5):
            try:
                return super().update(obj, identity)
            except APIRejected as e:
                if obj.get("kind") != "Node" or e.status != 409 or attempt == 4:
                    raise
                cur = super().get("Node", obj["metadata"]["name"])
                if cur is None:
                    raise
                for k in ("labels", "annotations", "finalizers", "ownerReferences"):
                    if k in obj["metadata"]:
                        cur["metadata"][k] = obj["metadata"][k]
                cur["spec"] = obj.get("spec", cur.get("spec"))
                obj = cur
        raise AssertionError("unreachable")

    def update_status(self, obj: dict, identity=None) -> dict:
        """A Node's status is its kubelet's: instead of writing a Ready condition, wait for the
        kubelet to report it."""
        from harness.backends.base import ADMIN
        if obj.get("kind") == "Node" and obj["metadata"]["name"] in self._resources:
            return self._overlay(self.wait_ready(obj["metadata"]["name"]))
        return super().update_status(obj, identity or ADMIN)

    def create(self, obj: dict, identity=None) -> dict:
        """Pods run for real on the kubelets: every container becomes the preloaded pause image
        (no registry to pull the scenario's images from; the loop keeps the scenario's pod spec)."""
        from harness.backends.base import ADMIN
        if obj.get("kind") == "Pod" and self.pause_image:
            obj = pause_pod(obj, self.pause_image)
        return super().create(obj, identity or ADMIN)

    def delete(self, kind: str, name: str, namespace: str | None = None, identity=None, graceful: bool = False) -> None:
        """Deleting a Node with a real kubelet (the API server accepted it) stops that kubelet and
        removes its worker."""
        from harness.backends.base import ADMIN
        super().delete(kind, name, namespace, identity or ADMIN, graceful)
        if kind == "Node" and self.kubelets is not None:
            self.kubelets.release(name)
            self._resources.pop(name, None)

    def reset(self, timeout: float = 60.0) -> None:
        """Stop every booted kubelet (their workers go; the pool refills), then the usual reset."""
        if self.kubelets is not None:
            for vm in self.kubelets.booted():
                self.kubelets.release(vm)
        self._resources.clear()
        self.placements.clear()
        self.reported.clear()
        super().reset(timeout)

    def _delete_all(self, kind: str) -> None:
        """Nodes one by one (the control-plane Node stays); other kinds as on every real backend."""
        if kind != "Node":
            return super()._delete_all(kind)
        nodes = self.list("Node")
        self._strip_finalizers(nodes)
        for n in nodes:
            self.admin.delete("Node", n["metadata"]["name"], ok_missing=True)

    def release_vm(self, vm_name: str) -> None:
        """The VM is gone: stop its kubelet, remove its worker, delete its Node."""
        if self.kubelets is not None:
            self.kubelets.release(vm_name)
        self.admin.delete("Node", vm_name, ok_missing=True)

    def _stop_components(self) -> None:
        if self.kubelets is not None:
            self.kubelets.close()
            self.kubelets = None
        if self.control_plane is not None:
            self.control_plane.remove()
            self.control_plane = None
        if self.network is not None:
            try:
                self.network.remove()
            except Exception:   # noqa: BLE001
                pass
            self.network = None
        try:
            self.docker.close()
        except Exception:   # noqa: BLE001
            pass

    def _stop_command(self) -> str:
        n = self.name
        return (f"docker rm -f -v $(docker ps -aq --filter name={n}-); "
                f"docker volume rm $(docker volume ls -q --filter name={n}-); docker network rm {n}")


_watcher: int | None = None


def _watch_owner() -> None:
    """Once per process: the reaper that removes this process's containers if it dies unclosed."""
    global _watcher
    if _watcher is None or not pid_alive(_watcher):
        _watcher = reaper.start(os.getpid())


class KindBackend(RealBackend):
    name = "kind"

    def __init__(self, *, pool_size: int = 2, start_timeout: float = 240.0, **options):
        """`options`: those of RealBackend (scheduler, profile, keep, build, ...); here the real
        kube-scheduler runs unless scheduler=False (HARNESS_KIND_SCHEDULER=0), and then the loop
        binds. `pool_size` warm workers are kept ready (HARNESS_KIND_POOL overrides)."""
        options.setdefault("scheduler", os.environ.get("HARNESS_KIND_SCHEDULER", "1") != "0")
        super().__init__(start_timeout=start_timeout, **options)
        self.pool_size = int(os.environ.get("HARNESS_KIND_POOL", pool_size))

    def available(self) -> tuple[bool, str]:
        if self.k8s_version:
            return False, self.one_version_only()
        from harness.backends.container import docker_status
        ok, why = docker_status()
        if not ok:
            return False, why
        with closing(docker_client()) as client:
            try:
                node_runtime(client)
            except ValueError as e:
                return False, str(e)
            if imagemod.find_image(client) is None and not self.build:
                return False, ("no kind node image for Kubernetes " + binmod.versions()["k8s"]
                               + "; build it with: python -m harness.backends build --kind")
        return True, ""

    def start(self) -> KindCluster:
        t0 = time.monotonic()
        client = docker_client()
        from harness.backends.container import ryuk_setup
        ryuk_setup(client)            # no registry: Ryuk's image is not pullable, the backend reaps its own
        tag = imagemod.find_image(client)
        if tag is None:
            tag = imagemod.build(echo=True).tag
        sweep_stale(client)
        sweep_stale_workdirs("harness-kind-")
        if not self.keep:
            _watch_owner()
        workdir = Path(tempfile.mkdtemp(prefix="harness-kind-", dir=tmp_root()))
        cluster = KindCluster(workdir, self.keep, client)
        try:
            self._start(cluster, tag, t0)
        except BaseException:
            cluster.close()
            raise
        return cluster

    def _labels(self, what: str) -> dict[str, str]:
        labels = {LABEL: what}
        if not self.keep:
            labels[OWNER_LABEL] = str(os.getpid())
        return labels

    def _start(self, cluster: KindCluster, tag: str, t0: float) -> None:
        client = cluster.docker
        runtime = node_runtime(client)
        k8s = binmod.versions()["k8s"]
        cluster.name = name = f"harness-kind-{os.getpid()}-{secrets.token_hex(2)}"
        cluster.network = client.networks.create(name, driver="bridge", labels=self._labels("network"))
        pki = PKI(workdir_pki := cluster.workdir / "pki", server_side=False)
        os.chmod(workdir_pki, 0o755)
        port = free_port()
        cp = cluster.control_plane = NodeContainer(client, tag, f"{name}-control-plane", name,
                                                   self._labels("node"), host_port=port, runtime=runtime)
        cp.wait_systemd(self.start_timeout)
        t_node = time.monotonic() - t0
        cp_ip = cp.ip(name)
        token = f"{secrets.token_hex(3)}.{secrets.token_hex(8)}"
        cp.put("/etc/kubernetes/pki/ca.crt", pki.ca.cert.read_text())
        cp.put("/etc/kubernetes/pki/ca.key", pki.ca.key.read_text(), 0o600)
        if self.scheduler_config:
            # kubeadm's static pod names its kubeconfig (controlplane/manifests.go getSchedulerCommand)
            cp.put(SCHEDULER_CONFIG, scheduler_config("/etc/kubernetes/scheduler.conf", self.scheduler_config,
                                                      leader_elect=True))
        cp.put("/kind/kubeadm.yaml", kubeadm_config(name, k8s, cp_ip, token, bool(self.scheduler_config)))
        cp.put("/etc/cni/net.d/10-harness.conflist", CNI_CONFLIST.format(subnet=CONTROL_PLANE_POD_SUBNET))
        addons = cp.exec(f"cat {imagemod.SKIP_FILE} 2>/dev/null || echo {','.join(imagemod.ADDON_IMAGES)}").strip()
        skipped = [a for a in addons.split(",") if a]
        if not self.scheduler and "addon/coredns" not in skipped:
            skipped.append("addon/coredns")      # its pods would never be scheduled (the loop binds only its own)
        skip = ",".join(["preflight"] + skipped)
        cp.exec(f"kubeadm init --config /kind/kubeadm.yaml --skip-phases={skip} --skip-token-print -v=1 "
                f"> /kind/kubeadm-init.log 2>&1 || {{ tail -40 /kind/kubeadm-init.log; exit 1; }}",
                what="kubeadm init")
        if not self.scheduler:
            # the loop binds pods itself unless asked for the real kube-scheduler (as on `local`)
            cp.exec("mv /etc/kubernetes/manifests/kube-scheduler.yaml /kind/", what="disabling kube-scheduler")
        t_init = time.monotonic() - t0
        server = f"https://127.0.0.1:{port}"

        def wait(check, what: str) -> None:
            deadline = time.monotonic() + self.start_timeout
            while True:
                try:
                    if check():
                        return
                except Exception:   # noqa: BLE001 - not up yet
                    pass
                if time.monotonic() > deadline:
                    raise KindStartError(f"kind control plane not {what} within {self.start_timeout:.0f}s")
                time.sleep(0.2)

        cluster.connect(server, pki, wait)
        names = cp.exec(["kubeadm", "config", "images", "list", f"--kubernetes-version={k8s}"]).split()
        cluster.pause_image = next(n for n in names if imagemod.image_component(n) == "pause")
        cluster.baseline_nodes = frozenset(n["metadata"]["name"] for n in cluster.admin.list("Node"))
        kubelet_cfg = cluster.admin.request("GET", "/api/v1/namespaces/kube-system/configmaps/kubelet-config")
        join = JoinFiles(pki.ca.cert.read_text(),
                         bootstrap_kubeconfig(f"https://{cp_ip}:6443", pki.ca.cert.read_text(), token),
                         kubelet_cfg["data"]["kubelet"])
        if "addon/coredns" not in skipped:
            # CoreDNS on the control-plane node (it tolerates its taint), so a scenario's nodes carry
            # only what the scenario and the DaemonSets put there (harness choice)
            cluster.admin.patch("Deployment", "coredns", {"spec": {"template": {"spec": {"nodeSelector": {
                "node-role.kubernetes.io/control-plane": ""}}}}}, "kube-system")
        cluster.kubelets = WorkerPool(client, tag, name, name, self._labels("node"), join, self.pool_size,
                                      self.start_timeout, runtime, control_plane=(cp, cp_ip))
        caps = {"real-apiserver", "etcd", "cel", "node-restriction", "node-authorizer", "rbac", "docker",
                "kube-controller-manager", "real-kubelet", "kubeadm"}
        if self.scheduler:
            caps.add("kube-scheduler")
            cluster.real_scheduler = True
        caps |= {"kube-proxy" if a == "addon/kube-proxy" else "coredns"
                 for a in ("addon/kube-proxy", "addon/coredns") if a not in skipped}
        cluster.capabilities = frozenset(caps)
        if self.profile:
            cluster.install_profile(self.profile)
            cluster.capabilities = cluster.capabilities | {"crds"}
        cluster.timings.update({"control_plane_container": t_node, "kubeadm_init": t_init,
                                "total": time.monotonic() - t0})
