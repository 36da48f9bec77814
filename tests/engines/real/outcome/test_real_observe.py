"""The real engine's observer: which pods are the scenario's (harness/runner/engines/real/outcome/observe.py)."""
from types import SimpleNamespace

from harness.runner.engines.real.outcome.observe import Observer, claim_unbound, deployment_behind, statefulset_behind


def _pod(rs: str, uid: str) -> dict:
    return {"metadata": {"name": f"{rs}-abcde", "ownerReferences": [{"kind": "ReplicaSet", "name": rs, "uid": uid}]}}


def test_a_pod_of_a_replicaset_that_is_gone_is_not_the_scenarios():
    """kube-controller-manager can re-create a pod from its cached copy of the previous scenario's
    ReplicaSet after a reset (same name when the template is the same): found by the fuzzer, where a
    one-replica Deployment counted two pods."""
    rs_owner, live = {"w0-5d8f": "w0", "uid-new": "w0"}, {"uid-new", "uid-bare"}
    obs = SimpleNamespace(departed=frozenset({"uid-old"}))
    assert Observer._owner(obs, _pod("w0-5d8f", "uid-new"), rs_owner, live) == ("Deployment", "w0")
    assert Observer._owner(obs, _pod("w0-5d8f", "uid-old"), rs_owner, live) == ("", None)
    assert Observer._owner(obs, {"metadata": {"name": "p"}}, rs_owner, live) == ("", "")


def test_a_seeded_pod_evicted_before_its_replicaset_adopted_it_is_the_deployments():
    """The seeding creates a dump's ReplicaSet pods orphaned, with their ReplicaSet's pod-template-hash, for
    kube-controller-manager to adopt (existing.bind_pods). At 100 nodes a consolidation evicted four before it
    did: their last sight has no owner, and they counted as four bare pods deleted (issue 65's conformance run,
    2026-11-29). By the hash they are the Deployment's, as the simulation counts them."""
    obs = SimpleNamespace(departed=frozenset())
    pod = {"metadata": {"name": "app-0074-nzbhqlgmsj-f4qkd", "namespace": "default",
                        "labels": {"app": "app-0074", "pod-template-hash": "nzbhqlgmsj"}}}
    by_hash = {("default", "nzbhqlgmsj"): "app-0074"}
    assert Observer._owner(obs, pod, {}, set(), by_hash) == ("Deployment", "app-0074")
    assert Observer._owner(obs, pod, {}, set(), {("other", "nzbhqlgmsj"): "app-0074"}) == ("", "")
    assert Observer._owner(obs, pod, {}, set()) == ("", "")


def test_a_pod_of_a_live_replicaset_without_a_deployment_is_kept():
    obs = SimpleNamespace(departed=frozenset())
    assert Observer._owner(obs, _pod("bare", "uid-bare"), {}, {"uid-bare"})[1] is not None


def test_a_seeded_pod_of_a_replicaset_that_never_existed_is_the_scenarios():
    """A dump's terminating pod keeps its ReplicaSet reference (uid and all; its finalizers hold it): that
    ReplicaSet was never on this cluster, so the pod is no earlier scenario's orphan (deleting-nodes
    should-not-reschedule-pods-not-active-owned-by-a-replicaset)."""
    obs = SimpleNamespace(departed=frozenset({"uid-old"}))
    assert Observer._owner(obs, _pod("rs", "uid-dump"), {}, set()) == ("Deployment", "rs")


