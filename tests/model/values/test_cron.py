"""harness/model/values/cron.py: robfig/cron v3.0.1 ParseStandard + SpecSchedule.Next (as NodePool budget
schedules read them: sigs.k8s.io/karpenter v1.14.0 pkg/apis/v1/nodepool.go Budget.IsActive) and
Go durations."""
from __future__ import annotations

from datetime import datetime, timezone

import pytest
from hypothesis import given, strategies as st

from harness.model.values.cron import CronError, parse_nillable, parse_schedule
from harness.model.values.durations import crd_duration, go_duration, go_duration_text


def ts(*a) -> float:
    return datetime(*a, tzinfo=timezone.utc).timestamp()


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M")


@pytest.mark.parametrize("spec,after,want", [
    ("0 9 * * mon-fri", ts(2026, 1, 3, 10, 0), "2026-01-05T09:00"),     # Saturday -> Monday
    ("@daily", ts(2026, 1, 1, 0, 0), "2026-01-02T00:00"),                # strictly after
    ("@hourly", ts(2026, 1, 1, 0, 30), "2026-01-01T01:00"),
    ("*/15 * * * *", ts(2026, 1, 1, 0, 7, 30), "2026-01-01T00:15"),
    ("0 0 31 * *", ts(2026, 2, 1), "2026-03-31T00:00"),                  # February has no 31st
    ("0 0 1 jan *", ts(2026, 6, 1), "2027-01-01T00:00"),
    ("@weekly", ts(2026, 1, 1), "2026-01-04T00:00"),                      # the next Sunday
    ("5 4 * * sun", ts(2026, 1, 1), "2026-01-04T04:05"),
    ("30 2 29 2 *", ts(2026, 1, 1), "2028-02-29T02:30"),                 # leap day
])
def test_next_activation(spec, after, want):
    assert iso(parse_schedule(spec).next(after)) == want


def test_restricted_day_of_month_and_week_match_either():
    """dayMatches: both restricted -> either matches (the 13th, or any Friday)."""
    s = parse_schedule("0 0 13 * fri")
    assert iso(s.next(ts(2026, 1, 1))) == "2026-01-02T00:00"      # Friday 2 January
    assert iso(s.next(ts(2026, 1, 10))) == "2026-01-13T00:00"     # Tuesday 13 January


def test_star_day_of_week_requires_day_of_month():
    s = parse_schedule("0 0 13 * *")
    assert iso(s.next(ts(2026, 1, 1))) == "2026-01-13T00:00"


@pytest.mark.parametrize("spec,message", [
    ("0 0 * *", "expected exactly 5 fields, found 4: [0 0 * *]"),
    ("@often", "unrecognized descriptor: @often"),
    ("61 * * * *", "end of range (61) above maximum (59): 61"),
    ("0 0 0 * *", "beginning of range (0) below minimum (1): 0"),
    ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
    ("*/0 * * * *", "step of range should be a positive number: */0"),
    ("x * * * *", "failed to parse int from x"),
])
def test_parse_errors_are_robfigs(spec, message):
    with pytest.raises(CronError) as e:
        parse_schedule(spec)
    assert str(e.value) == message


@given(st.integers(min_value=0, max_value=59), st.integers(min_value=0, max_value=23),
       st.integers(min_value=0, max_value=10 ** 8))
def test_next_is_strictly_later_and_on_the_schedule(minute, hour, offset):
    s = parse_schedule(f"{minute} {hour} * * *")
    after = ts(2026, 1, 1) + offset
    t = s.next(after)
    got = datetime.fromtimestamp(t, tz=timezone.utc)
    assert t > after and (got.minute, got.hour, got.second) == (minute, hour, 0)
    assert t - after <= 24 * 3600


def test_go_durations():
    assert crd_duration("1h30m") == 5400
    assert crd_duration("720h") == 720 * 3600
    assert crd_duration("0s") == 0
    assert parse_nillable("Never") is None and parse_nillable(None) is None
    with pytest.raises(ValueError):
        crd_duration("1d")


@given(st.integers(min_value=0, max_value=10 * 365 * 86400))
def test_go_duration_text_reads_back(seconds):
    """Duration.String of whole seconds (`20m0s`, `1h0m5s`) parses back to the same seconds."""
    assert go_duration(go_duration_text(seconds)) == seconds
    assert go_duration_text(1200) == "20m0s" and go_duration_text(3605) == "1h0m5s" and go_duration_text(0) == "0s"
