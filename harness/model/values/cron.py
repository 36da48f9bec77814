"""Cron schedules as NodePool disruption budgets read them, and Go durations.

A budget's `schedule` is parsed by github.com/robfig/cron/v3 v3.0.1 `ParseStandard` (parser.go:
five fields minute hour day-of-month month day-of-week, `*`/`?`, ranges, steps, lists, month and
weekday names, and the `@yearly`..`@hourly` descriptors) with `TZ=UTC` prepended (sigs.k8s.io/karpenter
v1.14.0 pkg/apis/v1/nodepool.go Budget.IsActive); `Schedule.next` is spec.go SpecSchedule.Next,
including dayMatches (day-of-month OR day-of-week when both are restricted). Durations are Go's
time.ParseDuration subset the CRDs accept (`1h30m`, `90s`) plus the NillableDuration `Never`
(pkg/apis/v1/duration.go).
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from harness.model.values.durations import crd_duration

STAR = 1 << 63                    # spec.go starBit: the field was `*` or `?`
_BOUNDS = {                       # spec.go bounds: (min, max, names)
    "minute": (0, 59, {}), "hour": (0, 23, {}), "dom": (1, 31, {}),
    "month": (1, 12, {n: i + 1 for i, n in enumerate(
        ["jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"])}),
    "dow": (0, 6, {n: i for i, n in enumerate(["sun", "mon", "tue", "wed", "thu", "fri", "sat"])}),
}
_FIELDS = ("minute", "hour", "dom", "month", "dow")


class CronError(ValueError):
    pass


def _bits(lo: int, hi: int, step: int) -> int:
    return sum(1 << i for i in range(lo, hi + 1, step))


def _all(field: str) -> int:
    lo, hi, _ = _BOUNDS[field]
    return _bits(lo, hi, 1) | STAR


def _number(expr: str, names: dict) -> int:
    if expr.lower() in names:
        return names[expr.lower()]
    try:
        n = int(expr)
    except ValueError:
        raise CronError(f"failed to parse int from {expr}") from None
    if n < 0:
        raise CronError(f"negative number ({n}) not allowed: {expr}")
    return n


def _range(expr: str, field: str) -> int:
    """parser.go getRange."""
    lo_b, hi_b, names = _BOUNDS[field]
    range_and_step = expr.split("/")
    low_high = range_and_step[0].split("-")
    extra = 0
    if low_high[0] in ("*", "?"):
        start, end, extra = lo_b, hi_b, STAR
    else:
        start = _number(low_high[0], names)
        if len(low_high) == 1:
            end = start
        elif len(low_high) == 2:
            end = _number(low_high[1], names)
        else:
            raise CronError(f"too many hyphens: {expr}")
    if len(range_and_step) == 1:
        step = 1
    elif len(range_and_step) == 2:
        step = _number(range_and_step[1], {})
        if len(low_high) == 1:
            end = hi_b                       # "N/step" means "N-max/step"
        if step > 1:
            extra = 0
    else:
        raise CronError(f"too many slashes: {expr}")
    if start < lo_b:
        raise CronError(f"beginning of range ({start}) below minimum ({lo_b}): {expr}")
    if end > hi_b:
        raise CronError(f"end of range ({end}) above maximum ({hi_b}): {expr}")
    if start > end:
        raise CronError(f"beginning of range ({start}) beyond end of range ({end}): {expr}")
    if step == 0:
        raise CronError(f"step of range should be a positive number: {expr}")
    return _bits(start, end, step) | extra


@dataclass(frozen=True)
class Schedule:
    minute: int
    hour: int
    dom: int
    month: int
    dow: int

    def _day_matches(self, t: datetime) -> bool:
        dom_match = bool(1 << t.day & self.dom)
        dow_match = bool(1 << ((t.weekday() + 1) % 7) & self.dow)     # Go: Sunday = 0
        if self.dom & STAR or self.dow & STAR:
            return dom_match and dow_match
        return dom_match or dow_match

    def next(self, after: float) -> float | None:
        """SpecSchedule.Next in UTC: the first activation strictly after `after` (epoch seconds),
        None when there is none within five years (Go's zero time)."""
        t = datetime.fromtimestamp(int(after) + 1, tz=timezone.utc)
        added = False
        year_limit = t.year + 5
        while True:                                       # the WRAP label
            if t.year > year_limit:
                return None
            wrapped = False
            while not (1 << t.month & self.month):
                if not added:
                    added = True
                    t = t.replace(day=1, hour=0, minute=0, second=0)
                t = _add_month(t)
                if t.month == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not self._day_matches(t):
                if not added:
                    added = True
                    t = t.replace(hour=0, minute=0, second=0)
                t += timedelta(days=1)
                if t.day == 1:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << t.hour & self.hour):
                if not added:
                    added = True
                    t = t.replace(minute=0, second=0)
                t += timedelta(hours=1)
                if t.hour == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            while not (1 << t.minute & self.minute):
                if not added:
                    added = True
                    t = t.replace(second=0)
                t += timedelta(minutes=1)
                if t.minute == 0:
                    wrapped = True
                    break
            if wrapped:
                continue
            if t.second != 0:                             # standard specs fire at second 0
                if not added:
                    added = True
                t = t.replace(second=0) + timedelta(minutes=1)
                continue
            return t.timestamp()


def _add_month(t: datetime) -> datetime:
    """Go's t.AddDate(0, 1, 0): the same day one month later, normalized (Jan 31 -> Mar 3)."""
    y, m = (t.year + 1, 1) if t.month == 12 else (t.year, t.month + 1)
    first = t.replace(year=y, month=m, day=1)
    return first + timedelta(days=t.day - 1)


_DESCRIPTORS = {
    "@yearly": "0 0 1 1 *", "@annually": "0 0 1 1 *", "@monthly": "0 0 1 * *",
    "@weekly": "0 0 * * 0", "@daily": "0 0 * * *", "@midnight": "0 0 * * *", "@hourly": "0 * * * *",
}


def parse_schedule(text: str) -> Schedule:
    """ParseStandard: five fields or a descriptor (robfig/cron v3.0.1 parser.go Parse)."""
    spec = text.strip()
    if spec.startswith("@"):
        if spec not in _DESCRIPTORS:
            raise CronError(f"unrecognized descriptor: {spec}")
        spec = _DESCRIPTORS[spec]
    fields = spec.split()
    if len(fields) != 5:
        raise CronError(f"expected exactly 5 fields, found {len(fields)}: [{' '.join(fields)}]")
    bits = {}
    for name, expr in zip(_FIELDS, fields):
        if expr in ("*", "?"):
            bits[name] = _all(name)
            continue
        value = 0
        for part in (p for p in expr.split(",") if p):
            value |= _range(part, name)
        bits[name] = value
    return Schedule(**bits)


def parse_nillable(text) -> float | None:
    """NillableDuration: `Never` (or unset) is None, anything else a Go duration in seconds."""
    if text is None or str(text) == "Never":
        return None
    return crd_duration(str(text))