def test_a_nodeclaim_a_launch_failure_deleted_keeps_the_run_in_flight_until_the_retry():
    """A provisioning round that was already running when the failed NodeClaim went away is not the
    round that retries its pods (the CI subset's zonal-allocation-failure-moves-zone settled between
    the two): the run waits for a later NodeClaim or RELAUNCH_SECONDS."""
    from types import SimpleNamespace
    import time

    from harness.runner.engines.real.outcome import observe

    obs = SimpleNamespace(pending=lambda: frozenset({("default/web", "Unschedulable", "")}),
                          claims={"a": {"metadata": {"creationTimestamp": "2026-11-23T07:00:00Z"}}},
                          deleted={"a"}, launched=set(), failures={"a": [{"reason": "ZonalAllocationFailed"}]},
                          launched_condition={"a"}, deleted_at={"a": time.monotonic()})
    assert Observer._awaiting_relaunch(obs) == ["a (launch failed; its pods' next provisioning round)"]
    obs.claims["b"] = {"metadata": {"creationTimestamp": "2026-11-23T07:00:03Z"}}     # the retry
    assert Observer._awaiting_relaunch(obs) == []
    del obs.claims["b"]
    obs.deleted_at["a"] -= observe.RELAUNCH_SECONDS                                     # none came
    assert Observer._awaiting_relaunch(obs) == []
    obs.deleted_at["a"] += observe.RELAUNCH_SECONDS
    obs.failures = {}           # the failed create and the deletion fell between two polls
    assert Observer._awaiting_relaunch(obs) == ["a (launch failed; its pods' next provisioning round)"]
    obs.launched_condition = set()                       # never launched: deleted for another reason
    assert Observer._awaiting_relaunch(obs) == []
    obs.launched_condition = {"a"}
    obs.pending = lambda: frozenset()                                                   # nothing waits
    assert Observer._awaiting_relaunch(obs) == []


def test_the_unavailable_offerings_cache_is_read_from_the_controllers_debug_log(tmp_path):
    """provider v1.14.0 pkg/cache/unavailableofferings.go logs every entry it sets; the live ones
    (set again: the TTL extends) are the cache the simulation snapshots (harness/loop/azure/unavailable.py)."""
    import datetime as dt
    import json
    from types import SimpleNamespace
    t0 = dt.datetime(2026, 11, 23, 17, 0, tzinfo=dt.timezone.utc)

    def line(sec, msg, **kv):
        stamp = (t0 + dt.timedelta(seconds=sec)).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
        return json.dumps({"level": "DEBUG", "time": stamp, "logger": "controller", "message": msg, **kv})
    log = tmp_path / "controller.log"
    log.write_text("\n".join([
        line(0, "removing offering from offerings", unavailable="SkuNotAvailable", **{
            "instance-type": "Standard_D2_v3", "zone": "", "capacity-type": "on-demand", "ttl": "1h0m0s"}),
        line(1, "marking VM Family unavailable in zone", family="standardDv3Family", **{
            "capacity-type": "on-demand", "zone": "", "max-cpu": 2, "ttl": "1h0m0s"}),
        line(2, "removing offering from offerings", unavailable="SpotUnavailable", **{"capacity-type": "spot", "ttl": "3m0s"}),
        "not json", line(3, "something else")]) + "\n")
    obs = SimpleNamespace(log_path=log, restarted_at=None)
    obs._log_records = lambda needle, without=None: Observer._log_records(obs, needle, without)
    now = (t0 + dt.timedelta(seconds=10)).timestamp()
    got = {e["key"]: e for e in Observer.unavailable_offerings(obs, now)}
    assert sorted(got) == ["on-demand:Standard_D2_v3:", "skufamily:standarddv3family::on-demand", "spot::"]
    assert got["on-demand:Standard_D2_v3:"]["size"] == "Standard_D2_v3" and got["on-demand:Standard_D2_v3:"]["ttl"] == 3600
    assert got["spot::"]["expiresIn"] == 172.0
    later = (t0 + dt.timedelta(minutes=5)).timestamp()       # the spot entry's 3 minutes are over
    assert "spot::" not in {e["key"] for e in Observer.unavailable_offerings(obs, later)}


