"""harness/dump/logstory.py: what a customer's log and events say happened, object by object, and where the
incident begins; read from the hand-made ticket logs under tests/runner/karpenterlogs/tickets/ (core v1.5.0's
and core v1.10.0's words)."""
from __future__ import annotations

from pathlib import Path

from harness.model.kube.kubetime import parse_rfc3339
from harness.dump import eventstext, logstory

TICKETS = Path(__file__).resolve().parents[1] / "runner" / "karpenterlogs" / "tickets"


def story(name: str, events: str | None = None) -> logstory.Story:
    path = TICKETS / name
    rows = eventstext.as_events({events: eventstext.read(events, (TICKETS / events).read_text())}) if events else []
    return logstory.read(str(path), path.read_text(), rows)


def test_the_nodeclaims_as_the_log_tells_them():
    s = story("pdb-drain-core-v1.5.log")
    assert sorted(s.claims) == ["general-m4q9z", "general-p2w7c", "general-x7k2p"]
    x = s.claims["general-x7k2p"]
    assert (x.nodepool, x.node, x.instance_type, x.zone, x.capacity_type) == (
        "general", "aks-general-x7k2p", "Standard_D4s_v5", "westeurope-2", "on-demand")
    assert x.listed_types == ["Standard_D4s_v5", "Standard_D8s_v5"]
    assert x.requests == {"cpu": "2360m", "memory": "4418Mi", "pods": "9"}
    assert x.created == parse_rfc3339("2026-03-02T08:01:11.547Z")
    assert x.disrupted[:3] == (parse_rfc3339("2026-03-09T10:14:05.201Z"), "Drifted", "replace")
    assert x.tainted == parse_rfc3339("2026-03-09T10:15:31.102Z") and x.deleted is None
    assert s.claims["general-p2w7c"].replacement and not x.replacement
    assert {r for r, _ in s.regions} == {"westeurope"}


def test_failed_evictions_name_their_pods_node_and_refusal():
    """Core v1.5.0's `failed evicting pod` lines: each pod's node is the one draining then; the API server's
    answer is the multiple-PDB refusal."""
    s = story("pdb-drain-core-v1.5.log")
    pod = s.pods["shop/checkout-6f9c7d8b5-2kq8w"]
    assert pod.claim == "general-x7k2p" and pod.placed_by.startswith("its eviction failed while Node aks-general-x7k2p")
    assert pod.refusals == {"multiple-pdbs": 66}
    assert len(s.errors) == 132 and {e.id for e in s.errors} == {"eviction-failed"}
    # the provisioning round that made one NodeClaim places its pods there
    assert s.pods["payments/ledger-0"].claim == "general-m4q9z"
    when, why = logstory.incident(s)
    assert when == s.claims["general-x7k2p"].disrupted[0]
    assert why.startswith("its first error line") and "from the disruption of NodeClaim general-x7k2p" in why


def test_events_say_what_the_log_does_not():
    """At core v1.10.0 a refused eviction is an event only: the events' FailedDraining name the pods and the
    refusal, and the incident is the drain of their node."""
    bare = story("pdb-drain-core-v1.10.log")
    assert not bare.errors and not any(p.refusals for p in bare.pods.values())
    s = story("pdb-drain-core-v1.10.log", "pdb-drain-core-v1.10.events.txt")
    pod = s.pods["shop/checkout-6f9c7d8b5-m7xzt"]
    assert pod.refusals == {"violates-pdb": 1} and pod.claim == "general-x7k2p"
    assert pod.placed_by.endswith("(pdb-drain-core-v1.10.events.txt:6)")
    assert [e["message"] for e in s.events][0] == "Failed to drain node, 2 pods are waiting to be evicted"
    when, why = logstory.incident(s)
    assert when == parse_rfc3339("2026-03-09T08:01:52.318Z") and "the events say were refused" in why


def test_pretty_slice_names():
    assert logstory.split_pods("a/x, a/y and 3 other(s)") == (["a/x", "a/y"], 3)
    assert logstory.split_pods("a/x") == (["a/x"], 0)


def test_region_of_a_provider_id():
    pid = ("azure:///subscriptions/0/resourceGroups/MC_rg-shop_aks-shop_westeurope/providers/Microsoft.Compute/"
           "virtualMachines/aks-general-x7k2p")
    assert logstory.region_of_provider_id(pid) == ("westeurope", "MC_rg-shop_aks-shop_westeurope")
    assert logstory.region_of_provider_id("azure:///subscriptions/0/resourceGroups/mine/providers/"
                                          "Microsoft.Compute/virtualMachines/x") is None
