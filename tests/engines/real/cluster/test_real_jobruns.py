"""When an `advance` that moves the run's clock stops for a Job or CronJob (jobruns.py next_timer), and what a
completed Job pod's kubelet reports."""
from harness.loop.clock import EPOCH
from harness.model.kube.kubetime import parse_rfc3339
from harness.runner.engines.real.cluster import jobruns

RUN = {"harness.karpenter.azure.com/run-duration": "10m"}


def _pod(started="2026-01-01T00:00:00Z", phase="Running", job="reindex"):
    return {"metadata": {"name": f"{job}-x", "namespace": "default",
                         "ownerReferences": [{"kind": "Job", "name": job, "controller": True}]},
            "spec": {"nodeName": "n"}, "status": {"phase": phase, "startTime": started}}


def _job(name="reindex", annotations=RUN, **spec):
    return {"metadata": {"name": name, "namespace": "default", "annotations": annotations}, "spec": spec,
            "status": {"startTime": "2026-01-01T00:00:00Z"}}


def test_a_running_pod_completes_run_duration_after_its_start():
    assert jobruns.completes_at(_pod(), _job()) == EPOCH + 600
    assert jobruns.completes_at(_pod(phase="Succeeded"), _job()) is None
    assert jobruns.completes_at(_pod(), _job(annotations={})) is None     # runs until the scenario ends
    assert jobruns.completes_at(_pod(started=None), _job()) is None


def test_the_jump_stops_at_each_completion_deadline_and_schedule_time_inside_it():
    """As the simulation's advance fires jobs.py's timers (next_deadline) in turn."""
    pods, jobs = [_pod()], [_job(), _job("slow", activeDeadlineSeconds=300)]
    cron = {"metadata": {"name": "reports", "namespace": "default", "creationTimestamp": "2026-01-01T00:05:00Z"},
            "spec": {"schedule": "*/15 * * * *"}}
    assert jobruns.next_timer(jobs, [cron], pods, EPOCH, EPOCH + 3600) == EPOCH + 300          # the deadline
    assert jobruns.next_timer(jobs, [cron], pods, EPOCH + 300, EPOCH + 3600) == EPOCH + 600    # the completion
    assert jobruns.next_timer(jobs, [cron], pods, EPOCH + 600, EPOCH + 3600) == EPOCH + 901    # 00:15, 1 s after
    assert jobruns.next_timer(jobs, [cron], pods, EPOCH, EPOCH + 299) is None                   # none inside
    # after its lastScheduleTime; a suspended CronJob and a finished Job have none
    cron["status"] = {"lastScheduleTime": "2026-01-01T00:15:00Z"}
    assert jobruns.next_timer([], [cron], [], EPOCH + 901, EPOCH + 3600) == EPOCH + 1801
    cron["spec"]["suspend"] = True
    done = _job("slow", activeDeadlineSeconds=300)
    done["status"]["conditions"] = [{"type": "Failed", "status": "True"}]
    assert jobruns.next_timer([done], [cron], [], EPOCH, EPOCH + 3600) is None


def test_a_completed_pod_is_terminal_with_its_containers_exited_zero():
    status = jobruns.completed_status(_pod() | {"spec": {"containers": [{"name": "work"}]}}, EPOCH + 600,
                                      "2026-01-01T00:10:01Z")
    assert status["phase"] == "Succeeded"
    ready = next(c for c in status["conditions"] if c["type"] == "Ready")
    assert (ready["status"], ready["reason"]) == ("False", "PodCompleted")
    (c,) = status["containerStatuses"]
    assert parse_rfc3339(c["state"]["terminated"]["finishedAt"]) == EPOCH + 600
    assert jobruns.cronjob_of({"metadata": {"ownerReferences": [{"kind": "CronJob", "name": "r", "controller": True}]}}) == "r"


def test_the_run_waits_while_the_job_controller_finishes_what_happened():
    """Found on dumped-jobs-carry-on-from-their-status: the pod completed at 10:10, the Job was SuccessCriteriaMet
    a sync later and Complete only at the next step, because a 0.6 s quiet window ended the settle between the
    Job controller's batched syncs (1 s apart)."""
    counted = _pod(phase="Succeeded")
    uncounted = _pod(phase="Succeeded")
    uncounted["metadata"]["finalizers"] = [jobruns.JOB_TRACKING]
    met, done = _job(), _job()
    met["status"]["conditions"] = [{"type": "SuccessCriteriaMet", "status": "True"}]
    done["status"]["conditions"] = met["status"]["conditions"] + [{"type": "Complete", "status": "True"}]
    assert jobruns.unfinished([done], [counted, _pod()]) == []
    assert jobruns.unfinished([met], [uncounted]) == [
        "pod reindex-x of Job reindex finished; the Job controller has not counted it yet",
        "Job reindex: SuccessCriteriaMet, not yet Complete or Failed (the Job controller's next sync)"]


