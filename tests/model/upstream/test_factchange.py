"""harness/model/upstream/factchange.py and the `says` of harness/data/core-behaviour.yaml and release-probes.yaml: which
release gave a profile its value of a fact, which later release behaves otherwise, and the sentence naming both."""
from __future__ import annotations

import pytest

from harness.model.upstream.corespec import core_spec
from harness.model.upstream.factchange import (CORE_PREFIX, FactError, all_facts, differing_facts, fact_change, says)
from harness.model.upstream.profile import raw_profile
from harness.model.upstream.releaseindex import release_profiles

SWITCHES = core_spec()["switches"]


def _probe_value(profile: str, fact: str):
    data = raw_profile(profile)
    for part in fact.split("."):
        data = data.get(part) if isinstance(data, dict) else None
    return data


def test_drift_empty_candidates_at_v1_6_1():
    fc = fact_change("v1.6.1", "core.behaviour.driftEmptyCandidates")
    assert (fc.kind, fc.name, fc.version, fc.value, fc.pr) == ("core", "driftEmptyCandidates", "v1.6.1", "skip", 2180)
    assert fc.says == "Drift skips empty candidates, leaving them to Emptiness"
    assert (fc.next_release, fc.next_core, fc.next_value, fc.next_pr) == ("v1.6.2", "v1.6.2", "first", 2459)
    assert fc.next_says == "Drift tries empty candidates first"
    assert fc.sentence() == ("core v1.6.1: Drift skips empty candidates, leaving them to Emptiness "
                             "(driftEmptyCandidates, #2180; v1.6.2: Drift tries empty candidates first, #2459)")
    assert fact_change("v1.6.1", "driftEmptyCandidates") == fc      # a bare switch name is the same fact


def test_a_value_before_the_switches_range_has_no_pr():
    """v0.7.5 pins core v1.0.6: `batch` is the oldest behaviour (no PR); the first release after it that differs is
    profile v1.5.1 (provider v1.5.0-v1.5.1, core v1.5.0), whose `skip` came with introducedBy's #2180."""
    fc = fact_change("v0.7.5", "driftEmptyCandidates")
    assert (fc.version, fc.value, fc.pr) == ("v1.0.6", "batch", None)
    assert (fc.next_release, fc.next_core, fc.next_value, fc.next_pr, fc.next_tag) == (
        "v1.5.1", "v1.5.0", "skip", 2180, "v1.5.0")
    assert fc.sentence() == ("core v1.0.6: Drift deletes every empty drifted node the budget allows in one command "
                             "(driftEmptyCandidates; provider v1.5.0-v1.5.1, core v1.5.0: Drift skips empty "
                             "candidates, leaving them to Emptiness, #2180)")


def test_an_older_core_that_derives_the_newest_value_got_it_from_no_pr():
    """Core v0.36.1 (provider v0.5-v0.6) words disruption events as the newest core does, but not because of #2305
    (core v1.6.0): no PR is named; the step to v1.0.x's wording has no PR in the data either."""
    fc = fact_change("v0.6.3", "disruptionEventReason")
    assert (fc.version, fc.value, fc.pr) == ("v0.36.1", "reason", None)
    assert (fc.next_release, fc.next_value, fc.next_pr) == ("v0.7.0", "reasonAndDecision", None)
    assert fact_change("v0.7.5", "disruptionEventReason").next_pr == 2305


def test_a_pseudo_version_at_the_switchs_commit_names_its_pr():
    fc = fact_change("v1.12.2", "volumeTopologyAlternatives")
    assert (fc.value, fc.pr, fc.next_release) == (True, 2743, None)
    assert fc.version == "v1.12.1-0.20260514173230-7e9d426919bd"


def test_a_label_policys_core_facts_are_the_newest():
    fc = fact_change("before-0006", "emptinessByEvictionCost")
    assert (fc.version, fc.value, fc.pr, fc.next_release) == ("v1.14.0", True, 2962, None)
    assert fc.sentence().endswith("(emptinessByEvictionCost, #2962; the newest)")


def test_a_switch_at_a_v1_0_core():
    fc = fact_change("v0.7.5", "deletingNodePods")
    assert (fc.version, fc.value, fc.pr) == ("v1.0.6", "reschedulable", None)
    assert (fc.next_release, fc.next_core, fc.next_value, fc.next_pr) == (
        "v1.4.1", "v1.4.0", "currentlyReschedulable", 2033)
    assert fc.sentence() == ("core v1.0.6: provisioning plans for every pod of a deleting node, even one no eviction "
                             "moves (deletingNodePods; provider v1.4.0-v1.4.1, core v1.4.0: provisioning plans only "
                             "for the pods of deleting nodes that can leave now, #2033)")


def test_the_next_core_is_named_with_its_provider_tag_when_they_differ():
    fc = fact_change("v1.6.8", "doNotDisruptDurations")
    assert (fc.version, fc.value, fc.next_release, fc.next_core, fc.next_tag, fc.next_pr) == (
        "v1.6.2", False, "v1.12.0", "v1.12.0", "v1.12.0", 2874)
    assert fc.sentence().endswith("(doNotDisruptDurations; v1.12.0: do-not-disrupt with a duration (\"3h\") "
                                  "protects the pod that long, #2874)")
    fc = fact_change("v1.6.8", "capacityTypeFromOfferings")       # core v1.9.0's change, first pinned at v1.10
    assert fc.sentence().endswith("(capacityTypeFromOfferings; provider v1.10.0-v1.10.2, core v1.10.0: a new "
                                  "NodeClaim's capacity types are narrowed to its types' available offerings, #2642)")


