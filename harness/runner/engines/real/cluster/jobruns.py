"""Jobs and CronJobs on the real engine: when a Job's pod completes and what its kubelet then reports, and the
instants an `advance` that moves the run's clock (runclock.py) stops at so that kube-controller-manager's Job
and CronJob controllers act at them, as the simulation's timers do (harness/loop/kube/jobs.py
next_deadline).

A pod's run time is the Job's harness.karpenter.azure.com/run-duration (jobs.run_duration, the one reading of
it; a CronJob's Job carries its jobTemplate's annotations: k8s.io/kubernetes v1.36.3
pkg/controller/cronjob/utils.go getJobFromTemplate2), counted from the pod's status.startTime, which the
stand-in kubelet stamps on the run's clock. A dump's Job and CronJob status (`harness new` keeps a Job's
succeeded and startTime, a CronJob's lastScheduleTime) is written through the status subresource after the
create, in an order in which neither controller acts on a half-written state (`as_created`, `carry_on`).
Why the jump stops and why that order: docs/architecture/real-engine.md "Jobs and CronJobs"."""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass

from harness.backends.base import ADMIN, retry_on_conflict
from harness.model.kube.kubetime import parse_rfc3339, rfc3339
from harness.loop.kube.jobs import run_duration
from harness.model.values.cron import CronError, parse_schedule

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
# a Job created with the clock at its dumped startTime gets the Job controller's stamp within this
START_TIMEOUT = 30.0
# the finalizer the Job controller puts on its pods and counts a finished pod by (k8s.io/api batch/v1
# JobTrackingFinalizer; pkg/controller/job/job_controller.go getValidPodsWithFilter)
JOB_TRACKING = "batch.kubernetes.io/job-tracking"
# the label a dumped Job selects its seeded pods by (the harness's own: the Job's generated selector names its
# uid, which a dump's pods cannot carry); the seeding's adopters select by it too (existing.py OWNER_LABEL)
SEEDED_BY = "harness.karpenter.azure.com/owner"


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
    return rfc3339(t)


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
        started = _time(status.get("startTime"))
        if spec.get("activeDeadlineSeconds") is not None and started is not None and not _finished(j):
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


def unfinished(jobs: list[dict], pods: list[dict]) -> list[str]:
    """What the Job controller has yet to do with what already happened, each as why the run waits for it: a
    finished pod it has not counted (its tracking finalizer still on), a Job whose SuccessCriteriaMet or
    FailureTarget condition is not yet Complete or Failed. It does each in a later sync, batched a second apart
    (k8s.io/kubernetes v1.36.3 pkg/controller/job/job_controller.go SyncJobBatchPeriod,
    trackJobStatusAndRemoveFinalizers): a quiet window shorter than that would end the run between two."""
    out = [f"pod {p['metadata']['name']} of Job {name} finished; the Job controller has not counted it yet"
           for p in pods if (name := job_of(p)) and (p.get("status") or {}).get("phase") in ("Succeeded", "Failed")
           and JOB_TRACKING in (p["metadata"].get("finalizers") or ())]
    for j in jobs:
        conds = {c.get("type") for c in (j.get("status") or {}).get("conditions") or [] if c.get("status") == "True"}
        if conds & {"SuccessCriteriaMet", "FailureTarget"} and not conds & {"Complete", "Failed"}:
            out.append(f"Job {j['metadata']['name']}: {sorted(conds & {'SuccessCriteriaMet', 'FailureTarget'})[0]}, "
                       "not yet Complete or Failed (the Job controller's next sync)")
    return out


# -- a dump's status --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Carried:
    """A Job or CronJob created without what the dump says its controller had done, to be written after it
    (`carry_on`): its kept status, the parallelism it was created below (None: as given) and its controller
    reference to a CronJob (a Job of one; withheld until that CronJob's status names it)."""
    kind: str
    namespace: str
    name: str
    status: dict
    parallelism: int | None = None
    owner: dict | None = None


def seeded_jobs(given: dict) -> dict[tuple[str, str], int]:
    """(namespace, Job) -> how many of given.existingNodes' pods (not terminating) name it as their controller."""
    out: dict[tuple[str, str], int] = {}
    for entry in given.get("existingNodes") or []:
        for pod in entry.get("pods") or []:
            meta = pod.get("metadata") or {}
            name = job_of({"metadata": meta})
            if name and not meta.get("deletionTimestamp"):
                key = (meta.get("namespace") or "default", name)
                out[key] = out.get(key, 0) + 1
    return out


