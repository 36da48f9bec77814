"""harness/backends/controller.py: where the controller comes from, and what a missing one says."""
import os

import pytest

from harness.backends import controller
from harness.backends.binaries import BinariesError


def test_env_override_must_be_executable(monkeypatch, tmp_path):
    monkeypatch.setenv(controller.ENV_BIN, str(tmp_path / "nope"))
    with pytest.raises(BinariesError, match="is not an executable file"):
        controller.find_controller()


def test_env_override_wins(monkeypatch, tmp_path):
    b = tmp_path / "controller"
    b.write_text("#!/bin/sh\n")
    os.chmod(b, 0o755)
    monkeypatch.setenv(controller.ENV_BIN, str(b))
    assert controller.find_controller().path == b


def test_cache_is_keyed_by_version_or_by_source_content(monkeypatch, tmp_path):
    monkeypatch.delenv(controller.ENV_BIN, raising=False)
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    assert controller.cache_entry().name == controller.DEFAULT_PROVIDER_VERSION
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "go.mod").write_text("module github.com/Azure/karpenter-provider-azure\n")
    (src / "pkg" / "a.go").write_text("package pkg\n")
    first = controller.cache_entry(src).name
    (src / "pkg" / "a_test.go").write_text("package pkg\n")     # tests do not change the binary
    assert controller.cache_entry(src).name == first
    (src / "pkg" / "a.go").write_text("package pkg // edited\n")
    assert controller.cache_entry(src).name != first and first.startswith("src-")
    assert controller.find_controller(src) is None
    assert "python -m harness.backends build --controller --provider-src" in controller.missing_message(src)
