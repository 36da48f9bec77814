"""When an `advance` that moves the run's clock stops for a Job or CronJob (jobruns.py next_timer), and what a
completed Job pod's kubelet reports."""
from harness.loop.clock import EPOCH, parse_rfc3339
from harness.runner.engines.real import jobruns

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
