"""Which provider release replays a scenario's given.knobs (harness/model/upstream/knobrelease.py), on the release
data as shipped: every knob scenario of the library, and the matching rules one by one."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from harness.model.upstream.knobrelease import KnobFact, knob_facts, knob_release, unserved
from harness.model.upstream.profile import raw_profile
from harness.model.upstream.releases import expand

SCENARIOS = Path(__file__).resolve().parents[3] / "scenarios"

# scenario -> the release profile replaying its knobs under its profile, or None (no release has them):
# read from each release's derived facts (harness/data/releases/<profile>/provider-facts.yaml)
EXPECTED = {
    "r01-before-v1-12-restricted-sku-offers-empty-zone": ("upstream", "v1.10.2"),
    "r01-before-v1-12-tsc-unsatisfiable": ("upstream", "v1.10.2"),
    "r02-before-v1-5-2-float-value-matches-nothing": ("before-0006", "v1.5.1"),
    "r03-v0-5-to-v1-3-zone-requirement-rejected": ("before-0006", "v0.7.5"),
    "r05-v0-4-0-nodeclaim-rejected": ("before-0006", None),                   # v0.4.0: before the oldest
    "r05-v0-4-0-zone-selector-nodeclaim-rejected": ("before-0006", None),
    "r06-before-v0-4-continuous-drift": ("before-0006", None),
    "r07-unzoned-disk-pv-pending-before-v1-14": ("upstream", "v1.13.1"),
    "r08-v0-7-1-to-v1-11-self-hosted-amd64-v6-excluded": ("before-0006", "v1.6.5"),
    "r08-v0-7-1-to-v1-11-nap-sig-all-eligible": ("before-0006", "v1.6.5"),
    "r09-before-v0-7-1-v6-chosen-cannot-boot": ("before-0006", "v0.7.0"),     # not v1.12.0+: see below
    "r09-v0-7-1-self-hosted-v6-filtered-out": ("before-0006", "v1.6.5"),
    "r10-before-v1-12-1-invalid-values-accepted": ("upstream", "v1.12.0"),
    "r13-before-v1-4-eastus2euap-non-zonal": ("before-0006", "v0.7.5"),
    "r15-before-v1-4-spot-overconstrained-retried": ("before-0006", "v0.7.5"),
    "r15-issue-91-spot-quota-before-v0-3": ("before-0006", None),             # v0.2: before the oldest
    "r17-before-v1-14-unknown-sku-excluded": ("upstream", "v1.13.1"),
    "r17-before-v1-14-reported-dsv7-excluded": ("upstream", "v1.13.1"),
    "r18-before-v0-7-3-no-azure-cni-overlay-label": ("before-0006", "v0.7.2"),
    "r20-core-before-v1-14-runaway": ("upstream", "v1.13.1"),
    "r25-before-v1-5-0-false-matches-nothing": ("before-0006", "v1.4.1"),
}


def _api_versions(path: Path, items: list) -> set[tuple[str, str]]:
    """(kind, apiVersion) of a scenario's manifests, inline or `file:` references."""
    out = set()
    for item in items or ():
        objs = yaml.safe_load_all((path.parent / item["file"]).read_text()) if "file" in item else [item]
        out |= {(o.get("kind"), o.get("apiVersion")) for o in objs if isinstance(o, dict)}
    return out


def _knob_scenarios() -> list[tuple[str, str, dict, tuple]]:
    out = []
    for path in sorted(SCENARIOS.rglob("*.yaml")):
        for doc in yaml.safe_load_all(path.read_text()):
            knobs = ((doc or {}).get("given") or {}).get("knobs") if isinstance(doc, dict) else None
            if knobs:
                apis = _api_versions(path, doc.get("manifests"))
                for step in doc.get("steps") or ():
                    apis |= _api_versions(path, step.get("apply"))
                for profile in expand(list(doc["given"].get("profiles") or ["upstream"])):
                    out.append((doc["metadata"]["name"], profile, knobs, tuple(sorted(apis))))
    return out


KNOBBED = _knob_scenarios()


def test_the_table_covers_every_knob_scenario_of_the_library():
    assert sorted(k[0] for k in KNOBBED) == sorted(EXPECTED)


@pytest.mark.parametrize("name,profile,knobs,apis", KNOBBED, ids=[k[0] for k in KNOBBED])
def test_each_knob_scenario_maps_to_its_release(name, profile, knobs, apis):
    want_profile, want = EXPECTED[name]
    assert profile == want_profile
    replay = knob_release(profile, knobs, apis)
    assert replay.release == want, replay.reason
    if want is None:
        assert replay.unmatched and "no provider release the harness has (v0.5.0-" in replay.reason
        assert "the real engine skips" in replay.notice
    else:
        assert replay.reason.startswith("given.knobs ") and f": run on {want}'s controller" in replay.reason
        assert f"the real engine runs {want}'s controller" in replay.notice
        assert all(f.holds(raw_profile(want)) for f in replay.facts)


def test_a_release_whose_crds_do_not_serve_the_manifests_api_cannot_take_the_scenario():
    """Provider v0.5-v0.7 serve AKSNodeClass karpenter.azure.com/v1alpha2 only: a v0.7.5 bug written with a
    v1beta1 nodeclass is refused there before the bug can show (r03, r13, r15 write v1alpha2 for it)."""
    knobs = {"provider": {"createErrorHandlers": ["LowPriorityQuota", "SKUFamilyQuota", "SkuNotAvailable",
                                                  "ZonalAllocationFailed", "RegionalQuota"]}}
    assert knob_release("before-0006", knobs, [("AKSNodeClass", "karpenter.azure.com/v1alpha2")]).release == "v0.7.5"
    refused = knob_release("before-0006", knobs, [("AKSNodeClass", "karpenter.azure.com/v1beta1"),
                                                 ("Pod", "v1")])
    assert refused.release is None and refused.unmatched == ("apis",)
    assert "is provider v0.7.5's, but its CRDs do not serve AKSNodeClass karpenter.azure.com/v1beta1" in refused.reason
    assert unserved(raw_profile("v1.4.1"), [("AKSNodeClass", "karpenter.azure.com/v1beta1")]) == []