def test_a_deployment_is_behind_until_its_pods_exist():
    """A run must not settle on "no pod pending" before kube-controller-manager made the pods."""
    d = {"metadata": {"name": "big", "generation": 1}, "spec": {"replicas": 2}, "status": {}}
    assert deployment_behind(d) == "Deployment/big (0 of 2 pods)"
    d["status"] = {"observedGeneration": 1, "replicas": 1}
    assert deployment_behind(d) == "Deployment/big (1 of 2 pods)"
    d["status"]["replicas"] = 2
    assert deployment_behind(d) is None
    d["metadata"]["generation"] = 2                   # scaled: the controller has not seen it yet
    assert deployment_behind(d) == "Deployment/big (2 of 2 pods)"
    assert deployment_behind({"metadata": {"name": "one"}, "spec": {},
                              "status": {"observedGeneration": 1, "replicas": 1}}) is None


def test_a_statefulset_is_behind_while_its_controller_will_act_on_it():
    """OrderedReady makes the next pod only once every pod it has is Ready: a pending pod holds nothing (its
    provisioning does); a rolling update is behind until the ordinals above the partition are updated."""
    st = {"metadata": {"name": "web", "generation": 1}, "spec": {"replicas": 3}, "status": {}}
    assert statefulset_behind(st) == "StatefulSet/web (spec not yet observed)"
    st["status"] = {"observedGeneration": 1, "replicas": 1, "readyReplicas": 1}
    assert statefulset_behind(st) == "StatefulSet/web (1 of 3 pods)"
    st["status"]["readyReplicas"] = 0                  # web-0 pending: Karpenter's to act on
    assert statefulset_behind(st) is None
    st["spec"]["podManagementPolicy"] = "Parallel"     # Parallel makes the rest at once
    assert statefulset_behind(st) == "StatefulSet/web (1 of 3 pods)"
    st["spec"] = {"replicas": 3, "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"partition": 1}}}
    st["status"] = {"observedGeneration": 1, "replicas": 3, "readyReplicas": 3, "updatedReplicas": 1}
    assert statefulset_behind(st) == "StatefulSet/web (1 of 2 pods updated)"
    st["status"]["updatedReplicas"] = 2
    assert statefulset_behind(st) is None
    st["spec"]["updateStrategy"] = {"type": "OnDelete"}
    st["status"]["updatedReplicas"] = 0
    assert statefulset_behind(st) is None


def test_a_deleted_pods_own_last_event_says_who_deleted_it():
    from harness.loop.result import PodResult, RunResult
    from harness.runner.engines.real.outcome.observe import deletion_causes
    r = RunResult("s", "upstream", "local", 1)
    r.pods["default/p"] = PodResult("p", "default", "Pod", "p", state="deleted")
    r.pods["default/q"] = PodResult("q", "default", "Pod", "q", state="deleted")
    r.pods["default/r"] = PodResult("r", "default", "Pod", "r", state="scheduled")
    pod = {"kind": "Pod", "namespace": "default", "name": "p"}
    events = [{"involvedObject": pod, "reason": "FailedScheduling", "message": "0/1 nodes are available"},
              {"involvedObject": pod, "reason": "TaintManagerEviction", "message": "Marking for deletion Pod default/p"},
              {"involvedObject": pod, "reason": "Scheduled", "message": "bound"}]
    assert deletion_causes(r, events) == [
        "[deleted] default/p: TaintManagerEviction: Marking for deletion Pod default/p",
        "[deleted] default/q: no event of the pod says by whom"]


def test_a_pod_turning_terminating_is_a_change_a_disruption_pass_must_see():
    """Core counts a terminating pod as gone from its node (v1.14.0 pkg/utils/pod/scheduling.go
    IsReschedulable): its node may be empty before the pod object goes, so the settle's fingerprint
    changes with the deletionTimestamp and a pass is asked for only after every one of them."""
    from types import SimpleNamespace
    pod = {"metadata": {"namespace": "default", "name": "web-1"}, "spec": {"nodeName": "n1"}}
    obs = SimpleNamespace(claims={}, deleted=set(), node_objects=[], pod_objects=[pod], nodepool_objects=[],
                          _azure_writes=lambda: ())
    before = Observer.fingerprint(obs)
    pod["metadata"]["deletionTimestamp"] = "2026-11-25T11:00:00Z"
    assert Observer.fingerprint(obs) != before


def test_a_write_answered_as_before_is_no_change():
    """A launch core retries in a loop re-PUTs the same NIC, a VM that cannot be deleted is refused the
    same each garbage-collection period: neither is a change (each restarted the quiet window, and such a
    run waited 2-3 minutes). A write that changes the fake's VMs or NICs, or a refusal not seen before, is."""
    from types import SimpleNamespace

    from fakeazure.dispatch import RequestRecord
    nic = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/a"
    vm = "/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/virtualMachines/a"
    state = {"vms": [], "nics": [{"name": "a"}]}
    fake = SimpleNamespace(requests=[RequestRecord("PUT", nic, 201)], vms=lambda: state["vms"], nics=lambda: state["nics"])
    obs = SimpleNamespace(fake=fake, _writes_seen=-1, _writes_key=())
    first = Observer._azure_writes(obs)
    fake.requests += [RequestRecord("GET", nic, 500), RequestRecord("PUT", nic, 200)]
    assert Observer._azure_writes(obs) == first                  # the same NIC PUT again
    fake.requests.append(RequestRecord("DELETE", vm, 500))
    refused = Observer._azure_writes(obs)
    assert refused != first                                      # a refusal not seen before
    fake.requests.append(RequestRecord("DELETE", vm, 500))
    assert Observer._azure_writes(obs) == refused                # ... and the same refusal again
    state["vms"] = [{"name": "a", "properties": {"provisioningState": "Creating"}}]
    fake.requests.append(RequestRecord("PUT", vm, 201))
    assert Observer._azure_writes(obs) != refused                # a VM created


def test_a_during_launch_step_waits_for_every_nodeclaim_of_the_round_to_launch():
    """fuzz-c3c76bc446: a round's two NodeClaims launch in parallel; stopping at the first VM created
    played the step with the other still unlaunched (the simulation launches a round in one pass)."""
    from types import SimpleNamespace
    obs = SimpleNamespace(live={"a", "b", "c"}, deleted={"c"}, launched={"a"}, vm_failures={})
    assert Observer.launching(obs) == ["b"]
    obs.launched.add("b")
    assert Observer.launching(obs) == []
    obs.launched.discard("b")
    obs.vm_failures["b"] = {"reason": "SkuNotAvailable"}          # its launch ended, failed
    assert Observer.launching(obs) == []


def test_a_during_launch_step_waits_for_pods_no_provisioning_round_answered():
    """fuzz-c3c76bc446 again: w0's and w1's pods reached Karpenter in two rounds; the first round's launch
    alone is not the in-flight state the simulation steps in. A pod is answered by a Nominated event or
    Karpenter's FailedScheduling, or is one Karpenter ignores."""
    from types import SimpleNamespace

    from harness.runner.engines.real.outcome.observe import KARPENTER_PREFIX

    def event(reason, name, message):
        return {"reason": reason, "message": message, "involvedObject": {"kind": "Pod", "namespace": "default", "name": name}}
    events = [event("FailedScheduling", "w2", KARPENTER_PREFIX + "incompatible requirements"),
              event("FailedScheduling", "w3", "0/1 nodes are available")]          # kube-scheduler's
    obs = SimpleNamespace(ignored_pods=lambda: {"default/w4": "ignored"}, _events=lambda: events,
                          nomination_events=lambda events=None: ({"default/w0": {"np2-a"}}, set()),
                          pending=lambda: frozenset((f"default/{n}", "Unschedulable", "") for n in ("w0", "w1", "w2", "w3", "w4")))
    assert Observer.unplanned(obs) == ["default/w1", "default/w3"]


def test_a_namespace_the_scenario_applies_is_read_back():
    """A Namespace manifest names where the scenario's pods may live (a seeded pod in it, core's topology
    `wrong-namespace` cases): the observer lists pods there too, as the simulation reports them."""
    obs = SimpleNamespace(namespaces={"default"}, deployments=set(), nodeclasses={})
    Observer.applied(obs, {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "wrong-namespace"}}, None)
    assert obs.namespaces == {"default", "wrong-namespace"}


