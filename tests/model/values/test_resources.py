"""Kubernetes quantity parsing/formatting (apimachinery resource.Quantity semantics)."""
from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, strategies as st

from harness.model.values.resources import (QuantityError, add, fits, format_quantity, format_resource, format_resource_list,
                                     milli_value, parse_quantity, parse_resource, parse_resource_list, subtract,
                                     value)


@pytest.mark.parametrize("text,expected", [
    ("100m", Fraction(1, 10)), ("1", 1), ("1.5", Fraction(3, 2)), (".5", Fraction(1, 2)), ("2e3", 2000),
    ("1E-3", Fraction(1, 1000)), ("8Gi", 8 * 2**30), ("1843Mi", 1843 * 2**20), ("1Ki", 1024), ("1k", 1000),
    ("128G", 128 * 10**9), ("750Mi", 750 * 2**20), ("5n", Fraction(5, 10**9)), ("3u", Fraction(3, 10**6)),
    ("-1", -1), ("+2", 2), ("1Ei", 2**60), ("1P", 10**15), (3, 3), (0.25, Fraction(1, 4)),
])
def test_parse_quantity(text, expected):
    assert parse_quantity(text) == expected


@pytest.mark.parametrize("bad", ["", "abc", "1Gb", "1.2.3", "Mi", "1 Gi", "1mi", True])
def test_parse_quantity_rejects_garbage(bad):
    with pytest.raises(QuantityError):
        parse_quantity(bad)


def test_value_and_milli_value_round_up():
    assert value("100m") == 1 and value("1.5") == 2 and value("2") == 2
    assert milli_value("0.1") == 100 and milli_value("1n") == 1 and milli_value("2") == 2000


def test_resource_list_base_units():
    assert parse_resource_list({"cpu": "500m", "memory": "1Gi", "pods": "3", "nvidia.com/gpu": 1,
                                "ephemeral-storage": "128G"}) == {
        "cpu": 500, "memory": 2**30, "pods": 3, "nvidia.com/gpu": 1, "ephemeral-storage": 128 * 10**9}
    assert parse_resource_list(None) == {}
    assert parse_resource("cpu", "2") == 2000


@pytest.mark.parametrize("amount,fmt,expected", [
    (Fraction(1, 10), "DecimalSI", "100m"), (2, "DecimalSI", "2"), (2000, "DecimalSI", "2k"),
    (1500, "DecimalSI", "1500"), (0, "DecimalSI", "0"), (Fraction(1, 10**10), "DecimalSI", "1n"),
    (1843 * 2**20, "BinarySI", "1843Mi"), (8 * 2**30, "BinarySI", "8Gi"), (1000, "BinarySI", "1k"),
    (7945689497, "BinarySI", "7945689497"), (512, "BinarySI", "512"), (-2000, "DecimalSI", "-2k"),
])
def test_format_quantity(amount, fmt, expected):
    assert format_quantity(amount, fmt) == expected


def test_format_resource():
    assert format_resource("cpu", 100) == "100m"
    assert format_resource("cpu", 2000) == "2"
    assert format_resource("memory", 1843 * 2**20) == "1843Mi"
    assert format_resource("ephemeral-storage", 128 * 10**9) == "128G"
    assert format_resource("pods", 110) == "110"
    assert format_resource_list({"cpu": 140, "memory": 750 * 2**20}) == {"cpu": "140m", "memory": "750Mi"}


def test_arithmetic_helpers():
    assert add({"cpu": 1}, {"cpu": 2, "memory": 3}) == {"cpu": 3, "memory": 3}
    assert subtract({"cpu": 1000, "pods": 3}, {"cpu": 100, "memory": 5}) == {"cpu": 900, "pods": 3}
    assert fits({"cpu": 500, "memory": 0}, {"cpu": 500})
    assert not fits({"cpu": 501}, {"cpu": 500})
    assert not fits({"nvidia.com/gpu": 1}, {})


@given(st.integers(min_value=0, max_value=2**62))
def test_binary_round_trip(n):
    assert parse_quantity(format_quantity(n, "BinarySI")) == n


@given(st.integers(min_value=-10**15, max_value=10**15))
def test_cpu_round_trip(milli):
    assert parse_resource("cpu", format_resource("cpu", milli)) == milli