def as_created(cluster, objs: list[dict], given: dict) -> tuple[list[dict], list[Carried]]:
    """The workloads as they are created, and what `carry_on` writes once they exist. A create drops a
    status, so the controllers would start a dumped Job anew: its first sync (at once on the add,
    job_controller.go addJob) stamps startTime now and makes min(parallelism, completions) pods, counting
    none succeeded. So a Job with a dumped status or seeded pods is created with its parallelism held at the
    pods it has (its manageJob then neither makes nor deletes a pod, whatever it reads of the status), and a
    Job with seeded pods selects them by SEEDED_BY (manualSelector), so that first sync adopts them
    (getPodsForJob: an owner reference and the tracking finalizer). A CronJob's Job is created without its
    controller reference: the CronJob controller calls an unfinished Job of its own that its status.active
    does not list an UnexpectedJob (cronjob_controllerv2.go syncCronJob). Objects that exist are updates:
    left as they are."""
    seeded = seeded_jobs(given)
    out, carried = [], []
    for obj in objs:
        meta = obj.get("metadata") or {}
        kind, ns = obj.get("kind"), meta.get("namespace") or "default"
        if kind not in ("Job", "CronJob") or cluster.get(kind, meta.get("name"), ns) is not None:
            out.append(obj)
            continue
        obj = copy.deepcopy(obj)
        status = obj.pop("status", None) or {}
        meta = obj["metadata"]
        owner = cronjob_ref(obj)
        if owner is not None:
            meta["ownerReferences"] = [r for r in meta["ownerReferences"] if r is not owner]
            if not meta["ownerReferences"]:
                meta.pop("ownerReferences")
        held = None
        pods = seeded.get((ns, meta["name"]), 0)
        if kind == "Job" and (status or pods):
            held = _hold(obj, meta["name"], pods)
        if status or held is not None or owner is not None:
            carried.append(Carried(str(kind), ns, meta["name"], status, held, owner))
        out.append(obj)
    return out, carried


def cronjob_ref(job: dict) -> dict | None:
    """The Job's controller reference to a CronJob, if it has one."""
    return next((r for r in job["metadata"].get("ownerReferences") or []
                 if r.get("kind") == "CronJob" and r.get("controller")), None)


def _hold(job: dict, name: str, pods: int) -> int | None:
    """Select the seeded pods (if any) and hold parallelism at their count; the parallelism to restore, or
    None when it already is that. Neither completions nor parallelism given: the API server's defaults
    (both 1: k8s.io/kubernetes v1.36.3 pkg/apis/batch/v1/defaults.go SetDefaults_Job), completions written,
    so that the held parallelism does not make it a work queue."""
    spec = job.setdefault("spec", {})
    if pods:
        spec["manualSelector"] = True
        spec["selector"] = {"matchLabels": {SEEDED_BY: name}}
        tmeta = spec.setdefault("template", {}).setdefault("metadata", {})
        tmeta["labels"] = {**(tmeta.get("labels") or {}), SEEDED_BY: name}
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    parallelism = int(spec.get("parallelism", 1))
    if min(parallelism, pods) == parallelism:
        return None
    spec["parallelism"] = min(parallelism, pods)
    return parallelism


def started_at(obj: dict, carried: list[Carried]) -> float | None:
    """When the run's clock must read while the Job `obj` is created: its dumped status.startTime. The Job
    controller stamps startTime with its clock at the Job's first sync, at once on the add, and the API server
    refuses to change it afterwards while the Job runs (k8s.io/kubernetes v1.36.3 pkg/apis/batch/validation
    validation.go: "field is immutable for unsuspended job once set"), so the stamp is the dump's only when
    the clock reads it then, as a dump's creation times are made (history.py)."""
    meta = obj.get("metadata") or {}
    if obj.get("kind") != "Job" or (obj.get("spec") or {}).get("suspend"):
        return None         # a suspended Job has no startTime (syncJob stamps none)
    c = next((c for c in carried if c.kind == "Job" and c.name == meta.get("name")
              and c.namespace == (meta.get("namespace") or "default")), None)
    return _time(c.status.get("startTime")) if c is not None else None


