"""The Job and CronJob controllers of the loop (harness/loop/kube/jobs.py): pods that complete after
their run-duration, completions and parallelism, activeDeadlineSeconds, CronJob schedules on the scenario's
clock with each concurrencyPolicy and suspend. scenarios/workloads/jobs.scenario.yaml pins the end-to-end
cases (a completed Job's node consolidated)."""
from __future__ import annotations

import copy

import yaml

from harness.scenario.load import load_scenarios_text

NODEPOOL = [
    {"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass", "metadata": {"name": "default"},
     "spec": {"imageFamily": "Ubuntu2204"}},
    {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "default"},
     "spec": {"template": {"spec": {
         "nodeClassRef": {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"},
         "requirements": [{"key": "karpenter.sh/capacity-type", "operator": "In", "values": ["on-demand"]}]}}}}]
POD = {"spec": {"restartPolicy": "Never",
                "containers": [{"name": "w", "image": "busybox", "resources": {"requests": {"cpu": "500m"}}}]}}


def job(name: str, run: str | None = "10m", **spec) -> dict:
    meta = {"name": name, **({"annotations": {"harness.karpenter.azure.com/run-duration": run}} if run else {})}
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {"template": copy.deepcopy(POD), **spec}}


def cronjob(name: str, schedule: str, run: str, **spec) -> dict:
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": schedule, "jobTemplate": {
                "metadata": {"annotations": {"harness.karpenter.azure.com/run-duration": run}},
                "spec": {"template": copy.deepcopy(POD)}}, **spec}}


def scenario(manifests: list[dict], steps: list[dict], start: str = "2026-11-20T09:05:00Z"):
    doc = {"apiVersion": "harness.karpenter.azure.com/v1alpha1", "kind": "Scenario", "metadata": {"name": "jobs"},
           "given": {"skus": ["Standard_D2s_v3"], "startTime": start, "profiles": ["upstream"]},
           "manifests": NODEPOOL + manifests, "steps": steps}
    (sc,) = load_scenarios_text(yaml.safe_dump(doc, sort_keys=False), "jobs.scenario.yaml")
    return sc


def run(sc):
    from harness.backends.embedded import EmbeddedBackend
    from harness.runner.engines import run as run_scenario
    cluster = EmbeddedBackend().start()
    try:
        return run_scenario(sc, "upstream", cluster)
    finally:
        cluster.close()


def states(outcome, owner: str) -> list[str]:
    return sorted(p.state for p in outcome.result.pods.values() if owner in (p.owner_name, p.cronjob))


def test_unset_completions_is_parallelism_pods_in_one_wave():
    outcome = run(scenario([job("wave", parallelism=3)], [{"advance": "11m"}]))
    assert states(outcome, "wave") == ["succeeded"] * 3
    assert any(e["kind"] == "Job" and e["reason"] == "Completed" for e in outcome.result.events)


def test_without_run_duration_pods_run_to_the_end_and_the_loader_says_where_to_put_it():
    sc = scenario([job("forever", run=None)], [{"advance": "48h"}])
    assert any("Job forever: how long its pods run is in no API object" in n.message
               and "metadata.annotations[harness.karpenter.azure.com/run-duration]" in n.message for n in sc.warnings)
    assert states(run(sc), "forever") == ["scheduled"]


def test_cronjob_replace_deletes_the_running_job_for_the_next():
    """Every 10 minutes, pods of 15: at 09:20 the 09:10 Job still runs and Replace deletes its pod."""
    outcome = run(scenario([cronjob("r", "*/10 * * * *", "15m", concurrencyPolicy="Replace")],
                           [{"advance": "6m"}, {"advance": "10m"}]))
    got = {p.owner_name: p.state for p in outcome.result.pods.values() if p.cronjob == "r"}
    assert got == {"r-29919430": "deleted", "r-29919440": "scheduled"}       # 09:10 and 09:20 in minutes
    deleted = next(p for p in outcome.result.pods.values() if p.owner_name == "r-29919430")
    assert deleted.reason == "CronJob r replaced Job r-29919430"


def test_cronjob_allow_runs_jobs_side_by_side():
    outcome = run(scenario([cronjob("a", "*/10 * * * *", "15m")], [{"advance": "6m"}, {"advance": "10m"}]))
    assert states(outcome, "a") == ["scheduled", "scheduled"]


def test_suspended_cronjob_makes_no_job():
    outcome = run(scenario([cronjob("s", "*/10 * * * *", "5m", suspend=True)], [{"advance": "1h"}]))
    assert states(outcome, "s") == []


def test_one_advance_over_three_schedule_times_makes_a_job_at_each():
    """advance steps to each schedule time inside its window (Simulation._timer_before), as the CronJob
    controller, running all along, acts at each: nothing is missed."""
    outcome = run(scenario([cronjob("m", "*/10 * * * *", "1h")], [{"advance": "31m"}]))
    pods = {p.owner_name: p.at["created"] for p in outcome.result.pods.values() if p.cronjob == "m"}
    assert sorted(pods) == ["m-29919430", "m-29919440", "m-29919450"]
    assert sorted(pods.values()) == [29919430 * 60.0, 29919440 * 60.0, 29919450 * 60.0]


def test_a_suspended_job_makes_pods_once_resumed():
    """spec.suspend: no pods; a step's apply with suspend false creates them (update_job)."""
    resumed = job("later")
    outcome = run(scenario([job("later", suspend=True)], [{"advance": "5m"}, {"apply": [resumed]}]))
    assert states(outcome, "later") == ["scheduled"]
    first = run(scenario([job("later", suspend=True)], [{"advance": "5m"}]))
    assert states(first, "later") == []


def test_cronjob_forbid_holds_a_time_until_the_running_job_finishes():
    """Every 15 minutes, pods of 20 (scenarios/workloads/jobs.scenario.yaml): Forbid holds 09:30 while the
    09:15 Job runs and does not mark it done (syncCronJob keeps lastScheduleTime), so 09:30's Job starts when
    09:15's finishes at 09:35; at 09:45 that one runs, and 09:45 is held in turn."""
    outcome = run(scenario([cronjob("f", "*/15 * * * *", "20m", concurrencyPolicy="Forbid")],
                           [{"advance": "11m"}, {"advance": "20m"}, {"advance": "10m"}]))
    pods = {p.owner_name: (p.state, p.at["created"]) for p in outcome.result.pods.values() if p.cronjob == "f"}
    assert {k: v[0] for k, v in pods.items()} == {"f-29919435": "succeeded", "f-29919450": "scheduled"}
    # made when 09:15's pod, started once its node was up, completed 20 minutes later
    assert (29919435 + 20) * 60 < pods["f-29919450"][1] < 29919465 * 60
    held = [e for e in outcome.result.events if e["kind"] == "CronJob" and e["reason"] == "JobAlreadyActive"]
    assert len(held) == 2          # once for 09:30, once for 09:45
