"""The selection messages `harness run`, the pytest plugin and `harness parity` share."""
from __future__ import annotations

import pytest

from harness.model.upstream import releases
from harness.model.upstream.profile import ProfileError
from harness.scenario.selection import no_scenario, profiles_for, split_profiles, unknown_profile, version_notices

RELEASES = releases.release_profiles()
SPAN = f"; or a provider version ({RELEASES[0]} .. {RELEASES[-1]}; `all` runs every release profile)"


def test_unknown_profile_names_the_flag_the_known_profiles_and_the_versions():
    assert unknown_profile("upstrem", ["before-0006", "upstream"]) == \
        "--profile upstrem: unknown profile; known profiles: before-0006, upstream" + SPAN
    assert unknown_profile("x", ["upstream"], "--diff") == "--diff x: unknown profile; known profiles: upstream" + SPAN


def test_policies_filter_and_releases_add_runs():
    assert split_profiles(["before-0006", "v1.6.2", "all"]) == (["before-0006"], ["v1.6.2"] + [
        p for p in RELEASES if p != "v1.6.2"])
    assert profiles_for(["before-0006", "upstream"], ["upstream"]) == ["upstream"]
    assert profiles_for(["before-0006", "upstream"], ["v1.6.3"]) == ["v1.6.3"]         # a covered tag
    assert profiles_for(["upstream"], ["upstream", "v1.8.1"]) == ["upstream", "v1.8.1"]
    assert profiles_for(["upstream"], []) == ["upstream"]
    with pytest.raises(ProfileError):
        split_profiles(["upstrem"])


def test_a_version_answered_by_another_release_is_said_loudly():
    assert version_notices(["upstream", "v1.6.3", "all"]) == []
    (text,) = version_notices(["v1.8.1"])
    assert text.startswith("--profile v1.8.1: no profile for provider v1.8.1; answering with v1.7.2")


def test_no_scenario_names_paths_or_the_collection():
    assert no_scenario(["a", "b"], 3, {"upstream", "before-0006"}, "scenarios/x") == (
        "--profile a --profile b selects no scenario: none of the 3 scenario(s) in scenarios/x declares it "
        "in given.profiles (they declare: before-0006, upstream)")
    assert no_scenario(["a"], 2, ["upstream"]) == (
        "--profile a selects no scenario: none of the 2 collected scenario(s) declares it in given.profiles "
        "(they declare: upstream)")


def test_a_provider_version_is_the_controller_built_and_its_release_profile(monkeypatch):
    """--harness-provider-version REF: the ref the controller is built from (KARPENTER_PROVIDER_REF,
    which xdist workers inherit) and, for a release with a profile of its own and no --harness-profile,
    that profile; without a clone it is a usage error."""
    from types import SimpleNamespace

    from harness.backends.binaries.controller import ENV_CORE, ENV_GIT, ENV_REF
    from harness.runner.plugin import choose_provider
    for env in (ENV_GIT, ENV_REF, ENV_CORE, "HARNESS_BUILD_CONTROLLER"):     # recorded, so the values choose_provider sets are undone
        monkeypatch.setenv(env, "")
        monkeypatch.delenv(env)

    def option(**kw):
        return SimpleNamespace(**{"harness_provider_git": None, "harness_provider_version": None,
                                  "harness_core_version": None, "harness_profile": [], **kw})
    with pytest.raises(pytest.UsageError, match="needs --harness-provider-git"):
        choose_provider(option(harness_provider_version="v1.13.1"))
    opt = option(harness_provider_git="/src/provider", harness_provider_version="v1.13.1", harness_core_version="v1.13.0")
    choose_provider(opt)
    assert opt.harness_profile == ["v1.13.1"]
    import os
    assert (os.environ[ENV_GIT], os.environ[ENV_REF], os.environ[ENV_CORE]) == ("/src/provider", "v1.13.1", "v1.13.0")
    assert os.environ["HARNESS_BUILD_CONTROLLER"] == "1"          # the release asked for is built on first use
    kept = option(harness_provider_version="5c2fa10", harness_profile=["upstream"])
    choose_provider(kept)                          # a commit, and a profile given: left as asked
    assert kept.harness_profile == ["upstream"]
