"""harness/dump/eventstext.py: `kubectl get events` and `kubectl events` tables as printed, read back into
Events; a row whose columns do not line up is `file:line: reason`."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.dump import eventstext as et
from harness.scenario.yamlsource import SourceError

TICKETS = Path(__file__).resolve().parents[1] / "runner" / "karpenterlogs" / "tickets"
BROKEN = Path(__file__).resolve().parents[1] / "runner" / "karpenterlogs" / "broken"


def test_kubectl_get_events_all_namespaces():
    text = (TICKETS / "pdb-drain-core-v1.10.events.txt").read_text()
    assert et.looks_like_table(text)
    rows = et.read("events.txt", text)
    assert [(r.line, r.kind, r.name, r.reason) for r in rows[2:5]] == [
        (4, "Node", "aks-general-x7k2p", "FailedDraining"), (5, "Node", "aks-general-x7k2p", "FailedDraining"),
        (6, "Node", "aks-general-x7k2p", "FailedDraining")]
    assert rows[3].message == "Failed to drain node, evicting pod violates a PDB (Pod=shop/checkout-6f9c7d8b5-2kq8w)"
    assert rows[1].kind == "NodeClaim" and rows[5].namespace == "payments" and rows[5].last_age == 41 * 60
    # as the Event object `-o yaml` shows: a Node's event names no namespace of its object
    assert rows[2].as_object()["involvedObject"] == {"kind": "Node", "name": "aks-general-x7k2p"}
    assert rows[5].as_object()["involvedObject"] == {"kind": "Pod", "name": "ledger-1", "namespace": "payments"}


def test_kubectl_events_series_and_wide_columns():
    """`kubectl events` prints a repeated event's LAST SEEN as `3s (x16500 over 2d1h)`; `-o wide` has FIRST
    SEEN and COUNT after the message."""
    series = ("LAST SEEN                 TYPE      REASON           OBJECT                   MESSAGE\n"
              "3s (x16500 over 2d1h)     Warning   FailedDraining   Node/aks-general-x7k2p   Failed to drain node, "
              "eviction does not support multiple PDBs (Pod=shop/checkout-6f9c7d8b5-2kq8w)\n")
    (row,) = et.read("e.txt", series)
    assert (row.kind, row.count, row.last_age, row.first_age) == ("Node", 16500, 3, 2 * 86400 + 3600)
    wide = ("LAST SEEN   TYPE      REASON           OBJECT                   SUBOBJECT   SOURCE      MESSAGE"
            "                                                 FIRST SEEN   COUNT   NAME\n"
            "3s          Warning   FailedDraining   node/aks-general-x7k2p               karpenter   Failed to drain "
            "node, 2 pods are waiting to be evicted   2d1h         16500   aks-general-x7k2p.18a2\n")
    (row,) = et.read("e.txt", wide)
    assert (row.message, row.count, row.first_age) == ("Failed to drain node, 2 pods are waiting to be evicted", 16500,
                                                        2 * 86400 + 3600)


@pytest.mark.parametrize("text,seconds", [("45s", 45), ("3m20s", 200), ("2h5m", 7500), ("2d1h", 176400),
                                          ("3y12d", 3 * 365 * 86400 + 12 * 86400), ("<unknown>", None), ("5x", None)])
def test_ages(text, seconds):
    assert et.age_seconds(text) == seconds


def test_a_yaml_dump_is_not_a_table():
    assert not et.looks_like_table("apiVersion: v1\nkind: List\nitems: []\n")


def test_a_row_that_does_not_line_up_is_file_line_reason():
    path = BROKEN / "events-misaligned.txt"
    with pytest.raises(SourceError) as e:
        et.partition([str(path)])
    assert e.value.render() == (f"{path}:3: not a row of the events table above (its columns do not line up with "
                                "the header: give the table as kubectl printed it, or `-o yaml`)")
