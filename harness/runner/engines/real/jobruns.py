"""Jobs and CronJobs on the real engine: when a Job's pod completes and what its kubelet then reports, and the
instants an `advance` that moves the run's clock (runclock.py) stops at so that kube-controller-manager's Job
and CronJob controllers act at them, as the simulation's timers do (harness/loop/controllers/jobs.py
next_deadline).

A pod's run time is the Job's harness.karpenter.azure.com/run-duration (jobs.run_duration, the one reading of
it; a CronJob's Job carries its jobTemplate's annotations: k8s.io/kubernetes v1.36.3
pkg/controller/cronjob/utils.go getJobFromTemplate2), counted from the pod's status.startTime, which the
stand-in kubelet stamps on the run's clock. Why the jump stops: docs/architecture/real-engine.md "Jobs and
CronJobs"."""
from __future__ import annotations

from datetime import datetime, timezone

from harness.loop.clock import parse_rfc3339
from harness.loop.controllers.jobs import run_duration
from harness.model.cron import CronError, parse_schedule

# a completed container's reason (k8s.io/kubernetes v1.36.3 pkg/kubelet/kuberuntime kuberuntime_container.go:
# an exit code 0 is "Completed"); a terminal pod's Ready and ContainersReady conditions say PodCompleted
# (pkg/kubelet/status generate.go PodCompleted)
COMPLETED = "Completed"
POD_COMPLETED = "PodCompleted"
# a jump stops this long after a CronJob's schedule time: the CronJob controller itself requeues 100 ms past it
# (k8s.io/kubernetes v1.36.3 pkg/controller/cronjob/utils.go nextScheduleDelta), and a sync that read its clock
# a moment before the instant (kube-controller-manager reads the clock file every 10 ms) would find the
# previous time still the most recent one (harness assumption: 1 s covers that read on a loaded machine)
SCHEDULE_SLACK = 1.0


def job_of(pod: dict) -> str | None:
    """The name of the Job that controls the pod, if one does."""
    return next((r.get("name") for r in pod["metadata"].get("ownerReferences") or []
                 if r.get("kind") == "Job" and r.get("controller")), None)


def cronjob_of(job: dict) -> str:
    """The name of the CronJob that controls the Job, or ""."""
    return next((r.get("name", "") for r in job["metadata"].get("ownerReferences") or []
                 if r.get("kind") == "CronJob" and r.get("controller")), "")


def _time(text: str | None) -> float | None:
    try:
        return parse_rfc3339(text) if text else None
    except ValueError:
        return None


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def completes_at(pod: dict, job: dict | None) -> float | None:
    """When the running pod's containers exit: its startTime plus its Job's run-duration; None while it has not
    started, when it is not running, or when its Job gives no run-duration (it runs until the scenario ends)."""
    status = pod.get("status") or {}
    run = run_duration(job["metadata"]) if job else None
    started = _time(status.get("startTime"))
    if run is None or started is None or status.get("phase") != "Running" or pod["metadata"].get("deletionTimestamp"):
        return None
    return started + run


def completed_status(pod: dict, finished: float, now: str) -> dict:
    """The status a kubelet posts once every container exited 0 (restartPolicy Never or OnFailure, as a
    Job's pods have): phase Succeeded, each container terminated with exit code 0."""
    status = pod.get("status") or {}
    started = status.get("startTime") or now
    done = _stamp(finished)
    conds = [{"type": t, "status": "False", "reason": POD_COMPLETED, "lastTransitionTime": now}
             for t in ("Ready", "ContainersReady")]
    conds += [{"type": "PodReadyToStartContainers", "status": "False", "lastTransitionTime": now},
              {"type": "Initialized", "status": "True", "reason": POD_COMPLETED, "lastTransitionTime": started},
              {"type": "PodScheduled", "status": "True", "lastTransitionTime": started}]
    containers = [{"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False, "started": False,
                   "restartCount": 0, "state": {"terminated": {"exitCode": 0, "reason": COMPLETED,
                                                               "startedAt": started, "finishedAt": done}}}
                  for c in (pod.get("spec") or {}).get("containers") or []]
    return {"phase": "Succeeded", "conditions": conds, "containerStatuses": containers}


def next_timer(jobs: list[dict], cronjobs: list[dict], pods: list[dict], after: float, until: float) -> float | None:
    """The first instant in (after, until] at which the Jobs' and CronJobs' controllers or a Job's pod act: a
    running pod completes, an active Job's activeDeadlineSeconds passes (counted from its status.startTime:
    pkg/controller/job/job_controller.go pastActiveDeadline), a CronJob's next schedule time comes (after its
    lastScheduleTime, else its creationTimestamp: pkg/controller/cronjob/utils.go mostRecentScheduleTime)."""
    times: list[float] = []
    by_name = {(j["metadata"].get("namespace"), j["metadata"]["name"]): j for j in jobs}
    for p in pods:
        name = job_of(p)
        if name is not None and (t := completes_at(p, by_name.get((p["metadata"].get("namespace"), name)))):
            times.append(t)
    for j in jobs:
        spec, status = j.get("spec") or {}, j.get("status") or {}
        finished = any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
                       for c in status.get("conditions") or [])
        started = _time(status.get("startTime"))
        if spec.get("activeDeadlineSeconds") is not None and started is not None and not finished:
            times.append(started + float(spec["activeDeadlineSeconds"]))
    for cj in cronjobs:
        spec, status = cj.get("spec") or {}, cj.get("status") or {}
        if spec.get("suspend"):
            continue
        try:
            sched = parse_schedule(str(spec.get("schedule") or ""))
        except CronError:
            continue
        since = _time(status.get("lastScheduleTime")) or _time(cj["metadata"].get("creationTimestamp")) or after
        t = sched.next(max(since, after - SCHEDULE_SLACK))
        if t is not None:
            times.append(t + SCHEDULE_SLACK)
    due = [t for t in times if after < t <= until]
    return min(due, default=None)
