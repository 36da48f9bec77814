"""A profile's requirement semantics (harness/model/labels/semantics.py), and where a run's copy notes core's two
probes read through the profile: a requirement naming a simulation key, a value a normalization table maps."""
from __future__ import annotations

from harness.model.labels.requirements import IN, LABEL_REQUIREMENTS, Requirement, Requirements
from harness.model.labels.semantics import semantics_for
from harness.model.upstream.factreads import LABEL_VALUES, SIMULATION_KEYS

ZONE, CSI_ZONE = "topology.kubernetes.io/zone", "topology.disk.csi.azure.com/zone"


def _run(profile: str = "v1.12.0"):
    return semantics_for(profile).for_run()


def test_the_csi_zone_value_is_normalized_at_the_newest_release_only():
    assert Requirement.new(CSI_ZONE, IN, [""], semantics_for("upstream")).values == {"0"}
    assert Requirement.new(CSI_ZONE, IN, [""], semantics_for("v1.12.0")).values == {""}


def test_a_value_either_table_maps_notes_the_normalization():
    sem = _run()
    Requirement.new(ZONE, IN, ["eastus-1", "0"], sem)
    Requirements.from_node_selector_terms([{"key": "app", "operator": "In", "values": [""]}], sem)
    assert list(sem.reads.noted) == []
    Requirement.new(CSI_ZONE, IN, [""], sem)          # the CSI driver's unzoned PV, its key normalized first
    assert list(sem.reads.noted) == [LABEL_VALUES]


def test_a_label_cached_by_an_earlier_run_is_noted_again():
    earlier, later = _run(), _run()
    LABEL_REQUIREMENTS.get(CSI_ZONE, "", earlier)
    assert list(earlier.reads.noted) == [LABEL_VALUES]
    Requirements.from_labels({CSI_ZONE: ""}, later)
    assert list(later.reads.noted) == [LABEL_VALUES]


def test_a_requirement_naming_a_simulation_key_notes_them():
    sem = _run()
    Requirements.from_node_selector_terms([{"key": "karpenter.sh/nodepool", "operator": "Exists"}], sem)
    assert list(sem.reads.noted) == []
    Requirement.new("karpenter.sh/initialized", IN, ["true"], sem)      # a DaemonSet's node affinity
    assert list(sem.reads.noted) == [SIMULATION_KEYS]


def test_a_nodes_own_labels_note_no_simulation_key():
    # every registered Node carries karpenter.sh/registered: as a requirement of its own it answers alike
    sem = _run()
    Requirements.from_labels({"karpenter.sh/registered": "true", "karpenter.sh/initialized": "true"}, sem)
    assert list(sem.reads.noted) == []
    sem.note_keys(["karpenter.sh/registered"])                            # a NodePool's label, a topology key
    assert list(sem.reads.noted) == [SIMULATION_KEYS]


def test_a_filter_message_notes_the_simulation_keys_and_every_size():
    sem = _run()
    sem.note_filter_message()
    assert list(sem.reads.noted) == [SIMULATION_KEYS] and sem.reads.every_size


def test_only_a_runs_copy_notes():
    shared = semantics_for("v1.12.0")
    Requirement.new("karpenter.sh/registered", IN, ["true"], shared)
    assert shared.reads is None
    run = shared.for_run()
    assert run == shared and hash(run) == hash(shared) and run.reads is not shared.for_run().reads
