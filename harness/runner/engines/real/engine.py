"""`--harness-engine real` (pytest) / `--engine real` (harness run): one scenario under one profile with
the real Karpenter-on-Azure controller.

Per run: the scenario's fakeazure (the simulated engine's own set-up), served on loopback; the
provider's CRDs and a service-account token on the `local` cluster (real kube-apiserver,
kube-scheduler, kube-controller-manager); the controller in its sandbox (harness/backends/sandbox.py)
configured only with loopback endpoints - the previous run's when it serves this one (keeper.py); the
manifests applied; then the harness plays kubelet and cloud-node-controller from the bootstrap data on
each VM (harness/runner/engines/real/cluster/kubelet.py) until the cluster is quiet; the same `expect` blocks are
checked against what the API server and the fake hold. The kubelet stand-ins are released on pass, fail
and Ctrl-C, the controller and the fake's server kept stopped for the next run or released with them
(try/finally; at exit by LIFETIME, the procs reaper and PR_SET_PDEATHSIG behind them).
"""
from __future__ import annotations

import copy
import dataclasses
import os
import re
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

from harness.backends.base import APIRejected
from harness.backends.kinds import WORKLOAD_KINDS, apply_order
from harness.backends.lifetime import sweep_stale_workdirs, tmp_root
from harness.backends.sandbox import SandboxError
from harness.backends.watchcache import CachedReads
from harness.loop.assumed import TIMING_KEYS, notice
from harness.loop.clock import EPOCH, start_of
from harness.loop.kube.kubectl import not_found
from harness.model.kube.kubetime import rfc3339
from harness.model.kube.crashloop import CrashLoop, Exit
from harness.model.values.durations import scenario_duration
from harness.model.upstream.knobrelease import knob_release
from harness.model.azure.params import ClusterParams
from harness.model.upstream.releases import modeled
from harness.runner.engines.azureside import add_machines_pool, cluster_settings, fake_azure
from harness.runner.engines.base import Outcome
from harness.runner.engines.real.outcome import applicability, podevents, windows
from harness.runner.engines.real.cluster import csi, existing, history, jobruns, verbs
from harness.runner.engines.real.controller import keeper, scale, settings
from harness.runner.engines.real.cluster.drain import Drain
from harness.runner.engines.real.cluster.kubelet import Kubelets
from harness.runner.engines.real.outcome.observe import Observer, nodepool_decided
from harness.runner.engines.real.cluster.runclock import CLOCK, FakeAzureClock
from harness.runner.engines.real.outcome.settle import (DISRUPTION_FALLBACK_SECONDS, FAST_DISRUPTION_FALLBACK_SECONDS,
                                                IDLE_POLL_SECONDS, PASS_LAG_SECONDS, PASS_SEEN_SECONDS, Nominations,
                                                Settler, drain_waits, nomination_ends, pass_counts,
                                                provisioning_rounds)
from harness.scenario.expect.match import Mismatch
from harness.scenario.steps import StepFailed, actions, evict_vm, eviction_target, play, restrict, workload_of

DRIFT_SOURCES = ("NodePool", "AKSNodeClass")   # an update may drift NodeClaims (their hash annotations)

QUIESCE_TIMEOUT = 150.0        # a run that is still changing after this is reported not steady ...
# ... plus this much per node the scenario starts with: core runs until nothing changes, and a customer's
# cluster may take a disruption command per few nodes (issue 65's 100-node dump: 6.7 minutes of commands within
# the NodePool's 10% budget on a loaded machine), as the simulation's bound grows by a pass per seeded node
# (harness/loop/simulation.py iteration_bound)
QUIESCE_SECONDS_PER_NODE = 10.0
POLL_SECONDS = 0.1
# two NodeClaims launched further apart than this came from two provisioning rounds (core batches pending pods
# for 1 s idle, at most 10 s: sigs.k8s.io/karpenter v1.14.0 pkg/operator/options BATCH_IDLE_DURATION, BATCH_MAX_DURATION)
ROUND_APART_SECONDS = 10.0
PASS_ASK_SECONDS = 2.0        # a pass asked for and not seen by then is asked for again
PASS_WAIT_SECONDS = 10.0      # at most this long for the pass asked for before a jump of the clock
NODEPOOL_WAIT = 30.0           # at most this long for applied NodePools to become Ready before workloads
# at most this long for core to mark the seeded NodeClaims Consolidatable before their budgets are restored
# (RealRun._restore_disruption): ~1.5 min for 1,000 at load 8-15
CONSOLIDATABLE_WAIT = 300.0
LRO_POLL_MS = 50               # the controller's operation polls: one per operation, 50 ms after it starts
# the cluster settings a `cluster` step cannot change on the real engine, and why; every other one is the
# controller's environment (settings.controller_env) and restarts it (RealRun.step_cluster)
UNSETTABLE = {
    "useSIG": "the SIG image path needs a SIG access-token server (provider v1.14.0 options_validation.go "
              "validateUseSIG) that the harness does not fake",
}

# what a `cluster: {kubernetesVersion}` step restarts at the new minor's binaries, in this order (_upgrade)
UPGRADED = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
# `advance` steps up to this long are played on the wall clock (HARNESS_REAL_MAX_ADVANCE, seconds); a longer
# one moves the controller's clock (runclock.py), or cannot be played by a build without the `clock` edits: the
# controller's timers (consolidateAfter, expireAfter, the 10 s disruption poll, the 15 s validation)
# are its own and real
MAX_ADVANCE_SECONDS = 120.0
# a fast build's clock (runclock.py): the controller reads the clock file every 10 ms and shows what it read
# on its probe; the harness annotates each NodeClaim and Node with the offset so core looks at them again
CLOCK_WAIT = 2.0
# a clock that reads within this of the instant a dump's time asks for is left alone (clock_at). The API
# server stamps whole seconds and the observer orders NodeClaims of one second by their launch (observe.py), so
# two entries of one createdAt must be created within its second: each is created right after the move
CLOCK_SLACK = 0.2
CLOCK_METRIC = re.compile(r"^karpenter_harness_clock_offset_seconds\s+(\S+)\s*$", re.M)
CLOCK_ANNOTATION = "harness.karpenter.azure.com/clock-offset"
# after an `evict` step: core's NodeClaim garbage collector runs every 2 minutes and skips a NodeClaim
# whose Node is still Ready (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/garbagecollection/
# controller.go), which kube-controller-manager's node lifecycle controller changes once the dead kubelet's
# Lease is older than its --node-monitor-grace-period
EVICTED_TIMEOUT = 300.0
# a retryable refusal holds the run until its retry is due (fakeside.WireTap.retry_until) and this much longer: the retried request
# and what the controller does with its answer
RETRY_SLACK = 1.0
# what the polls read, from a list-and-watch mirror rather than lists (harness/backends/watchcache.py)
WATCHED = ("Pod", "NodeClaim", "Node", "NodePool", "Deployment", "StatefulSet", "Event", "PersistentVolume",
           "PersistentVolumeClaim")
JOB_KINDS = ("Job", "CronJob")
# what the API server's admission reads when a workload's pods are created (RealRun._await_admission)
ADMISSION_KINDS = ("PriorityClass", "ResourceQuota")
ADMISSION_SYNC = 1.0


# kube-controller-manager's controllers on the real engine's cluster: its defaults without taint eviction
# (k8s.io/kubernetes v1.36.3 cmd/kube-controller-manager/names/controller_names.go TaintEvictionController).
# The stand-in kubelet's Node is Ready when it registers (kubelet.py), so kube-scheduler binds a pod the
# moment Karpenter lifts the NoExecute karpenter.sh/unregistered taint; a taint eviction controller whose
# node informer has not seen that update yet deletes the pod at once (pkg/controller/tainteviction/
# taint_eviction.go processPodOnNode: no toleration -> AddWork(now, now)). A real kubelet registers NotReady,
# so on a cluster kube-scheduler waits for Ready and the window is closed; here it would be a flake. No
# scenario relies on a NoExecute taint evicting a pod (their tolerations of node.kubernetes.io/unreachable
# wait 300 s, longer than any run).
KCM_CONTROLLERS = ("*", "-taint-eviction-controller")

# "0": a scenario naming a Kubernetes version whose control plane is not built skips instead of building it
# (scripts/test.sh: CI builds no other version; the nightly `k8s-versions` job builds each and runs them)
BUILD_VERSIONS_ENV = "HARNESS_BUILD_K8S_VERSIONS"
# Kubernetes version -> why its build failed in this process (a later scenario of that version skips with it)
FAILED_BUILDS: dict[str, str] = {}


def _builds_versions() -> bool:
    return os.environ.get(BUILD_VERSIONS_ENV, "1").strip().lower() not in ("0", "false", "no", "off")


# the reasons unplayable_input gives, by their start: what `conformance stale` may judge again without a build
UNPLAYABLE_INPUTS = ("given.cluster.useSIG:", "given.existingNodes[", "given.loop.binding:")


def unplayable_input(scenario) -> str | None:
    """What in the scenario's own input the real engine cannot play on any build or cluster, and why (one of
    UNPLAYABLE_INPUTS), or None."""
    if (scenario.given.get("cluster") or {}).get("useSIG"):
        return f"given.cluster.useSIG: {UNSETTABLE['useSIG']}"
    down = [i for i, e in enumerate(scenario.given.get("existingNodes") or [])
            if isinstance(e, dict) and e.get("nodePool") and e.get("ready", True) is not True
            and (e.get("initialized") is False or e.get("registered") is False)]
    if down:
        # the stand-in kubelets (runner/engines/real/cluster/kubelet.py) hold a node in flight NotReady until
        # Karpenter launches, then release it Ready; one seeded not Ready after its initialization is held
        # for good (existing.py not_ready)
        return (f"given.existingNodes[{down[0]}].ready: a Karpenter node seeded not Ready and still in flight "
                "(not registered or not initialized) is not played by the real engine's kubelet stand-ins (the "
                "simulated engine seeds it)")
    if (scenario.given.get("loop") or {}).get("binding") == "nominated":
        return ("given.loop.binding: nominated asks where Karpenter planned each pod, bound there as core's tests "
                "bind (sigs.k8s.io/karpenter v1.14.0 pkg/test/expectations/expectations.go ExpectProvisioned); "
                "the real kube-scheduler binds by its own scores, so a real run answers another question")
    return None


