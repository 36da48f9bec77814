"""The notes `harness new` prints (harness/scenario/notices.py group_notes): a kind of note about many objects of
a dump is one line, with the count and the first names; about one or two objects, each object's own line."""
from __future__ import annotations

import copy
import pickle

import yaml

from harness.cli import main as cli
from harness.dump.new import read_objects
from harness.scenario.notices import ObjectNote, group_notes, plural_kind
from tests.dump import scaledump

WHY = "(Karpenter stamps it when a pod binds, ends or starts terminating; consolidateAfter counts from it)"


def _dump(tmp_path, replicasets: int, without_time: int):
    """scaledump's 4 nodes, `without_time` NodeClaims sent without status.lastPodEventTime, and `replicasets`
    ReplicaSets of its Deployment `web` (which that Deployment makes)."""
    data = scaledump.dump(4)
    for claim in [o for o in data["items"] if o["kind"] == "NodeClaim"][:without_time]:
        del claim["status"]["lastPodEventTime"]
    data["items"] += [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                       "metadata": {"name": f"web-5d4f8b9c{i}", "namespace": "default"}} for i in range(replicasets)]
    path = tmp_path / "dump.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


def _new(tmp_path, dump, capsys) -> list[str]:
    assert cli(["new", str(dump), "--name", "case-1", "-o", str(tmp_path / "case.scenario.yaml")]) == 0
    return capsys.readouterr().err.splitlines()


def _lines_of_replicasets(dump) -> list[int]:
    return [line for obj, _, line in read_objects([str(dump)]) if obj["kind"] == "ReplicaSet"]


def test_many_objects_with_one_note_print_one_line(tmp_path, capsys):
    dump = _dump(tmp_path, replicasets=5, without_time=4)
    err = _new(tmp_path, dump, capsys)
    first = _lines_of_replicasets(dump)[0]
    assert (f"{dump}:{first}: skipped 5 ReplicaSets (web-5d4f8b9c0, web-5d4f8b9c1, web-5d4f8b9c2 and 2 more): "
            "their Deployments in the input make them") in err
    assert ("4 NodeClaims (general-00000, general-00001, general-00002 and 1 more): no status.lastPodEventTime; "
            f"each taken as the newest pod event on its node, as given.existingNodes[].lastPodEventTime {WHY}") in err
    assert not [n for n in err if "skipped ReplicaSet " in n or n.startswith("NodeClaim ")]


def test_one_or_two_objects_keep_their_own_lines(tmp_path, capsys):
    dump = _dump(tmp_path, replicasets=2, without_time=1)
    err = _new(tmp_path, dump, capsys)
    lines = _lines_of_replicasets(dump)
    assert [n for n in err if "ReplicaSet" in n] == [
        f"{dump}:{lines[0]}: skipped ReplicaSet web-5d4f8b9c0: its Deployment in the input makes it",
        f"{dump}:{lines[1]}: skipped ReplicaSet web-5d4f8b9c1: its Deployment in the input makes it"]
    assert [n for n in err if "lastPodEventTime" in n] == [
        "NodeClaim general-00000: no status.lastPodEventTime; taken as 2026-11-20T08:05:00Z, Pod "
        f"api-5d4f8b9c7-00000's status.startTime on its node aks-general-00000 {WHY}"]


def _note(name: str, key: str = "k") -> ObjectNote:
    return ObjectNote(f"skipped Thing {name}", name, (key,), "skipped ", "Things", ": not simulated")


def test_a_group_takes_the_place_of_its_first_note():
    notes = ["a", _note("x"), "b", _note("y"), _note("p", "other"), _note("z")]
    assert group_notes(notes) == ["a", "skipped 3 Things (x, y, z): not simulated", "b", "skipped Thing p"]
    assert group_notes(notes[:4]) == ["a", "skipped Thing x", "b", "skipped Thing y"]
    many = [_note(f"n{i}") for i in range(1234)]
    assert group_notes(many) == ["skipped 1,234 Things (n0, n1, n2 and 1,231 more): not simulated"]


def test_a_note_copies_as_itself():
    note = _note("x")
    for again in (copy.deepcopy(note), pickle.loads(pickle.dumps(note))):
        assert again == note and isinstance(again, ObjectNote) and (again.name, again.key) == ("x", ("k",))


def test_plural_kinds_as_kubernetes_guesses_resources():
    assert [plural_kind(k) for k in ("ReplicaSet", "Ingress", "NetworkPolicy", "Endpoints", "StatefulSet")] == [
        "ReplicaSets", "Ingresses", "NetworkPolicies", "Endpoints", "StatefulSets"]
