"""The simulated engine: the harness's own loop (harness/loop/simulation.py) on any backend, with
fakeazure reached through the real Azure SDK in-process. Milliseconds a scenario; the default."""
from __future__ import annotations

import contextlib
import functools

from harness.backends.base import APIRejected, Cluster
from harness.loop.assumed import TIMING_KEYS
from harness.loop.azure.aksapi import AKSMachines
from harness.loop.clock import SimClock, start_of
from harness.loop.kube.kubectl import KubectlError
from harness.loop.result import RunResult
from harness.loop.simulation import SimConfig, Simulation, iteration_bound
from harness.loop.scheduling.why import explain_pending
from harness.model.azure import instancetypes as itmod
from harness.model.azure import itcache
from harness.model.labels.aksmachine import is_machine_mode
from harness.model.values.durations import scenario_duration
from harness.model.upstream.knobrelease import knob_release
from harness.model.upstream.profile import profile_with_knobs
from harness.runner.engines.azureside import add_machines_pool, cluster_settings, fake_azure, machines_pool
from harness.runner.engines.base import NotApplicable, Outcome
from harness.scenario.expect.match import Mismatch
from harness.scenario.notices import Notice, emit
from harness.scenario.load import Scenario
from harness.scenario.steps import StepFailed, evict, play, restrict, workload_of


@functools.lru_cache(maxsize=4)
def sdk_clients(subscription_id: str) -> tuple:
    """(transport, compute client, network client, container service pipeline), built once per process: building the SDK
    clients costs more than a typical scenario's own calls, and they hold no per-run state. The
    transport hands each request to the fake it is `serving` in the calling thread, which skips the
    `requests` session and `responses` matcher of `mock_azure` (fakeazure/transport.py), through a
    pipeline of only the policies that act on such an answer (fakeazure/clients.py in_process)."""
    from fakeazure.clients import compute_client, containerservice_client, network_client
    from fakeazure.transport import InProcessTransport
    transport = InProcessTransport()
    return (transport, compute_client(None, subscription_id, transport=transport, in_process=True),
            network_client(None, subscription_id, transport=transport, in_process=True),
            containerservice_client(None, subscription_id, transport=transport, in_process=True))


def prepare_process() -> None:
    """Before the first of many simulated runs in this process: build the SDK clients (importing
    the Azure SDK makes most of a process's long-lived objects), then freeze what is alive out of the
    garbage collector's full collections (harness/heap.py). Measured on the library's first
    round in a process (the one round a pytest worker runs): ~15% less CPU than freezing before the
    SDK is imported."""
    from azure.core.settings import settings
    from fakeazure.arm import WELL_KNOWN_SUBSCRIPTION
    from harness.heap import freeze_long_lived
    sdk_clients(WELL_KNOWN_SUBSCRIPTION)         # the fake's default subscription (fake_azure)
    # azure-core asks settings.tracing_enabled() at each operation (its tracing decorator) and each request
    # (DistributedTracingPolicy), each time reading AZURE_TRACING_ENABLED and AZURE_SDK_TRACING_IMPLEMENTATION
    # from os.environ (azure-core 1.41.0 azure/core/settings.py PrioritizedSetting.__call__): the value they
    # give now is set as the user value, the documented way to configure it (settings.tracing_enabled = ...)
    settings.tracing_enabled = settings.tracing_enabled()
    freeze_long_lived()


@functools.lru_cache(maxsize=1)
def instance_type_cache() -> itcache.InstanceTypeCache:
    """The InstanceTypeCache of this process's simulated runs. Its entries are keyed by the SKU
    list and SKU dicts they were built from (held, compared by identity) and by the node class,
    cluster settings and profile, so a run only finds what was built from the same inputs; the SKU
    list of a run that read the same pages as an earlier one is that run's list object
    (harness/loop/azure/sdk.py _read_pages). Building the static parts was ~10% of a typical run."""
    return itcache.InstanceTypeCache()


class SimulatedEngine:
    name = "simulated"
    cluster_options: dict = {}

    def cluster_options_for(self, scenario: Scenario, profile: str | None = None, backend: str = "embedded") -> dict:
        """Every run shares the session's cluster: the loop reads given.cluster.kubernetesVersion itself."""
        return self.cluster_options

    def available(self, backend: str) -> tuple[bool, str]:
        from harness.backends.registry import get_backend
        return get_backend(backend).available()

    def skip_reason(self, scenario: Scenario, cluster: Cluster, profile: str | None = None) -> str | None:
        from harness.model.upstream.provisionmodes import refusal
        return refusal(scenario, profile)

    def start(self, scenario: Scenario, profile: str, cluster: Cluster, outcome: Outcome, *,
              max_iterations: int | None = None, record_bodies: bool = False) -> SimulatedRun:
        """`record_bodies`: put the VM/NIC bodies the fake stored into the outcome (the conformance
        report compares them with the real engine's)."""
        run = SimulatedRun(scenario, profile, cluster, max_iterations, record_bodies)
        if scenario.given.get("knobs"):      # which release they replay: the one the real engine runs
            outcome.notices.append(knob_release(profile, scenario.given["knobs"], scenario.api_versions).notice)
        outcome.notices += run.notices
        return run