class RealEngine:
    """The unmodified controller binary (built by `python -m harness.backends build --controller`, or
    `controller`) against fakeazure and a real API server."""
    name = "real"
    @property
    def cluster_options(self) -> dict:
        """The cluster the controller needs: kube-scheduler binds pods (with the timing's settings,
        controller.scheduler_settings), kube-controller-manager runs Deployments/StatefulSets/DaemonSets and the node
        lifecycle controller (not-ready taint), all but its taint eviction (KCM_CONTROLLERS), with the timing's
        flags (controller.kcm_settings) and its build when the timing has one (controller.timed_kcm: the
        pinned binary until `python -m harness.backends build` has built it), the timing's kube-apiserver
        likewise (controller.timed_apiserver: its stamps on the clock the harness advances), no harness CRDs."""
        from harness.backends.binaries.controller import kcm_settings, scheduler_settings, timed_apiserver, timed_kcm
        timing = self.controller.timing if self.controller else None
        kcm, apiserver = timed_kcm(timing), timed_apiserver(timing)
        return {"scheduler": True, "controller_manager": True, "profile": None, "kcm_controllers": KCM_CONTROLLERS,
                "scheduler_config": scheduler_settings(timing), "kcm_settings": kcm_settings(timing),
                "kcm_binary": str(kcm) if kcm else None, "apiserver_binary": str(apiserver) if apiserver else None}

    def cluster_options_for(self, scenario, profile: str | None = None, backend: str = "local") -> dict:
        """The cluster a run of `scenario` needs: cluster_options, on the control plane of the Kubernetes
        version its given.cluster.kubernetesVersion names when that is another minor than the session's
        (version_plan). A cache keyed by these options (registry.shared_cluster) starts it on first use and
        keeps it for the session's other runs of that version. Its binaries and its kube-controller-manager
        of the timing are built here when missing (the build lock and cache of binaries.ensure_binaries,
        which says first what the build costs). A scenario skipped for another reason gets the default."""
        if self._skip_before_cluster(scenario, profile):
            return self.cluster_options
        release, _why = self.version_plan(scenario, backend)
        if release is None:
            return self._at_scale(scenario, self.cluster_options)
        from harness.backends.binaries import controlplane as binaries
        from harness.backends.binaries.controller import build_timed_kcm, timed_apiserver, timed_kcm
        from harness.backends.registry import get_backend
        k8s = release.kubernetes
        options = {**self.cluster_options, "k8s_version": k8s}
        timing = self.controller.timing if self.controller else None
        try:
            binaries.ensure_binaries(build=True, need=get_backend(backend, **options).needed(), k8s=k8s)
            kcm = build_timed_kcm(timing, k8s=k8s) if _builds_versions() else timed_kcm(timing, k8s)
        except binaries.BinariesError as e:
            FAILED_BUILDS[k8s] = str(e).splitlines()[0]
            raise
        apiserver = timed_apiserver(timing, k8s)
        return self._at_scale(scenario, {**options, "kcm_binary": str(kcm) if kcm else None,
                                         "apiserver_binary": str(apiserver) if apiserver else None})

    @staticmethod
    def _at_scale(scenario, options: dict) -> dict:
        """`options` with kube-controller-manager's flags for a scenario that seeds a dump of hundreds of
        nodes (scale.py: its own node-monitor grace, not the timing's); another cluster of the cache."""
        return {**options, "kcm_settings": scale.kcm_settings(scenario, options.get("kcm_settings", ()))}

    def version_plan(self, scenario, backend: str = "local"):
        """(the Kubernetes release whose control plane a run of `scenario` needs, None) when its
        given.cluster.kubernetesVersion names another minor than the session's and that release can be
        had (built, or buildable here); (None, why not) when it cannot; (None, None) when the session's
        control plane serves it (harness/data/kubernetes-versions.yaml: the release and its etcd per minor)."""
        from harness.backends.binaries import controlplane as binaries
        wanted = (scenario.given.get("cluster") or {}).get("kubernetesVersion")
        if not wanted or binaries.minor_of(str(wanted)) == binaries.minor_of(binaries.session_version()):
            return None, None
        release = binaries.release_for(str(wanted))
        if release is None:
            return None, (f"no control plane for Kubernetes {binaries.minor_of(str(wanted))} in "
                          f"harness/data/kubernetes-versions.yaml (minors {', '.join(binaries.kubernetes_releases())})")
        if backend != "local":
            return None, f"another Kubernetes version's control plane is started on the local backend only, not {backend}"
        k8s = release.kubernetes
        if k8s in FAILED_BUILDS:
            return None, f"building Kubernetes {k8s} failed earlier in this process: {FAILED_BUILDS[k8s]}"
        from harness.backends.registry import get_backend
        need = get_backend(backend, **self.cluster_options, k8s_version=k8s).needed()
        if not binaries.find_binaries(validate=False, k8s=k8s).missing(need):
            return release, None
        build = f"python -m harness.backends build --k8s-version {k8s}, {binaries.BUILD_COST}"
        if not _builds_versions():
            return None, (f"Kubernetes {k8s}'s control plane is not built and {BUILD_VERSIONS_ENV}=0 "
                          f"(build it with: {build})")
        if binaries.go_binary() is None:
            return None, f"Kubernetes {k8s}'s control plane is not built and there is no Go toolchain ({build})"
        return release, None

    def __init__(self, controller=None, judge_release: bool = True):
        """`judge_release`: skip a profile of another release than the controller's (False for
        `harness bisect`, which runs one scenario against every commit on purpose)."""
        self.controller = controller
        self.judge_release = judge_release
        from harness.runner.engines.real.controller.releasectl import ReleaseControllers
        self.releases = ReleaseControllers()     # a release profile's own controller (releasectl.py)

    def available(self, backend: str = "local") -> tuple[bool, str]:
        """(True, "") when the controller, the control plane and the sandbox are all there; else why not."""
        from harness.backends.binaries import controlplane as binaries
        from harness.backends.binaries.controller import ensure_controller, provider_git
        from harness.backends.registry import get_backend
        from harness.backends.sandbox import sandbox_available
        try:
            if provider_git() is None:     # with the history, each release profile's controller is built on use
                ensure_controller()
        except binaries.BinariesError as e:
            return False, str(e)
        ok, why = get_backend(backend, **self.cluster_options).available()
        if not ok:
            return False, f"backend {backend!r} unavailable: {why}"
        return sandbox_available()

    def skip_reason(self, scenario, cluster, profile: str | None = None) -> str | None:
        """Scenarios the real engine cannot run faithfully, and why."""
        why = self._skip_before_cluster(scenario, profile)
        if why:
            return why
        wanted = (scenario.given.get("cluster") or {}).get("kubernetesVersion")
        have = cluster.server_version
        from harness.backends.binaries.controlplane import minor_of
        if wanted and have and minor_of(str(wanted)) != minor_of(have):
            _release, why = self.version_plan(scenario, cluster.backend)
            return (f"given.cluster.kubernetesVersion {wanted}: the controller reads the version from the API "
                    f"server, which is {have}: " + (why or "the run was given the session's cluster, not that "
                                                          "version's (RealEngine.cluster_options_for)"))
        dated = history.names(scenario.given)
        if dated and getattr(cluster, "clock_file", None) is None:
            from harness.backends.binaries.controller import unapplied_timing
            unapplied = unapplied_timing("kube-apiserver", self.controller.timing if self.controller else None,
                                         have or None) if have and wanted else None
            return (f"a dump's history ({', '.join(dated)}) is replayed on the simulated clock; this cluster's "
                    f"kube-apiserver ({cluster.backend}, {have or 'its version'}) stamps creation and deletion "
                    "times on the wall clock " + (
                        f"(the fast timing's edits do not apply to that release: {unapplied})" if unapplied else
                        "(the fast timing's kube-apiserver of that version reads the run's clock on the local "
                        "backend: python -m harness.backends build" + (f" --k8s-version {have}" if have and wanted else "")
                        + ")"))
        return None

    def _skip_before_cluster(self, scenario, profile: str | None) -> str | None:
        """Why the real engine cannot run `scenario` under `profile` on any cluster, or None. The release's
        controller is judged last: finding it may build it (~15 min), which a scenario skipped for another
        reason never needs."""
        from harness.model.upstream.provisionmodes import refusal
        if (refused := refusal(scenario, profile)) is not None:
            return refused
        knobs = scenario.given.get("knobs")
        replay = knob_release(profile, knobs, scenario.api_versions) if knobs and profile else None
        if knobs and not self.judge_release:
            return ("given.knobs edits the profile's facts by hand; a bisect runs each commit's controller "
                    "whatever the profile")
        if replay is not None and replay.release is None:       # no release's own facts are the knobs'
            return replay.reason
        why = self._scenario_skip(scenario, profile)
        if why:
            return why
        if replay is not None:          # the release whose own facts the knobs set answers
            why = self._release_mismatch(replay.release)
            return f"given.knobs replays provider {replay.release}: {why}" if why else None
        return self._release_mismatch(profile) if profile and self.judge_release else None

    def _scenario_skip(self, scenario, profile: str | None = None) -> str | None:
        """What in the scenario itself no real controller can answer faithfully, and why; the clock is judged on
        the controller a run under `profile` runs (a release's own may keep the wall clock: timing upstream)."""
        if why := unplayable_input(scenario):
            return why
        if _scheduled_budgets(scenario) and not self._moves_clock(profile):
            return ("a disruption budget with a schedule is judged on the simulated clock, which starts at "
                    "2026-01-01 00:00 UTC; this controller's clock is the wall clock (core v1.14.0 "
                    "pkg/apis/v1/nodepool.go Budget.IsActive; a fast build with its kube-apiserver moves it: "
                    "python -m harness.backends build --controller)")
        timed = sorted({m.obj["metadata"].get("name", "") for m in _job_manifests(scenario)})
        if timed and not self._runs_jobs_on_clock(profile):
            return (f"Job/CronJob {', '.join(timed)}: the simulation runs their pods for their "
                    "harness.karpenter.azure.com/run-duration and CronJob schedules on its clock "
                    "(harness/loop/kube/jobs.py); this controller's cluster runs them on the wall clock "
                    "(a fast build with the timing's kube-apiserver and kube-controller-manager moves it: "
                    "python -m harness.backends build)")
        dated = history.names(scenario.given)
        if dated and not self._moves_clock(profile):
            return ("a dump's history (" + ", ".join(dated) + ") is replayed on the simulated clock; this "
                    "controller's clock is the wall clock and it stamps its own creation times and hashes (a fast "
                    "build with its kube-apiserver moves it: python -m harness.backends build --controller)")
        return None

    def _clock_controller(self, profile: str | None):
        """The controller whose clock a run under `profile` has (controller_for, without building the default
        one's errors into the verdict): None when it is not built or cannot run here."""
        from harness.backends.binaries.controller import ensure_controller
        if self.controller is not None:
            return self.controller
        choice = self.releases.choice(profile) if profile else None
        if choice is not None and choice.ref and not choice.skip:
            return self.releases.controller(choice.ref)[0]
        try:
            return ensure_controller()
        except Exception:       # not built: the run says so
            return None

    def _moves_clock(self, profile: str | None = None) -> bool:
        """Whether runs under `profile` can move the controller's clock (runclock.py): a build with the `clock`
        edits and the timing's kube-apiserver built (controller-timing.yaml). A release controller that cannot
        run here counts as moving it: _release_mismatch then says why it cannot run."""
        from harness.backends.binaries.controller import timed_apiserver
        ctl = self._clock_controller(profile)
        if ctl is None:
            choice = self.releases.choice(profile) if profile and self.controller is None else None
            return bool(choice is not None and choice.ref and not choice.skip)
        return _has_clock(ctl.timing) and timed_apiserver(ctl.timing) is not None

    def _runs_jobs_on_clock(self, profile: str | None = None) -> bool:
        """Whether the Job and CronJob controllers run on the clock runs move: _moves_clock, and the timing's
        kube-controller-manager built (controller-timing.yaml kube-controller-manager-source, clock_kcm.go)."""
        from harness.backends.binaries.controller import timed_kcm
        if not self._moves_clock(profile):
            return False
        ctl = self._clock_controller(profile)
        return ctl is None or timed_kcm(ctl.timing) is not None

    def _release_mismatch(self, profile: str) -> str | None:
        """A profile of another provider release than the controller's (harness/model/upstream/releases.py):
        its expectations describe a controller this run does not have."""
        from harness.backends.binaries.controller import ensure_controller, released
        if self.controller is None:
            choice = self.releases.choice(profile)
            if choice.skip:
                return choice.skip
            if choice.ref:
                return self.releases.controller(choice.ref)[1]
        ctl = self.controller or ensure_controller()
        m = modeled(profile)
        if m.get("policy"):
            return (f"profile {profile} is a label policy ({m['policy']}), not a provider release: the real engine "
                    f"answers for the controller it runs ({ctl.version})")
        if released(ctl.version) and m.get("covers") and ctl.version not in m["covers"]:
            return (f"profile {profile} models provider {', '.join(m['covers'])}; the controller is {ctl.version} "
                    f"(run that release's controller: --provider-git DIR --provider-ref {m['release']})")
        return None

    def controller_for(self, profile: str):
        """The controller a run under `profile` runs: the one given, a release profile's own
        (releasectl.py), else the default one."""
        from harness.backends.binaries.controlplane import BinariesError
        from harness.backends.binaries.controller import ensure_controller
        if self.controller is not None:
            return self.controller
        choice = self.releases.choice(profile)
        if choice.ref:
            ctl, why = self.releases.controller(choice.ref)
            if ctl is None:
                raise BinariesError(why)
            return ctl
        return ensure_controller()

    def start(self, scenario, profile: str, cluster, outcome: Outcome) -> RealRun:
        release = modeled(profile)
        answering = profile
        if scenario.given.get("knobs"):         # skip_reason found the release replaying them
            replay = knob_release(profile, scenario.given["knobs"], scenario.api_versions)
            answering = replay.release or profile
            release = {**modeled(answering), "knobs": replay.to_json()}
            outcome.notices.append(replay.detail)
        ctl = self.controller_for(answering)
        outcome.version = ctl.version if ctl.timing == "upstream" else f"{ctl.version}, timing {ctl.timing}"
        outcome.not_applicable = applicability.ignored_given(scenario.given)
        if ctl.substitutes:         # in the result and --json, not only the process's stderr
            from harness.backends.binaries.substitutes import notice
            outcome.notices.append(f"provider {ctl.version}: {notice(list(ctl.substitutes))}")
        outcome.result.release = release
        grace = scale.grace_notice(scenario, cluster, fast=ctl.timing != "upstream")
        if grace:           # in the result and --json, and said as the run starts
            outcome.notices.append(grace)
            print(f"NOTICE: {grace}", file=sys.stderr, flush=True)
        return RealRun(scenario, profile, cluster, ctl, answering, release)


