"""harness/backends/binaries/substitutes.py: a module version the proxy refuses is built with the data's
substitute, only when refused, in a cache entry of its own that runs on it name (no build here)."""
import json
import os
import subprocess

import pytest

from harness.backends.binaries import controller, substitutes
from harness.backends.binaries.controlplane import BinariesError

SKEWER = substitutes.Substitute("github.com/Azure/skewer", "v0.0.22", "v0.0.24", "v1.13.0", "why")
ACS = substitutes.Substitute("github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/containerservice/"
                             "armcontainerservice/v9", "v9.3.0-beta.1", "v9.4.0-beta.1", "v1.13.0", "why")
GO_MOD = f"""module github.com/Azure/karpenter-provider-azure

go 1.26.3

require (
\t{ACS.module} {ACS.version}
\tgithub.com/Azure/skewer v0.0.21
)

require {SKEWER.module} {SKEWER.version} // indirect
"""


def test_the_data_names_for_each_refused_version_a_newer_one_with_a_reason():
    table = substitutes.load()
    assert {(s.module, s.version) for s in table} >= {(SKEWER.module, SKEWER.version), (ACS.module, ACS.version)}
    for s in table:
        assert s.substitute != s.version and s.reason and s.moved_in


def test_a_malformed_entry_is_file_line_reason(tmp_path):
    bad = tmp_path / "subst.yaml"
    bad.write_text("substitutes:\n  - module: m\n    version: v1\n    reason: r\n")
    with pytest.raises(BinariesError, match=rf"^{bad}:2: substitute entry lacks substitute$"):
        substitutes.load(bad)


def test_only_the_exact_versions_a_go_mod_pins_are_candidates():
    table = [SKEWER, ACS, substitutes.Substitute(SKEWER.module, "v0.0.21", "v0.0.24", "", "why")]
    assert substitutes.pinned(GO_MOD, table) == table          # block and single-line requires
    assert substitutes.pinned(GO_MOD.replace("v0.0.22", "v0.0.24"), table) == [ACS, table[2]]


def test_a_substitute_applies_only_when_the_proxy_refuses_that_version(tmp_path):
    (tmp_path / "go.mod").write_text(GO_MOD)
    asked = []
    refuses = {(SKEWER.module, SKEWER.version)}

    def probe(go, module, version):
        asked.append((module, version))
        return (module, version) in refuses

    assert substitutes.needed(tmp_path, "go", [SKEWER, ACS], probe) == [SKEWER]
    assert asked == [(SKEWER.module, SKEWER.version), (ACS.module, ACS.version)]
    # full proxy access (the nightly job): the release builds as released
    assert substitutes.needed(tmp_path, "go", [SKEWER, ACS], lambda *a: False) == []


def _fake_go(tmp_path, rc, stdout):
    go = tmp_path / "go"
    go.write_text(f"#!/bin/sh\ncat <<'EOF'\n{stdout}\nEOF\nexit {rc}\n")
    os.chmod(go, 0o755)
    return str(go)


@pytest.mark.parametrize("rc, error, refused", [
    (1, ("github.com/Azure/skewer@v0.0.22: reading https://proxy.golang.org/github.com/%21azure/skewer/@v/"
         "v0.0.22.zip: 403 Forbidden\n\tserver response: This module version is not available."), True),
    (1, "reading https://proxy.golang.org/x/@v/v1.zip: 410 Gone", True),
    (1, "dial tcp: lookup proxy.golang.org: no such host", False),    # offline is not a refusal
    (0, "", False),
])
def test_refused_reads_the_proxys_answer(tmp_path, rc, error, refused):
    go = _fake_go(tmp_path, rc, json.dumps({"Path": SKEWER.module, "Version": SKEWER.version, "Error": error}))
    assert substitutes.refused(go, SKEWER.module, SKEWER.version) is refused


def test_refused_is_false_when_go_cannot_run(tmp_path):
    assert substitutes.refused(str(tmp_path / "no-go"), SKEWER.module, SKEWER.version) is False


def test_the_cache_suffix_says_a_build_substituted_and_which():
    assert substitutes.suffix([]) == ""
    one, both = substitutes.suffix([SKEWER]), substitutes.suffix([SKEWER, ACS])
    assert one.startswith("+subst-") and both.startswith("+subst-") and one != both
    assert substitutes.suffix([ACS, SKEWER]) == both


def test_the_notice_names_each_substitute_and_the_version_it_stands_for():
    text = substitutes.notice([SKEWER, ACS])
    assert text.startswith("built with github.com/Azure/skewer v0.0.24 for v0.0.22, ")
    assert f"{ACS.module} v9.4.0-beta.1 for v9.3.0-beta.1" in text and "proxy refuses" in text
    assert substitutes.notice([]) == ""


def test_the_wrapper_module_replaces_exactly_the_refused_version(tmp_path):
    """SKEWER.replace is what build-controller.sh hands `go mod edit -replace` (MODULE_REPLACES)."""
    go = controller.go_binary()
    if go is None:
        pytest.skip("no Go toolchain")
    (tmp_path / "go.mod").write_text("module harness.local/x\n\ngo 1.22\n")
    subprocess.run([go, "mod", "edit", "-replace", SKEWER.replace], cwd=tmp_path, check=True,
                   env={**os.environ, "GOWORK": "off", "GOTOOLCHAIN": "local", "GOFLAGS": "-mod=mod"})
    assert "replace github.com/Azure/skewer v0.0.22 => github.com/Azure/skewer v0.0.24" in (tmp_path / "go.mod").read_text()


def _built(entry, applied=()):
    entry.mkdir(parents=True)
    (entry / "controller").write_text("#!/bin/sh\n")
    os.chmod(entry / "controller", 0o755)
    (entry / "VERSION").write_text("v1.12.2\n")
    if applied:
        substitutes.record(entry, list(applied))


def test_a_substituted_build_is_found_and_says_so_and_an_exact_one_wins(tmp_path, monkeypatch):
    monkeypatch.setenv("HARNESS_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv(controller.ENV_BIN, raising=False)
    monkeypatch.delenv(controller.ENV_CORE, raising=False)
    src = tmp_path / "cache" / "provider-src" / "4852a848"
    src.mkdir(parents=True)
    (src / "go.mod").write_text(GO_MOD)
    exact = controller.cache_entry(src, "upstream")
    subst = controller.cache_entry(src, "upstream", substitutes.suffix([SKEWER, ACS]))
    assert subst.name == exact.name + substitutes.suffix([SKEWER, ACS])
    assert controller.find_controller(src, "upstream") is None
    _built(subst, [SKEWER, ACS])
    found = controller.find_controller(src, "upstream")
    assert found.path == subst / "controller" and found.substitutes == (SKEWER, ACS)
    _built(exact)               # built where the proxy serves every version: as released
    found = controller.find_controller(src, "upstream")
    assert found.path == exact / "controller" and found.substitutes == ()
