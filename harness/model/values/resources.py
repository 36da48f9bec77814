"""Kubernetes resource quantities: parsing and canonical formatting (k8s.io/apimachinery `resource.Quantity`).

The model keeps resources as integers in base units: `cpu` in millicores, everything else (memory,
ephemeral-storage, pods, extended resources such as `nvidia.com/gpu`) in whole units (bytes for
storage). Parsing rounds up to those units like `Quantity.MilliValue()` / `Quantity.Value()` do.
"""
from __future__ import annotations

import functools

import re
from fractions import Fraction
from typing import Mapping

BINARY_SUFFIXES = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60}
DECIMAL_SUFFIXES = {"n": Fraction(1, 10**9), "u": Fraction(1, 10**6), "m": Fraction(1, 1000), "": Fraction(1),
                    "k": Fraction(10**3), "M": Fraction(10**6), "G": Fraction(10**9), "T": Fraction(10**12),
                    "P": Fraction(10**15), "E": Fraction(10**18)}

_QUANTITY_RE = re.compile(r"^([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+))(?:(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])|[eE]([+-]?[0-9]+))?$")

MILLI_RESOURCES = frozenset({"cpu"})


class QuantityError(ValueError):
    pass


def parse_quantity(text: str | int | float) -> Fraction:
    """A quantity string (`100m`, `1843Mi`, `1.5`, `2e3`, `8Gi`) as an exact Fraction of base units."""
    if isinstance(text, bool):
        raise QuantityError(f"quantities must match the regular expression: {text!r}")
    if isinstance(text, int):
        return Fraction(text)
    if isinstance(text, float):
        return Fraction(str(text))
    s = str(text).strip()
    m = _QUANTITY_RE.match(s)
    if not m:
        raise QuantityError(f"quantities must match the regular expression "
                            f"'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': {text!r}")
    number, suffix, exponent = m.groups()
    value = Fraction(number)
    if exponent is not None:
        value *= Fraction(10) ** int(exponent)
    elif suffix in BINARY_SUFFIXES:
        value *= BINARY_SUFFIXES[suffix]
    elif suffix:
        value *= DECIMAL_SUFFIXES[suffix]
    return value


def _ceil(f: Fraction) -> int:
    return -((-f.numerator) // f.denominator)


def value(text) -> int:
    """`Quantity.Value()`: whole units, rounded up."""
    return _ceil(parse_quantity(text))


def milli_value(text) -> int:
    """`Quantity.MilliValue()`: thousandths, rounded up."""
    return _ceil(parse_quantity(text) * 1000)


def parse_resource(name: str, text) -> int:
    """One resource in the model's base unit (cpu -> millicores, others -> units)."""
    if type(text) is str:
        return _parse_text(name in MILLI_RESOURCES, text)
    return milli_value(text) if name in MILLI_RESOURCES else value(text)


@functools.lru_cache(maxsize=4096)
def _parse_text(milli: bool, text: str) -> int:
    # pods repeat a handful of quantity strings ("100m", "1Gi"): parse each once (exact Fractions are slow)
    return milli_value(text) if milli else value(text)


def parse_resource_list(resources: Mapping[str, object] | None) -> dict[str, int]:
    """A ResourceList (`{"cpu": "500m", "memory": "1Gi"}`) in base units."""
    return {k: parse_resource(k, v) for k, v in (resources or {}).items()}


# -- formatting --------------------------------------------------------------------------------
_DEC_ORDER = [("E", 18), ("P", 15), ("T", 12), ("G", 9), ("M", 6), ("k", 3), ("", 0), ("m", -3), ("u", -6), ("n", -9)]
_BIN_ORDER = [("Ei", 60), ("Pi", 50), ("Ti", 40), ("Gi", 30), ("Mi", 20), ("Ki", 10)]


def format_quantity(amount: Fraction | int, fmt: str = "DecimalSI") -> str:
    """Canonical `Quantity.String()` for an amount in base units.

    BinarySI uses the largest exact power-of-1024 suffix (falling back to DecimalSI for amounts below
    1024 or with a fraction, as apimachinery does); DecimalSI the largest exact power-of-1000 suffix,
    rounding fractions below nano up like the canonical form."""
    amount = Fraction(amount)
    if fmt == "BinarySI" and amount.denominator == 1 and abs(amount) >= 1024:
        n = int(amount)
        for suffix, shift in _BIN_ORDER:
            if n % (1 << shift) == 0:
                return f"{n >> shift}{suffix}"
        return str(n)
    if amount == 0:
        return "0"
    sign = "-" if amount < 0 else ""
    a = abs(amount)
    nano = a * 10**9
    if nano.denominator != 1:
        a = Fraction(_ceil(nano), 10**9)
    for suffix, exp in _DEC_ORDER:
        scaled = a / (Fraction(10) ** exp)
        if scaled.denominator == 1:
            return f"{sign}{scaled.numerator}{suffix}"
    raise AssertionError("unreachable")


def quantity_format(text) -> str:
    """The format a parsed quantity keeps (`Quantity.Format`): BinarySI for a binary suffix, DecimalExponent
    for an exponent, else DecimalSI."""
    m = _QUANTITY_RE.match(str(text).strip()) if not isinstance(text, (int, float)) else None
    if m is not None and m.group(2) in BINARY_SUFFIXES:
        return "BinarySI"
    return "DecimalExponent" if m is not None and m.group(3) is not None else "DecimalSI"


def canonical_quantity(text) -> str:
    """`Quantity.String()` of a parsed quantity: its amount in its own format's canonical form (`1000m` -> `1`,
    `1024Mi` -> `1Gi`); a DecimalExponent one is written in DecimalSI (harness simplification: `1e3` -> `1k`)."""
    fmt = quantity_format(text)
    return format_quantity(parse_quantity(text), "BinarySI" if fmt == "BinarySI" else "DecimalSI")


@functools.lru_cache(maxsize=65536)
def format_resource(name: str, amount: int) -> str:
    """A base-unit amount as a quantity string: cpu from millicores; for byte resources the shorter of
    the BinarySI and DecimalSI forms (BinarySI on a tie), so 1843Mi and 128G both read naturally."""
    if name in MILLI_RESOURCES:
        return format_quantity(Fraction(amount, 1000), "DecimalSI")
    if name in ("memory", "ephemeral-storage", "storage") or name.startswith("hugepages-"):
        binary = format_quantity(amount, "BinarySI")
        decimal = format_quantity(amount, "DecimalSI")
        return decimal if len(decimal) < len(binary) else binary
    return format_quantity(amount, "DecimalSI")


def format_resource_list(resources: Mapping[str, int]) -> dict[str, str]:
    return {k: format_resource(k, v) for k, v in resources.items()}


def add(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    out = dict(a)
    for k, v in b.items():
        out[k] = out.get(k, 0) + v
    return out


def subtract(a: Mapping[str, int], b: Mapping[str, int]) -> dict[str, int]:
    """`resources.Subtract`: keys of `a`, minus `b` where present (no clamping, like upstream)."""
    return {k: v - b.get(k, 0) for k, v in a.items()}


def fits(requests: Mapping[str, int], available: Mapping[str, int]) -> bool:
    """`resources.Fits`: every positive request is within what is available."""
    return all(v <= available.get(k, 0) for k, v in requests.items() if v > 0)


__all__ = ["parse_quantity", "value", "milli_value", "parse_resource", "parse_resource_list", "format_quantity",
           "format_resource", "format_resource_list", "add", "subtract", "fits", "QuantityError"]