# What an earlier scenario on the same cluster left that its events may still name: kube-controller-manager
# and kube-scheduler record events asynchronously (client-go tools/record broadcaster), so an event about
# the previous scenario's Node, Deployment or pod can be written after the reset cleared the events.
EVENT_SUBJECTS = ("Pod", "Node", "NodeClaim", "NodePool", "AKSNodeClass", "Deployment", "StatefulSet", "DaemonSet",
                  "PersistentVolumeClaim", "PersistentVolume")


# ... and the ones earlier runs of this process left, whose events an aggregating recorder can write
# again later (client-go's event correlator re-creates an event the reset deleted): uids are never
# reused, so an event about any of them is never this run's
DEPARTED: set[str] = set()


def previous_uids(cluster) -> frozenset[str]:
    """The uids of the objects on the cluster before this run's reset (the previous scenario's), with
    the ReplicaSets kube-controller-manager made for its Deployments, and those of every earlier run."""
    objs = [o for kind in EVENT_SUBJECTS for o in cluster.list(kind)]
    objs += cluster.admin.request("GET", "/apis/apps/v1/replicasets").get("items") or []
    DEPARTED.update(o["metadata"]["uid"] for o in objs if o["metadata"].get("uid"))
    return frozenset(DEPARTED)


class RealRun:
    """One live run: the work dir, the fake's server, the controller in its sandbox and the kubelet
    stand-ins; applies manifests, waits for quiet, observes."""

    def __init__(self, scenario, profile: str, cluster, ctl, answering: str | None = None,
                 release: dict | None = None):
        """`profile`: the scenario's (its expectations); `answering`: the release profile whose controller
        runs (the one replaying given.knobs, else `profile`); `release`: what each result says answered."""
        from harness.model.upstream.profile import load_profile
        self.scenario, self.cluster, self.ctl = scenario, cluster, ctl
        self.release = release if release is not None else modeled(profile)
        self.timings: dict[str, float] = {}       # phase -> seconds (into each result's timings)
        t0 = time.monotonic()
        sweep_stale_workdirs("harness-real-")
        self.keep = bool(os.environ.get("HARNESS_KEEP_REAL_WORKDIR"))   # a copy of the controller's log
        self.kept = self.sandbox = self.kubelets = self.cache = self.reads = None
        self.steady = False
        self.finished = False                      # finish() ran: every step was played and checked
        self.settle_reason = ""
        self.seeded = False                        # given.existingNodes were seeded (seed())
        self.held_disruption: dict[str, dict] = {}  # NodePools' disruption held by seed() until the workloads are applied
        self.redrift: list[str] = []               # why drift is due: a NodePool/AKSNodeClass updated, a restart
        self.unmanaged: list[str] = []             # ... the ones Karpenter does not manage
        self.apply_errors: list[str] = []
        self.reported_errors = 0
        self.runaway_threshold = int((scenario.given.get("loop") or {}).get("runawayThreshold", 3))
        # the NodeClaims an earlier settle saw, and whether a settle met a launch in flight (assumed.notice)
        self.claims_seen: set[str] = set()
        self.boot_overlapped = False
        self.evicted: dict[str, str] = {}          # NodeClaim of an evicted VM -> its VM, until it is gone
        # core's pod-event bookkeeping behind (podevents.py): NodeClaim, or pod, -> when a poll first saw it so
        self.behind_since: dict[str, float] = {}
        self.unstamped_since: dict[tuple[str, str], float] = {}
        self.ever_evicted = False
        self.restricted = False                    # a `restrict` step changed the fake's catalog
        self.upgraded: str | None = None           # a `cluster` step upgraded the control plane (_upgrade)
        self.drain = Drain()                       # `kubectl drain` steps' evictions still to make (drain.py)
        # the controller's container as the kubelet restarts it (harness/model/kube/crashloop.py), and its restarts
        self.crashloop = CrashLoop()
        self.restarts: list[dict] = []
        # the scenario's instant on the run's clock (epoch seconds): where the last step's advance ended or the
        # last settle saw the scenario's objects change (step_advance, _settle_once); None before the first settle
        self.instant: float | None = None
        # a pure `advance` step's watch of the cluster up to its instant (the fingerprint, pending pods, reports
        # and when they last changed, monotonic): its settle starts from it (_settle_once)
        self.carry: tuple | None = None
        self.pure_advance = False
        self.nominations = Nominations()           # when candidates' nominations end (settle.py)
        self.in_flight: tuple[str, ...] = ()       # launches the last settle stopped at (settle(until="launch"))
        self.window: tuple[float, float, windows.Window] | None = None  # (monotonic, run clock) instant and the next window
        # the run's clock (runclock.py): movable when the controller's build and the API server read its file
        CLOCK.bind(getattr(cluster, "clock_file", None))
        self.clocked = CLOCK.file is not None and _has_clock(ctl.timing)
        self.placed = self.clocked and places_clock(scenario)     # the clock starts at the scenario's start
        self.clock_moved = False
        self.unjudged: str | None = None           # the last settle was stopped at that window unsettled (Run.unjudged)
        # claims in play: the CSI provisioner stand-in serves them (csi.py)
        self.volume_claims = any(csi.makes_claims(o) for o in scenario_objects(scenario))
        try:
            departed = previous_uids(cluster)
            self.fake = fake = fake_azure(scenario, FakeAzureClock(EPOCH))
            fake.set_lro("immediate", retry_after_ms=LRO_POLL_MS)
            vm_delete = (scenario.given.get("loop") or {}).get("vmDelete")
            if vm_delete is not None and scenario_duration(vm_delete) > 0:
                # Azure deleting a VM (given.loop.vmDelete): the provider's Delete polls the operation until then
                fake.set_operation_seconds("vm.delete", scenario_duration(vm_delete))
            self.cfg = cfg = cluster_settings(scenario)
            # the agent pool the AKS Machine API modes create machines in, in the controller's cluster resource
            # group (ARM_RESOURCE_GROUP, real-engine.yaml) and cluster (CLUSTER_NAME)
            add_machines_pool(fake, cfg, load_profile(answering or profile), cluster)
            if cfg.get("nodeImageVersion"):     # the node image the cluster starts with: the gallery's newest
                fake.publish_node_image(str(cfg["nodeImageVersion"]))
            self.provisioners = ClusterParams.from_dict(cfg).storage_provisioners
            self._controller(cfg)
            self.sandbox = self.kept.sandbox
            # after the reset: this run's objects only; Jobs and CronJobs when it has them (jobruns.py)
            self.jobs = bool(_job_manifests(scenario))
            self.cache = cluster.watch(WATCHED + (JOB_KINDS if self.jobs else ()))
            self.reads = CachedReads(cluster, self.cache)
            self.profile = load_profile(answering or profile)     # the kubelet stand-ins' label rules
            cluster.conversion_profile = self.profile       # judges what the harness converts (realcluster)
            loop = scenario.given.get("loop") or {}
            self.kubelets = Kubelets(cluster, fake, self.tap, self.profile, cfg,
                                     boot=scenario_duration(loop["nodeBoot"]) if "nodeBoot" in loop else 0.0,
                                     renew=scale.renew_seconds(scenario, cluster))
            self.kubelets.reads = self.reads
            self.observer = Observer(scenario, profile, self.reads, fake, self.kubelets, self.kept.log)
            self.observer.departed = departed
            if self.placed:
                # a run that moves the clock starts it where the simulated clock starts (given.startTime, else
                # EPOCH), before anything is created: a budget's schedule is judged at that instant, a dump's
                # times are before it, an expectation may name a time (a message's date), and a step's window is
                # counted from it (step_advance)
                placed = fake.clock.time()
                self.clock_at(start_of(scenario.given))
                fake.clock.rebase(placed)   # placed, not advanced: the fake's clock runs on from its start
            # the run's clock at its start: the scenario's first instant, and a crash loop's times count from it
            self.run_start = start_of(scenario.given) if self.placed else CLOCK.now()
            self.timings["start"] = time.monotonic() - t0
        except BaseException:
            self._release(None)
            raise

    def _controller(self, cfg: dict) -> None:
        """The controller for this run: the one kept from the previous run when it serves this one
        (keeper.py; stopped while the cluster is reset, then continued), else a new one."""
        key = keeper.controller_key(self.ctl, self.cluster, self.scenario, cfg, self.fake)
        kept = keeper.KEEPER.take(None if keeper.needs_its_own(self.scenario) else key)
        try:
            self.cluster.reset()
        except BaseException:
            if kept is not None:
                kept.close()
            raise
        if kept is not None:
            self.kept, self.tap = kept, kept.resume(self.fake)
            why = kept.await_empty()
            if why is None:
                return
            self.kept = None
            kept.close()
            print(f"karpenter-harness: the kept controller was replaced: {why}", file=sys.stderr)
            self.cluster.reset()
        self.kept, self.tap = keeper.start(key, self.ctl, self.cluster, self.scenario, cfg, self.fake)

    def apply(self, manifests: list[dict]) -> None:
        """Apply as `kubectl apply` would. Workloads (pods, Deployments) wait until the NodePools
        applied with them are Ready, or certainly not: the simulation's NodePools are ready at its
        first pass, while a real provisioning round that finds none ready ("ignoring nodepool, not
        ready", core v1.14.0 pkg/controllers/provisioning/provisioner.go) waits for the pod
        controller's 10 s requeue (pkg/controllers/provisioning/controller.go) - a delay no user sees
        once their NodePool is up."""
        # a dumped Job's and CronJob's status is written once they exist (jobruns.py carry_on)
        workloads, carried = jobruns.as_created(self.cluster, [m for m in manifests if m.get("kind") in WORKLOAD_KINDS],
                                                self.scenario.given)
        rest = [m for m in manifests if m.get("kind") not in WORKLOAD_KINDS]
        pools = [name for obj in sorted(rest, key=lambda o: apply_order(o.get("kind")))
                 if (name := self._apply_one(obj)) is not None]
        if pools and workloads:
            self._await_nodepools(pools)
        if workloads:
            self._await_admission([m for m in rest if m.get("kind") in ADMISSION_KINDS])
        # a dumped Job's startTime is the Job controller's stamp, on its clock: such Jobs first, each with the
        # clock at its start (jobruns.started_at), then the clock back and the rest
        now, dated = CLOCK.now(), []
        for obj in workloads:
            if self.clocked and (started := jobruns.started_at(obj, carried)) is not None:
                self.clock_at(started, touch=False)
                self._apply_one(obj)
                jobruns.await_start(self.cluster, obj)
                dated.append(obj)
        if dated:
            self.clock_at(now)
        for obj in sorted(workloads, key=lambda o: apply_order(o.get("kind"))):
            if not any(obj is d for d in dated):
                self._apply_one(obj)
        jobruns.carry_on(self.cluster, carried)
        # a manifest claim standing for a pod's ephemeral one becomes that pod's, now that it exists
        csi.own_ephemeral_claims(self.cluster, csi.ephemeral_claims(workloads), rest)
        self._restore_disruption()

    def _restore_disruption(self) -> None:
        """The NodePools' disruption budgets seed() held, back once the workloads that follow the existing nodes
        are applied (existing.seed), or at the settle at the latest, and once core has marked Consolidatable
        every seeded NodeClaim whose consolidateAfter has passed (existing.unmarked; at most CONSOLIDATABLE_WAIT)."""
        held, self.held_disruption = self.held_disruption, {}
        if not held:
            return
        existing.wait_for(lambda: not existing.unmarked(self.reads, list(self.observer.seeded), CLOCK.now()),
                          timeout=CONSOLIDATABLE_WAIT, step=self.tend)
        existing.restore_budgets(self.cluster, held)

    def _apply_one(self, obj: dict) -> str | None:
        """Create `obj`, or update it when it exists; the name of a NodePool the API server admitted,
        else None."""
        obj = copy.deepcopy(obj)
        if obj.get("kind") == "Pod":
            obj.setdefault("metadata", {}).setdefault("namespace", "default")
        if obj.get("kind") in ("Deployment", "DaemonSet"):
            existing.default_selector(obj)
        existing.rebindable(self.cluster, obj)
        existing.claim_uid_for(self.cluster, obj)
        existing.live_owner_uids(self.cluster, obj)
        try:
            stored = existing.apply_object(self.cluster, obj)      # an existing object is updated
            existing.complete_volume_ref(self.cluster, stored)
            self.observer.applied(obj, None, stored)
            if obj.get("kind") in DRIFT_SOURCES and (stored["metadata"].get("generation") or 1) > 1:
                self.redrift.append(f"{obj['kind']} {obj['metadata']['name']} changed (drift)")
        except APIRejected as e:
            self.observer.applied(obj, e)
            # a NodePool's, AKSNodeClass's or bare Pod's refusal is an expectation; others are input errors
            if obj.get("kind") not in ("NodePool", "AKSNodeClass", "Pod"):
                self.apply_errors.append(f"{obj.get('kind')} {obj['metadata'].get('name')}: {e.message}")
            return None
        return obj["metadata"]["name"] if obj.get("kind") == "NodePool" else None

    def _await_admission(self, objs: list[dict]) -> None:
        """Until the API server's admission can read what `objs` (PriorityClasses, ResourceQuotas) say before a
        workload's pods arrive: a ResourceQuota once kube-controller-manager's resourcequota controller has
        written its status (the quota admission refuses a pod with "status unknown for quota" before,
        k8s.io/apiserver v0.36.3 pkg/admission/plugin/resourcequota/controller.go CheckRequest), and
        ADMISSION_SYNC for the Priority plugin's informer to hold a new PriorityClass (a pod naming it is
        refused while it does not: plugin/pkg/admission/priority/admission.go resolvePriorityClass; harness
        assumption: an informer's watch delivers within it)."""
        quotas = [(o["metadata"]["name"], o["metadata"].get("namespace") or "default")
                  for o in objs if o.get("kind") == "ResourceQuota"]
        if quotas:
            existing.wait_for(lambda: all(((self.cluster.get("ResourceQuota", n, ns) or {}).get("status") or {}).get("hard")
                                          for n, ns in quotas), timeout=NODEPOOL_WAIT, poll=0.1)
        if any(o.get("kind") == "PriorityClass" for o in objs):
            time.sleep(ADMISSION_SYNC)

    def _await_nodepools(self, names: list[str]) -> None:
        """Until the controller has decided each NodePool's readiness (observe.nodepool_decided), or
        NODEPOOL_WAIT passed, or the controller exited as it may (_alive: no one decides them then)."""
        deadline = time.monotonic() + NODEPOOL_WAIT
        waiting = list(names)
        while waiting and time.monotonic() < deadline:
            self._alive()
            if self.observer.exited is not None:
                return
            waiting = [n for n in waiting if not nodepool_decided(self.reads.get("NodePool", n) or {})]
            time.sleep(0.1)

    def seed(self, entries: list[dict]) -> None:
        """given.existingNodes on the live cluster (existing.py); in-flight ones are held until Karpenter
        launches a node of its own or the run first settles (kubelet.py release_held), as the simulation's
        finish after its first pass."""
        self.kubelets.seeding = True
        try:
            # the existing nodes were launched before the scenario's faults began (the simulation's
            # Simulation.seed holds them the same way): existing.seed_group holds the faults for each
            # seeded node's own VM and NIC, while the live controller's other requests meet them
            self.unmanaged, self.held_disruption = existing.seed(self, entries,
                                                                 {s["name"].lower(): s for s in self.fake.skus()})
        finally:
            self.kubelets.seeding = False
        self.seeded = True
        # the seeded pods' namespaces are read back as the manifests' are
        self.observer.namespaces |= {(p.get("metadata") or {}).get("namespace") or "default"
                                     for e in entries for p in e.get("pods") or ()}

    def restrict_at_start(self, entries: list[dict]) -> None:
        """given.restrict: the sizes are taken away in the fake after the existing nodes launched (the
        provider launched them while they were offered), then the controller restarts, so its SKU list
        at the first pass has the restrictions (the simulation: Simulation.restarted). A kept controller
        is keyed on the catalog it now reads (keeper.py scenario_key)."""
        from harness.scenario.steps import restrict
        restrict(self.fake, entries)
        t0 = time.monotonic()
        self.kept.restart()
        self.sandbox = self.kept.sandbox
        self.kept.key = keeper.controller_key(self.ctl, self.cluster, self.scenario, self.cfg, self.fake)
        self.timings["restart"] = time.monotonic() - t0
        # the new process is quiet until its cluster state has synced, then checks every NodeClaim anew:
        # the settle waits for a disruption pass of its own, as after a drift source changed
        self.redrift.append("the controller restarted (drift checked anew)")

    def tend(self) -> None:
        """What goes on beside the controller while the harness waits for it (the seeding's polls): a controller
        that is gone is restarted (_alive), the stand-ins act."""
        self._alive()
        self.kubelets.step()

    def controller_exited(self) -> bool:
        """The controller exited as it may (_alive); raises when it exited otherwise."""
        self._alive()
        return self.observer.exited is not None

    def _alive(self) -> None:
        """Restart the controller when its process is gone (_restart), as its Deployment's pod does, unless its
        exit is one the controller itself decides (real-engine.yaml `controller_exits`: a startup panic upstream
        writes on purpose); that exit is the run's outcome (a `Log` event of the operator, observe.py) and the run
        goes on without it."""
        p = self.sandbox.process
        if p is None or p.alive() or self.observer.exited is not None:
            return
        tail = p.tail(30)
        exits = [e["panic"] for e in settings.engine_data().get("controller_exits") or ()]
        line = next((ln.strip() for ln in tail.splitlines()
                     if ln.startswith("panic: ") and any(x in ln for x in exits)), None)
        if line is None:
            self._restart(f"the controller exited (code {p.proc.returncode})", planned=False)
            return
        self.observer.exited = line

    def _restart(self, why: str, planned: bool) -> None:
        """The controller's process is gone (`why`: a `crash` step killed it, or it exited): its pod starts it again
        as the kubelet does (harness/model/kube/crashloop.py: at once after a first exit, else once the back-off has
        passed on the run's clock - waited out while the stand-ins go on, or, longer than an advance waits, moved
        through), in the same home, settings, fake and log (keeper.py Kept.restart), and the run counts it. Its
        first disruption pass checks every NodeClaim anew, so the settle waits for one. CRASH_LOOP_EXITS exits of
        its own in a row within the back-off are a crash loop: the run ends there, naming each exit."""
        p = self.sandbox.process
        # its last lines but the SDK's request log (a panic's stack, the last controller's messages)
        lines = [ln for ln in (p.tail(CRASH_LOG_LINES * 8) if p is not None else "").splitlines()
                 if '"ApiRequestLog"' not in ln]
        e = self.crashloop.exited(CLOCK.now(), why, planned, "\n".join(lines[-CRASH_LOG_LINES:]))
        loop = self.crashloop.looping(CRASH_LOOP_EXITS)
        if loop:
            raise ControllerCrashLoop(crash_loop_text(loop, self.run_start))
        t0 = time.monotonic()
        left = e.restart_at - CLOCK.now()
        if left > _advance_cap() and self.clocked:
            self._move_clock(left, touch=False, confirm=False)
        while CLOCK.now() < e.restart_at:
            self.kubelets.step()
            time.sleep(min(POLL_SECONDS, max(e.restart_at - CLOCK.now(), 0.0)))
        self.kept.restart()
        self.sandbox = self.kept.sandbox
        self.restarts.append(dataclasses.asdict(e))
        self.observer.restarted_at = CLOCK.now()
        self.timings["restart"] = self.timings.get("restart", 0.0) + time.monotonic() - t0
        self.redrift.append(f"the controller restarted ({why}): its first disruption pass checks every NodeClaim anew")

    def settle(self, until: str | None = None):
        """Drive the stand-ins until the run has settled (settle.py: on cause, with a short quiet
        window), runaway provisioning held through the quiet window, or QUIESCE_TIMEOUT and a part per
        seeded node passed (then the run is not steady); the result as observed. Existing nodes held in
        flight by seed() and not released ahead of a node Karpenter launched (kubelet.py release_held) are
        released after the first settle, and the run settles again (as in the simulation).
        `until="launch"`: stop at the first poll
        that shows a launch in flight (Observer.launched_unregistered) once the round's other launches
        ended and every pending pod was answered by a round (launching, unplanned), named in `in_flight`."""
        self.in_flight = ()
        self.unjudged = None
        self._restore_disruption()
        result = self._settle_once(until)
        result.release = self.release          # whose behaviour answered: the controller's release
        if self.in_flight or self.unjudged:
            return result
        if self.seeded and self.kubelets.release_held():
            result = self._settle_once()
            result.release = self.release
        if self.unmanaged:
            existing.unmanaged_results(self.cluster, self.unmanaged, result)
        return result

    def _step(self) -> None:
        """One poll: the stand-ins act, the observer reads the cluster, terminating pods finish."""
        self._alive()
        self.kubelets.step()
        self.observer.poll()
        existing.finish_terminating_pods(self.cluster, self.observer.pod_objects, keep=self._unstamped_pods())
        self.kubelets.run_pods(self.observer.pod_objects)
        if self.jobs:
            self.kubelets.finish_jobs(self.observer.pod_objects, self.reads.list("Job"))
        if self.volume_claims:
            csi.provision(self.cluster, self.observer.namespaces, self.provisioners)
        if self.drain.pods:
            self.drain.retry(self.cluster, self.observer.pod_objects)

    def _held(self, in_flight: list[str] | None = None) -> tuple[str, ...]:
        """What holds the run past every quiet window: the evicted VMs' NodeClaims until core's garbage
        collector has deleted them (it runs every 2 minutes), then their pods, still bound to the Node
        that is gone, until kube-controller-manager's pod garbage collector deletes them (orphaned pods,
        k8s.io/kubernetes v1.36.3 pkg/controller/podgc/gc_controller.go gcOrphaned) and their owners
        replace them."""
        held = []
        # while anything is in flight every request refused counts (fakeside.WireTap.retry_until); `in_flight`:
        # the poll's Observer.in_flight, when it has one
        in_flight = self.observer.in_flight() if in_flight is None else in_flight
        wait = ((self.tap.retry_until if in_flight else self.tap.first_tries_until)
                - time.monotonic() + RETRY_SLACK)
        if wait > 0:
            held.append(f"an Azure request the fake refused is due for its retry within {wait:.1f}s (Retry-After or the SDK's backoff)")
        held += [f"pod {pod} terminating on the draining Node {node}: core's drain waits on it until it is stuck, "
                 f"in {left:.1f}s (a minute past its deletionTimestamp, IsStuckTerminating)"
                 for pod, node, left in drain_waits(self.observer.node_objects, self.observer.pod_objects, CLOCK.now())]
        if self.jobs:
            held += jobruns.unfinished(self.reads.list("Job"), self.observer.pod_objects)
        held += self._bookkeeping_behind()
        if (self.scenario.given.get("loop") or {}).get("vmDelete") is not None:
            # Azure is still deleting a VM (given.loop.vmDelete), or AKS a machine and its VM (the Machine API modes:
            # fakeazure times machine.delete as vm.delete): the provider's Delete waits on it, and so does core
            held += [f"Azure deleting {what} {op['target'].rsplit('/', 1)[-1]} for "
                     f"{op['due'] - self.fake.clock.time():.1f}s more (given.loop.vmDelete)"
                     for kind, what in (("vm.delete", "VM"), ("machine.delete", "AKS machine"))
                     for op in self.fake.running_operations(kind)]
        if self.drain.refused:
            held += self.drain.due(self.observer.pod_objects, self.cluster.list("PodDisruptionBudget"))
        if not self.evicted:
            return tuple(held)
        held += [f"{n} (its VM {vm} was evicted; core's garbage collection)" for n, vm in sorted(self.evicted.items())
                if n not in self.observer.deleted]
        nodes = {n["metadata"]["name"] for n in self.observer.node_objects}
        held += [f"pod {p['metadata']['name']} on Node {p['spec']['nodeName']}, which is gone (pod garbage collection)"
                 for p in self.observer.pod_objects
                 if (p.get("spec") or {}).get("nodeName") and p["spec"]["nodeName"] not in nodes]
        return tuple(held)

    def _live_claims(self) -> list[dict]:
        return [self.observer.claims[n] for n in sorted(self.observer.live) if n in self.observer.claims]

    @staticmethod
    def _since_first(seen: dict, keys: list, cap: float) -> set:
        """Of `keys`, those first seen (kept in `seen`, wall clock; keys no longer given are forgotten) less
        than `cap` seconds ago."""
        now, first = time.monotonic(), dict(seen)
        seen.clear()
        seen.update({k: first.get(k, now) for k in keys})
        return {k for k in keys if now - seen[k] < cap}

    def _unstamped_pods(self) -> frozenset[tuple[str, str]]:
        """The deleted pods the kubelet stand-in leaves terminating until core's podevents has stamped their
        delete (podevents.unstamped), each at most KUBELET_HOLD_SECONDS: a real kubelet's graceful stop takes
        that long and more, and a pod gone before podevents' turn is never stamped."""
        keys = podevents.unstamped(self._live_claims(), self.observer.pod_objects, self._since())
        return frozenset(self._since_first(self.unstamped_since, keys, KUBELET_HOLD_SECONDS))

    def _bookkeeping_behind(self) -> list[str]:
        """podevents.behind on the live NodeClaims, each line held at most BOOKKEEPING_HOLD_SECONDS from when a
        poll first saw it: a stamp that never comes is not waited for past that."""
        lines = podevents.behind(self._live_claims(), self.reads.list("NodePool"), self.observer.pod_objects,
                                 CLOCK.now(), self._since())
        keep = self._since_first(self.behind_since, [line.split(":", 1)[0] for line in lines],
                                 BOOKKEEPING_HOLD_SECONDS)
        return [line for line in lines if line.split(":", 1)[0] in keep]

    def _since(self) -> float:
        """Where this run's own pod events start on its clock (a dump's history is before it)."""
        return getattr(self, "run_start", None) or EPOCH

    def _settle_once(self, until: str | None = None):
        start = time.monotonic()
        settler = self._settler(start)
        restarts = len(self.restarts)
        if self.instant is None:
            # the first settle: a run whose clock was placed starts the scenario at its start, whatever the seeding
            # and the apply took; another at this settle's start (its clock was never the scenario's)
            self.instant = self.run_start if self.placed else CLOCK.now()
        carry, self.carry = self.carry, None
        if carry is not None and self.pure_advance:
            # a pure advance watched the cluster up to the step's instant: what did not change then need not be
            # waited out again (a window closing a second after the instant is read before it closes)
            (fingerprint, pending), reports, changed = carry
            settler.last_fingerprint, settler.pending, settler.last_reports = fingerprint, pending, reports
            settler.last_change = settler.last_state_change = settler.last_seen = changed
        self.pure_advance = False
        # the scenario's objects as the last poll saw them, and when (the run's clock) they last changed: a settle
        # takes scenario time only up to there (NodePool conditions and events are bookkeeping, no scenario time)
        scene = _scene(carry[0][0]) if carry is not None else None
        moved_at: float | None = None
        runaway_since = None
        asked = float("-inf")
        timeout = (EVICTED_TIMEOUT if self.evicted else QUIESCE_TIMEOUT) + QUIESCE_SECONDS_PER_NODE * len(
            self.scenario.given.get("existingNodes") or ())
        horizon = (self.scenario.given.get("loop") or {}).get("horizon")
        if horizon is not None:          # watched as long as asked, steady or not (as the simulation)
            timeout = min(timeout, scenario_duration(horizon))
        window, self.window = self.window, None
        while True:
            if window is not None and time.monotonic() >= _cut_at(window):
                # the last poll, before the window closed, is the state read: what the controller does once
                # it closes is past the step's instant (windows.py); unsettled, it is no verdict
                self.steady = False
                self.unjudged = settler.reason = (
                    f"the settle after the step's advance was still running when {window[2].render(window[1])} "
                    "(read from the objects' timestamps); the real engine reads its outcome after a settle in real time, so "
                    "it stopped there, unsettled, rather than judge what the controller did after the instant")
                break
            seen = self.cache.changes                           # a change from here on ends an idle wait
            rounds, (passes, mark), ends = self._metrics()      # before the poll: what a pass did is then in the poll
            wall = CLOCK.now()
            self._step()
            now = time.monotonic()
            if len(self.restarts) != restarts:
                # a new controller process (_restart): its round and pass counts start again from zero, so what
                # the settle waited on is waited on anew, from now
                restarts, settler, asked = len(self.restarts), self._settler(now), float("-inf")
                continue
            if self.observer.exited is not None:
                # the controller is gone (_alive): nothing of Karpenter's is coming, no round, no pass,
                # no launch; the quiet window lets the rest of the cluster (kube-scheduler) show its part
                settler.fallback = settler.in_flight_fallback = settler.quiet
            in_flight = self.observer.in_flight()
            disruption = self.observer.disruption(passes, self._held(in_flight), mark)
            pending = self.observer.pending()
            nominated, on_node = self.observer.nomination_events()
            self.nominations.observe(now, rounds, pending, nominated)
            if disruption.candidates:
                # (not `until`, the settle's own argument: a candidate during a `during: launch` settle - a drift
                # command's replacement in flight - would otherwise never stop for the launch)
                ends_at = (self.nominations.until(nominated, disruption.candidates, on_node) if ends is None else
                           Nominations.ends(ends, self.observer.provider_ids(disruption.candidates), wall, now))
                disruption = dataclasses.replace(
                    disruption, nominated_until=ends_at,
                    planned=Nominations.planned(nominated, disruption.candidates, pending))
            if self.redrift and self.observer.live:
                # the NodeClaims' drift is marked moments after the hash controllers stamp the update
                # (core v1.14.0 nodepool/hash, nodeclaim/disruption/drift.go): a pass must see it
                disruption = dataclasses.replace(disruption, candidates=disruption.candidates + tuple(self.redrift))
            if (until == "launch" and (flying := self.observer.launched_unregistered()) and not self.observer.launching()
                    and not self.observer.unplanned()):
                self.in_flight, self.steady = tuple(flying), False
                settler.reason = f"stopped with {', '.join(flying)} in flight for the next step (during: launch)"
                break
            fingerprint = self.observer.fingerprint()
            if scene is not None and _scene(fingerprint) != scene:
                moved_at = CLOCK.now()
            scene = _scene(fingerprint)
            if settler.observe(now, fingerprint, pending, in_flight, rounds, disruption,
                              self.observer.reports(), nodes=len(self.observer.node_objects)):
                self.steady = True
                break
            if settler.wants_pass and self.ctl.timing == "fast" and now - asked >= PASS_ASK_SECONDS:
                asked = now if self.sandbox.signal(signal.SIGUSR1) else asked     # a pass now (settle.py)
            # runaway only when it holds through the quiet window: Nodes that initialize in the same
            # poll have not been seen by kube-scheduler yet
            if self.observer.runaway(self.runaway_threshold, now):
                runaway_since = runaway_since if runaway_since is not None else now
                if now - runaway_since >= settler.quiet:
                    self.steady = False
                    break
            else:
                runaway_since = None
            if now - start > timeout:
                self.steady = False
                settler.reason = (f"not settled after {timeout:.0f}s: " + settler.waiting(
                    now, in_flight, self.observer.pending(), disruption))
                break
            left = _cut_at(window) - time.monotonic() if window is not None else IDLE_POLL_SECONDS
            if settler.idle(now, in_flight, asked):
                self.cache.wait_change(seen, max(min(IDLE_POLL_SECONDS, left), 0))
            else:
                time.sleep(max(min(POLL_SECONDS, left), 0))
        if not self._held():
            self.evicted = {}
        self.redrift = []
        self.settle_reason = settler.reason
        if moved_at is not None:
            self.instant = max(self.instant, moved_at)
        result = self.observer.result(steady=self.steady, threshold=self.runaway_threshold)
        result.started = self.run_start      # history's zero (--details "over time"), as the simulation's clock.start
        result.restarts = list(self.restarts)
        self._say_assumed(result)
        result.timings.update(self.timings, settle=time.monotonic() - start)
        result.trace.append(f"[settle] {settler.reason or result.runaway_reason}")
        if window is not None:
            result.trace.append(f"[window] {window[2].render(window[1])}")
        result.trace.append(f"[controller] run {self.kept.runs} of this controller process")
        wanted = (self.scenario.given.get("cluster") or {}).get("kubernetesVersion")
        result.trace.append("[cluster] " + (self.upgraded or f"kube-apiserver {self.cluster.server_version}"
                                            + (f" for given.cluster.kubernetesVersion {wanted}" if wanted else "")))
        return result

    def _settler(self, start: float) -> Settler:
        """A settle's judge from `start` (monotonic), with the timing's windows: a fast build numbers its passes
        (settle.pass_counts)."""
        fast = self.ctl.timing == "fast"
        return Settler(start, pass_lag=PASS_SEEN_SECONDS if fast else PASS_LAG_SECONDS,
                       disruption_fallback=FAST_DISRUPTION_FALLBACK_SECONDS if fast else DISRUPTION_FALLBACK_SECONDS,
                       in_flight_fallback=self.cluster.node_ready_seconds + self.kubelets.boot_seconds)

    def _metrics(self) -> tuple[int | None, tuple[int | None, int | None], dict[str, float] | None]:
        """The controller's provisioning round count, its disruption passes (settle.pass_counts) and, from
        a fast build, when its nominations end (settle.nomination_ends), from its metrics; None when they
        cannot be read (the nominations: or the build does not say)."""
        try:
            text = keeper.metrics_text(self.sandbox, self.ctl.timing)
        except (OSError, SandboxError):
            return None, (None, None), None
        return (provisioning_rounds(text), pass_counts(text),
                nomination_ends(text) if self.ctl.timing == "fast" else None)

    def play(self, step: dict, manifests: list[dict]) -> str | None:
        """Play a step live, in the one order (steps.py ACTIONS); returns why the real engine cannot play
        it, decided before any of its actions is played (the step is then not played at all). `advance`
        moves the run's clock (runclock.py), or where it cannot, waits on the wall clock (up to
        MAX_ADVANCE_SECONDS) while the stand-ins go on; `evict` evicts the
        node's VM in the fake, as Azure's simulateEviction does."""
        why = unplayable(step, self.clocked) or self._cannot_here(step)
        if why:
            return why
        self.pure_advance = actions(step) == ["advance"]
        play(self, step, manifests)
        return None

    @staticmethod
    def _cannot(action: str, value, clocked: bool = False) -> str | None:
        """Why this engine cannot play one action of a step, or None (`clocked`: the run moves the
        controller's clock, so an advance of any length is played at once)."""
        if action == "advance" and not clocked:
            seconds = scenario_duration(value)
            cap = _advance_cap()
            if seconds > cap:
                return (f"advance: {value} would be {seconds:.0f}s of wall-clock time; the controller's "
                        f"timers are real and the real engine waits at most {cap:.0f}s (HARNESS_REAL_MAX_ADVANCE)")
        if action == "cluster":
            why = next((f"cluster: {key}: {why}" for key, why in UNSETTABLE.items() if key in value), None)
            return why or (upgrade_unplayable(str(value["kubernetesVersion"])) if "kubernetesVersion" in value else None)
        return None

    def _cannot_here(self, step: dict) -> str | None:
        """Why this run cannot play `step` where the static answer (`unplayable`) depends on its cluster:
        a Kubernetes upgrade (upgrade_plan)."""
        version = (step.get("cluster") or {}).get("kubernetesVersion")
        return self.upgrade_plan(str(version))[1] if version is not None else None

    def upgrade_plan(self, version: str):
        """(the Kubernetes release the control plane is upgraded to for a `cluster: {kubernetesVersion}` step,
        None), or (None, why it cannot be). An upgrade moves to another minor's control plane
        (harness/data/kubernetes-versions.yaml): the harness starts one patch per minor, so another patch of the
        running minor changes no version the controller reads; AKS upgrades only."""
        from harness.backends.binaries import controlplane as binaries
        have = self.cluster.server_version
        if binaries.minor_of(version) == binaries.minor_of(have):
            return None, (f"cluster: kubernetesVersion {version}: another patch of Kubernetes "
                          f"{binaries.minor_of(have)}, whose control plane here is {have} (one patch per minor: "
                          "harness/data/kubernetes-versions.yaml), so the version the controller reads would not change")
        release = binaries.release_for(version)
        if tuple(map(int, release.minor.split("."))) < tuple(map(int, binaries.minor_of(have).split("."))):
            return None, (f"cluster: kubernetesVersion {version}: a downgrade from {have}; AKS upgrades a cluster's "
                          "Kubernetes only (and the provider keeps the version it has: v1.14.0 "
                          "pkg/controllers/nodeclass/status/kubernetesversion.go \"detected potential kubernetes downgrade\")")
        if self.cluster.backend != "local":
            return None, (f"cluster: kubernetesVersion {version}: the control plane is upgraded on the local backend "
                          f"only, not {self.cluster.backend}")
        k8s = release.kubernetes
        if not binaries.find_binaries(validate=False, k8s=k8s).missing(UPGRADED) or _builds_versions():
            return release, None
        return None, (f"cluster: kubernetesVersion {version}: Kubernetes {k8s}'s control plane is not built and "
                      f"{BUILD_VERSIONS_ENV}=0 (build it with: python -m harness.backends build --k8s-version {k8s}, "
                      f"{binaries.BUILD_COST})")

    def _upgrade(self, version: str) -> str:
        """Upgrade the control plane to the release `version`'s minor runs here (upgrade_plan), with the
        controller stopped (kept.restart: AKS redeploys it with the control plane): kube-apiserver, then
        kube-controller-manager and kube-scheduler, at that release's binaries (the timing's where the cluster
        runs the timing's) over the same etcd. The new controller process reads the new version at once (its
        version cache is empty; a running one would keep the old one up to KubernetesVersionTTL, 15 min:
        provider v1.14.0 pkg/cache/cache.go). Returns the trace line saying so."""
        from harness.backends.binaries import controlplane as binaries
        from harness.backends.binaries.controller import build_timed_kcm, timed_apiserver, timed_kcm
        release, why = self.upgrade_plan(version)
        if release is None:
            raise StepFailed("cluster", f"kubernetesVersion {version}", why)
        k8s, before = release.kubernetes, self.cluster.server_version
        bins = binaries.ensure_binaries(build=_builds_versions(), need=UPGRADED, k8s=k8s)
        timing = self.ctl.timing
        kcm = build_timed_kcm(timing, k8s=k8s) if _builds_versions() else timed_kcm(timing, k8s)
        apiserver = timed_apiserver(timing, k8s)
        if self.cluster.clock_file is not None and apiserver is None:
            raise StepFailed("cluster", f"kubernetesVersion {version}",
                             f"Kubernetes {k8s} has no kube-apiserver of the {timing} timing, and this run's clock has moved")
        use = {"kube-apiserver": apiserver if self.cluster.clock_file is not None else bins["kube-apiserver"],
               "kube-controller-manager": kcm or bins["kube-controller-manager"], "kube-scheduler": bins["kube-scheduler"]}
        done = self.cluster.upgrade({name: path for name, path in use.items() if name in self.cluster.pids})
        self.upgraded = (f"kube-apiserver {self.cluster.server_version} (upgraded from {before} by the step's "
                         f"cluster.kubernetesVersion {version}: {', '.join(done)} restarted)")
        return self.upgraded

    def step_advance(self, duration: str | float) -> None:
        """The step's instant is the scenario's (where the last advance ended or the last settle saw the scenario's
        objects change: _settle_once) plus `duration`, on the run's clock: the seconds the harness spent seeding,
        applying and waiting out a quiet window are observation, not scenario time (as in the simulation, whose
        settle takes none). A longer advance than the wall clock waits moves the controller's clock (runclock.py) to
        JUMP_LEAD before the instant; the rest is waited on the wall clock, watching the cluster, so that what the
        jump set off shows before the instant and a pure advance's settle starts from what it saw (`carry`)."""
        seconds = scenario_duration(duration)
        end = self.instant = (self.instant if self.instant is not None else CLOCK.now()) + seconds
        if self.clocked and seconds > _advance_cap():
            # the clock jumps: a shorter advance waits in real time (below): a jump makes the NodeClaims' windows
            # close at once and core reconciles them one by one, so a disruption pass can land between two
            # (emptiness's one command for six empty nodes became several), where a wait lets each close in its turn
            self._pass_before_jump()
            target = max(end - JUMP_LEAD, CLOCK.now())
            # it stops at each instant a Job's pod completes, a Job's deadline passes or a CronJob is due, a
            # budget window's edge changes an allowance or a do-not-disrupt duration ends, and settles there, as
            # the simulation's advance fires its timers in turn (jobruns.py, windows.py clock_stops)
            while (t := self._next_stop(target)) is not None:
                self._move_clock(t - CLOCK.now())
                self._settle_once()
            self._move_clock(max(target - CLOCK.now(), 0.0))
            self.fake.advance(0)        # what fell due in the jump finishes now, not at the next request
        self._watch_until(end)
        self._arm_window(end)

    def _watch_until(self, end: float) -> None:
        """Until the run's clock reads `end`: the stand-ins act on watched changes and on their own timers (a
        booting node's - a NodeClaim in flight - is watched closely, the rest, a Lease's renewal, within
        IDLE_POLL_SECONDS), and what the cluster looks like, and when it last changed, is kept for the settle
        (`carry`; none when the controller restarted meanwhile: its counts start again)."""
        last, changed, restarts = None, time.monotonic(), len(self.restarts)
        while CLOCK.now() < end:
            seen = self.cache.changes
            self._step()
            now = ((self.observer.fingerprint(), self.observer.pending()), self.observer.reports())
            if now != last:
                last, changed = now, time.monotonic()
            tick = POLL_SECONDS if self.observer.in_flight() else IDLE_POLL_SECONDS
            self.cache.wait_change(seen, min(tick, max(end - CLOCK.now(), 0)))
        self.carry = (*last, changed) if last is not None and len(self.restarts) == restarts else None

    def _next_stop(self, target: float) -> float | None:
        """The first instant before `target` (the run's clock) an advance's jump stops at (step_advance)."""
        now = CLOCK.now()
        live = [self.observer.claims[n] for n in sorted(self.observer.live) if n in self.observer.claims]
        times = [windows.clock_stops(live, self.reads.list("NodePool"), self.observer.pod_objects, now, target)]
        if self.jobs:
            times.append(jobruns.next_timer(self.reads.list("Job"), self.reads.list("CronJob"),
                                            self.observer.pod_objects, now, target))
        return min((t for t in times if t), default=None)

    def _pass_before_jump(self) -> None:
        """Ask a fast build for a disruption pass and wait (up to PASS_WAIT_SECONDS) until it ended, before the
        clock jumps: upstream's passes run every 10 s through the hours a jump skips, so what a pass reads
        first and then keeps for a while is read before the jump, as there - provider v0.7.5's SKU map, kept
        23 hours from its first read (pkg/providers/instancetype/instancetypes.go getInstanceTypes,
        InstanceTypesCacheTTL), read after a 22 h 30 min jump was kept until 45 h 30 min and hid a size's
        retirement from core's instance type drift. A pass has ended once a later one started or one that
        decided nothing numbers past the ask (settle.pass_counts)."""
        if self.ctl.timing != "fast" or not self.reads.list("NodePool"):
            return
        _, (_, started), _ = self._metrics()
        if started is None:
            return
        deadline, asked = time.monotonic() + PASS_WAIT_SECONDS, float("-inf")
        while time.monotonic() < deadline:
            if time.monotonic() - asked >= PASS_ASK_SECONDS:
                asked = time.monotonic() if self.sandbox.signal(signal.SIGUSR1) else asked
            time.sleep(POLL_SECONDS)
            _, (now_nothing, now_started), _ = self._metrics()
            if now_started is not None and (now_started >= started + 2 or (now_nothing or 0) > started):
                return

    def step_crash(self, what: str) -> None:
        """SIGKILL the controller (`what`: the schema's one value) and restart it as its pod does (_restart). A
        controller that exited by its own decision at its start (observer.exited) is not running: nothing to kill."""
        if self.observer.exited is not None:
            return
        p = self.sandbox.process
        if p is not None and self.sandbox.signal(signal.SIGKILL):
            p.proc.wait(timeout=10)
        self._restart(f"a crash step killed the {what} (SIGKILL)", planned=True)

    def step_cluster(self, settings: dict) -> None:
        """New operator settings restart the controller with them, as AKS redeploys it when a cluster setting
        changes (keeper.py Kept.restart); the new process checks every NodeClaim anew, so the settle waits
        for a disruption pass of its own. The storage provisioners are the harness's stand-ins (csi.py). A new
        nodeImageVersion is AKS releasing that node image: the fake's gallery publishes it, and the running
        controller lists it when its image cache expires (harness/loop/azure/nodeimages.py)."""
        cfg = {**self.cfg, **settings}
        self.provisioners = ClusterParams.from_dict(cfg).storage_provisioners
        if settings.get("nodeImageVersion") and settings["nodeImageVersion"] != self.cfg.get("nodeImageVersion"):
            self.fake.publish_node_image(str(settings["nodeImageVersion"]))
        changed = sorted(k for k in settings if k not in ("storageProvisioners", "nodeImageVersion")
                         and settings[k] != self.cfg.get(k))
        self.cfg = cfg
        if not changed:
            return
        t0 = time.monotonic()
        upgrade = settings["kubernetesVersion"] if "kubernetesVersion" in changed else None
        self.kept.restart(cfg, between=(lambda: self._upgrade(str(upgrade))) if upgrade else None)
        if upgrade:
            self._await_version()
        self.sandbox = self.kept.sandbox
        self.kept.key = keeper.controller_key(self.ctl, self.cluster, self.scenario, cfg, self.fake)
        self.kubelets.rg = cfg["nodeResourceGroup"]
        self.kubelets.settings = cfg
        self.timings["restart"] = self.timings.get("restart", 0.0) + time.monotonic() - t0
        self.redrift.append(f"the controller restarted with new settings ({', '.join(changed)}): drift checked anew")

    def _await_version(self, timeout: float = 30.0) -> None:
        """Until every AKSNodeClass's status.kubernetesVersion is the upgraded API server's: the new process's
        version reconciler (provider v1.14.0 pkg/controllers/nodeclass/status/kubernetesversion.go) has read
        it, so the disruption pass the settle waits for sees the drift it brings, not the state before."""
        want = self.cluster.server_version.lstrip("v").split("+")[0]
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            classes = self.cluster.list("AKSNodeClass")
            if all((nc.get("status") or {}).get("kubernetesVersion") == want for nc in classes):
                return
            time.sleep(POLL_SECONDS)

    def step_faults(self, faults: list[dict]) -> None:
        for f in faults:
            self.fake.add_fault(f)

    def step_restrict(self, entries: list[dict]) -> None:
        restrict(self.fake, entries)
        self.restricted = True

    def step_evict(self, ev: dict) -> None:
        """The node as the last result names it (steps.py eviction_target); the fake's refusal (not Spot,
        gone) fails the step as on the simulated engine."""
        self.observer.poll()
        node = eviction_target(self.observer.result(steady=True, threshold=self.runaway_threshold), ev)
        evict_vm(self.fake, self.kubelets.rg, node)
        self.evicted[node.nodeclaim] = node.vm_name
        self.ever_evicted = True

    def step_label(self, entries: list[dict]) -> None:
        for e in entries:
            verbs.metadata(self.cluster, "label", e["kind"], e["name"], e.get("namespace"), e["labels"])

    def step_annotate(self, entries: list[dict]) -> None:
        for e in entries:
            verbs.metadata(self.cluster, "annotate", e["kind"], e["name"], e.get("namespace"), e["annotations"])

    def step_cordon(self, nodes: list[str]) -> None:
        for n in nodes:
            verbs.cordon(self.cluster, n, True)

    def step_uncordon(self, nodes: list[str]) -> None:
        for n in nodes:
            verbs.cordon(self.cluster, n, False)

    def step_drain(self, nodes: list[str]) -> None:
        """`kubectl drain` (drain.py): cordon and evict now; its retries run with every poll of the settles."""
        for n in nodes:
            if self.cluster.get("Node", n) is None:
                raise StepFailed("drain", f"Node {n}", not_found("nodes", n))
            self.drain.start(self.cluster, n, self.cluster.list("Pod"))

    def step_scale(self, entries: list[dict]) -> None:
        for e in entries:
            verbs.scale(self.cluster, *workload_of(e), e.get("namespace"), e["replicas"])

    def step_restart(self, entries: list[dict]) -> None:
        for e in entries:
            verbs.restart(self.cluster, *workload_of(e), e.get("namespace"), time.time())

    def step_delete(self, refs: list[dict]) -> None:
        for d in refs:
            if d["kind"] in ("Node", "NodeClaim"):      # Karpenter's finalizers terminate it
                verbs.delete(self.cluster, d["kind"], d["name"])
                continue
            # kubectl delete: a Pod with its own grace period; the kubelet stand-in confirms its end (_step)
            self.cluster.delete(d["kind"], d["name"], d.get("namespace"), graceful=True)

    def step_apply(self, manifests: list[dict]) -> None:
        self.apply(manifests)

    def clock_at(self, instant: float, touch: bool = True, confirm: bool = True) -> None:
        """Move the run's clock to read `instant` (epoch seconds: the start, a dump's creation or deletion
        time); a run whose clock does not move stays on the wall clock. `touch`: as _move_clock (the
        seeding moves it per entry without, then back to the start with); `confirm`: as _move_clock."""
        if self.clocked and abs(CLOCK.now() - instant) > CLOCK_SLACK:
            placed = self.fake.clock.time()
            self._move_clock(instant - CLOCK.now(), touch, confirm)
            # a placement, not time passing: the fake's clock runs on from where it was (runclock.py
            # FakeAzureClock). Moved back with the seeding's clock it would hide from the resource graph every
            # VM created since (fakeazure/resourcegraph/models.py rows: created before the query's instant), and
            # core's garbage collection deletes a registered NodeClaim its cloud provider does not list once its
            # Node is not Ready (sigs.k8s.io/karpenter v1.14.0 pkg/controllers/nodeclaim/garbagecollection/
            # controller.go Reconcile)
            rebase = getattr(self.fake.clock, "rebase", None)
            if rebase is not None:
                rebase(placed)

    def _move_clock(self, seconds: float, touch: bool = True, confirm: bool = True) -> None:
        """Move the run's clock by `seconds` and wait (up to CLOCK_WAIT; `confirm` False: not) until the
        controller has read it (its probe's karpenter_harness_clock_offset_seconds; the API server reads the
        same file every 10 ms, and so does the controller, whose probe only shows it),
        then (`touch`) touch every AKSNodeClass, NodeClaim and Node: the provider's and core's controllers wait on
        timers set on the old clock (the image status controller's 5-minute requeue, expiration's, consolidation's
        RequeueAfter) and look again on an update of the object; and every
        Job and CronJob, whose controllers' queues wait likewise (k8s.io/kubernetes v1.36.3
        pkg/controller/cronjob/cronjob_controllerv2.go updateCronJob and job/job_controller.go updateJob
        requeue on an update)."""
        CLOCK.advance(seconds)
        self.clock_moved = True
        deadline = time.monotonic() + (CLOCK_WAIT if confirm else 0.0)
        while time.monotonic() < deadline:
            try:
                m = CLOCK_METRIC.search(keeper.metrics_text(self.sandbox, self.ctl.timing))
            except (OSError, SandboxError):
                m = None
            if m and abs(float(m.group(1)) - CLOCK.offset) < 1e-3:
                break
            time.sleep(0.01)
        time.sleep(0.02)        # the API server's read of the file (every 10 ms)
        if not touch:
            return
        stamp = {"metadata": {"annotations": {CLOCK_ANNOTATION: f"{CLOCK.offset:.3f}"}}}
        for obj in self.cluster.list("AKSNodeClass"):
            try:     # its status controllers' requeues (images every 5 min) wait on the wall clock too
                self.cluster.admin.patch("AKSNodeClass", obj["metadata"]["name"], stamp)
            except APIRejected:
                pass
        for kind in ("NodeClaim", "Node") + (JOB_KINDS if self.jobs else ()):
            for obj in self.reads.list(kind):
                try:
                    self.cluster.admin.patch(kind, obj["metadata"]["name"], stamp, obj["metadata"].get("namespace"))
                except APIRejected:
                    pass            # gone meanwhile

    def _arm_window(self, instant: float) -> None:
        """The disruption windows at the step's instant (`instant`, the run's clock), from the objects' own
        timestamps (windows.py): the first still open stops the settle that follows before it closes; one that
        closed within JUMP_LEAD of the instant is the controller's to act on (its own requeue, on the wall clock
        from the wall clock's seconds): the settle waits for a disruption pass after it, not from what the watch
        up to the instant saw (`carry`)."""
        live = [self.observer.claims[n] for n in sorted(self.observer.live) if n in self.observer.claims]
        held = windows.windows(live, self.reads.list("NodePool"), self.observer.pod_objects)
        nxt = windows.next_after(held, instant)
        self.window = (time.monotonic() - (CLOCK.now() - instant), instant, nxt) if nxt is not None else None
        closed = [w for w in held if instant - JUMP_LEAD < w.at <= instant]
        if closed:
            self.carry = None
            self.redrift += [f"{w.what} closed at the step's instant: a disruption pass after it" for w in closed]

    def _say_assumed(self, result) -> None:
        """The timings the run assumed that its outcome may hang on (harness/loop/assumed.py), judged as the
        simulation judges them: this settle launched NodeClaims in two provisioning rounds (more than
        ROUND_APART_SECONDS apart) or deleted one it launched. The kubelet stand-ins register at once and the
        fake deletes VMs at once unless given.loop says otherwise, so the assumption is the simulation's."""
        new = [c for c in result.nodeclaims if c.name not in self.claims_seen and c.at.get("launched") is not None]
        self.claims_seen.update(c.name for c in result.nodeclaims)
        launched = sorted(c.at["launched"] for c in new)
        if (launched and launched[-1] - launched[0] > ROUND_APART_SECONDS) or any(c.deleted for c in new):
            self.boot_overlapped = True
        given = frozenset(k for k in TIMING_KEYS if k in (self.scenario.given.get("loop") or {}))
        said = notice(result, given, self.boot_overlapped)
        result.assumed = [said] if said else []

    def applicable(self, expect: dict, root: str):
        return applicability.split(expect, root)

    def read_back(self, result, where: str, outcome: Outcome) -> list[Mismatch]:
        """Objects the API server refused since the last read (other than the NodePools,
        AKSNodeClasses and Pods whose refusal is an expectation) are input errors."""
        new = self.apply_errors[self.reported_errors:]
        self.reported_errors = len(self.apply_errors)
        return [Mismatch(f"{where}manifests", "applied", err, "the API server refused it") for err in new]

    def finish(self, outcome: Outcome, why) -> None:
        self.finished = True
        fake, tap = self.fake, self.tap
        outcome.hosts = sorted(tap.hosts)
        outcome.vm_puts = {k: v.body for k, v in tap.vm_puts().items()}
        outcome.nic_puts = {k: v.body for k, v in tap.nic_puts().items()}
        outcome.vm_bodies = {vm["name"]: vm for vm in fake.vms()}
        outcome.nic_bodies = {n["name"]: n for n in fake.nics()}

    def close(self, outcome: Outcome) -> None:
        self._release(outcome)
        local = {"127.0.0.1", "localhost", *settings.engine_data()["public_cloud"]["hosts"]}
        strays = sorted(h for h in outcome.hosts if h and h.rsplit(":", 1)[0] not in local)
        if strays:      # cannot happen through the sandbox; kept as the run's own proof
            outcome.mismatches.append(Mismatch("engine.hosts", "loopback only", strays,
                                               "hosts in the fake's log or the controller's"))

    def _release(self, outcome: Outcome | None) -> None:
        """Controller (kept for the next run, keeper.py, or stopped), kubelet stand-ins and the log
        copy, whatever state the run is in."""
        try:
            if self.kept is not None:
                if outcome is not None and self.sandbox is not None:
                    outcome.log_tail = self.sandbox.process.tail(40) if self.sandbox.process else ""
                    if os.environ.get("HARNESS_REAL_CONTROLLER_LOG"):
                        outcome.controller_log = self.kept.log.read_text(errors="replace")
                    outcome.hosts = sorted(set(outcome.hosts) | log_hosts(self.kept.log))
                if self.keep:
                    self._keep_log()
                keeper.KEEPER.give_back(self.kept, ["the run did not start"] if outcome is None else
                                        self.leftovers(outcome.result.events if outcome.result else None))
        finally:
            if self.kubelets is not None:       # first: its heartbeats read the watch cache
                self.kubelets.close()
            if self.cache is not None:
                self.cluster.unwatch(self.cache)

    def leftovers(self, events: list[dict] | None = None) -> list[str]:
        """What this run may have left in the controller's memory (keeper.py): why the next run needs
        a controller of its own. `events`: the run's (RunResult.events); None: unknown."""
        why = []
        if not self.finished or not self.steady:
            why.append("the run did not finish settled")
        if self.observer.exited is not None:
            why.append("the controller exited")
        if self.restarts:
            why.append("the controller was restarted in the run")
        if self.tap.refused:
            why.append(f"the fake refused {self.tap.refused} requests (unavailable offerings, retries)")
        if self.scenario.given.get("faults") or any(s.get("faults") for s in self.scenario.steps):
            why.append("faults")
        if self.restricted:
            # the catalog changed after the key was taken: before provider v1.10 the first SKU list is
            # read at the first List, which may have come after the restriction, and is kept 23 h
            why.append("a step restricted a size (the controller's SKU list may hold the restriction)")
        if self.observer.failures:
            why.append("NodeClaims failed")
        if self.observer.deleted and (named := reusable_names(self.scenario, events)):
            why.append(f"core's termination events named {', '.join(named[:3])}, which a later run may name again "
                       "(they are deduped by name for two minutes)")
        if self.clock_moved:
            why.append("the run moved the controller's clock")
        if self.ever_evicted or any(d.get("kind") == "Node" for s in self.scenario.steps for d in s.get("delete") or ()):
            why.append("a node was evicted or deleted")
        if any((o.get("metadata") or {}).get("deletionTimestamp")
               for o in self.observer.node_objects + [self.observer.claims[n] for n in self.observer.live]):
            why.append("a deletion is under way")
        return why

    def _keep_log(self) -> None:
        """HARNESS_KEEP_REAL_WORKDIR: this run's controller log in a dir of its own, left in place."""
        keep = Path(tempfile.mkdtemp(prefix="harness-real-", dir=tmp_root()))
        shutil.copyfile(self.kept.log, keep / "controller.log")
        print(f"karpenter-harness: kept real-engine work dir {keep}", file=sys.stderr)


