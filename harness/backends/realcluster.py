"""`Cluster` over a real kube-apiserver (shared by the `local` and `container` backends).

Identities map to client certificates of the cluster's PKI
(https://kubernetes.io/docs/setup/best-practices/certificates/;
https://kubernetes.io/docs/setup/best-practices/certificates/,
  https://kubernetes.io/docs/reference/access-authn-authz/node/):
  ADMIN                 -> CN=admin, O=system:masters
  Identity("controller", n) -> CN=system:serviceaccount:kube-system:<n>, O=harness:controllers, which an
                           RBAC ClusterRoleBinding grants cluster-admin (authorized by RBAC, not a
                           system:masters bypass; NodeRestriction ignores non-node users either way)
  Identity.node(n)      -> CN=system:node:<n>, O=system:nodes, no RBAC binding at all: only the Node
                           authorizer and the NodeRestriction admission plugin decide
                           (https://kubernetes.io/docs/reference/access-authn-authz/node/).
"""
from __future__ import annotations

import dataclasses
import os
import shutil
import threading
import time
from pathlib import Path
from typing import Callable

from harness.backends.binaries import controlplane as binmod
from harness.backends import crds as crdmod
from harness.backends.base import ADMIN, APIRejected, Identity
from harness.backends.kinds import KINDS, Kind
from harness.backends.kubeclient import RestClient
from harness.model.crd import apiversions
from harness.backends.lifetime import CLUSTERS, LIFETIME, OWNER_FILE
from harness.backends.pki import CONTROLLERS_GROUP, PKI
from harness.backends.watchcache import WatchCache

SYSTEM_NAMESPACES = frozenset({"default", "kube-system", "kube-public", "kube-node-lease"})
# What reset() clears (every kind a scenario writes; CRD-backed kinds only once installed).
RESET_NAMESPACED = ("Pod", "Event", "Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob",
                    "PersistentVolumeClaim", "PodDisruptionBudget", "ReplicaSet", "LimitRange", "ResourceQuota")
# PriorityClasses a scenario made: every one but the API server's own (system-node-critical,
# system-cluster-critical), which it creates only at start (k8s.io/kubernetes v1.36.3 pkg/registry/scheduling/rest
# storage_scheduling.go AddSystemPriorityClasses)
SYSTEM_PRIORITY_PREFIX = "system-"
RESET_CLUSTER = ("NodeOverlay", "NodeClaim", "NodePool", "AKSNodeClass", "Node", "PersistentVolume", "StorageClass",
                 "RuntimeClass")
# What reset() waits to be gone. Not Events: with kube-scheduler / kube-controller-manager running,
# the deletions themselves produce new events for a moment, so Events are deleted once more at the end.
RESET_WAIT = RESET_CLUSTER + tuple(k for k in RESET_NAMESPACED if k != "Event")

CONTROLLERS_BINDING = {
    "apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
    "metadata": {"name": "harness-controllers-cluster-admin"},
    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": CONTROLLERS_GROUP}],
}


def release_kinds(crds: list[dict]) -> dict[str, Kind]:
    """KINDS, with each kind whose version a release's own CRD does not serve moved to that CRD's storage
    version (provider v0.7.5's AKSNodeClass: karpenter.azure.com/v1alpha2 only)."""
    out = dict(KINDS)
    for crd in crds:
        kind = crd["spec"]["names"]["kind"]
        versions = crd["spec"].get("versions") or []
        if kind in out and not any(v["name"] == out[kind].version and v.get("served") for v in versions):
            stored = next((v["name"] for v in versions if v.get("storage")), None)
            if stored:
                out[kind] = dataclasses.replace(out[kind], version=stored)
    return out


