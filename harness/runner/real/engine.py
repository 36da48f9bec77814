"""`--engine real`: one scenario under one profile with the real Karpenter-on-Azure controller.

Per run: the scenario's fakeazure (the simulated engine's own set-up), served on loopback; the
provider's CRDs and a service-account token on the `local` cluster (real kube-apiserver,
kube-scheduler, kube-controller-manager); the controller in its sandbox (harness/runner/real/sandbox.py)
configured only with loopback endpoints; the manifests applied; then the harness plays kubelet and
cloud-node-controller from the bootstrap data on each VM (harness/runner/real/kubelet.py) until the
cluster is quiet; the same `expect` blocks are checked against what the API server and the fake hold.
The controller, the fake's server, the work dir and every relay are released on pass, fail and
Ctrl-C (try/finally; the procs reaper and PR_SET_PDEATHSIG behind them).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from harness.backends.base import APIRejected
from harness.loop.clock import SimClock
from harness.runner import engine as sim_engine
from harness.runner.expect import check
from harness.runner.real import applicability, clusterprep, existing, fakeside, settings
from harness.runner.real.kubelet import Kubelets
from harness.runner.real.observe import Observer
from harness.runner.real.sandbox import Forward, Sandbox

SETTLE_SECONDS = 12.0          # > the provisioner's 10 s maximum batch window (core BatchMaxDuration)
QUIESCE_TIMEOUT = 150.0        # a run that is still changing after this is reported not steady
POLL_SECONDS = 0.5
CONTROLLER_PORTS = {"metrics": 18080, "health": 18081}    # inside the sandbox's own network namespace
WORKLOAD_KINDS = ("Pod", "Deployment")      # applied after given.existingNodes are in place
APPLY_ORDER = {"Namespace": 0, "AKSNodeClass": 1, "NodePool": 2, "PersistentVolume": 3,
               "PersistentVolumeClaim": 3, "DaemonSet": 4, "Deployment": 5, "Pod": 6}


@dataclass
class RealOutcome(sim_engine.Outcome):
    engine: str = "real"
    not_applicable: list = field(default_factory=list)       # applicability.NotApplicable
    skipped: str | None = None                                # why the run was not made at all
    skipped_steps: list[str] = field(default_factory=list)
    controller_version: str = ""
    hosts: list[str] = field(default_factory=list)           # Host headers the fake saw + hosts in the controller log
    vm_puts: dict = field(default_factory=dict)              # VM name -> PUT body (with customData)
    nic_puts: dict = field(default_factory=dict)
    vm_bodies: dict = field(default_factory=dict)            # VM name -> the fake's stored view (as the simulation's)
    nic_bodies: dict = field(default_factory=dict)
    log_tail: str = ""


def _tmp_root() -> str | None:
    return os.environ.get("HARNESS_TMPDIR") or ("/dev/shm" if os.access("/dev/shm", os.W_OK) else None)


def skip_reason(scenario, cluster) -> str | None:
    """Scenarios the real engine cannot run faithfully, and why."""
    if scenario.given.get("knobs"):
        return ("given.knobs replays an older provider version; the real engine runs exactly one controller "
                "binary (build another with --provider-src)")
    if (scenario.given.get("cluster") or {}).get("useSIG"):
        return ("given.cluster.useSIG: the SIG image path needs a SIG access-token server "
                "(provider v1.14.0 options_validation.go validateUseSIG) that the harness does not fake")
    wanted = (scenario.given.get("cluster") or {}).get("kubernetesVersion")
    have = getattr(cluster, "_server_version", None)
    if wanted and have and not have.startswith(f"v{wanted}".rsplit(".", 1)[0]):
        return (f"given.cluster.kubernetesVersion {wanted}: the controller reads the version from the API "
                f"server, which is {have}")
    return None


def run(scenario, profile: str, cluster, *, controller=None) -> RealOutcome:
    from harness.backends.controller import ensure_controller
    from harness.backends.lifetime import DIRS, LIFETIME
    from harness.backends.local import sweep_stale_workdirs
    t0 = time.perf_counter()
    ctl = controller or ensure_controller()
    if not hasattr(cluster, "_server_version"):
        cluster._server_version = (cluster.admin.request("GET", "/version") or {}).get("gitVersion", "")
    empty = sim_engine.RunResult(scenario.name, profile, "local", scenario.seed)
    outcome = RealOutcome(scenario, profile, cluster.backend, empty, controller_version=ctl.version)
    why = skip_reason(scenario, cluster)
    if why:
        outcome.skipped = why
        return outcome
    sweep_stale_workdirs("harness-real-")
    workdir = Path(tempfile.mkdtemp(prefix="harness-real-", dir=_tmp_root()))
    (workdir / "owner.pid").write_text(str(os.getpid()))
    keep = bool(os.environ.get("HARNESS_KEEP_REAL_WORKDIR"))
    # removed by the finally below; on SIGTERM/SIGINT by the exit path, on SIGKILL by the watcher
    # (harness/backends/lifetime.py)
    entry = LIFETIME.open(f"real-engine work dir {workdir}", lambda: shutil.rmtree(workdir, ignore_errors=True),
                          tier=DIRS, keep=keep, reap=(("dir", str(workdir)),))
    server = sandbox = run_ = None
    try:
        cluster.reset()
        secrets = clusterprep.prepare(cluster, crd_version(ctl), workdir)
        fake = sim_engine._fake_azure(scenario, SimClock())
        fake.set_lro("immediate")
        server, tap = fakeside.serve(fake, workdir / "fake-tls")
        fake_port = int(server.url.rsplit(":", 1)[1])
        fake_ca = Path(server.ca_path)
        api_port = int(cluster.server.rsplit(":", 1)[1])
        cfg = sim_engine.cluster_settings(scenario)
        endpoints = settings.Endpoints(f"https://127.0.0.1:{fake_port}", fake_ca, cluster.server, Path(cluster.server_ca))
        files = settings.write_files(workdir / "config", endpoints, settings.engine_data()["environment"]["AZURE_TENANT_ID"],
                                     fake.subscription_id)
        env = settings.controller_env(cfg, endpoints, files, fake.subscription_id, files["az_dir"], CONTROLLER_PORTS)
        sandbox = Sandbox("karpenter-controller", [str(ctl.path)], env, workdir, secrets,
                          [Forward(fake_port, fake_port), Forward(api_port, api_port)])
        sandbox.start(workdir / "controller.log")
        run_ = _Run(scenario, profile, cluster, fake, tap, sandbox, cfg)
        existing_nodes = scenario.given.get("existingNodes")
        manifests = [m.obj for m in scenario.manifests]
        if existing_nodes:       # classes and pools first, the existing nodes, then the workloads
            run_.apply([m for m in manifests if m.get("kind") not in WORKLOAD_KINDS])
            unmanaged = existing.seed(run_, existing_nodes, {s["name"].lower(): s for s in fake.skus()})
            manifests = [m for m in manifests if m.get("kind") in WORKLOAD_KINDS]
        run_.apply(manifests)
        run_.settle()
        if existing_nodes and existing.release(run_):
            run_.settle()            # the in-flight existing nodes finish, as in the simulation
        outcome.result = run_.observe()
        if existing_nodes:
            existing.unmanaged_results(cluster, unmanaged, outcome.result)
        expect, na = applicability.split(scenario.expect_for(profile), "expect")
        outcome.not_applicable = applicability.ignored_given(scenario.given) + na
        outcome.mismatches = check(expect, outcome.result, scenario, "expect")
        from harness.runner.expect import Mismatch
        outcome.mismatches += [Mismatch("manifests", "applied", err, "the API server refused it") for err in run_.apply_errors]
        for i, step in enumerate(scenario.steps):
            why = run_.play_step(step, [m.obj for m in scenario.step_manifests[i]])
            if why:
                outcome.skipped_steps.append(f"steps[{i}]: {why}")
                outcome.not_applicable.append(applicability.NotApplicable(f"steps[{i}]", why))
                break               # later steps build on this one
            run_.settle()
            res = run_.observe()
            if existing_nodes:
                existing.unmanaged_results(cluster, unmanaged, res)
            outcome.step_results.append(res)
            step_expect = scenario.expect_for(profile, step.get("expect") or {}, step.get("expectByProfile") or {})
            kept, na = applicability.split(step_expect, f"steps[{i}].expect")
            outcome.not_applicable += na
            outcome.mismatches += check(kept, res, scenario, f"steps[{i}].expect")
        outcome.hosts = sorted(tap.hosts)
        outcome.vm_puts = {k: v.body for k, v in tap.vm_puts().items()}
        outcome.nic_puts = {k: v.body for k, v in tap.nic_puts().items()}
        outcome.vm_bodies = {vm["name"]: vm for vm in fake.vms()}
        outcome.nic_bodies = {n["name"]: n for n in fake.nics()}
    finally:
        try:
            if sandbox is not None:
                outcome.log_tail = sandbox.process.tail(40) if sandbox.process else ""
                outcome.hosts = sorted(set(outcome.hosts) | log_hosts(workdir / "controller.log"))
                sandbox.stop()
            if server is not None:
                server.stop()
            if run_ is not None:
                run_.kubelets.close()
        finally:
            if keep:
                print(f"karpenter-harness: kept real-engine work dir {workdir}", file=__import__("sys").stderr)
            else:
                shutil.rmtree(workdir, ignore_errors=True)
            entry.release()
    strays = sorted(h for h in outcome.hosts if h and h.rsplit(":", 1)[0] not in ("127.0.0.1", "localhost"))
    if strays:      # cannot happen through the sandbox; kept as the run's own proof
        from harness.runner.expect import Mismatch
        outcome.mismatches.append(Mismatch("engine.hosts", "loopback only", strays, "hosts in the fake's log or the controller's"))
    outcome.seconds = time.perf_counter() - t0
    outcome.result.timings["total"] = outcome.seconds
    return outcome


def log_hosts(log: Path) -> set[str]:
    """The hosts the controller called or tried to, from its log: the URL of every ARM call (with
    ENABLE_AZURE_SDK_LOGGING each call is one `ApiRequestLog` line) and every host in a Go network
    error (`dial tcp HOST:PORT`, `lookup HOST`). URLs inside error texts (e.g. a docs link in an ARM
    error message) are not calls and are not counted."""
    import json
    import re
    from urllib.parse import urlsplit
    try:
        text = log.read_text(errors="replace")
    except OSError:
        return set()
    hosts = set()
    for line in text.splitlines():
        if '"ApiRequestLog"' in line:
            try:
                url = json.loads(line).get("url") or ""
            except ValueError:
                continue
            if url:
                hosts.add(urlsplit(url).netloc.lower())
    hosts |= {h.lower() for h in re.findall(r"dial tcp ([\w.\-\[\]:]+?)(?::\s|\\|\"|$)", text)}
    hosts |= {h.lower() for h in re.findall(r"lookup ([\w.\-]+)", text)}
    return hosts


def crd_version(ctl) -> str:
    """The provider module whose CRDs to install: the controller's own version when it is a
    released one, else the pinned default."""
    from harness.backends.controller import DEFAULT_PROVIDER_VERSION
    v = ctl.version
    return v if v.startswith("v") and v.count(".") == 2 and "-" not in v else DEFAULT_PROVIDER_VERSION


def _default_selector(obj: dict) -> None:
    """apps/v1 requires spec.selector; scenarios written for the simulation often leave it out (the
    simulated engine creates the pods itself). Default it to the pod template's labels, which is
    the selector a user would write, and give the template a label when it has none."""
    spec = obj.setdefault("spec", {})
    tmpl_meta = spec.setdefault("template", {}).setdefault("metadata", {})
    labels = tmpl_meta.setdefault("labels", {}) or {"app.kubernetes.io/name": obj["metadata"]["name"]}
    tmpl_meta["labels"] = labels
    spec.setdefault("selector", {"matchLabels": dict(labels)})


class _Run:
    """One live run: applies manifests, drives the kubelet stand-ins, waits for quiet, observes."""

    def __init__(self, scenario, profile: str, cluster, fake, tap, sandbox: Sandbox, cfg: dict):
        from harness.model.profile import profile_with_knobs
        self.scenario, self.cluster, self.fake, self.sandbox = scenario, cluster, fake, sandbox
        self.profile = profile_with_knobs(profile, None)
        self.kubelets = Kubelets(cluster, fake, tap, self.profile, cfg)
        self.observer = Observer(scenario, profile, cluster, fake, self.kubelets, sandbox.workdir / "controller.log")
        self.steady = False
        self.apply_errors: list[str] = []
        self.runaway_threshold = int((scenario.given.get("loop") or {}).get("runawayThreshold", 3))

    def apply(self, manifests: list[dict]) -> None:
        import copy
        for obj in sorted(manifests, key=lambda o: APPLY_ORDER.get(o.get("kind"), 9)):
            obj = copy.deepcopy(obj)
            if obj.get("kind") == "Pod":
                obj.setdefault("metadata", {}).setdefault("namespace", "default")
            if obj.get("kind") in ("Deployment", "DaemonSet"):
                _default_selector(obj)
            try:
                stored = existing.apply_object(self.cluster, obj)      # an existing object is updated
                self.observer.applied(obj, None, stored)
            except APIRejected as e:
                self.observer.applied(obj, e)
                # a NodePool's or AKSNodeClass's refusal is an expectation; others are input errors
                if obj.get("kind") not in ("NodePool", "AKSNodeClass"):
                    self.apply_errors.append(f"{obj.get('kind')} {obj['metadata'].get('name')}: {e.message}")

    def _alive(self) -> None:
        p = self.sandbox.process
        if p is not None and not p.alive():
            raise RuntimeError(f"the Karpenter controller exited (code {p.proc.returncode}); last log lines:\n{p.tail(30)}")

    def settle(self) -> None:
        """Drive the stand-ins until nothing changed for SETTLE_SECONDS (or runaway provisioning is
        evident, or QUIESCE_TIMEOUT passed: then the run is not steady)."""
        start = last_change = time.monotonic()
        last = None
        while True:
            self._alive()
            self.kubelets.step()
            existing.finish_terminating_pods(self.cluster)
            self.observer.poll()
            fp = self.observer.fingerprint()
            now = time.monotonic()
            if fp != last:
                last, last_change = fp, now
            if self.observer.runaway(self.runaway_threshold):
                self.steady = False
                return
            if now - last_change >= SETTLE_SECONDS:
                self.steady = True
                return
            if now - start > QUIESCE_TIMEOUT:
                self.steady = False
                return
            time.sleep(POLL_SECONDS)

    def observe(self):
        return self.observer.result(steady=self.steady, threshold=self.runaway_threshold)

    def play_step(self, step: dict, manifests: list[dict]) -> str | None:
        """Play a step live; returns why it cannot be played on the real engine."""
        if "advance" in step:
            return (f"advance: {step['advance']} moves simulated time; the controller's timers are real "
                    f"(cache TTLs, consolidation, GC run on the wall clock)")
        if step.get("evict"):
            return "evict: the controller notices a vanished VM only on its garbage-collection period (minutes)"
        if step.get("cluster"):
            return "cluster: operator settings are fixed for the controller's lifetime"
        for f in step.get("faults") or []:
            self.fake.add_fault(f)
        if manifests:
            self.apply(manifests)
        for d in step.get("delete") or []:
            self.cluster.delete(d["kind"], d["name"], d.get("namespace"))
        return None