# how long (wall seconds) a settle waits on core's pod-event bookkeeping for one NodeClaim, and the kubelet
# stand-in leaves a deleted pod terminating for podevents to stamp it (podevents.py): either lands within a
# second when the controller gets to it at all (harness assumption, from runs on a loaded machine)
BOOKKEEPING_HOLD_SECONDS = 20.0
KUBELET_HOLD_SECONDS = 5.0

# a controller that exits by itself this many times in a row, each within the kubelet's back-off, is in a crash
# loop (harness assumption: a cluster shows CrashLoopBackOff from the second; the third rules out a one-off such
# as an exit while its API server restarted), and how many of each exit's last log lines the run reports
CRASH_LOOP_EXITS = 3
CRASH_LOG_LINES = 8


class ControllerCrashLoop(RuntimeError):
    """The real controller keeps exiting by itself (RealRun._restart): the run cannot go on with it."""


def crash_loop_text(loop: list[Exit], start: float | None) -> str:
    """What a crash loop was: each exit, when (from the run's start, on its clock), why and its last log lines."""
    def when(t: float) -> str:
        return f"+{t - start:.1f}s" if start is not None else rfc3339(t)
    parts = [f"exit {i + 1} at {when(e.at)}: {e.why}"
             + (f", restarted at {when(e.restart_at)}" if i < len(loop) - 1 else "") + "; last log lines:\n"
             + "\n".join("    " + ln for ln in e.log.splitlines()) for i, e in enumerate(loop)]
    wait = loop[-1].restart_at - loop[-1].at
    return (f"the Karpenter controller is in a crash loop: it exited {len(loop)} times by itself, each within the "
            f"kubelet's back-off (CrashLoopBackOff; its next start would wait {wait:.0f}s: harness/model/"
            "crashloop.py, k8s.io/kubernetes v1.36.3 pkg/kubelet/kubelet.go)\n  " + "\n  ".join(parts))


