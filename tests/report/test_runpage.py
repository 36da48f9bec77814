"""The run report (harness/report/runpage.py, reportsite.py, timelinesvg.py): per-run page data, the
pages written from it, and every page of `harness run scenarios/disruption --report DIR` rendered in a
real headless Chromium (Debian's `chromium`, .ci/run installs it) with no console error, its DOM holding
each NodeClaim of the run and the reason it went."""
from __future__ import annotations

import html
import json
import re
from pathlib import Path

import pytest

from harness.cli import main as cli
from harness.report.runpage import RUNS, across_profiles, read_runs
from tests.report.browser import Browser, chromium

ROOT = Path(__file__).resolve().parents[2]

SCENARIO = """\
apiVersion: harness.karpenter.azure.com/v1alpha1
kind: Scenario
metadata: {name: page}
given:
  profiles: [before-0006, upstream]
  skus: [Standard_D2s_v3]
manifests:
  - apiVersion: karpenter.azure.com/v1beta1
    kind: AKSNodeClass
    metadata: {name: default}
    spec: {imageFamily: Ubuntu2204}
  - apiVersion: karpenter.sh/v1
    kind: NodePool
    metadata: {name: default}
    spec:
      template:
        spec:
          nodeClassRef: {group: karpenter.azure.com, kind: AKSNodeClass, name: default}
          requirements: [{key: karpenter.sh/capacity-type, operator: In, values: [on-demand]}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: web}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: 100m}}}]
  - apiVersion: v1
    kind: Pod
    metadata: {name: huge}
    spec:
      containers: [{name: c, image: x, resources: {requests: {cpu: "100"}}}]
expect:
  pods:
    web: {scheduled: true}
    huge: {scheduled: true}
  nodeCount: 1
"""


@pytest.fixture
def page_report(tmp_path):
    f = tmp_path / "page.scenario.yaml"
    f.write_text(SCENARIO)
    out = tmp_path / "report"
    assert cli(["run", str(f), "--report", str(out)]) == 1        # huge never schedules
    return f, out


def test_expectations_carry_their_verdict_and_line(page_report):
    f, out = page_report
    run = read_runs(out)[0]
    rows = {e["path"]: e for e in run["expectations"]}
    assert rows["expect.pods.web"]["status"] == "pass" and rows["expect.pods.web"]["line"] == 32
    assert rows["expect.pods.huge"]["status"] == "fail" and rows["expect.pods.huge"]["line"] == 33
    assert rows["expect.pods.huge"]["failures"]
    assert rows["expect.nodeCount"]["status"] == "pass"
    page = (out / next(p for p in out.iterdir() if p.name.startswith("page-before-0006"))).read_text()
    assert f'href="#L33">{f}:33</a>' in page and '<li id="L33">' in page      # the source is on the page


def test_a_pending_pods_why_view_is_on_its_page_per_nodepool(page_report):
    _, out = page_report
    run = read_runs(out)[0]
    why, = run["why"]
    assert why["pod"] == "default/huge" and why["said"].startswith("why Pod default/huge has no node (Karpenter: ")
    np, = why["nodePools"]
    assert np["name"] == "default" and np["lines"][0].startswith("NodePool default: 0 of ")
    assert "eliminates" in np["lines"][1]


def test_pages_are_self_contained_and_an_index_lists_every_run(page_report):
    _, out = page_report
    runs = read_runs(out)
    assert len(runs) == 2 and len(list((out / RUNS).glob("*.json"))) == 2
    index = (out / "index.html").read_text()
    for page in out.glob("*.html"):
        text = page.read_text()
        # nothing fetched: no external script, style, image or link (the SVG namespace is a name, not a fetch)
        assert not re.search(r"""(src|href)\s*=\s*["']?(https?:)?//""", text), page.name
        assert "<style>" in text and "@import" not in text
    assert all(html.escape(r["scenario"]) in index for r in runs)
    assert index.count('class="badge bad"') >= 2          # both runs failed; the header counts them too


def test_a_scenario_under_two_profiles_has_the_across_table_on_each_page(page_report):
    _, out = page_report
    for page in [out / "index.html", *out.glob("page-*.html")]:
        table = page.read_text().split('<table class="across">', 1)[1].split("</table>", 1)[0]
        assert ">before-0006</a>" in table and ">upstream</a>" in table, page.name


def test_across_profiles_marks_where_the_outcome_changes():
    runs = [{"id": str(i), "file": "f", "line": 1, "backend": "embedded", "engine": "simulated", "profile": p,
             "release": "", "verdict": "pass", "outcome": o}
            for i, (p, o) in enumerate([("a", "1 node(s)"), ("b", "1 node(s)"), ("c", "2 node(s)")])]
    rows = across_profiles(runs)["0"]
    assert [r["changed"] for r in rows] == [False, False, True]
    assert across_profiles(runs[:1]) == {}


