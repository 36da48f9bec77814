"""Go's number parsing and conversion, exactly, for values the provider reads with Go.

skewer reads SKU capability values with `strconv.ParseInt(v, 10, 64)` and `strconv.ParseFloat(v, 64)`
(skewer v0.0.24 sku.go GetCapabilityIntegerQuantity / GetCapabilityFloatQuantity), and the provider
turns float64 values into int64 with Go conversions (`int64(memoryGiB * 1024)`, instancetype.go
memoryMiB). Python's `int()`/`float()` are looser (whitespace, underscores, Unicode digits, no int64
bound), and Python's `int(float)` raises where Go's conversion yields a value; these functions follow
Go so the model keeps and drops the same SKUs.
"""
from __future__ import annotations

import math
import re

MIN_INT64 = -(1 << 63)
MAX_INT64 = (1 << 63) - 1

# strconv.ParseInt(s, 10, 64): an optional sign and ASCII digits, nothing else (no spaces, no
# underscores: those need base 0).
_INT_RE = re.compile(r"[+-]?[0-9]+\Z")

# strconv.ParseFloat(s, 64) (atof.go readFloat/special): decimal mantissa with optional exponent, or a
# 0x hex mantissa with a mandatory p exponent (underscores allowed only after a base prefix), or
# inf/infinity/nan in any case (a sign is allowed before inf/infinity only).
_DEC_RE = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?\Z")
_HEX_RE = re.compile(r"[+-]?0[xX](?:[0-9a-fA-F_]+\.?[0-9a-fA-F_]*|\.[0-9a-fA-F_]+)[pP][+-]?[0-9_]+\Z")
_INF_RE = re.compile(r"[+-]?(?:inf|infinity)\Z", re.IGNORECASE)
_NAN_RE = re.compile(r"nan\Z", re.IGNORECASE)


def parse_int64(s: str | None) -> int | None:
    """`strconv.ParseInt(s, 10, 64)`; None where Go returns an error (syntax or range)."""
    if s is None or not _INT_RE.match(s):
        return None
    digits = s.lstrip("+-").lstrip("0")
    if len(digits) > 19:                      # beyond int64 (and beyond int()'s digit limit)
        return None
    n = int(s)
    return n if MIN_INT64 <= n <= MAX_INT64 else None


def _hex_underscores_ok(body: str) -> bool:
    """Go's underscoreOK for a 0x literal: `_` only between digits or right after the prefix."""
    prev = "0"                                # the base prefix counts as a digit for this rule
    for i, c in enumerate(body):
        if c == "_" and (prev not in "0123456789abcdefABCDEFxX" or i + 1 == len(body)
                         or body[i + 1] not in "0123456789abcdefABCDEF"):
            return False
        prev = c
    return True


def parse_float64(s: str | None) -> float | None:
    """`strconv.ParseFloat(s, 64)`; None where Go returns an error (syntax, or a finite literal that
    overflows float64: Go returns ±Inf with ErrRange, which skewer treats as an error)."""
    if s is None:
        return None
    if _INF_RE.match(s):
        return -math.inf if s.startswith("-") else math.inf
    if _NAN_RE.match(s):
        return math.nan
    if _DEC_RE.match(s):
        value = float(s)
    elif _HEX_RE.match(s):
        sign = -1.0 if s.startswith("-") else 1.0
        body = s.lstrip("+-")[2:]
        if not _hex_underscores_ok(body):
            return None
        mantissa, _, exponent = body.replace("_", "").lower().partition("p")
        try:
            value = sign * float.fromhex(f"0x{mantissa or '0'}p{exponent}")
        except OverflowError:
            return None
    else:
        return None
    return None if math.isinf(value) else value


def float_to_int64(f: float) -> int:
    """Go's `int64(f)` on amd64 (CVTTSD2SQ): truncation toward zero; NaN, ±Inf and values outside the
    int64 range give math.MinInt64 (the Go spec leaves these implementation-defined)."""
    if math.isnan(f) or math.isinf(f) or not (-9.223372036854775808e18 <= f < 9.223372036854775808e18):
        return MIN_INT64
    return int(f)


__all__ = ["MIN_INT64", "MAX_INT64", "parse_int64", "parse_float64", "float_to_int64"]


def wrap_int64(n: int) -> int:
    """Go int64 arithmetic wraps around."""
    return (n + (1 << 63)) % (1 << 64) - (1 << 63)


def go_div(a: int, b: int) -> int:
    """Go integer division truncates toward zero."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q