# a jump of the run's clock (step_advance) lands this long before the step's instant, and the rest is waited on
# the wall clock: the controllers react to the jump (every NodeClaim and Node touched) within it, and a settle
# after a pure advance then needs no quiet window of its own past the instant (a done settle's 0.6 s, its
# events' 0.3 s, and WINDOW_MARGIN)
JUMP_LEAD = 2.0


def _scene(fingerprint: tuple) -> tuple:
    """What of a poll's fingerprint (Observer.fingerprint) is the scenario's: NodeClaims, Nodes, pods and the
    fake's VMs, not the NodePools' conditions (their readiness is bookkeeping the simulation takes no time for)."""
    claims, nodes, pods, _pools, azure = fingerprint
    return claims, nodes, pods, azure


# the state read is the last poll at least this long before a window closes: object timestamps are whole
# seconds (a window computed from them closes up to 1 s later than it says) and the controller acts at once
WINDOW_MARGIN = 0.5


def upgrade_unplayable(version: str) -> str | None:
    """Why no cluster here can be upgraded to Kubernetes `version` (no control plane for its minor), or None;
    what the run's cluster decides besides is RealRun.upgrade_plan."""
    from harness.backends.binaries import controlplane as binaries
    if binaries.release_for(version) is None:
        return (f"cluster: kubernetesVersion {version}: no control plane for Kubernetes {binaries.minor_of(version)} "
                f"in harness/data/kubernetes-versions.yaml (minors {', '.join(binaries.kubernetes_releases())})")
    return None