class RealCluster:
    """The shared part of the local and container clusters. A backend creates the cluster on its
    work dir, starts the components, calls connect() once the API server is ready, and the
    subclass stops its components in _stop_components() (called by close())."""
    backend = "real"

    def __init__(self, workdir: Path, keep: bool):
        self.workdir, self.keep = workdir, keep
        self.server = ""
        self.pki: PKI | None = None
        self.server_ca = ""
        self.capabilities: frozenset[str] = frozenset()
        self.profile_obj = None             # the installed Profile (its release's served API versions)
        self.release_served: dict[str, list[str]] = {}    # kind -> versions a release's own CRDs serve
        # the run's release profile, whose rules judge a served object the harness converts itself because the
        # release's conversion webhook is off (_for_release); set by the real engine per run
        self.conversion_profile = None
        self.kinds: dict[str, Kind] = KINDS     # what every client reads and writes at (install_crds)
        # which CRDs the API server judges with now: "profile <name>" (rendered per profile by
        # install_profile) or another set install_crds applied as is (e.g. "provider v1.14.0")
        self.installed_crds: str | None = None
        # how long a registered Node may stay NotReady with nothing else changing before the real engine's
        # settle stops waiting for it (0: the settle's own fallback; the kubelet stand-ins are Ready at once)
        self.node_ready_seconds = 0.0
        # the file whose number (seconds) the API server adds to the times it stamps (a timing's kube-apiserver:
        # controller-timing.yaml kube-apiserver-source), None when its clock is the wall clock
        self.clock_file: Path | None = None
        # kube-controller-manager's flags over its defaults, as its backend started it (RealBackend kcm_settings)
        self.kcm_settings: tuple[tuple[str, object], ...] = ()
        # closed first by close(): what runs against this cluster and must stop before it (the real
        # engine's kept controller, harness/runner/engines/real/controller/keeper.py)
        self.dependents: list[Callable[[], None]] = []
        # the watch caches reading this cluster (watch()): told of every write its clients make
        self.watches: list[WatchCache] = []
        self._server_version: str | None = None
        # its control plane was upgraded (LocalCluster.upgrade): the cluster cache starts another for the next run
        self.retired = False
        self.timings: dict[str, float] = {}
        self.baseline_namespaces: frozenset[str] = frozenset()
        self.kubelet_judges: dict[str, int] = {}      # "kubelet" | "model" -> verdicts given
        self._clients: dict[Identity, RestClient] = {}
        self._lock = threading.Lock()
        self._closed = False
        if not keep:    # a kept work dir has no owner, so sweep_stale_workdirs never removes it
            (workdir / OWNER_FILE).write_text(str(os.getpid()))
        # Closed at exit (a kept one is reported instead); the watcher removes the work dir should
        # this process be killed before (harness/backends/lifetime.py).
        self._entry = LIFETIME.open(f"{self.backend} cluster {workdir}", self.close, tier=CLUSTERS, keep=keep,
                                    kept_message=self.kept_message, reap=(("dir", str(workdir)),))

    @property
    def kubeconfig_path(self) -> Path:
        """The admin kubeconfig (written by connect()) for kubectl & co."""
        return self.workdir / "admin.kubeconfig"

    def connect(self, server: str, pki: PKI, wait: Callable[[Callable[[], bool], str], None],
                server_ca: str | None = None) -> None:
        """Talk to the API server at `server`, once it answers /readyz: wait until it serves the
        default namespace (`wait(check, what)` is the backend's health wait on the API server
        component), bootstrap RBAC and write the admin kubeconfig. `server_ca` when the serving CA
        is not the client CA (k3s)."""
        self.server, self.pki = server, pki
        self.server_ca = server_ca or str(pki.ca.cert)
        wait(lambda: self.admin.get("Namespace", "default") is not None, "serving the default namespace")
        self.bootstrap()
        self.write_kubeconfig()

    # -- identities ---------------------------------------------------------------------------------
    def client(self, identity: Identity = ADMIN) -> RestClient:
        with self._lock:
            c = self._clients.get(identity)
            if c is None:
                if identity.kind == "admin":
                    pair = self.pki.admin()
                elif identity.kind == "node":
                    pair = self.pki.node(identity.name)
                elif identity.kind == "controller":
                    pair = self.pki.controller(identity.username)
                else:
                    raise ValueError(f"unknown identity kind {identity.kind!r}")
                c = RestClient(self.server, self.server_ca, pair.as_tuple())
                c.on_write = self._wrote
                c.kinds = self.kinds
                self._clients[identity] = c
            return c

    def watch(self, kinds: tuple[str, ...]) -> WatchCache:
        """A started list-and-watch mirror of `kinds` (harness/backends/watchcache.py) that sees this
        cluster's own writes; closed by unwatch() or with the cluster."""
        cache = WatchCache(self.admin, kinds).start()
        with self._lock:
            self.watches.append(cache)
        return cache

    def unwatch(self, cache: WatchCache) -> None:
        with self._lock:
            if cache in self.watches:
                self.watches.remove(cache)
        cache.close()

    def _wrote(self, obj: dict) -> None:
        for cache in list(self.watches):
            cache.wrote(obj)

    @property
    def admin(self) -> RestClient:
        return self.client(ADMIN)

    # -- bootstrap (after /readyz) --------------------------------------------------------------------
    def write_kubeconfig(self) -> None:
        """An admin kubeconfig (file references into the cluster's PKI) for kubectl & co."""
        import yaml
        from harness.backends.pki import kubeconfig
        self.kubeconfig_path.write_text(yaml.safe_dump(kubeconfig(self.server, Path(self.server_ca),
                                                                  self.pki.admin())))

    def bootstrap(self) -> None:
        """RBAC for the controller identities; the default namespace must exist."""
        self.admin.request("PUT", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/"
                           + CONTROLLERS_BINDING["metadata"]["name"], CONTROLLERS_BINDING)
        self.baseline_namespaces = frozenset(o["metadata"]["name"] for o in self.admin.list("Namespace"))

    def default_service_account_exists(self) -> bool:
        """Readiness with kube-controller-manager (sigs.k8s.io/controller-runtime v0.23.1
        pkg/internal/testing/process/process.go): its SA controller
        (k8s.io/kubernetes v1.36.3 pkg/controller/serviceaccount/serviceaccounts_controller.go) created
        serviceaccount/default."""
        return self.admin.request("GET", "/api/v1/namespaces/default/serviceaccounts/default",
                                  ok_missing=True) is not None

    # -- Cluster protocol ------------------------------------------------------------------------------
    def _ensure_namespace(self, obj: dict) -> bool:
        k = KINDS.get(obj.get("kind", ""))
        if not (k and k.namespaced):
            return False
        ns = (obj.get("metadata") or {}).get("namespace") or "default"
        try:
            self.admin.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        except APIRejected as e:
            if e.status != 409:
                raise
        return True

    def create(self, obj: dict, identity: Identity = ADMIN) -> dict:
        obj = self._served_version(obj)
        try:
            return self.client(identity).create(obj)
        except APIRejected as e:
            # A scenario's namespace is created on first use (the embedded store has no namespaces).
            if e.status == 404 and e.message.startswith("namespaces ") and self._ensure_namespace(obj):
                return self._create_retrying_sa(obj, identity)
            if self._missing_service_account(e):
                return self._create_retrying_sa(obj, identity)
            if self._priority_class_unseen(obj, e):
                return self._create_once_class_seen(obj, identity)
            raise

    def _priority_class_unseen(self, obj: dict, e: APIRejected) -> bool:
        """A pod refused for a PriorityClass that the API server stores: the Priority admission plugin reads
        classes through an informer, which can lag a class created a moment before (kube-apiserver
        plugin/pkg/admission/priority); a class that does not exist is refused at once, as it should be."""
        name = (obj.get("spec") or {}).get("priorityClassName") if obj.get("kind") == "Pod" else None
        return bool(name) and e.status == 403 and "no PriorityClass with name" in e.message and \
            self.admin.request("GET", f"/apis/scheduling.k8s.io/v1/priorityclasses/{name}", ok_missing=True) is not None

    def _create_once_class_seen(self, obj: dict, identity: Identity, timeout: float = 10.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            time.sleep(0.1)
            try:
                return self.client(identity).create(obj)
            except APIRejected as e:
                if "no PriorityClass with name" not in e.message or time.monotonic() > deadline:
                    raise

    def _served_version(self, obj: dict) -> dict:
        """The installed CRDs serve one version each: an object in a version the release does not serve is
        refused as kubectl would; a served karpenter.sh/v1beta1 NodePool (v0.5-v0.7) is judged by that
        version's rules here and sent as v1, as core v1.0's conversion webhook would store it
        (harness.model.crd.apiversions)."""
        if self.profile_obj is None:
            return self._for_release(obj)
        if obj.get("kind") not in apiversions.GROUPS and obj.get("kind") != "NodeOverlay":
            return obj
        # a NodeOverlay at a release without the kind: kubectl's words, not the REST path's 404
        rejection = apiversions.served_rejection(obj, self.profile_obj)
        if rejection is not None:
            raise rejection
        if obj.get("kind") in ("NodePool", "NodeClaim") and \
                apiversions.version_of(obj) != KINDS[obj["kind"]].version:
            # the installed CRDs (core v1.14.0's, with the release's rules) serve v1 only: a served v1beta1
            # object (v0.5-v0.7) is judged with its version's rules here and sent as v1
            from harness.model.crd.validation import admission_rejection
            rejection = admission_rejection(obj, apiversions.admission_profile(obj, self.profile_obj))
            if rejection is not None:
                raise rejection
        return _installed_version(obj)

    def _for_release(self, obj: dict) -> dict:
        """A Karpenter object as a release's own CRDs take it, at the path the clients write (self.kinds):
        - in a version the CRD does not serve (a karpenter.sh/v1 NodePool at provider v0.5-v0.6, a v1beta1
          AKSNodeClass at v0.7): refused as kubectl reports it, not sent to a path of another version (the
          API server would answer that the body's apiVersion is not the path's);
        - an AKSNodeClass in another version the CRD serves: relabeled, as that CRD converts with strategy
          None (provider v1.10.2 and v1.14.0 karpenter.azure.com_aksnodeclasses.yaml serve v1alpha2 and v1beta1);
        - a karpenter.sh/v1beta1 NodePool or NodeClaim where the clients write v1 (provider v0.7, core v1.0):
          judged by its own version's rules, as the API server judges a request before converting it (the
          run's release profile's, `conversion_profile`: the API server cannot, the conversion webhook being
          off here, DISABLE_WEBHOOK), then converted as that webhook would store it;
        - a kind the release ships no CRD for (a NodeOverlay before provider v1.7.2): refused as kubectl reports it;
        - anything else (provider v0.5's v1beta1 at its own path) as it is."""
        kind = obj.get("kind")
        served = self.release_served.get(kind)
        if kind == "NodeOverlay" and self.release_served and not served:
            raise APIRejected(404, "NotFound", f'no matches for kind "{kind}" in version "{obj.get("apiVersion")}"')
        if kind not in apiversions.GROUPS or not served:
            return obj
        group, _, version = str(obj.get("apiVersion") or "").rpartition("/")
        if group != apiversions.GROUPS[kind] or version not in served:
            raise APIRejected(404, "NotFound", f'no matches for kind "{kind}" in version "{obj.get("apiVersion")}"')
        if version == self.kinds[kind].version:
            return obj
        if kind == "AKSNodeClass":
            return {**obj, "apiVersion": self.kinds[kind].api_version}
        if self.conversion_profile is not None:
            from harness.model.crd.validation import admission_rejection
            rejection = admission_rejection(obj, apiversions.admission_profile(obj, self.conversion_profile))
            if rejection is not None:
                raise rejection
        return apiversions.nodeclaim_to_v1(apiversions.to_model_version(obj))

    @staticmethod
    def _missing_service_account(e: APIRejected) -> bool:
        # With kube-controller-manager the ServiceAccount admission plugin is on, and a fresh
        # namespace has no "default" ServiceAccount for a moment (the SA controller creates it).
        return e.status == 403 and "error looking up service account" in e.message

    def _create_retrying_sa(self, obj: dict, identity: Identity, timeout: float = 15.0) -> dict:
        deadline = time.monotonic() + timeout
        while True:
            try:
                return self.client(identity).create(obj)
            except APIRejected as e:
                if not self._missing_service_account(e) or time.monotonic() > deadline:
                    raise
                time.sleep(0.05)

    def get(self, kind: str, name: str, namespace: str | None = None, *, shared: bool = False) -> dict | None:
        return self.admin.get(kind, name, namespace)

    def list(self, kind: str, namespace: str | None = None, *, shared: bool = False) -> list[dict]:
        try:
            return self.admin.list(kind, namespace)
        except APIRejected as e:
            if e.status == 404:     # CRD kinds before install_profile
                return []
            raise

    def update(self, obj: dict, identity: Identity = ADMIN) -> dict:
        return self.client(identity).update(self._as_installed(obj))

    def update_status(self, obj: dict, identity: Identity = ADMIN) -> dict:
        out = self.client(identity).update_status(self._as_installed(obj))
        if obj.get("kind") == "ResourceQuota":
            self._await_quota_seen(out)
        return out

    def _await_quota_seen(self, quota: dict, timeout: float = 10.0) -> None:
        """Wait until the quota admission applies a quota whose status was just written: it reads quotas
        through an informer, and once that has synced an empty list means no quota (k8s.io/apiserver v0.36.3
        pkg/admission/plugin/resourcequota/resource_access.go GetQuotas), so a pod created while the informer
        lags the quota's create is admitted as if there were none (seen on a loaded CI machine). A dry-run of
        a pod the quota refuses (harness.model.kube.quota.refused_probe; a dry run counts no usage,
        controller.go) is admitted until the plugin has seen it; any refusal ends the wait, as does `timeout`."""
        from harness.model.kube.quota import refused_probe, status_of
        probe = refused_probe(quota, status_of(quota, ()))
        deadline = time.monotonic() + timeout
        while probe is not None and time.monotonic() < deadline:
            try:
                self.admin.create(probe, dry_run=True)
            except APIRejected:
                return
            time.sleep(0.05)

    def _as_installed(self, obj: dict) -> dict:
        """An update at the path create wrote to: a NodePool or NodeClaim in a version the profile's CRDs do
        not serve (v1beta1 at v0.5-v0.7, as the release stores it) is sent as v1, an AKSNodeClass in another
        version relabeled, as create sends them (_served_version): the API server refuses a body whose
        apiVersion is not the path's. With a release's own CRDs, as create sends it (_for_release)."""
        if self.profile_obj is None:
            return self._for_release(obj)
        return _installed_version(obj)

    def delete(self, kind: str, name: str, namespace: str | None = None, identity: Identity = ADMIN,
               graceful: bool = False) -> None:
        """Delete (pods with grace period 0: there is no kubelet to confirm termination; `graceful`: with the
        pod's own, where a kubelet stand-in confirms it, engines/real/cluster/existing.py finish_terminating_pods)."""
        grace = 0 if kind == "Pod" and not graceful else None
        self.client(identity).delete(kind, name, namespace, grace_seconds=grace)

    def bind(self, pod: dict, node_name: str, identity: Identity = ADMIN, *, read_back: bool = True) -> dict:
        return self.client(identity).bind(pod, node_name)

    def kubelet_refusal(self, node_labels: dict[str, str], profile) -> str | None:
        """The real kubelet binary's verdict on --node-labels (harness/backends/kubeletjudge.py); the
        model's when no kubelet is built or the profile changes the kubelet's allow-list. Who judged
        is counted in `kubelet_judges`."""
        from harness.backends import kubeletjudge
        verdict, judge = kubeletjudge.refusal(node_labels, profile)
        self.kubelet_judges[judge] = self.kubelet_judges.get(judge, 0) + 1
        return verdict

    def register_kubelet(self, node: dict, node_labels: dict[str, str], profile, provider_id: str) -> str | None:
        """The kubelet's flag check (kubelet_refusal), then its registration as system:node:<name>."""
        refusal = self.kubelet_refusal(node_labels, profile)
        if refusal is None:
            self.create(node, Identity.node(node["metadata"]["name"]))
        return refusal

    def install_profile(self, profile_name, force: bool = False) -> None:
        """(Re)apply the profile's CRDs and wait until the API server judges with them; a no-op
        when this cluster already runs that profile (CRDs are left alone by reset()). A Profile
        object (one with a scenario's knobs) is told apart from its base by its fingerprint."""
        ident = profile_name if isinstance(profile_name, str) else (
            profile_name.name if not profile_name.fingerprint else f"{profile_name.name}+{profile_name.fingerprint}")
        if self.installed_crds == f"profile {ident}" and not force:
            return
        t = crdmod.install_profile(self.admin, profile_name)
        self.timings[f"install_profile:{ident}"] = t["render"] + t["apply"] + t["effective"]
        self.installed_crds = f"profile {ident}"
        from harness.model.upstream.profile import load_profile
        self.profile_obj = load_profile(profile_name) if isinstance(profile_name, str) else profile_name
        self._use_kinds(KINDS)

    def install_crds(self, crds: list[dict], ident: str, timeout: float = 60.0) -> None:
        """Apply `crds` as they are (no profile rendering) and wait until each is Established; a
        no-op when the set named `ident` is the one installed (CRDs are left alone by reset())."""
        if self.installed_crds == ident:
            return
        names = [c["metadata"]["name"] for c in crds]
        try:
            crdmod.apply_crds(self.admin, crds)
        except APIRejected:
            # another release's CRD whose served versions leave out one in status.storedVersions
            # (karpenter.sh v1beta1 -> v1) cannot be replaced in place: remove it, then create
            for name in names:
                self.admin.request("DELETE", f"{crdmod.CRD_PATH}/{name}", ok_missing=True)
            deadline = time.monotonic() + timeout
            while any(self.admin.request("GET", f"{crdmod.CRD_PATH}/{n}", ok_missing=True) for n in names):
                if time.monotonic() > deadline:
                    raise crdmod.CRDError(f"CRDs {names} still present {timeout:.0f}s after their deletion")
                time.sleep(0.1)
            crdmod.apply_crds(self.admin, crds)
        crdmod.wait_established(self.admin, names, timeout)
        self.installed_crds = ident
        self.profile_obj = None             # a release's own CRDs serve what they serve
        self.release_served = {c["spec"]["names"]["kind"]: [v["name"] for v in c["spec"].get("versions") or []
                                                            if v.get("served")] for c in crds}
        self._use_kinds(release_kinds(crds))

    def _use_kinds(self, kinds: dict[str, Kind]) -> None:
        self.kinds = kinds
        for c in [*self._clients.values(), self.admin]:
            c.kinds = kinds

    @property
    def server_version(self) -> str:
        """The API server's own version (`GET /version` gitVersion, e.g. "v1.36.3"), read once."""
        if self._server_version is None:
            self._server_version = (self.admin.request("GET", "/version") or {}).get("gitVersion", "")
        return self._server_version

    def reset(self, timeout: float = 30.0) -> None:
        """Delete every object of the harness's kinds and every namespace created since start,
        through the API (finalizers dropped, grace 0), then wait until they are gone: controllers
        (kube-controller-manager's garbage collector, ReplicaSets) may still act on the deletions.
        The local cluster without kube-controller-manager deletes in etcd instead (LocalCluster.reset)."""
        for kind in RESET_NAMESPACED + RESET_CLUSTER:
            self._delete_all(kind)
        for pc in self.list("PriorityClass"):
            if not pc["metadata"]["name"].startswith(SYSTEM_PRIORITY_PREFIX):
                self.admin.delete("PriorityClass", pc["metadata"]["name"])
        for ns in self.admin.list("Namespace"):
            name = ns["metadata"]["name"]
            if name not in SYSTEM_NAMESPACES and name not in self.baseline_namespaces:
                self._delete_namespace(name)
        self._wait_empty(timeout)

    def _delete_all(self, kind: str) -> None:
        """Drop the finalizers of every `kind` object, then delete them all (one collection
        delete per namespace for a namespaced kind). A CRD kind not installed yet has none."""
        objs = self.list(kind)
        if not objs:
            return
        self._strip_finalizers(objs)
        if KINDS[kind].namespaced:
            for ns in sorted({o["metadata"].get("namespace") or "default" for o in objs}):
                self.admin.delete_collection(kind, ns, grace_seconds=0)
        else:
            self.admin.delete_collection(kind, grace_seconds=0)

    def _strip_finalizers(self, objs: list[dict]) -> None:
        for o in objs:
            if o["metadata"].get("finalizers"):
                try:
                    self.admin.patch(o["kind"], o["metadata"]["name"], {"metadata": {"finalizers": None}},
                                     o["metadata"].get("namespace"))
                except APIRejected as e:
                    if e.status != 404:
                        raise

    def _delete_namespace(self, name: str) -> None:
        """Delete and finalize directly: without kube-controller-manager's namespace controller a
        namespace would stay Terminating forever, so the harness empties it and drops the finalizer."""
        a = self.admin
        a.request("DELETE", f"/api/v1/namespaces/{name}", ok_missing=True)
        cur = a.request("GET", f"/api/v1/namespaces/{name}", ok_missing=True)
        if cur is None:
            return
        cur.setdefault("spec", {})["finalizers"] = []
        try:
            a.request("PUT", f"/api/v1/namespaces/{name}/finalize", cur)
        except APIRejected as e:
            if e.status not in (404, 409):
                raise

    def _wait_empty(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        try:
            for kind in RESET_WAIT:
                while left := self.list(kind):
                    if time.monotonic() > deadline:
                        raise RuntimeError(f"reset: {kind} objects still present after {timeout:.0f}s: "
                                           f"{[o['metadata']['name'] for o in left][:10]}")
                    self._strip_finalizers(left)
                    if kind == "Pod":
                        # e.g. pods a ReplicaSet re-created or the garbage collector deleted gracefully:
                        # without a kubelet nobody confirms termination, so force them (grace 0).
                        for o in left:
                            self.admin.delete("Pod", o["metadata"]["name"], o["metadata"].get("namespace"),
                                              grace_seconds=0, ok_missing=True)
                    time.sleep(0.05)
        finally:
            self._delete_all("Event")

    # -- lifecycle ------------------------------------------------------------------------------------
    def close(self) -> None:
        """Close the clients, stop the components, then remove the work dir (kept with keep=True).
        Idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            for close in list(reversed(self.dependents)):
                try:
                    close()
                except Exception:   # noqa: BLE001 - the cluster is closed all the same
                    pass
            self.dependents.clear()
            for cache in list(self.watches):
                self.unwatch(cache)
            for c in self._clients.values():
                c.close()
            self._clients.clear()
        finally:
            try:
                self._stop_components()
            finally:
                if not self.keep:
                    shutil.rmtree(self.workdir, ignore_errors=True)
                self._entry.release()

    def _stop_components(self) -> None:
        """Stop whatever the backend started (processes, containers)."""

    def kept_message(self) -> str:
        """Where a cluster left running at exit (keep=True) is, and how to stop it."""
        return (f"karpenter-harness: kept {self.backend} cluster running: server {self.server}, "
                f"kubeconfig {self.kubeconfig_path}, work dir {self.workdir}; stop it with: {self._stop_command()}")

    def _stop_command(self) -> str:
        return "(nothing to stop)"

    # context manager sugar
    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


# -- the backends' shared options -------------------------------------------------------------------
def env_flag(name: str) -> bool:
    return os.environ.get(name, "").strip().lower() in ("1", "true", "yes", "on")


def scheduler_config(kubeconfig_path: str, settings: tuple[tuple[str, object], ...],
                     leader_elect: bool = False) -> str:
    """kube-scheduler's --config file (KubeSchedulerConfiguration v1) with `settings` over its defaults.
    Given --config, kube-scheduler reads its client connection from the file and honours only the
    leader election flags beside it (k8s.io/kubernetes v1.36.3 cmd/kube-scheduler/app/options/options.go
    Options.ApplyTo)."""
    import yaml
    return yaml.safe_dump({"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                           "clientConnection": {"kubeconfig": kubeconfig_path},
                           "leaderElection": {"leaderElect": leader_elect}, **dict(settings)})


class RealBackend:
    """Options and the binaries check shared by the local and container backends.

    keep (default: HARNESS_KEEP_CLUSTER): keep the work dir (PKI, etcd data, logs) after close(),
    and leave the cluster running when the process exits without closing it.
    build (or HARNESS_BUILD_BINARIES): build missing binaries with Go (binaries.ensure_binaries).
    scheduler_config: KubeSchedulerConfiguration fields over kube-scheduler's defaults, as (field, value)
    pairs (hashable: shared clusters are keyed by their options); the real engine's timing chooses them
    (harness/data/controller-timing.yaml `kube-scheduler`).
    kcm_controllers: kube-controller-manager's --controllers (empty: its defaults, `*`); kcm_settings: its
    other flags over the defaults, as (flag, value) pairs; the local and container backends honour both,
    kind's kubeadm control plane keeps its defaults (its kubelets are real). kcm_binary: another
    kube-controller-manager than the pinned one (a timing's, controller.timed_kcm; the local backend only);
    apiserver_binary: another kube-apiserver (a timing's, controller.timed_apiserver, whose stamps read the
    cluster's clock_file; the local backend only).
    k8s_version: another Kubernetes release than the session's ("v1.33.13", binaries.release_for): its own
    binaries (binaries.find_binaries k8s=; the local backend only; `build` builds the ones missing).
    """
    name = "real"

    def __init__(self, *, scheduler: bool = False, controller_manager: bool = False, kwok: bool = False,
                 profile: str | None = "upstream", keep: bool | None = None, build: bool = False,
                 start_timeout: float = 90.0, apiserver_args: dict[str, str] | None = None,
                 scheduler_config: tuple[tuple[str, object], ...] = (), kcm_controllers: tuple[str, ...] = (),
                 kcm_settings: tuple[tuple[str, object], ...] = (), kcm_binary: str | None = None,
                 apiserver_binary: str | None = None, k8s_version: str | None = None):
        self.scheduler = scheduler
        self.k8s_version = k8s_version
        self.kcm_binary = kcm_binary
        self.apiserver_binary = apiserver_binary
        self.kcm_controllers = tuple(kcm_controllers)
        self.kcm_settings = tuple(kcm_settings)
        self.scheduler_config = tuple(scheduler_config)
        self.controller_manager = controller_manager
        self.kwok = kwok
        self.profile = profile
        self.keep = env_flag("HARNESS_KEEP_CLUSTER") if keep is None else keep
        self.build = build or env_flag("HARNESS_BUILD_BINARIES")
        self.start_timeout = start_timeout
        self.apiserver_args = apiserver_args or {}

    def one_version_only(self) -> str:
        """Why a backend that runs the session's Kubernetes only cannot start k8s_version's."""
        return (f"Kubernetes {self.k8s_version}: the {self.name} backend runs the session's version only "
                f"(another version's control plane: the local backend)")

    def needed(self) -> tuple[str, ...]:
        """The binaries this backend's cluster runs."""
        return tuple(n for n, on in (("etcd", True), ("kube-apiserver", True), ("kube-scheduler", self.scheduler),
                                     ("kube-controller-manager", self.controller_manager), ("kwok", self.kwok)) if on)

    def _binaries(self) -> tuple[binmod.BinarySet | None, str]:
        """The binaries found (None when the lookup itself failed) and why they will not do: ""
        when every needed one is there or can be built (build=True and a Go toolchain)."""
        try:
            bs = binmod.find_binaries(k8s=self.k8s_version)
        except binmod.BinariesError as e:
            return None, str(e)
        if bs.missing(self.needed()) and not (self.build and binmod.go_binary()):
            return bs, binmod.missing_message(bs, self.needed(), self.k8s_version)
        return bs, ""


def _installed_version(obj: dict) -> dict:
    """`obj` at the path the installed CRDs (core v1.14.0's, with the release's rules) serve: a karpenter.sh/v1beta1
    NodePool or NodeClaim (v0.5-v0.7) as v1, as core v1.0's conversion webhook would store it; an AKSNodeClass in
    another version relabeled, as the installed CRD's v1beta1 carries the release's storage schema
    (harness.backends.crds) and the versions share one Go reading (conversion strategy None); anything else as it is."""
    kind = obj.get("kind")
    if kind in ("NodePool", "NodeClaim") and apiversions.version_of(obj) != KINDS[kind].version:
        return apiversions.nodeclaim_to_v1(apiversions.to_model_version(obj))
    if kind == "AKSNodeClass" and obj.get("apiVersion") != KINDS["AKSNodeClass"].api_version:
        return {**obj, "apiVersion": KINDS["AKSNodeClass"].api_version}
    return obj