def test_a_value_that_came_back_later_answers_with_the_release_of_the_bug():
    """nvmeOnlyExcludedWithoutSIG is false before #617 (v0.7.0) and again from #1642 (v1.12.0): a knob
    under before-0006 (provider v1.6.5) goes back in time, to v0.7.0; under a profile older than every
    release holding it, the oldest after it answers, and says so."""
    knobs = {"provider": {"nvmeOnlyExcludedWithoutSIG": False}}
    assert knob_release("before-0006", knobs).release == "v0.7.0"
    assert knob_release("upstream", knobs).release == "v1.14.2"
    later = knob_release("v0.5.5", {"provider": {"unknownSKUPolicy": "exclude"}})
    assert later.release == "v1.4.1" and "the oldest after it" in later.reason


def test_the_reason_names_the_release_its_core_and_what_else_differs():
    replay = knob_release("before-0006", {"provider": {"requirements": {"ephemeralFormat": "float"}}})
    assert replay.reason == ("given.knobs provider.requirements.ephemeralFormat=float is provider "
                             "v1.5.0-v1.5.1's (core v1.5.0; the newest release at or before "
                             "before-0006's (v1.6.5) with them): run on v1.5.1's controller")
    assert replay.detail.startswith(replay.reason + f"; {len(replay.differs)} other fact(s) differ from before-0006: "
                                    "provider.")        # provider facts named first
    assert replay.covers == ("v1.5.0", "v1.5.1") and replay.core == "v1.5.0"
    assert "provider.baseLabels: changed" in replay.differs          # before-0006's AgentBaker-era labels
    assert not any(d.startswith("provider.requirements.ephemeralFormat") for d in replay.differs)
    assert replay.to_json()["release"] == "v1.5.1"


def test_facts_held_only_apart_are_named_with_where_each_holds():
    knobs = {"provider": {"requirements": {"booleanValues": "trueOnly", "ephemeralFormat": "int"}}}
    replay = knob_release("upstream", knobs)        # trueOnly until v1.4.1 (#912), int from v1.5.2 (#940)
    assert replay.release is None and replay.unmatched == ("provider.requirements.booleanValues",
                                                           "provider.requirements.ephemeralFormat")
    assert "holds them together (provider.requirements.booleanValues only v0.5.4," in replay.reason
    assert "provider.requirements.ephemeralFormat only v1.5.5," in replay.reason


def test_knob_facts_read_the_merge_directives():
    facts = knob_facts({"core": {"wellKnownLabels+": ["a/b"], "wellKnownValues!": {"k": ["v"]},
                                 "normalizedLabelValues-": {"zone": None}},
                        "provider": {"zones": {"regionalValue": ""}}})
    assert facts == [KnobFact(("core", "wellKnownLabels"), "+", ["a/b"]),
                     KnobFact(("core", "wellKnownValues"), "=", {"k": ["v"]}),
                     KnobFact(("core", "normalizedLabelValues", "zone"), "=", None),
                     KnobFact(("provider", "zones", "regionalValue"), "=", "")]
    assert facts[0].text() == 'core.wellKnownLabels+["a/b"]' and facts[3].text() == 'provider.zones.regionalValue=""'


def test_list_items_added_are_compared_as_written_and_removed_ones_by_identity():
    rule = {"message": "m", "domain": "kubernetes.io", "targets": ["nodePoolLabels"], "allowKeys": ["a", "b"]}
    other = {**rule, "allowKeys": ["a"]}
    raw = {"crd": {"keyRules": [rule]}, "provider": {"baseLabels": [{"key": "x", "value": "1"}]}}
    assert KnobFact(("crd", "keyRules"), "+", [{**rule, "allowKeys": ["b", "a"]}]).holds(raw)   # order is no fact
    assert not KnobFact(("crd", "keyRules"), "+", [other]).holds(raw)
    assert not KnobFact(("crd", "keyRules"), "-", [other]).holds(raw)        # same domain and targets: still there
    assert KnobFact(("crd", "keyRules"), "-", [{**rule, "targets": ["nodeClaimRequirements"]}]).holds(raw)
    assert not KnobFact(("provider", "baseLabels"), "-", [{"key": "x", "value": "2"}]).holds(raw)
    assert not KnobFact(("provider", "zones", "zonalRegions"), "-", ["eastus"]).holds(raw)     # no list at all
    # a rule the knob removes and adds back changed is checked by its `+` alone
    replaced = knob_facts({"crd": {"keyRules-": [rule], "keyRules+": [other]}})
    assert replaced == [KnobFact(("crd", "keyRules"), "+", [other])]


def test_unknown_skus_are_read_from_the_releases_known_sku_list():
    fact = KnobFact(("provider", "unknownSKUs"), "=", ["Standard_D4s_v7"])
    assert fact.holds(raw_profile("v1.13.1"))            # not on v1.13.1's list
    assert not fact.holds(raw_profile("v1.14.2"))        # on v1.14's
    assert not fact.holds(raw_profile("v0.7.5"))         # no list before v1.4: no SKU is unknown