def unplayable(step: dict, clocked: bool) -> str | None:
    """Why the real engine cannot play `step` (its first action that it cannot: RealRun._cannot), or None;
    decided before any of the step's actions is played."""
    return next((why for action in actions(step) if (why := RealRun._cannot(action, step[action], clocked))), None)


def first_unplayable(scenario, clocked: bool) -> str | None:
    """`steps[i]: why` for the first step a run of `scenario` cannot play (`unplayable`, as RealRun.play asks it
    step by step), or None: what a real run's report says it left unplayed, recomputed without a cluster
    (conformance.py stale)."""
    return next((f"steps[{i}]: {why}" for i, step in enumerate(scenario.steps)
                 if (why := unplayable(step, clocked))), None)


def _cut_at(window: tuple[float, float, windows.Window]) -> float:
    """When (monotonic) the settle stops for `window` (instant, wall instant, the window)."""
    instant, wall, w = window
    return instant + (w.at - wall) - WINDOW_MARGIN


def scenario_objects(scenario) -> list[dict]:
    """Every object a scenario applies: its manifests, then each step's."""
    return [m.obj for m in scenario.manifests] + [m.obj for ms in scenario.step_manifests for m in ms]


# core's termination events, each deduped by its subject's name for two minutes (v1.14.0
# pkg/controllers/node/termination/terminator/events/events.go: EvictPod, DisruptPodDelete, NodeFailedToDrain,
# NodeAwaitingVolumeDetachmentEvent, Node/NodeClaimTerminationGracePeriodExpiring; DedupeValues the name)
TERMINATION_REASONS = frozenset({"Evicted", "Disrupted", "FailedDraining", "AwaitingVolumeDetachment",
                                 "TerminationGracePeriodExpiring"})