class SimulatedRun:
    def __init__(self, scenario: Scenario, profile: str, cluster: Cluster, max_iterations: int | None,
                 record_bodies: bool):
        import fakeazure
        self.scenario, self.cluster, self.record_bodies = scenario, cluster, record_bodies
        self.in_flight: tuple[str, ...] = ()
        self.unjudged: str | None = None         # its settle fires no disruption timer (Run.unjudged)
        self.reported_refusals = 0               # of sim.workloads.refused, the ones read_back reported
        cluster.reset()
        prof = profile_with_knobs(profile, scenario.given.get("knobs"))
        cluster.install_profile(prof if prof.fingerprint else profile)
        self.settings = cluster_settings(scenario)
        loop_cfg = scenario.given.get("loop") or {}
        self.notices: list[str] = []
        min_values_policy = str(loop_cfg.get("minValuesPolicy", "Strict"))
        if min_values_policy != "Strict" and not prof.min_values_policy:
            # MIN_VALUES_POLICY arrived in core v1.6.0 (sigs.k8s.io/karpenter 7034d838, #2299): an older core
            # ignores the variable and enforces minValues strictly
            self.notices.append(f"given.loop.minValuesPolicy {min_values_policy}: core {prof.core.get('version', '?')} "
                                "has no MIN_VALUES_POLICY (from v1.6.0); minValues is enforced strictly")
            min_values_policy = "Strict"
        cfg = SimConfig(
            scenario=scenario.name, profile=prof, backend=cluster.backend, seed=scenario.seed,
            cluster=itmod.ClusterParams.from_dict(self.settings),
            max_iterations=max_iterations or int(loop_cfg.get("maxIterations") or iteration_bound(
                len(scenario.given.get("existingNodes") or []))),
            runaway_threshold=int(loop_cfg.get("runawayThreshold", 3)),
            min_values_policy=min_values_policy,
            preference_policy=str(loop_cfg.get("preferencePolicy", "Respect")),
            binding=str(loop_cfg.get("binding", "kube-scheduler")),
            nodes_ready=str(loop_cfg.get("nodesReady", "together")),
            pods_arrive=str(loop_cfg.get("podsArrive", "together")),
            launches=str(loop_cfg.get("launches", "together")),
            controller_pods=str(loop_cfg.get("controllerPods", "first")),
            rollout_pods=str(loop_cfg.get("rolloutPods", "after")),
            next_command=str(loop_cfg.get("nextCommand", "afterDrain")),
            replacement_failure=str(loop_cfg.get("replacementFailure", "untaintFirst")),
            feature_gates=dict(scenario.given.get("featureGates") or {}),
            pricing=str(scenario.given.get("pricing", "retail")),
            horizon=scenario_duration(loop_cfg["horizon"]) if "horizon" in loop_cfg else None,
            node_boot=scenario_duration(loop_cfg["nodeBoot"]) if "nodeBoot" in loop_cfg else 0.0,
            vm_delete=scenario_duration(loop_cfg["vmDelete"]) if "vmDelete" in loop_cfg else 0.0,
            timings_given=frozenset(k for k in TIMING_KEYS if k in loop_cfg),
        )
        if hasattr(cluster, "configure"):          # the embedded API server emulates the scenario's version
            cluster.configure(kubernetes_version=cfg.cluster.kubernetes_version)
        clock = SimClock(start_of(scenario.given))      # a dump's time (given.startTime) or EPOCH
        self.fake = fake_azure(scenario, clock)
        # real backends talk to a loopback kube-apiserver through `requests` too: let those through
        transport, compute, network, containerservice = sdk_clients(self.fake.subscription_id)
        aks = None
        if is_machine_mode(cfg.cluster.provision_mode):
            # the Machine API modes create AKS machines in the pool the real engine's controller uses too
            add_machines_pool(self.fake, self.settings, prof, cluster)
            aks = AKSMachines(containerservice, machines_pool(self.settings))
        self.context = contextlib.ExitStack()
        if cluster.backend == "embedded":
            # nothing in the run goes through `requests`: the transport's guard is mock_azure's without the patch
            self.context.enter_context(transport.serving(self.fake, guard=True))
        else:
            self.context.enter_context(fakeazure.mock_azure(self.fake, passthrough=True))
            self.context.enter_context(transport.serving(self.fake))
        self.sim = Simulation(cfg, cluster, self.fake, compute, network, clock, it_cache=instance_type_cache(),
                              aks=aks)

    def apply(self, manifests: list[dict]) -> None:
        self.sim.apply(manifests)                  # Simulation.apply copies them (and updates what exists)
        self.sim.validate_nodepools()

    def seed(self, entries: list[dict]) -> None:
        self.sim.own_replicasets([m.obj for m in self.scenario.manifests])
        self.sim.seed(entries)                     # loop/seed.py

    def restrict_at_start(self, entries: list[dict]) -> None:
        restrict(self.fake, entries)
        self.sim.restarted()           # as the real engine restarts its controller (RealRun.restrict_at_start)

    def settle(self, until: str | None = None) -> RunResult:
        result = self.sim.converge(until)
        self.in_flight = self.sim.paused
        return result

    def play(self, step: dict, manifests: list[dict]) -> str | None:
        """Play a step's actions in the one order (steps.py ACTIONS); the simulation can play every one."""
        play(self, step, manifests)
        return None

    def step_advance(self, duration: str | float) -> None:
        self.sim.advance(scenario_duration(duration))

    def step_crash(self, what: str) -> None:
        self.sim.crash(f"a crash step killed the {what}")

    def step_cluster(self, settings: dict) -> None:
        self.settings = {**self.settings, **settings}
        self.sim.set_cluster(itmod.ClusterParams.from_dict(self.settings))

    def step_faults(self, faults: list[dict]) -> None:
        for f in faults:
            self.fake.add_fault(f)

    def step_restrict(self, entries: list[dict]) -> None:
        restrict(self.fake, entries)

    def step_evict(self, ev: dict) -> None:
        evict(self.sim, self.fake, ev)              # StepFailed when the run's state does not allow it

    def step_label(self, entries: list[dict]) -> None:
        for e in entries:
            self._verb(self.sim.kubectl.metadata, "label", e["kind"], e["name"], e.get("namespace"), e["labels"])

    def step_annotate(self, entries: list[dict]) -> None:
        for e in entries:
            self._verb(self.sim.kubectl.metadata, "annotate", e["kind"], e["name"], e.get("namespace"),
                       e["annotations"])

    def step_cordon(self, nodes: list[str]) -> None:
        for n in nodes:
            self._verb(self.sim.kubectl.cordon, n)

    def step_uncordon(self, nodes: list[str]) -> None:
        for n in nodes:
            self._verb(self.sim.kubectl.cordon, n, "uncordon", False)

    def step_drain(self, nodes: list[str]) -> None:
        for n in nodes:
            self._verb(self.sim.kubectl.drain, n)

    def step_scale(self, entries: list[dict]) -> None:
        for e in entries:
            kind, name = workload_of(e)
            self._verb(self.sim.kubectl.scale, name, e["replicas"], e.get("namespace"), kind)

    def step_restart(self, entries: list[dict]) -> None:
        for e in entries:
            kind, name = workload_of(e)
            self._verb(self.sim.kubectl.restart, name, e.get("namespace"), kind)

    @staticmethod
    def _verb(verb, *args) -> None:
        """A kubectl verb (harness/loop/kube/kubectl.py); the cluster's refusal fails the step."""
        try:
            verb(*args)
        except KubectlError as e:
            raise StepFailed(e.key, e.wanted, e.reason) from None

    def step_delete(self, refs: list[dict]) -> None:
        for d in refs:
            if d["kind"] in ("Node", "NodeClaim"):     # Karpenter's termination, or the pod GC's (kubectl.py)
                self._verb(self.sim.kubectl.delete, d["kind"], d["name"])
                continue
            try:
                self.sim.workloads.delete(d["kind"], d["name"], d.get("namespace"))
            except APIRejected as e:      # e.g. a NodePool the API server refused never existed
                self.sim.trace(f"step delete of {d['kind']} {d['name']}: {e.message}")

    def step_apply(self, manifests: list[dict]) -> None:
        self.apply(manifests)

    def applicable(self, expect: dict, root: str) -> tuple[dict, list[NotApplicable]]:
        return expect, []

    def read_back(self, result: RunResult, where: str, outcome: Outcome) -> list[Mismatch]:
        """A backend that runs the real components (kind: kube-scheduler, kubelets) puts what they did
        into the result; where that differs from the loop, a blocking difference is a mismatch and the
        rest are notices (in `outcome.notices` and the trace)."""
        # a PriorityClass, LimitRange, ResourceQuota or ReplicaSet the API server refused is an input error, as the
        # real engine reports it (RealRun.read_back)
        refused = self.sim.workloads.refused[self.reported_refusals:]
        self.reported_refusals += len(refused)
        out = [Mismatch(f"{where}manifests", "applied", err, "the API server refused it") for err in refused]
        if not hasattr(self.cluster, "read_back"):
            return out
        for f in self.cluster.read_back(result):
            if f.blocking:
                out.append(Mismatch(f"{where}{f.path}", f.loop, f.real, f.detail))
            else:
                text = f"{where}{f.path}: loop {f.loop!r}, real {f.real!r} ({f.detail})"
                outcome.notices.append(text)
                result.trace.append(f"[real] {text}")
                emit([Notice(str(outcome.scenario.file), outcome.scenario.line, text, "real")])
        return out

    def finish(self, outcome: Outcome, why: list[str] | None) -> None:
        """A failed run (or `why`: pod names) gets the why view of its unplaced pods, computed after
        every check."""
        if outcome.mismatches or why:
            outcome.why = explain_pending(self.sim, why)
        if self.record_bodies:
            outcome.vm_bodies = {vm["name"]: vm for vm in self.fake.vms()}
            outcome.nic_bodies = {n["name"]: n for n in self.fake.nics()}

    def close(self, outcome: Outcome) -> None:
        self.context.close()
