"""Durations as Go parses them (time.ParseDuration) and writes them (Duration.String), as the CRDs admit
them, and as scenario files write them: one parser behind the three."""
from __future__ import annotations

import functools
import re

_UNIT = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}
_PART = re.compile(r"(\d*\.?\d*)([a-zµμ]*)")


def go_duration_text(seconds: float) -> str:
    """Whole seconds as Go's time.Duration String writes them (`20m0s`, `1h0m5s`, `45s`)."""
    h, rem = divmod(round(seconds), 3600)
    m, sec = divmod(rem, 60)
    return (f"{h}h" if h else "") + (f"{m}m" if m or h else "") + f"{sec}s"


def go_duration(text: str) -> float:
    """time.ParseDuration (Go's messages: `time: invalid duration "x"`, `time: missing unit in
    duration "5"`, `time: unknown unit "d" in duration "1d"`)."""
    orig, s = text, text
    sign = 1.0
    if s and s[0] in "+-":
        sign, s = (-1.0 if s[0] == "-" else 1.0), s[1:]
    if s == "0":
        return 0.0
    if not s:
        raise ValueError(f'time: invalid duration "{orig}"')
    total = 0.0
    while s:
        m = _PART.match(s)
        num, unit = m.group(1), m.group(2)
        if not num or num == ".":
            raise ValueError(f'time: invalid duration "{orig}"')
        if not unit:
            raise ValueError(f'time: missing unit in duration "{orig}"')
        if unit not in _UNIT:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{orig}"')
        total += float(num) * _UNIT[unit]
        s = s[m.end():]
    return sign * total


_CRD_DURATION = re.compile(r"^(?:(\d+(?:\.\d+)?)(h|m|s|ms))+$")


@functools.lru_cache(maxsize=1024)
def _crd_seconds(s: str) -> float | None:
    return go_duration(s) if _CRD_DURATION.match(s) else None


def crd_duration(text: str) -> float:
    """A duration as the CRDs' patterns accept it (`1h30m`, `720h`, `0s`; no sign, no µs) in seconds;
    ValueError otherwise. Each text is read once (`_crd_seconds`' cache): a disruption pass reads every
    candidate's expireAfter and its NodePool's consolidateAfter."""
    seconds = _crd_seconds(str(text).strip())
    if seconds is None:
        raise ValueError(f"not a duration: {text!r}")
    return seconds


def scenario_duration(text: str | int | float) -> float:
    """A scenario file's duration (`advance: 10m`, a TTL): a number of seconds or a Go duration."""
    if isinstance(text, (int, float)):
        return float(text)
    try:
        return go_duration(str(text).strip())
    except ValueError:
        raise ValueError(f"not a duration: {text!r}") from None