def test_a_nodepool_update_is_decided_once_its_generation_is_reconciled():
    """An updated NodePool's Ready condition still carries the generation the controller last saw: the
    workloads of the same step wait until it reconciled the new one."""
    from harness.runner.engines.real.outcome.observe import nodepool_decided

    def pool(generation, observed):
        return {"metadata": {"generation": generation}, "status": {"conditions": [
            {"type": "Ready", "status": "True", "observedGeneration": observed}]}}
    assert nodepool_decided(pool(1, 1))
    assert not nodepool_decided(pool(2, 1))
    assert nodepool_decided(pool(2, 2))
    assert nodepool_decided({"metadata": {"generation": 3}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    # core v0.36's karpenter.sh/v1beta1 NodePool has no conditions: its provisioner takes it at once
    assert nodepool_decided({"apiVersion": "karpenter.sh/v1beta1", "metadata": {"generation": 1}})


def test_a_claim_naming_its_volume_is_in_flight_until_the_pv_controller_binds_it():
    """r30-pv-csi-zone-drives-nodeclaim-zone settled under -n 4 before kube-controller-manager's binder had
    bound the pre-bound claim, with its pod "ignored" by Karpenter; a claim that can never bind holds nothing."""
    def pvc(annotated=False, volume="pv-a", name="data", uid="u1"):
        meta = {"name": name, "namespace": "default", "uid": uid}
        if annotated:
            meta["annotations"] = {"pv.kubernetes.io/bind-completed": "yes"}
        return {"metadata": meta, "spec": {"volumeName": volume, "storageClassName": "managed-csi",
                                           "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "10Gi"}}}}

    def pv(ref=None, **spec):
        return {"metadata": {"name": "pv-a"}, "spec": {"storageClassName": "managed-csi", "accessModes": ["ReadWriteOnce"],
                                                       "capacity": {"storage": "10Gi"}, **({"claimRef": ref} if ref else {}), **spec}}

    assert claim_unbound(pvc(), {"pv-a": pv()}) == "PersistentVolumeClaim/data (not yet bound to pv-a)"
    assert claim_unbound(pvc(), {"pv-a": pv({"namespace": "default", "name": "data"})}) is not None
    assert claim_unbound(pvc(), {"pv-a": pv({"namespace": "default", "name": "data", "uid": "u1"})}) is not None
    assert claim_unbound(pvc(annotated=True), {"pv-a": pv()}) is None
    assert claim_unbound(pvc(), {}) is None                                                  # no such volume
    assert claim_unbound(pvc(), {"pv-a": pv({"namespace": "default", "name": "other"})}) is None
    assert claim_unbound(pvc(), {"pv-a": pv({"namespace": "default", "name": "data", "uid": "u0"})}) is None
    assert claim_unbound({"metadata": {"name": "d", "namespace": "default"}, "spec": {}}, {}) is None
    # a volume that does not satisfy the claim (pv_controller.go checkVolumeSatisfyClaim) never binds it
    assert claim_unbound(pvc(), {"pv-a": pv(storageClassName="")}) is None
    assert claim_unbound(pvc(), {"pv-a": pv(capacity={"storage": "5Gi"})}) is None
    assert claim_unbound(pvc(), {"pv-a": pv(accessModes=["ReadOnlyMany"])}) is None
    assert claim_unbound(pvc(), {"pv-a": pv(volumeMode="Block")}) is None


def test_an_ignored_pod_is_read_from_either_core_log_format(tmp_path):
    """Core before v1.10.0 writes Validate's error into the "ignoring pod" message itself
    (sigs.k8s.io/karpenter v1.4.0 provisioner.go GetPendingPods); from v1.10.0 (#2860) it is the
    `error` field. Provider v1.4.1's own controller ignored the pod and was read as not ignoring it."""
    import json
    from types import SimpleNamespace
    why = 'label kubernetes.io/team is restricted; specify a well known label'
    log = tmp_path / "controller.log"
    log.write_text("\n".join([
        json.dumps({"level": "DEBUG", "message": f"ignoring pod, {why}", "Pod": {"name": "old", "namespace": "default"}}),
        json.dumps({"level": "DEBUG", "message": "ignoring pod", "error": why, "Pod": {"name": "new", "namespace": "default"}}),
        json.dumps({"level": "DEBUG", "message": "ignoring pods without a NodePool", "Pod": {"name": "x", "namespace": "default"}}),
    ]) + "\n")
    obs = SimpleNamespace(log_path=log, restarted_at=None)
    obs._log_records = lambda needle, without=None: Observer._log_records(obs, needle, without)
    assert Observer.ignored_pods(obs) == {"default/old": why, "default/new": why}


def test_a_completed_job_pod_is_succeeded_and_counts_for_its_cronjob():
    """A Job's pod the stand-in kubelet finished (phase Succeeded) is read as the simulation records it
    (jobs.py _complete): succeeded, on no node; its Job's CronJob is named (result.py pods_of)."""
    from harness.loop.result import RunResult
    ref = [{"kind": "Job", "name": "reports-29919435", "controller": True}]
    pods = [{"metadata": {"name": "reports-29919435-x", "namespace": "default", "ownerReferences": ref},
             "spec": {"nodeName": "aks-a"}, "status": {"phase": "Succeeded"}},
            {"metadata": {"name": "reports-29919435-y", "namespace": "default", "ownerReferences": ref},
             "spec": {"nodeName": "aks-a"}, "status": {"phase": "Running"}}]
    jobs = [{"metadata": {"name": "reports-29919435", "namespace": "default",
                          "ownerReferences": [{"kind": "CronJob", "name": "reports", "controller": True}]}}]
    cluster = SimpleNamespace(list=lambda kind, ns=None: {"Pod": pods, "Job": jobs}.get(kind, []),
                              admin=SimpleNamespace(request=lambda *a: {"items": []}))
    obs = SimpleNamespace(cluster=cluster, namespaces={"default"}, jobs=True, pods_seen={}, departed=frozenset(),
                          nominations=lambda: {}, ignored_pods=lambda: {}, scenario=SimpleNamespace(manifests=[]))
    obs._owner = lambda p, rs, live, by_hash=None: Observer._owner(obs, p, rs, live, by_hash)
    obs._replicasets = lambda: Observer._replicasets(obs)
    r = RunResult("s", "upstream", "local", 1)
    Observer._pods(obs, r, [])
    done, running = r.pods["default/reports-29919435-x"], r.pods["default/reports-29919435-y"]
    assert (done.state, done.node, done.reason) == ("succeeded", None, "completed on aks-a")
    assert (running.state, running.node) == ("scheduled", "aks-a")
    assert (done.owner_kind, done.owner_name, done.cronjob) == ("Job", "reports-29919435", "reports")
    assert len(r.pods_of("reports")) == 2


def test_labels_of_a_machines_bootstrap_are_written_by_aks():
    """On the AKS Machine API path the label table names AKS as the writer of what its bootstrap carries, as the
    simulation does (aksmachine.py writer); the kubelet's own labels stay the kubelet's."""
    from harness.model.labels.aksmachine import writer
    from harness.runner.engines.real.cluster.kubelet import Bootstrap, KubeletRecord
    from harness.runner.engines.real.outcome.observe import _provenance
    rec = KubeletRecord("vm", "vm", Bootstrap({"team": "a"}, {}, aks_made=True, labels_writer=writer()),
                        self_labels={"kubernetes.io/os": "linux"})
    got = _provenance({"team": "a", "kubernetes.io/os": "linux"}, rec, {})
    assert [w.writer for w in got["team"]] == [writer()] and [w.writer for w in got["kubernetes.io/os"]] == ["kubelet"]
