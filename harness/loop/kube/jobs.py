"""Jobs and CronJobs: the Job controller's pods run and complete, the CronJob controller makes Jobs on the
simulated clock.

A Job keeps min(parallelism, completions - succeeded) pods active (kubernetes v1.36.3
pkg/controller/job/job_controller.go manageJob); a pod completes `run-duration` after it started (the
annotation RUN_DURATION on the Job, or on a CronJob's jobTemplate, since a pod's run time is in no API
object; without it the pods run until the scenario ends, and the loader says so). A completed pod is
terminal (phase Succeeded): Karpenter no longer schedules, evicts or counts it (sigs.k8s.io/karpenter
v1.14.0 pkg/utils/pod/scheduling.go IsTerminal, IsReschedulable), so its node may empty and consolidate;
its completion is a pod event (pkg/controllers/nodeclaim/podevents). activeDeadlineSeconds deletes the
active pods when it passes (DeadlineExceeded). A CronJob creates `<name>-<minutes since epoch>` at each
schedule time (pkg/controller/cronjob/utils.go getJobName; only the latest missed time, as
mostRecentScheduleTime), honouring concurrencyPolicy Allow/Forbid/Replace and suspend; a time Forbid
holds is not marked done, so it runs once the running Job finishes (cronjob_controllerv2.go syncCronJob).
Both are timers a scenario reaches with `advance` (Simulation._timer_before), like expireAfter.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field

from harness.backends.base import ADMIN, APIRejected
from harness.model.kube.kubetime import parse_rfc3339
from harness.loop.state import LoopState
from harness.model.values.cron import CronError, parse_schedule
from harness.model.values.durations import scenario_duration

RUN_DURATION = "harness.karpenter.azure.com/run-duration"


def run_duration(meta: dict) -> float | None:
    """The pods' run time the Job's (or jobTemplate's) metadata annotation gives, in seconds."""
    value = ((meta or {}).get("annotations") or {}).get(RUN_DURATION)
    # the loader refused a value that is not a duration (harness/scenario/load.py)
    return None if value is None else scenario_duration(str(value))


@dataclass
class JobRun:
    namespace: str
    name: str
    template: dict                  # spec.template
    completions: int                # spec.completions (unset: parallelism, every pod of one wave)
    parallelism: int
    run: float | None               # seconds each pod runs; None: until the scenario ends
    started: float
    deadline: float | None          # activeDeadlineSeconds counted from started
    cronjob: str = ""
    succeeded: int = 0
    active: list[str] = field(default_factory=list)
    finished: str | None = None     # "Complete" | "DeadlineExceeded" | "Replaced" (its CronJob's Replace)
    suspended: bool = False         # spec.suspend: no new pods (the active ones run on)


@dataclass
class CronRun:
    namespace: str
    name: str
    obj: dict
    last: float                     # the last schedule time acted on (its apply time before any)
    held: float | None = None       # the schedule time Forbid holds while a Job runs (its event said once)


class Jobs:
    def __init__(self, state: LoopState):
        self.state = state
        self.jobs: dict[tuple[str, str], JobRun] = {}
        self.crons: dict[tuple[str, str], CronRun] = {}

    # -- what Workloads applies --------------------------------------------------------------------
    def add_job(self, obj: dict, cronjob: str = "") -> None:
        s = self.state
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        ns = meta.get("namespace") or "default"
        parallelism = int(spec.get("parallelism", 1))
        completions = int(spec["completions"]) if spec.get("completions") is not None else parallelism
        deadline = spec.get("activeDeadlineSeconds")
        # a dumped CronJob's Job names it in its controller reference
        cronjob = cronjob or next((r.get("name", "") for r in meta.get("ownerReferences") or []
                                   if r.get("kind") == "CronJob" and r.get("controller")), "")
        # a dumped Job's status: its pods that already succeeded, when it started (activeDeadlineSeconds
        # counts from it)
        status = obj.get("status") or {}
        started = parse_rfc3339(status["startTime"]) if status.get("startTime") else s.clock.now()
        job = JobRun(ns, meta["name"], copy.deepcopy(spec.get("template") or {}), completions, parallelism,
                     run_duration(meta), started, started + float(deadline) if deadline is not None else None,
                     cronjob, succeeded=int(status.get("succeeded") or 0), suspended=bool(spec.get("suspend")))
        # its pods already running (given.existingNodes) are its active ones, as the Job controller adopts them
        job.active = [k for k in s.pods_of_owner("Job", ns, job.name)
                      if s.result.pods[k].state not in ("deleted", "succeeded")]
        for key in job.active:
            s.result.pods[key].cronjob = job.cronjob
        self.jobs[(ns, job.name)] = job
        s.trace(f"Job {ns}/{job.name}: {completions} completion(s), parallelism {parallelism}"
                + (f", pods run {job.run:g}s" if job.run is not None else ", pods run until the end"))
        self._fill(job)

    def update_job(self, obj: dict) -> None:
        """`kubectl apply` of a Job that exists: parallelism and suspend may change (its template and
        completions are immutable: kubernetes v1.36.3 pkg/apis/batch/validation ValidateJobSpecUpdate)."""
        meta, spec = obj.get("metadata") or {}, obj.get("spec") or {}
        job = self.jobs[(meta.get("namespace") or "default", meta["name"])]
        job.parallelism = int(spec.get("parallelism", 1))
        job.suspended = bool(spec.get("suspend"))
        if not job.finished:
            self._fill(job)

    def add_cronjob(self, obj: dict) -> None:
        """A CronJob acts on schedule times after its apply, or after a dump's status.lastScheduleTime."""
        meta = obj.get("metadata") or {}
        ns = meta.get("namespace") or "default"
        last = (obj.get("status") or {}).get("lastScheduleTime")
        since = min(parse_rfc3339(last), self.state.clock.now()) if last else self.state.clock.now()
        self.crons[(ns, meta["name"])] = CronRun(ns, meta["name"], copy.deepcopy(obj), since)

    # -- the controllers' passes -------------------------------------------------------------------
    def reconcile(self) -> bool:
        progress = False
        for cron in list(self.crons.values()):
            progress |= self._schedule(cron)
        for job in list(self.jobs.values()):
            progress |= self._sync(job)
        return progress

    def next_deadline(self) -> float | None:
        """The next pod completion, Job deadline or CronJob schedule time."""
        s = self.state
        times: list[float] = []
        for job in self.jobs.values():
            if job.finished:
                continue
            if job.deadline is not None:
                times.append(job.deadline)
            if job.run is not None:
                times += [self._started(k) + job.run for k in job.active if self._started(k) is not None]
        for cron in self.crons.values():
            sched = self._schedule_of(cron)
            if sched is not None and not (cron.obj.get("spec") or {}).get("suspend"):
                nxt = sched.next(max(cron.last, s.clock.now()))
                if nxt is not None:
                    times.append(nxt)
        return min(times, default=None)

    def _started(self, key: str) -> float | None:
        s = self.state
        pr = s.result.pods.get(key)
        if pr is None or not pr.node:
            return None
        return s.disruption.pod_started.get(key, pr.at.get("bound"))

    def _sync(self, job: JobRun) -> bool:
        s = self.state
        if job.finished:
            return False
        now, progress = s.clock.now(), False
        # pods gone by other hands (a drain's eviction, a node's garbage collection) are replaced
        job.active = [k for k in job.active if k in s.pod_views and s.result.pods[k].state != "deleted"]
        if job.run is not None:
            for key in list(job.active):
                started = self._started(key)
                if started is not None and now >= started + job.run:
                    self._complete(job, key)
                    progress = True
        if job.succeeded >= job.completions:
            job.finished = "Complete"
            s.record_event("Job", job.name, "Completed", "Job completed", job.namespace)
            return True
        if job.deadline is not None and now >= job.deadline:
            for key in job.active:
                s.delete_pod(key, f"Job {job.name} was active longer than specified deadline")
            job.active, job.finished = [], "DeadlineExceeded"
            s.record_event("Job", job.name, "DeadlineExceeded", "Job was active longer than specified deadline",
                           job.namespace)
            return True
        return self._fill(job) or progress

    def _fill(self, job: JobRun) -> bool:
        """manageJob: active pods up to min(parallelism, completions left); none while suspended."""
        s = self.state
        if job.suspended:
            return False
        want = min(job.parallelism, job.completions - job.succeeded) - len(job.active)
        for _ in range(max(want, 0)):
            tmpl = job.template
            pod = {"apiVersion": "v1", "kind": "Pod",
                   "metadata": {**copy.deepcopy(tmpl.get("metadata") or {}), "name": s.name(job.name + "-"),
                                "namespace": job.namespace},
                   "spec": copy.deepcopy(tmpl.get("spec") or {})}
            try:
                s.create_pod(pod, "Job", job.name)
            except APIRejected as e:
                s.refused_pod(pod, "Job", job.name, e)
                return False
            key = s.pod_key(pod)
            s.result.pods[key].cronjob = job.cronjob
            job.active.append(key)
        return want > 0

    def _complete(self, job: JobRun, key: str) -> None:
        """The pod's containers exited 0: the kubelet reports phase Succeeded; the object stays (the Job
        keeps its finished pods) but holds nothing any scheduler or Karpenter counts."""
        s = self.state
        pr = s.result.pods[key]
        s.pod_views.pop(key, None)
        s.nominated.pop(key, None)
        obj = s.cluster.get("Pod", pr.name, pr.namespace)
        if obj is not None:
            obj.setdefault("status", {})["phase"] = "Succeeded"
            try:
                s.cluster.update_status(obj, ADMIN)
            except APIRejected:
                pass
        pr.state, pr.reason = "succeeded", f"completed on {pr.node}"
        s.place_pod(key, None)
        pr.at["deleted"] = s.clock.now()
        job.active.remove(key)
        job.succeeded += 1
        s.trace(f"pod {key} of Job {job.name} completed ({job.succeeded}/{job.completions})")

    @staticmethod
    def _schedule_of(cron: CronRun):
        try:
            return parse_schedule(str((cron.obj.get("spec") or {}).get("schedule") or ""))
        except CronError:
            return None

    def _schedule(self, cron: CronRun) -> bool:
        """syncCronJob: the most recent schedule time since the last one, if any, makes a Job."""
        s = self.state
        spec = cron.obj.get("spec") or {}
        sched = self._schedule_of(cron)
        if sched is None or spec.get("suspend"):
            return False
        now, due = s.clock.now(), None
        t = sched.next(cron.last)
        while t is not None and t <= now:
            due, t = t, sched.next(t)
        if due is None:
            return False
        running = [j.name for j in self.jobs.values()
                   if j.cronjob == cron.name and j.namespace == cron.namespace and not j.finished]
        policy = spec.get("concurrencyPolicy") or "Allow"
        if running and policy == "Forbid":
            # syncCronJob leaves status.lastScheduleTime where it was: the held time is still the most recent
            # unmet one when the running Job finishes, and runs then (kubernetes v1.36.3
            # pkg/controller/cronjob/cronjob_controllerv2.go; a later time replaces it)
            if cron.held != due:
                cron.held = due
                s.trace(f"CronJob {cron.name}: {', '.join(running)} still running: schedule held (Forbid)")
                s.record_event("CronJob", cron.name, "JobAlreadyActive", "Not starting job because prior execution "
                               "is running and concurrency policy is Forbid", cron.namespace)
            return False
        cron.last, cron.held = due, None
        if running and policy == "Replace":
            for name in running:
                job = self.jobs[(cron.namespace, name)]
                for key in job.active:
                    s.delete_pod(key, f"CronJob {cron.name} replaced Job {name}")
                job.active, job.finished = [], "Replaced"
        tmpl = spec.get("jobTemplate") or {}
        name = f"{cron.name}-{int(due // 60)}"
        meta = {**copy.deepcopy(tmpl.get("metadata") or {}), "name": name, "namespace": cron.namespace}
        s.record_event("CronJob", cron.name, "SuccessfulCreate", f"Created job {name}", cron.namespace)
        self.add_job({"metadata": meta, "spec": copy.deepcopy(tmpl.get("spec") or {})}, cronjob=cron.name)
        return True