def test_a_release_that_keeps_the_outcome_for_another_reason_says_so_on_its_page(tmp_path):
    scenario = ROOT / "scenarios" / "releases" / "core" / "drifted-empty-node-same-outcome.scenario.yaml"
    out = tmp_path / "report"
    assert cli(["run", str(scenario), "--profile", "v1.4.1", "--deciding", "--report", str(out)]) == 0
    (page,) = [p for p in out.glob("*.html") if "v1-4-1" in p.name]
    section = page.read_text().split('id="deciding"', 1)[1].split("</section>", 1)[0]
    assert "(disruptionMethodOrder;" in html.unescape(section)
    assert "(the same outcome for other reasons; here disrupted as Drifted (Drift) x1" in html.unescape(section)


def test_a_new_report_replaces_the_old_one(page_report, tmp_path):
    f, out = page_report
    (out / RUNS / "stale.json").write_text(json.dumps({}))
    (out / "stale.html").write_text("old")
    cli(["run", str(f), "--profile", "upstream", "--report", str(out)])
    assert not (out / "stale.html").exists() and len(read_runs(out)) == 1


# -- in a real browser -------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def disruption_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("report")
    assert cli(["run", str(ROOT / "scenarios" / "disruption"), "--report", str(out), "--json"]) == 0
    return out


@pytest.fixture(scope="module")
def browser():
    binary = chromium()
    if binary is None:
        pytest.skip("chromium not installed (apt-get install chromium; .ci/run installs it)")
    b = Browser(binary)
    yield b
    b.close()


def test_every_page_renders_in_chromium_with_each_nodeclaim_and_why_it_went(browser, disruption_report):
    runs = read_runs(disruption_report)
    pages = sorted(disruption_report.glob("*.html"))
    assert len(pages) == len(runs) + 1 and runs
    rendered = {}
    for page in pages:
        p = browser.open(page.as_uri())
        assert p.errors == [], f"{page.name}: {p.errors}"
        assert [u for u in p.requests if not u.startswith(("file:", "data:"))] == [], page.name
        rendered[page.name] = p.dom
    index = rendered["index.html"]
    from harness.report.runpage import page_name
    went = 0
    for run in runs:
        assert f'href="{page_name(run)}"' in index
        dom = rendered[page_name(run)]
        assert "<svg" in dom and 'class="timeline"' in dom
        for c in run["timeline"]["nodeClaims"]:
            # the chart's bar and the table's row, each with the NodeClaim's name
            row = re.search(r'<tr class="nodeclaim" data-nodeclaim="%s">(.*?)</tr>' % re.escape(c["nodeclaim"]), dom, re.S)
            assert row and f'<g class="claim" data-nodeclaim="{c["nodeclaim"]}">' in dom, (run["scenario"], c["nodeclaim"])
            if c["reason"]:
                assert html.escape(c["reason"], quote=False) in row.group(1), (run["scenario"], c["nodeclaim"])
                went += 1
            if c["went"]:
                assert f"<b>{c['went']}</b>" in row.group(1)
    assert went > 0            # the library's disruption scenarios disrupt nodes


def test_the_conformance_report_becomes_a_page_linked_from_the_index(page_report, tmp_path):
    from harness.report.runpage import write_site
    _, out = page_report
    report = tmp_path / "conformance.json"
    entry = {"file": "scenarios/x.scenario.yaml", "scenario": "x", "profile": "upstream", "simulated": "pass",
             "real": "FAIL", "realSkipped": None, "status": "unexplained", "differences": [
                 {"field": "nodes[0].instanceType", "simulated": "Standard_D2s_v3", "real": "Standard_D4s_v3"}],
             "realMismatches": ["expect.nodeCount: expected 1, got 2"], "seconds": {"real": 12.5}}
    report.write_text(json.dumps({"totals": {"runs": 1, "ranOnReal": 1, "skippedOnReal": 0, "agree": 0, "differ": 1,
                                             "explained": 0, "unexplained": 1, "realPass": 0, "realFail": 1,
                                             "seconds": 12.5, "generated": "2026-01-01T00:00:00Z"},
                                  "entries": [entry]}))
    write_site(out, report)
    page = (out / "conformance.html").read_text()
    assert "nodes[0].instanceType" in page and "Standard_D4s_v3" in page and "unexplained" in page
    assert 'href="conformance.html"' in (out / "index.html").read_text()


def test_the_index_counts_live_nodes_and_says_a_dumps_verdict(tmp_path):
    """The index's nodes column counts live Nodes, the deleted apart; a scenario made from a dump reads
    `reproduced` (its badge ok) where it passed."""
    dump = Path(__file__).resolve().parents[1] / "dump" / "dumps" / "expiring-node.yaml"
    f = tmp_path / "kept.scenario.yaml"
    assert cli(["new", str(dump), "--name", "kept", "-o", str(f), "--profile", "upstream"]) == 0
    out = tmp_path / "report"
    jobs = Path(__file__).resolve().parents[2] / "scenarios" / "workloads" / "jobs.scenario.yaml"
    assert cli(["run", str(f), str(jobs), "-k", "e", "--report", str(out)]) == 0
    runs = {r["scenario"]: r for r in read_runs(out)}
    assert (runs["kept"]["verdict"], runs["kept"]["nodes"]) == ("reproduced", "1")
    assert (runs["job-pods-complete-and-free-their-node"]["verdict"],
            runs["job-pods-complete-and-free-their-node"]["nodes"]) == ("pass", "0, 1 deleted")
    assert '<span class="badge ok">reproduced</span>' in (out / "index.html").read_text()
