"""The documents each release's controller judges time on (harness/judge/timedruns.py), as the nightly
release-controllers job selects them."""
from __future__ import annotations

import shlex
from pathlib import Path

from harness.scenario.load import load_all, load_scenarios_text
from harness.judge.timedruns import candidates, main, why_timed

ROOT = Path(__file__).resolve().parents[2] / "scenarios"
LIBRARY = [ROOT / "disruption", ROOT / "tickets", ROOT / "bugs"]

DOC = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {{name: doc}}
given: {{profiles: [upstream]}}
manifests:
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {{name: default}}
    spec:
      template: {{spec: {{nodeClassRef: {{group: karpenter.azure.com, kind: AKSNodeClass, name: default}}}}}}
      disruption: {{budgets: [{budgets}]}}
steps: {steps}
"""


def doc(budgets: str = "{nodes: '10%'}", steps: str = "[]"):
    return load_scenarios_text(DOC.format(budgets=budgets, steps=steps))[0]


def test_a_document_judges_time_by_an_hour_of_advances_or_a_budget_schedule():
    assert why_timed(doc(steps="[{advance: 40m}, {advance: 20m}]"), "v1.13.1") == "advances 1h0m0s"
    assert why_timed(doc(steps="[{advance: 59m}]"), "v1.13.1") is None
    assert why_timed(doc("{nodes: '0', schedule: '@daily', duration: 10m}"), "v1.13.1") == "a budget schedule"


def test_candidates_are_timed_or_the_releases_own_tickets_and_no_other_releases():
    scs = load_all(LIBRARY)
    names = {sc.name: why for sc, why in candidates(scs, "v1.13.1")}
    assert names["t15-cpu-limit-used-up"].startswith("written for v1.13.1; a dump's history (given.startTime")
    assert names["t12-consolidation-kept-big-node"] == "written for v1.13.1"
    assert names["expire-after-never-keeps-node"] == "advances 800h0m0s"
    assert "t14-drain-behind-pdb" not in names          # the customer's release is v1.12.2
    assert not any(n.startswith("r") and n[1:3].isdigit() for n in names)    # knob replays: knobreplays.py
    # provider v0.7.5's CRDs serve AKSNodeClass v1alpha2 only: the library's disruption documents write v1beta1
    old = {sc.name for sc, _ in candidates(scs, "v0.7.5")}
    assert "t07-daemonset-evicted-before-job" in old and "expire-after-never-keeps-node" not in old


def test_a_document_the_simulation_fails_at_the_release_is_left_out(capsys):
    f = ROOT / "disruption" / "consolidation.scenario.yaml"     # one document of it advances an hour
    assert main(["--release", "v1.10.2", "--list", str(f)]) == 0
    assert capsys.readouterr().out == "FAIL\ton-demand-replaced-by-spot-when-cheaper\tadvances 1h1m0s\n"
    assert main(["--release", "v1.10.2", str(f)]) == 0
    assert capsys.readouterr().out == ""
    assert main(["--release", "v1.13.1", str(f)]) == 0
    assert shlex.split(capsys.readouterr().out) == [str(f), "-k", "on-demand-replaced-by-spot-when-cheaper["]


def test_an_unknown_release_is_refused(capsys):
    assert main(["--release", "v9.9.9", str(ROOT / "tickets")]) == 2
    assert "no release profile" in capsys.readouterr().err
