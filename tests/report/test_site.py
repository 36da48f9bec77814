"""The report site's timeline rows (harness/report/site.py moments)."""
from harness.report.site import moments


def test_an_event_whose_object_has_no_name_is_still_a_row():
    # the real controller's Finalized event on a Node can name no object (read back from the API server)
    tl = {"steps": [], "events": [{"kind": "Node", "name": None, "namespace": None, "reason": "Finalized",
                                   "message": "Finalized karpenter.sh/termination", "at": {"offset": 3.0}}]}
    (row,) = moments(tl)
    assert row["object"] == "Node/?" and row["what"] == "Finalized"