def reusable_names(scenario, events: list[dict] | None) -> list[str]:
    """The subjects of the run's termination events whose names a later scenario may use again: all of
    them when the run seeded nodes (given.existingNodes: their Nodes, NodeClaims and pods are named by
    index) or when the events are unknown, else the pods the scenario names itself (bare Pods, a
    StatefulSet's). The NodeClaims and Nodes Karpenter launches and the pods of Deployments are named
    with a random suffix."""
    if events is None:
        return ["(the run's events are unknown)"]
    subjects = sorted({e["name"] for e in events if e.get("kind") in ("Pod", "Node", "NodeClaim")
                       and e.get("reason") in TERMINATION_REASONS and e.get("name")})
    if scenario.given.get("existingNodes"):
        return subjects
    objs = scenario_objects(scenario)
    bare = {(o.get("metadata") or {}).get("name") for o in objs if o.get("kind") == "Pod"}
    sets = tuple(f"{(o.get('metadata') or {}).get('name')}-" for o in objs if o.get("kind") == "StatefulSet")
    return [n for n in subjects if n in bare or n.startswith(sets)]


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


def _advance_cap() -> float:
    """How long an `advance` may wait on the wall clock (HARNESS_REAL_MAX_ADVANCE, seconds)."""
    return float(os.environ.get("HARNESS_REAL_MAX_ADVANCE") or MAX_ADVANCE_SECONDS)