def test_a_value_the_newest_keeps():
    fc = fact_change("v1.6.2", "driftEmptyCandidates")
    assert (fc.pr, fc.next_release) == (2459, None)                # the backport gave v1.6.2 its value
    assert fc.sentence() == ("core v1.6.2: Drift tries empty candidates first (driftEmptyCandidates, #2459; unchanged "
                             "through the newest, v1.14.0)")
    fc = fact_change("upstream", "driftEmptyCandidates")
    assert (fc.version, fc.pr) == ("v1.14.0", 2423)
    assert fc.sentence().endswith("(driftEmptyCandidates, #2423; the newest)")


def test_a_provider_fact_from_the_index():
    """provider.requirements.mode: false until v1.6.7, where index.yaml attributes the change to
    'feat: add support for kubernetes.azure.com/mode label (#1271)'."""
    fc = fact_change("v1.6.6", "provider.requirements.mode")
    assert (fc.kind, fc.name, fc.version, fc.value, fc.pr) == (
        "provider", "provider.requirements.mode", "v1.6.6", False, None)
    assert (fc.next_release, fc.next_value, fc.next_pr, fc.next_core) == ("v1.6.7", True, 1271, "v1.6.2")
    assert fc.says == "not: kubernetes.azure.com/mode [system, user] is an instance-type requirement"
    assert fc.sentence() == (
        "provider v1.6.6: not: kubernetes.azure.com/mode [system, user] is an instance-type requirement "
        "(provider.requirements.mode; v1.6.7: kubernetes.azure.com/mode [system, user] is an instance-type "
        "requirement, #1271)")
    later = fact_change("v1.10.2", "provider.requirements.mode")
    assert (later.value, later.pr, later.next_release) == (True, 1271, None)   # where its value arrived: v1.6.7


def test_a_list_valued_provider_fact_names_the_change():
    fc = fact_change("v1.6.2", "provider.gpuImageFamilies.ubuntu")
    assert (fc.value, fc.next_release, fc.next_tag, fc.next_pr) == (["Ubuntu2204"], "v1.6.4", "v1.6.3", 1147)
    assert fc.sentence().endswith("(provider.gpuImageFamilies.ubuntu; v1.6.3: adds Ubuntu, Ubuntu2404, #1147)")
    # a customer's tag that a profile covers is named as asked
    assert fact_change("v1.6.3", "provider.gpuImageFamilies.ubuntu").version == "v1.6.3"


def test_an_unknown_fact_names_the_close_ones():
    with pytest.raises(FactError, match="driftEmptyCandidates"):
        fact_change("v1.6.1", "driftEmptyCandidate")


def test_every_switch_says_every_value_a_release_holds():
    """Completeness over the data: each switch's `says` covers every scalar value any release profile (and the
    newest) holds (a list reads by release-probes.yaml's rule, as a probe's does), and each phrase is short."""
    for s in SWITCHES:
        table = s.get("says") or {}
        values = [_probe_value(p, s["fact"]) for p in release_profiles() + ["upstream"]]
        assert all(says(s["fact"], v) for v in values if isinstance(v, list))
        held = {(type(v), v) for v in values if not isinstance(v, list)}
        missing = [v for t, v in held if not any(k == v and type(k) is t for k in table)]
        assert not missing, f"{s['name']}: no says for {missing}"
        for value, text in table.items():
            assert isinstance(text, str) and 0 < len(text) <= 90, f"{s['name']} {value!r}: {text!r}"


def test_every_probe_value_reads_by_the_rule():
    """A provider probe's value without a `says` entry must be a boolean, a list or a map (read by the rule of
    release-probes.yaml's header); every `says` phrase is short."""
    from harness.model.upstream.factchange import _probes
    for fact, probe in _probes().items():
        table = probe.get("says") or {}
        for text in table.values():
            assert isinstance(text, str) and 0 < len(text) <= 90, f"{fact}: {text!r}"
        for p in release_profiles():
            v = _probe_value(p, fact)
            if not any(k == v and type(k) is type(v) for k in table):
                assert isinstance(v, (bool, list, dict)), f"{fact} at {p}: no says for {v!r}"
            assert says(fact, v)


def test_the_newest_differs_in_nothing():
    assert differing_facts("upstream") == []
    assert differing_facts("v1.14.2") == []


def test_differing_facts_at_v1_6_1():
    got = differing_facts("v1.6.1")
    assert "core.behaviour.driftEmptyCandidates" in got and "provider.requirements.mode" in got
    assert "core.behaviour.disruptionMethodOrder" not in got          # v1.5.0's order is the newest's
    assert set(got) <= set(all_facts())
    for fact in got:
        fc = fact_change("v1.6.1", fact)
        assert fc.next_release is not None, fact                       # the newest differs, so some release does
        assert fc.sentence().startswith(("core v1.6.1: ", "provider v1.6.1: "))
    assert [f for f in got if f.startswith(CORE_PREFIX)] == [
        CORE_PREFIX + s["name"] for s in SWITCHES if fact_change("v1.6.1", s["name"]).next_release is not None]
