"""Dumps the real controller made (tests/dump/dumps/real-engine/, written by tools/make_engine_dumps.py from a source
scenario run with --engine real): `harness new` reads the provision mode and the feature gates from them, says
which evidence decided each and what it assumed, and the scenario reproduces the dump as sent. Ticket t20 is that
scenario of machine-api-limit.yaml (its real-engine run: docs/reproduce-a-ticket.md)."""
from __future__ import annotations

import tempfile
from pathlib import Path

import pytest
import yaml

from harness.cli import main as cli
from harness.scenario.load import load_scenarios
from tests.dump.test_dump_roundtrip import run

ROOT = Path(__file__).resolve().parents[2]
REAL_ENGINE = Path(__file__).resolve().parent / "dumps" / "real-engine"
CASES = sorted(p.stem for p in REAL_ENGINE.glob("*.yaml"))
TICKET = ROOT / "scenarios" / "tickets" / "t20-nap-machine-api-limit.scenario.yaml"


def new(tmp_path, dump: Path, *extra: str) -> tuple[int, Path]:
    out = tmp_path / "case.scenario.yaml"
    return cli(["new", str(dump), "--name", "case-1", "-o", str(out), *extra]), out


def test_every_case_is_made_by_the_tool_from_its_source():
    from tools.make_engine_dumps import CASES as MADE, SOURCES
    assert CASES == sorted(MADE)
    for name in CASES:
        text = (REAL_ENGINE / f"{name}.yaml").read_text()
        assert text.startswith("# Made by tools/make_engine_dumps.py with the real Karpenter-on-Azure controller")
        assert f"# Remake: python3 tools/make_engine_dumps.py --provider-git DIR {name}\n" in text
        assert (SOURCES / f"{name}.scenario-source.yaml").is_file()
        items = yaml.safe_load(text)["items"]
        assert all(i["metadata"].get("uid") and i["metadata"].get("resourceVersion") for i in items)
        # no path of the machine that made it: its checkout, home or temporary folder
        assert not any(k in text for k in (str(Path(__file__).resolve().parents[2]), str(Path.home()),
                                           tempfile.gettempdir() + "/"))
        assert "kind: Secret" not in text


def test_machine_api_dump_says_its_mode_and_gate_and_what_it_assumed(tmp_path, capsys):
    dump = REAL_ENGINE / "machine-api-limit.yaml"
    items = yaml.safe_load(dump.read_text())["items"]
    (claim,) = [i for i in items if i["kind"] == "NodeClaim"]
    name = claim["metadata"]["name"]
    rc, out = new(tmp_path, dump, "--provider-version", "1.14.0")
    assert rc == 0
    err = capsys.readouterr().err
    evidence = (f"NodeClaim {name} is annotated karpenter.azure.com/aks-machine-resource-id (machine {name} of agent "
                "pool testmpool)")
    assert (f"given.cluster.provisionMode aksmachineapi: {evidence}; a dump does not show whether creates were "
            "batched (aksmachineapiheaderbatch)") in err
    overlay = ("NodeOverlay d4-surcharge has status conditions, which only core's nodeoverlay controller writes: "
               "assumed the NodeOverlay feature gate on (given.featureGates; off in every release's chart)")
    assert overlay in err
    assert ("left out of expect: 6 NodePool event(s) 'Status condition transitioned, ...': the history of the "
            "NodePool's status conditions, whose state expect says as accepted") in err
    (sc,) = load_scenarios(out)
    assert sc.given["cluster"]["provisionMode"] == "aksmachineapi"
    assert sc.given["featureGates"] == {"NodeOverlay": True}
    assert sc.given["assumed"] == [
        f"given.cluster.provisionMode aksmachineapi: {evidence}; a dump does not show whether creates were batched "
        "(aksmachineapiheaderbatch): assumed aksmachineapi, not aksmachineapiheaderbatch", overlay]
    assert [m.obj["kind"] for m in sc.manifests] == ["NodePool", "AKSNodeClass", "NodeOverlay", "Deployment"]
    assert "status" not in sc.manifests[2].obj
    for profile in sc.profiles:
        outcome = run(sc, profile)
        assert outcome.passed, (profile, [m.render() for m in outcome.mismatches], outcome.error)
        assert [n.nodeclaim for n in outcome.result.nodes] == [name]


