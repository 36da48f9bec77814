"""Go's strconv and float-to-int conversion (harness/model/values/gostrconv.py)."""
from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from harness.model.values.gostrconv import MAX_INT64, MIN_INT64, float_to_int64, parse_float64, parse_int64


@pytest.mark.parametrize("text,value", [
    ("4", 4), ("+4", 4), ("-2", -2), ("0004", 4), ("9223372036854775807", MAX_INT64),
    ("-9223372036854775808", MIN_INT64),
    (" 4", None), ("4 ", None), ("1_000", None), ("\u0664", None), ("4.0", None), ("0x10", None), ("", None),
    ("9223372036854775808", None), ("-9223372036854775809", None), ("1" * 5000, None), ("+", None), (None, None),
])
def test_parse_int64(text, value):
    assert parse_int64(text) == value


@pytest.mark.parametrize("text,value", [
    ("16", 16.0), ("+16", 16.0), ("16.", 16.0), (".5e2", 50.0), ("3.4999", 3.4999), ("1e-400", 0.0),
    ("0x1p4", 16.0), ("0x1.8p3", 12.0), ("0x_1p4", 16.0), ("inf", math.inf), ("+Inf", math.inf),
    ("-Infinity", -math.inf), ("1e19", 1e19),
    (" 16", None), ("16 ", None), ("1_6", None), ("0x10", None), ("16e", None), ("1e400", None),
    ("-1e400", None), ("\u0661\u0666", None), ("", None), ("+nan", None), ("infinit", None), ("0x1__0p1", None),
])
def test_parse_float64(text, value):
    assert parse_float64(text) == value


def test_nan_is_accepted():
    assert math.isnan(parse_float64("NaN")) and math.isnan(parse_float64("nan"))


@pytest.mark.parametrize("f,value", [(3.9, 3), (-3.9, -3), (math.inf, MIN_INT64), (-math.inf, MIN_INT64),
                                     (math.nan, MIN_INT64), (1e19, MIN_INT64), (-9.223372036854775808e18, MIN_INT64)])
def test_float_to_int64_is_amd64_truncation(f, value):
    assert float_to_int64(f) == value


@given(st.integers(min_value=MIN_INT64, max_value=MAX_INT64))
def test_int64_round_trip(n):
    assert parse_int64(str(n)) == n


@given(st.floats(allow_nan=False, allow_infinity=False))
def test_float_repr_round_trip(f):
    assert parse_float64(repr(f)) == f
