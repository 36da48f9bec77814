"""The conformance report's body comparison: names and ids normalized, real differences kept."""
from harness.runner.conformance import body_diff, render_markdown


def _vm(name, size, zone, tags):
    return {"name": name, "id": f"/subscriptions/0/resourceGroups/RG/providers/Microsoft.Compute/virtualMachines/{name}",
            "zones": [zone], "tags": tags,
            "properties": {"hardwareProfile": {"vmSize": size}, "provisioningState": "Succeeded",
                           "networkProfile": {"networkInterfaces": [
                               {"id": f"/subscriptions/0/resourceGroups/rg/providers/Microsoft.Network/networkInterfaces/{name}"}]}}}


def test_same_shape_under_different_names_agrees():
    assert body_diff(_vm("aks-a-1", "Standard_D2s_v3", "1", {"x": "y"}),
                     _vm("aks-b-2", "Standard_D2s_v3", "1", {"x": "y"}), ["aks-a-1"], ["aks-b-2"]) == []


def test_real_differences_are_listed():
    d = body_diff(_vm("a", "Standard_D2s_v3", "1", {"x": "y"}), _vm("b", "Standard_D2s_v3", "2", {"x": "z", "w": "1"}),
                  ["a"], ["b"])
    assert {x["field"]: (x["simulated"], x["real"]) for x in d} == {
        "zones[0]": ("1", "2"), "tags.x": ("y", "z"), "tags.w": (None, "1")}


def test_markdown_has_the_totals_and_a_row_per_run():
    totals = {"runs": 1, "ranOnReal": 1, "skippedOnReal": 0, "agree": 0, "differ": 1, "realPass": 0, "realFail": 1,
              "seconds": 3.0, "generated": "now"}
    entry = {"scenario": "s", "profile": "upstream", "file": "f", "simulated": "pass", "real": "FAIL",
             "realSkipped": None, "realMismatches": ["expect.nodeCount: expected 1, got 2"], "notApplicable": [],
             "seconds": {"simulated": 0.1, "real": 20.0},
             "differences": [{"field": "nodes", "simulated": 1, "real": 2}], "vmBodies": [], "nicBodies": []}
    md = render_markdown(totals, [entry])
    assert "1 agree" not in md and "0 agree, 1 differ" in md
    assert "| s | upstream | pass | FAIL | 1 | 20.0 |" in md
    assert "| nodes | 1 | 2 |" in md
