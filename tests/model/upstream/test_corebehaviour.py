"""harness/model/upstream/corebehaviour.py and harness/data/core-behaviour.yaml: core's behaviour switches per release
profile, and what a run says about the ones it answered with v1.14.0's behaviour."""
from __future__ import annotations

import re

import pytest

from harness.model.upstream.corebehaviour import SCOPES, CoreBehaviour, newest_values
from harness.model.coresync import core_rev, release_cores, with_behaviour
from harness.model.upstream.corespec import core_probes, core_spec
from harness.model.upstream.profile import load_profile, profile_with_knobs

SWITCHES = core_spec()["switches"]
_V = re.compile(r"^v(\d+)\.(\d+)\.(\d+)")


def version(text: str) -> tuple[int, int, int]:
    m = _V.match(text)
    assert m, text
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def test_every_release_holds_every_switch():
    for name in release_cores():
        values = (load_profile(name).raw["core"]).get("behaviour") or {}
        assert set(values) == {s["name"] for s in core_probes()}, name


@pytest.mark.parametrize("s", SWITCHES, ids=[s["name"] for s in SWITCHES])
def test_derived_values_agree_with_since(s):
    """A release has v1.14.0's value exactly when its pinned core is at or after `since`, or a backport tag or a
    later patch of its line (a pseudo-version counts as its base tag, or as new when it is the switch's own
    commit), or is older than a `regression: true` introducedBy. The git-level check (every commit's ancestry)
    is `python -m harness.model.coresync --core-git DIR --check`."""
    newest = newest_values()[s["name"]]
    oldest = version(core_spec()["oldestModeled"])
    backports = [version(b["tag"]) for b in s.get("backports") or ()]
    intro = s.get("introducedBy") or {}
    for name, core in release_cores().items():
        v = core.split(" ", 1)[0]
        if version(v) < oldest:
            continue
        rev = core_rev(core)
        expect_new = version(v) >= version(s["since"]) or str(s["commit"]).startswith(rev[:9]) \
            or rev.startswith(str(s["commit"])[:9]) \
            or any(version(v)[:2] == b[:2] and version(v) >= b for b in backports) \
            or bool(intro.get("regression") and version(v) < version(intro["since"]))
        got = load_profile(name).raw["core"]["behaviour"][s["name"]]
        assert (got == newest) == expect_new, f"{name} (core {v}): {got!r}"


def test_issue_examples():
    """The three examples of issue 53, from the derived data."""
    assert CoreBehaviour.of(load_profile("v1.6.1"))["driftEmptyCandidates"] == "skip"
    assert CoreBehaviour.of(load_profile("v1.6.2"))["driftEmptyCandidates"] == "first"
    assert not CoreBehaviour.of(load_profile("v1.10.2"))["doNotDisruptDurations"]
    assert CoreBehaviour.of(load_profile("v1.12.0"))["doNotDisruptDurations"]
    assert CoreBehaviour.of(load_profile("v0.7.5"))["deletingNodePods"] != "currentlyReschedulable"
    assert CoreBehaviour.of(load_profile("v1.4.1"))["deletingNodePods"] == "currentlyReschedulable"


def test_newest_profile_differs_in_nothing():
    assert CoreBehaviour.of(load_profile("upstream")).differs() == []
    assert CoreBehaviour.of(load_profile("upstream")).notices(set(SCOPES)) == []


def test_notices_only_for_touched_scopes():
    # a switch known but not implemented is said for its own scopes only (v1.5.5: core v1.5.0, before the
    # warned forcedEvictionAfterNodeDeadline)
    old = CoreBehaviour.of(load_profile("v1.5.5"))
    for warned in [s for s in old.differs() if not s.get("implemented")]:
        said = [n for n in old.notices(set(warned["scope"])) if f": {warned['name']} is" in n]
        assert len(said) == 1 and said[0].startswith(f"core v1.5.0: {warned['name']} is modeled as v1.14.0 (")
        assert said[0].endswith(f"kubernetes-sigs/karpenter#{warned['pr']}); answer with --engine real")
    cb = CoreBehaviour.of(load_profile("v1.6.1"))
    assert cb.notices(set()) == []
    # implemented switches are answered at v1.6.1: no notice for the launch timeout
    assert cb.notices({"launchFailure"}) == []
    # implemented switches are answered at v1.6.1: no notice for the multiple-PDB handling
    assert cb.notices({"pdb"}) == []
    # implemented switches are answered at v1.6.1: no notice for drift
    assert not any("driftEmptyCandidates" in n for n in cb.notices({"drift"}))