def _has_clock(timing: str | None) -> bool:
    """Whether a build of `timing` has the clock the harness moves (controller-timing.yaml kind `clock`)."""
    from harness.backends.binaries.controller import timing_patches
    return bool(timing) and any(p.get("kind") == "clock" for p in timing_patches(timing))


def _job_manifests(scenario) -> list:
    """The scenario's Jobs and CronJobs, applied at its start or by a step."""
    return [m for ms in [scenario.manifests, *scenario.step_manifests] for m in ms
            if m.obj.get("kind") in JOB_KINDS]


def places_clock(scenario) -> bool:
    """Whether a run of `scenario`, on a controller whose clock the harness moves (runclock.py), places that clock
    at the scenario's start before anything is created: a budget's schedule, a dump's history, an advance longer
    than the wall clock waits, or existing nodes a step's advance counts a window from (the seeding takes
    seconds of the run's clock that are no scenario time: every entry is seeded at the start, history.at_start)."""
    given = scenario.given
    return bool(_scheduled_budgets(scenario) or history.names(given)
                or any(scenario_duration(s["advance"]) > _advance_cap() for s in scenario.steps if "advance" in s)
                or (given.get("existingNodes") and any("advance" in s for s in scenario.steps)))


def _scheduled_budgets(scenario) -> bool:
    """Whether a NodePool of the scenario (its manifests or a step's) has a budget with a schedule."""
    objs = scenario_objects(scenario)
    return any(b.get("schedule") for o in objs if o.get("kind") == "NodePool"
               for b in ((o.get("spec") or {}).get("disruption") or {}).get("budgets") or [])
