"""harness/model/kube/kubetime.py: a metav1.Time both ways."""
from __future__ import annotations

from harness.model.kube.kubetime import parse_rfc3339, rfc3339

T = 1_800_000_000.0


def test_a_timestamp_is_whole_seconds_in_utc_and_reads_back():
    assert rfc3339(T + 0.9) == rfc3339(T) == "2027-01-15T08:00:00Z"
    assert parse_rfc3339(rfc3339(T)) == T


def test_a_fraction_an_offset_and_spaces_are_read():
    assert parse_rfc3339(" 2027-01-15T08:00:00.5Z ") == T + 0.5
    assert parse_rfc3339("2027-01-15T09:00:00+01:00") == T