def test_option_a_core_lacks_is_said():
    cb = CoreBehaviour.of(load_profile("v1.5.5"))
    assert cb["minValuesPolicy"] is False
    assert cb.notices({"minValuesBestEffort"}) == [
        "core v1.5.0 has no MIN_VALUES_POLICY option (added in v1.6.0, kubernetes-sigs/karpenter#2299): "
        "the setting is not applied"]
    assert CoreBehaviour.of(load_profile("v1.6.1"))["minValuesPolicy"] is True


def test_core_older_than_modeled_is_said_always():
    cb = CoreBehaviour.of(load_profile("v0.5.4"))
    assert not cb.modeled
    first = cb.notices({"provisioning"})[0]
    assert first.startswith("core v0.36.1 is older than the oldest core the loop models (v1.0.0)")


def test_knobs_replay_a_core_behaviour():
    p = profile_with_knobs("v1.4.1", {"core": {"behaviour": {"deletingNodePods": "reschedulable"}}})
    assert CoreBehaviour.of(p)["deletingNodePods"] == "reschedulable"


def test_with_behaviour_keeps_header_and_order():
    text = "# head\n# more\nrelease:\n  provider: v1\ncore:\n  version: v1.0.0\n  behaviour:\n    a: 1\ncrd: {}\n"
    out = with_behaviour(text, {"b": 2})
    assert out.startswith("# head\n# more\nrelease:")
    assert "  behaviour:\n    b: 2\ncrd: {}" in out


def test_a_label_policy_says_its_core_behaviour_is_the_newest():
    """before-0006 names core v1.6.2 but extends upstream: every switch that differs at v1.6.2 is said, with the
    release profile that has that core's behaviour."""
    cb = CoreBehaviour.of(load_profile("before-0006"))
    assert cb.policy_reference is not None and cb.policy_reference[0] == "v1.6.2"
    notices = cb.notices({"consolidation"})
    assert [n.split(": ", 1)[1].split(" differs")[0] for n in notices] == [
        "consolidationCandidateOrder", "emptinessByEvictionCost", "whenEmptyUnconsolidatableMessage",
        "consolidateAfterDestinations"]
    assert notices[-1] == ("before-0006 is a label policy naming core v1.6.2, but its core behaviour is v1.14.0's: "
                           "consolidateAfterDestinations differs at core v1.6.2 (changed in v1.14.0, "
                           "kubernetes-sigs/karpenter#3006); run profile v1.6.2 for that core's behaviour")


def test_a_misspelt_switch_is_a_key_error_naming_the_file():
    with pytest.raises(KeyError, match="'driftEmptyCandidate' is not a switch of harness/data/core-behaviour.yaml"):
        CoreBehaviour.of(load_profile("v1.6.1"))["driftEmptyCandidate"]


def test_an_entry_without_modeled_as_is_said_not_raised(monkeypatch):
    # an entry added by hand and run before coresync: the notice says where to look instead of a KeyError
    import harness.model.upstream.corebehaviour as cbmod
    old = CoreBehaviour.of(load_profile("v1.5.5"))
    warned = old.differs()[0]           # as if added with implemented: false and no modeledAs yet
    stripped = tuple({**{k: v for k, v in s.items() if k != "modeledAs"}, "implemented": False} if s is warned else s
                     for s in cbmod._switches())
    monkeypatch.setattr(cbmod, "_switches", lambda: stripped)
    said = [n for n in old.notices(set(warned["scope"])) if f": {warned['name']} is" in n]
    assert len(said) == 1 and "core-behaviour.yaml says not how: `python -m harness.model.coresync`" in said[0]
