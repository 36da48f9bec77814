"""A Kubernetes timestamp (metav1.Time) both ways: every object, condition and event of both engines is stamped
and read through these two, so a dump's times, the simulated clock and the real engine's agree to the second.
"""
from __future__ import annotations

from datetime import datetime, timezone


def rfc3339(t: float) -> str:
    """Epoch seconds as the API server writes a metav1.Time: RFC 3339 in UTC, whole seconds (truncated)."""
    return datetime.fromtimestamp(t, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse_rfc3339(text: str) -> float:
    """A Kubernetes timestamp (`2026-11-20T14:05:00Z`, with a fraction or an offset) as epoch seconds."""
    return datetime.fromisoformat(str(text).strip().replace("Z", "+00:00")).timestamp()
