"""Which release has which provision mode (probe provider.provisionModes, each release's pkg/consts/consts.go), and
the refusal at the scenario's line of a mode its release lacks (harness/model/upstream/provisionmodes.py)."""
from __future__ import annotations

import textwrap

import pytest

from harness.model.upstream.profile import load_profile
from harness.model.upstream.provisionmodes import MODE_ENV, refusal
from harness.scenario.load import load_scenarios


@pytest.mark.parametrize("profile, has, lacks", [
    ("v0.5.5", ["aksscriptless"], ["bootstrappingclient", "aksmachineapi"]),
    ("v1.6.5", ["aksscriptless", "bootstrappingclient"], ["aksmachineapi"]),
    ("v1.6.8", ["bootstrappingclient"], ["aksmachineapi"]),
    ("v1.7.2", ["aksmachineapi"], ["aksmachineapiheaderbatch"]),
    ("v1.10.2", ["aksmachineapi"], ["aksmachineapiheaderbatch"]),
    ("v1.12.0", ["aksmachineapi", "aksmachineapiheaderbatch"], []),
    ("upstream", ["aksscriptless", "bootstrappingclient", "aksmachineapi", "aksmachineapiheaderbatch"], []),
])
def test_each_release_has_the_modes_its_consts_declare(profile, has, lacks):
    modes = load_profile(profile).provision_modes
    assert set(has) <= set(modes) and not set(lacks) & set(modes)


def _scenario(tmp_path, cluster: str = ""):
    f = tmp_path / "m.scenario.yaml"
    f.write_text(textwrap.dedent(f"""\
        apiVersion: harness.karpenter.azure.com/v1alpha1
        kind: Scenario
        metadata: {{name: m}}
        given:
          profiles: [upstream]
        {cluster}
        manifests: []
        """))
    (sc,) = load_scenarios(str(f))
    return sc


def test_a_mode_the_release_lacks_is_refused_at_its_line(tmp_path):
    sc = _scenario(tmp_path, "  cluster: {provisionMode: aksmachineapi}")
    why = refusal(sc, "v1.6.5")
    assert why.startswith(f"{sc.file}:6: provisionMode aksmachineapi: provider v1.6.5 has no such mode")
    assert why.endswith("provision-mode is invalid: aksmachineapi")
    assert refusal(sc, "v1.10.2") is None and refusal(sc, "upstream") is None


def test_the_harness_option_gives_the_mode_to_scenarios_naming_none(tmp_path, monkeypatch):
    sc = _scenario(tmp_path)
    assert refusal(sc, "v1.10.2") is None
    monkeypatch.setenv(MODE_ENV, "aksmachineapiheaderbatch")
    assert "(from HARNESS_PROVISION_MODE / --provision-mode)" in refusal(sc, "v1.10.2")
    named = _scenario(tmp_path, "  cluster: {provisionMode: aksscriptless}")
    assert refusal(named, "v1.10.2") is None         # the scenario's own mode wins