def await_start(cluster, job: dict, timeout: float = START_TIMEOUT) -> None:
    """Until the Job controller has stamped the Job's status.startTime (or the Job is gone: refused)."""
    meta = job["metadata"]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        live = cluster.get("Job", meta["name"], meta.get("namespace") or "default")
        if live is None or (live.get("status") or {}).get("startTime"):
            return
        time.sleep(0.05)
    raise RuntimeError(f"Job {meta['name']}: kube-controller-manager's Job controller stamped no status.startTime "
                       f"in {timeout:.0f}s")


def carry_on(cluster, carried: list[Carried]) -> None:
    """After the create: each Job's dumped status.succeeded (syncJob counts on from it; its startTime was
    stamped at the create: started_at), then its parallelism; each CronJob's lastScheduleTime and, as active,
    the unfinished Jobs that name it (syncCronJob keeps an active Job it can read even before it owns it), then
    those Jobs' controller references. Each state on the way is one the controllers leave as it is."""
    jobs = [c for c in carried if c.kind == "Job" and cluster.get("Job", c.name, c.namespace) is not None]
    for c in jobs:
        if "succeeded" in c.status:
            _write_status(cluster, "Job", c.name, c.namespace, {"succeeded": int(c.status["succeeded"])})
    for c in jobs:
        if c.parallelism is not None:
            _update(cluster, "Job", c.name, c.namespace, lambda j, c=c: j["spec"].update(parallelism=c.parallelism))
    crons = {(c.namespace, c.name): {k: v for k, v in c.status.items() if k == "lastScheduleTime"}
             for c in carried if c.kind == "CronJob"}
    crons.update({(c.namespace, c.owner["name"]): crons.get((c.namespace, c.owner["name"]), {})
                  for c in jobs if c.owner is not None})
    uids = {}
    for (ns, name), status in sorted(crons.items()):
        cron = cluster.get("CronJob", name, ns)
        if cron is None:
            continue
        uids[(ns, name)] = cron["metadata"]["uid"]
        active = [_ref(j) for c in jobs if c.owner is not None and c.owner["name"] == name and c.namespace == ns
                  and (j := cluster.get("Job", c.name, ns)) is not None and not _finished(j)]
        if status or active:
            _write_status(cluster, "CronJob", name, ns, {**status, **({"active": active} if active else {})})
    for c in jobs:
        uid = uids.get((c.namespace, c.owner["name"])) if c.owner is not None else None
        if uid is not None:      # a CronJob the scenario does not make: the Job stays its own
            ref = {**c.owner, "uid": uid}
            _update(cluster, "Job", c.name, c.namespace, lambda j, ref=ref: j["metadata"].update(
                ownerReferences=[*(j["metadata"].get("ownerReferences") or []), ref]))


def _write_status(cluster, kind: str, name: str, namespace: str, fields: dict) -> None:
    """`fields` over the stored status."""
    _update(cluster, kind, name, namespace, lambda o: o.update(status={**(o.get("status") or {}),
                                                                       **copy.deepcopy(fields)}), status=True)


def _update(cluster, kind: str, name: str, namespace: str, change, status: bool = False) -> None:
    """A read-modify-write of the object (of its status subresource with `status`), read again on 409
    Conflict: its controller writes it meanwhile, with the same resourceVersion lock."""
    def write() -> None:
        obj = cluster.get(kind, name, namespace)
        if obj is not None:
            change(obj)
            (cluster.update_status if status else cluster.update)(obj, ADMIN)
    retry_on_conflict(write)


def _ref(job: dict) -> dict:
    """An ObjectReference to the Job, as the CronJob controller lists its active ones (getRef)."""
    meta = job["metadata"]
    return {"apiVersion": "batch/v1", "kind": "Job", "name": meta["name"], "namespace": meta.get("namespace") or "default",
            "uid": meta["uid"], "resourceVersion": meta.get("resourceVersion", "")}


def _finished(job: dict) -> bool:
    return any(c.get("type") in ("Complete", "Failed") and c.get("status") == "True"
               for c in (job.get("status") or {}).get("conditions") or [])