# -- a dump's status (as_created, carry_on): the live run is scenarios/workloads/dumped-jobs.scenario.yaml ----
import pytest  # noqa: E402

from harness.backends.embedded import EmbeddedBackend  # noqa: E402


@pytest.fixture()
def cluster():
    c = EmbeddedBackend().start()
    yield c
    c.close()


def _seeded(job, n=1):
    return {"existingNodes": [{"pods": [{"metadata": {"name": f"{job}-{i}", "ownerReferences": [
        {"apiVersion": "batch/v1", "kind": "Job", "name": job, "controller": True}]}} for i in range(n)]}]}


def _dumped(name="reindex", status=None, owner=None, **spec):
    meta = {"name": name, "namespace": "default"}
    if owner:
        meta["ownerReferences"] = [{"apiVersion": "batch/v1", "kind": "CronJob", "name": owner, "controller": True}]
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "status": status or {},
            "spec": {**spec, "template": {"spec": {"restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}


def test_a_dumped_job_is_created_holding_its_parallelism_at_the_pods_it_has(cluster):
    """Its first sync then neither makes nor deletes a pod whatever it reads of the status; a Job with seeded
    pods selects them by the seeding's label, so that sync adopts them."""
    job = _dumped(completions=3, parallelism=2, status={"succeeded": 1, "startTime": "2026-11-20T09:10:00Z"})
    (created,), (carried,) = jobruns.as_created(cluster, [job], _seeded("reindex"))
    assert "status" not in created and created["spec"]["parallelism"] == 1 and carried.parallelism == 2
    assert created["spec"]["manualSelector"] is True
    assert created["spec"]["selector"] == {"matchLabels": {jobruns.SEEDED_BY: "reindex"}}
    assert created["spec"]["template"]["metadata"]["labels"] == {jobruns.SEEDED_BY: "reindex"}
    assert jobruns.started_at(created, [carried]) == parse_rfc3339("2026-11-20T09:10:00Z")
    # no pods: held at 0, completions written as the API server defaults them, so it stays no work queue
    (created,), (carried,) = jobruns.as_created(cluster, [_dumped(status={"succeeded": 1})], {})
    assert (created["spec"]["parallelism"], created["spec"]["completions"], carried.parallelism) == (0, 1, 1)
    assert "manualSelector" not in created["spec"]
    # nothing dumped: as written; a suspended Job has no startTime to wait for
    plain = _dumped()
    plain.pop("status")
    assert jobruns.as_created(cluster, [plain], {}) == ([plain], [])
    assert jobruns.started_at({**job, "spec": {"suspend": True}}, [carried]) is None


def test_the_status_is_carried_on_and_a_cronjobs_job_named_active_before_it_is_owned(cluster):
    """The CronJob lists its running Job as active before the Job names it (syncCronJob calls an unlisted Job of
    its own an UnexpectedJob), then the Job gets its controller reference with the live uid."""
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "default"},
            "spec": {"schedule": "0 * * * *", "jobTemplate": {"spec": {"template": {"spec": {
                "restartPolicy": "Never", "containers": [{"name": "c", "image": "x"}]}}}}},
            "status": {"lastScheduleTime": "2026-11-20T10:00:00Z"}}
    job = _dumped("nightly-29919480", owner="nightly", status={"succeeded": 0, "startTime": "2026-11-20T10:00:00Z"},
                  completions=2, parallelism=2)
    objs, carried = jobruns.as_created(cluster, [cron, job], _seeded("nightly-29919480"))
    assert "ownerReferences" not in objs[1]["metadata"] and "status" not in objs[0]
    for o in objs:
        cluster.create(o)
    jobruns.carry_on(cluster, carried)
    live = cluster.get("Job", "nightly-29919480", "default")
    assert live["spec"]["parallelism"] == 2 and live["status"]["succeeded"] == 0
    stored = cluster.get("CronJob", "nightly", "default")
    assert stored["status"]["lastScheduleTime"] == "2026-11-20T10:00:00Z"
    assert [(a["name"], a["uid"]) for a in stored["status"]["active"]] == [("nightly-29919480", live["metadata"]["uid"])]
    (ref,) = live["metadata"]["ownerReferences"]
    assert (ref["name"], ref["uid"], ref["controller"]) == ("nightly", stored["metadata"]["uid"], True)