def test_a_release_without_the_mode_refuses_the_dump(tmp_path, capsys):
    """Provider v1.6.2 has no Machine API mode: the scenario is refused at its provisionMode line, as that release's
    controller refuses the value, and no file is written."""
    rc, out = new(tmp_path, REAL_ENGINE / "machine-api-limit.yaml", "--provider-version", "1.6.2")
    assert rc != 0 and not out.exists()
    err = capsys.readouterr().err
    assert f"{out}: not written: its line " in err        # the line of a file that is not there is not a place
    assert ("provisionMode aksmachineapi: provider v1.6.2 has no such mode (its pkg/consts/consts.go: aksscriptless, "
            "bootstrappingclient); its controller refuses it at start: provision-mode is invalid: aksmachineapi"
            ) in err


@pytest.mark.parametrize("part", ["given", "manifests", "expect"])
def test_ticket_t20_is_harness_new_of_its_dump_as_sent(tmp_path, part):
    ticket = yaml.safe_load(TICKET.read_text())
    dumped = TICKET.parent / "dumps" / "t20-nap-machine-api-limit.yaml"
    assert dumped.read_text() == (REAL_ENGINE / "machine-api-limit.yaml").read_text()
    rc, out = new(tmp_path, dumped, "--provider-version", "1.14.0")
    assert rc == 0
    made = yaml.safe_load(out.read_text())
    assert made[part] == ticket[part]


def test_bootstrappingclient_dump_reads_the_vm_path_and_says_what_it_cannot_tell(tmp_path, capsys):
    """The real controller in bootstrappingclient (NAP's mode today) leaves a dump like aksscriptless's: the VM path is
    read, aksscriptless written, and given.assumed says the dump does not tell it from bootstrappingclient."""
    rc, out = new(tmp_path, REAL_ENGINE / "bootstrap-limit.yaml", "--provider-version", "1.14.0")
    assert rc == 0
    capsys.readouterr()
    (sc,) = load_scenarios(out)
    assert "provisionMode" not in sc.given["cluster"]
    (said,) = [line for line in sc.given["assumed"] if line.startswith("given.cluster.provisionMode")]
    assert said.startswith("given.cluster.provisionMode aksscriptless: Node ")
    assert said.endswith("carries karpenter.sh/do-not-sync-taints=true, which only the VM path's --node-labels write; "
                         "a dump does not tell it from bootstrappingclient (the VM's custom data and extensions are "
                         "on the Azure side): assumed aksscriptless, not bootstrappingclient")


def test_the_mode_a_dump_cannot_tell_is_given_and_replays(tmp_path, capsys):
    """--provision-mode bootstrappingclient: what the dump cannot tell is given, written, agreed with by the dump's
    evidence and no longer assumed; the scenario reproduces the dump in that mode. A mode of the other path is
    refused."""
    dump = REAL_ENGINE / "bootstrap-limit.yaml"
    rc, out = new(tmp_path, dump, "--provider-version", "1.14.0", "--provision-mode", "bootstrappingclient")
    assert rc == 0
    assert "given.cluster.provisionMode bootstrappingclient: --provision-mode; the dump agrees: Node " in \
        capsys.readouterr().err
    (sc,) = load_scenarios(out)
    assert sc.given["cluster"]["provisionMode"] == "bootstrappingclient"
    assert not [line for line in sc.given["assumed"] if "provisionMode" in line]
    outcome = run(sc, "v1.14.2")
    assert outcome.passed, [m.render() for m in outcome.mismatches]
    rc, _ = new(tmp_path, dump, "--provision-mode", "aksmachineapi", "--force")
    assert rc != 0
    assert ("--provision-mode: aksmachineapi is not what the dump shows: given.cluster.provisionMode aksscriptless: "
            "Node ") in capsys.readouterr().err
