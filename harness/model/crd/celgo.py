"""A CEL interpreter with cel-go's semantics and Kubernetes' CEL environment, for CRD rules.

cel-python (celpy) parses; this module evaluates the parse tree the way the API server's cel-go
does, because cel-python's own evaluator differs where CRD rules notice: it has no strings
extension (`.split(' ')` on netIPv4IPLocalPortRange), parses `int(" 12")` and `int("1_2")`, turns an
error inside `all()` into "no such overload", and compares no ints with doubles.

Why it is built this way: docs/architecture/model.md."""
from __future__ import annotations

import base64
import datetime as _dt
import functools
import ipaddress
import math
import re
from fractions import Fraction
from typing import Any, Callable
from urllib.parse import parse_qsl, quote, urlsplit

import lark
from celpy.celparser import CELParser

INT64_MIN, INT64_MAX = -(2 ** 63), 2 ** 63 - 1
UINT64_MAX = 2 ** 64 - 1


class CELError(Exception):
    """A CEL evaluation error; str() is cel-go's message."""


class UInt(int):
    """A CEL uint (a Python int otherwise)."""

    def __repr__(self) -> str:
        return f"{int(self)}u"


class DataList(list):
    """A list read from the object being validated."""


class Type:
    def __init__(self, name: str):
        self.name = name

    def __eq__(self, other) -> bool:
        return isinstance(other, Type) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("type", self.name))

    def __repr__(self) -> str:
        return self.name


def no_overload(*_args) -> CELError:
    return CELError("no such overload")


# -- type names --------------------------------------------------------------------------------
def type_name(v) -> str:
    if isinstance(v, bool):
        return "bool"
    if isinstance(v, UInt):
        return "uint"
    if isinstance(v, int):
        return "int"
    if isinstance(v, float):
        return "double"
    if isinstance(v, str):
        return "string"
    if isinstance(v, bytes):
        return "bytes"
    if v is None:
        return "null_type"
    if isinstance(v, list):
        return "list"
    if isinstance(v, dict):
        return "map"
    if isinstance(v, Type):
        return "type"
    return getattr(v, "cel_type", type(v).__name__)


def _is_num(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


# -- equality and ordering (cel-go common/types: heterogeneous equality, cross-type numeric order) --
def equal(a, b) -> bool:
    if _is_num(a) and _is_num(b):
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            return False
        return a == b
    ta, tb = type_name(a), type_name(b)
    if ta != tb:
        return False
    if isinstance(a, list):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        if len(a) != len(b):
            return False
        for k, v in a.items():
            found = _map_find(b, k)
            if found is _MISSING or not equal(v, found):
                return False
        return True
    return a == b


_MISSING = object()


def _map_find(m: dict, key):
    """The value under `key`, or _MISSING; numeric keys match across int, uint and double
    (cel-go common/types/map.go), a bool key only a bool."""
    if isinstance(key, bool):
        return next((v for k, v in m.items() if isinstance(k, bool) and k == key), _MISSING)
    if _is_num(key):
        return next((v for k, v in m.items() if _is_num(k) and k == key), _MISSING)
    if isinstance(key, str):
        return m.get(key, _MISSING)
    return _MISSING


def compare(a, b) -> int:
    if _is_num(a) and _is_num(b):
        if isinstance(a, float) and math.isnan(a) or isinstance(b, float) and math.isnan(b):
            raise no_overload()
        return (a > b) - (a < b)
    ta, tb = type_name(a), type_name(b)
    if ta != tb or ta not in ("bool", "string", "bytes", "google.protobuf.Duration", "google.protobuf.Timestamp"):
        raise no_overload()
    if isinstance(a, (Duration, Timestamp)):
        a, b = a.key(), b.key()
    return (a > b) - (a < b)


# -- numbers ------------------------------------------------------------------------------------
def _int(v: int) -> int:
    if not INT64_MIN <= v <= INT64_MAX:
        raise CELError("integer overflow")
    return v


def _uint(v: int) -> UInt:
    if not 0 <= v <= UINT64_MAX:
        raise CELError("unsigned integer overflow")
    return UInt(v)


def _go_div(a: int, b: int) -> int:
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _go_mod(a: int, b: int) -> int:
    return a - _go_div(a, b) * b


def go_float_g(f: float) -> str:
    """Go's strconv.FormatFloat(f, 'g', -1, 64): shortest digits, exponent form when the exponent
    is below -4 or from 6 on (`1e+06`), as cel-go prints a double converted to string."""
    if math.isnan(f):
        return "NaN"
    if math.isinf(f):
        return "+Inf" if f > 0 else "-Inf"
    if f == 0:
        return "-0" if math.copysign(1, f) < 0 else "0"
    digits, exp = _shortest(f)
    sign = "-" if f < 0 else ""
    x = exp - 1   # exponent of the first digit
    if x < -4 or x >= 6:
        mant = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mant}e{'+' if x >= 0 else '-'}{abs(x):02d}"
    if exp <= 0:
        return f"{sign}0.{'0' * -exp}{digits}"
    if exp >= len(digits):
        return sign + digits + "0" * (exp - len(digits))
    return f"{sign}{digits[:exp]}.{digits[exp:]}"


def _shortest(f: float) -> tuple[str, int]:
    """Shortest round-tripping decimal digits of |f| and the decimal point position."""
    r = repr(abs(f))
    m = re.fullmatch(r"(\d+)(?:\.(\d+))?(?:e([+-]\d+))?", r)
    whole, frac, e = m.group(1), m.group(2) or "", int(m.group(3) or 0)
    digits = (whole + frac).lstrip("0")
    lead = len(whole + frac) - len((whole + frac).lstrip("0"))
    point = len(whole) + e - lead
    return digits.rstrip("0") or "0", point


_GO_INT = re.compile(r"[+-]?[0-9]+")
_GO_FLOAT = re.compile(r"[+-]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|inf(?:inity)?|nan)", re.I)
_GO_BOOL = {"1": True, "t": True, "T": True, "TRUE": True, "true": True, "True": True,
            "0": False, "f": False, "F": False, "FALSE": False, "false": False, "False": False}


def _conv_error(frm, to: str) -> CELError:
    return CELError(f"type conversion error from '{type_name(frm)}' to '{to}'")


def to_int(v):
    if isinstance(v, bool):
        raise no_overload()
    if isinstance(v, UInt):
        if v > INT64_MAX:
            raise CELError("integer overflow")
        return int(v)
    if isinstance(v, int):
        return v
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v) or not (-9.223372036854775e18 <= v < 9.223372036854775e18):
            raise CELError("integer overflow")
        return int(v)
    if isinstance(v, str):
        # strconv.ParseInt(s, 10, 64): a sign and ASCII digits, nothing else
        if _GO_INT.fullmatch(v) and INT64_MIN <= int(v) <= INT64_MAX:
            return int(v)
        raise _conv_error(v, "int")
    if isinstance(v, Timestamp):
        return v.seconds
    if isinstance(v, Duration):
        return v.nanos
    raise no_overload()


def to_uint(v):
    if isinstance(v, bool):
        raise no_overload()
    if isinstance(v, int):
        if v < 0 or v > UINT64_MAX:
            raise CELError("unsigned integer overflow")
        return UInt(v)
    if isinstance(v, float):
        if math.isnan(v) or v < 0 or v >= 1.8446744073709552e19:
            raise CELError("unsigned integer overflow")
        return UInt(int(v))
    if isinstance(v, str):
        if re.fullmatch(r"\+?[0-9]+", v) and int(v) <= UINT64_MAX:
            return UInt(int(v))
        raise _conv_error(v, "uint")
    raise no_overload()


def to_double(v):
    if isinstance(v, bool):
        raise no_overload()
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        if _GO_FLOAT.fullmatch(v):
            try:
                return float(v)
            except (ValueError, OverflowError):
                pass
        raise _conv_error(v, "double")
    raise no_overload()


def to_string(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(int(v))
    if isinstance(v, float):
        return go_float_g(v)
    if isinstance(v, str):
        return v
    if isinstance(v, bytes):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            raise CELError("invalid UTF-8 in bytes, cannot convert to string") from None
    if isinstance(v, (Duration, Timestamp, IP, CIDR)):
        return v.text()
    raise no_overload()


def to_bool(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, str):
        if v in _GO_BOOL:
            return _GO_BOOL[v]
        raise _conv_error(v, "bool")
    raise no_overload()


def to_bytes(v):
    if isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode()
    raise no_overload()


# -- durations and timestamps (Go time.ParseDuration, RFC 3339) ----------------------------------
_DUR_UNITS = {"ns": 1, "us": 1000, "µs": 1000, "μs": 1000, "ms": 10 ** 6, "s": 10 ** 9, "m": 60 * 10 ** 9,
              "h": 3600 * 10 ** 9}
_DUR_PART = re.compile(r"([0-9]*(?:\.[0-9]*)?)(ns|us|µs|μs|ms|s|m|h)")


class Duration:
    cel_type = "google.protobuf.Duration"

    def __init__(self, nanos: int):
        self.nanos = nanos

    def key(self):
        return self.nanos

    def __eq__(self, other):
        return isinstance(other, Duration) and other.nanos == self.nanos

    def __hash__(self):
        return hash(self.nanos)

    def text(self) -> str:
        s = Fraction(self.nanos, 10 ** 9)
        out = go_float_g(float(s)) if s.denominator != 1 else str(s.numerator)
        return out + "s"

    @staticmethod
    def parse(s: str) -> "Duration":
        text, sign = s, 1
        if text[:1] in "+-":
            sign, text = (-1 if text[0] == "-" else 1), text[1:]
        if text == "0":
            return Duration(0)
        if not text:
            raise CELError(f'time: invalid duration "{s}"')
        total, pos = Fraction(0), 0
        while pos < len(text):
            m = _DUR_PART.match(text, pos)
            if not m or m.group(1) in ("", "."):
                raise CELError(f'time: invalid duration "{s}"')
            total += Fraction(m.group(1)) * _DUR_UNITS[m.group(2)]
            pos = m.end()
        nanos = sign * int(total)
        if not INT64_MIN <= nanos <= INT64_MAX:
            raise CELError(f'time: invalid duration "{s}"')
        return Duration(nanos)


class Timestamp:
    cel_type = "google.protobuf.Timestamp"

    def __init__(self, seconds: int, nanos: int = 0):
        self.seconds, self.nanos = seconds, nanos

    def key(self):
        return (self.seconds, self.nanos)

    def __eq__(self, other):
        return isinstance(other, Timestamp) and other.key() == self.key()

    def __hash__(self):
        return hash(self.key())

    def text(self) -> str:
        d = _dt.datetime.fromtimestamp(self.seconds, _dt.timezone.utc)
        frac = f".{self.nanos:09d}".rstrip("0") if self.nanos else ""
        return d.strftime("%Y-%m-%dT%H:%M:%S") + frac + "Z"

    @staticmethod
    def parse(s: str) -> "Timestamp":
        m = re.fullmatch(r"(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2}:\d{2})(\.\d+)?(Z|[+-]\d{2}:\d{2})", s)
        if not m:
            raise CELError("type conversion error from 'string' to 'google.protobuf.Timestamp'")
        try:
            d = _dt.datetime.fromisoformat(f"{m.group(1)}T{m.group(2)}" + ("+00:00" if m.group(4) == "Z" else m.group(4)))
        except ValueError:
            raise CELError("type conversion error from 'string' to 'google.protobuf.Timestamp'") from None
        nanos = int((m.group(3) or ".0")[1:].ljust(9, "0")[:9])
        return Timestamp(int(d.timestamp()), nanos)


# -- Kubernetes quantity (k8s.io/apimachinery v0.36.3 pkg/api/resource/quantity.go ParseQuantity) ---
_QTY = re.compile(r"([+-]?[0-9]*\.?[0-9]*)(.*)")
_BIN = {"Ki": 2 ** 10, "Mi": 2 ** 20, "Gi": 2 ** 30, "Ti": 2 ** 40, "Pi": 2 ** 50, "Ei": 2 ** 60}
_DEC = {"n": Fraction(1, 10 ** 9), "u": Fraction(1, 10 ** 6), "m": Fraction(1, 1000), "": 1, "k": 10 ** 3,
        "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12, "P": 10 ** 15, "E": 10 ** 18}
ERR_FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
ERR_SUFFIX = "unable to parse quantity's suffix"


class Quantity:
    cel_type = "kubernetes.Quantity"

    def __init__(self, value: Fraction):
        self.value = value

    def __eq__(self, other):
        return isinstance(other, Quantity) and other.value == self.value

    def __hash__(self):
        return hash(self.value)

    @staticmethod
    def parse(s: str) -> "Quantity":
        if not s:
            raise CELError("quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'")
        m = _QTY.fullmatch(s)
        num, suffix = m.group(1), m.group(2)
        body = num.lstrip("+-")
        if not body or body == "." or body.count(".") > 1:
            raise CELError(ERR_FORMAT_WRONG)
        if suffix in _BIN:
            mult = _BIN[suffix]
        elif suffix in _DEC:
            mult = _DEC[suffix]
        elif re.fullmatch(r"[eE][+-]?[0-9]+", suffix):
            mult = Fraction(10) ** int(suffix[1:])
        elif re.fullmatch(r"[eEinumkKMGTPi]*[-+]?[0-9]*", suffix):
            raise CELError(ERR_SUFFIX)
        else:
            raise CELError(ERR_FORMAT_WRONG)
        value = Fraction(body) * mult * (-1 if num.startswith("-") else 1)
        # values finer than a nano are rounded up, away from zero (quantity.go ParseQuantity)
        scaled = value * 10 ** 9
        if scaled.denominator != 1:
            scaled = Fraction(math.ceil(abs(scaled))) * (1 if value >= 0 else -1)
            value = scaled / 10 ** 9
        return Quantity(value)


def _quantity(s):
    if not isinstance(s, str):
        raise no_overload()
    return Quantity.parse(s)


def _is_quantity(s):
    if not isinstance(s, str):
        raise no_overload()
    try:
        Quantity.parse(s)
    except CELError:
        return False
    return True


def _qty_int(q: Quantity) -> int | None:
    v = q.value
    return int(v) if v.denominator == 1 and INT64_MIN <= v <= INT64_MAX else None


def _q_arg(v) -> Fraction:
    if isinstance(v, Quantity):
        return v.value
    if isinstance(v, int) and not isinstance(v, (bool, UInt)):
        return Fraction(v)
    raise no_overload()


def _as_integer(q):
    v = _qty_int(q)
    if v is None:
        raise CELError("cannot convert value to integer")
    return v


# -- IP and CIDR (pkg/cel/library/ip.go parseIPAddr, cidr.go parseCIDR; Go net/netip) --------------
class IP:
    cel_type = "net.IP"

    def __init__(self, addr):
        self.addr = addr

    def __eq__(self, other):
        return isinstance(other, IP) and other.addr == self.addr

    def __hash__(self):
        return hash(self.addr)

    def text(self) -> str:
        return str(self.addr)


def go_quote(s: str) -> str:
    """Go's strconv.Quote for the printable text these messages carry."""
    out = []
    for c in s:
        if c in '"\\':
            out.append("\\" + c)
        elif c == "\n":
            out.append("\\n")
        elif c == "\t":
            out.append("\\t")
        elif ord(c) < 0x20 or ord(c) == 0x7f:
            out.append(f"\\x{ord(c):02x}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


class _AddrError(ValueError):
    def __init__(self, raw: str, msg: str, at: str | None = None):
        text = f"ParseAddr({go_quote(raw)}): {msg}" + (f" (at {go_quote(at)})" if at is not None else "")
        super().__init__(text)


def _ipv4_fields(raw: str, s: str) -> list[int]:
    """Go net/netip parseIPv4Fields (Go 1.24): dotted decimal, no leading zeros."""
    fields, val, dig = [], 0, 0
    for i, c in enumerate(s):
        if "0" <= c <= "9":
            if dig == 1 and val == 0:
                raise _AddrError(raw, "IPv4 field has octet with leading zero")
            val, dig = val * 10 + int(c), dig + 1
            if val > 255:
                raise _AddrError(raw, "IPv4 field has value >255")
        elif c == ".":
            if i == 0 or i == len(s) - 1 or s[i - 1] == ".":
                raise _AddrError(raw, "IPv4 field must have at least one digit", s[i:])
            if len(fields) == 3:
                raise _AddrError(raw, "IPv4 address too long")
            fields.append(val)
            val, dig = 0, 0
        else:
            raise _AddrError(raw, "unexpected character", s[i:])
    if len(fields) < 3:
        raise _AddrError(raw, "IPv4 address too short")
    return fields + [val]


def _ipv6(raw: str):
    """Go net/netip parseIPv6 (Go 1.24), zone split off first."""
    s, zone = raw, ""
    if "%" in s:
        s, zone = s.split("%", 1)
        if not zone:
            raise _AddrError(raw, "zone must be a non-empty string")
    ip = [0] * 16
    ellipsis = -1
    if s.startswith("::"):
        ellipsis, s = 0, s[2:]
        if not s:
            return ipaddress.IPv6Address(0), zone
    i = 0
    while i < 16:
        off, acc = 0, 0
        while off < len(s) and s[off] in "0123456789abcdefABCDEF":
            acc = (acc << 4) + int(s[off], 16)
            if off > 3:
                raise _AddrError(raw, "each group must have 4 or less digits", s)
            if acc > 0xFFFF:
                raise _AddrError(raw, "IPv6 field has value >=2^16", s)
            off += 1
        if off == 0:
            raise _AddrError(raw, "each colon-separated field must have at least one digit", s)
        if off < len(s) and s[off] == ".":
            if ellipsis < 0 and i != 12:
                raise _AddrError(raw, "embedded IPv4 address must replace the final 2 fields of the address", s)
            if i + 4 > 16:
                raise _AddrError(raw, "too many hex fields to fit an embedded IPv4 at the end of the address", s)
            ip[i:i + 4] = _ipv4_fields(raw, s)
            i, s = i + 4, ""
            break
        ip[i], ip[i + 1] = acc >> 8, acc & 0xFF
        i += 2
        s = s[off:]
        if not s:
            break
        if s[0] != ":":
            raise _AddrError(raw, "unexpected character, want colon", s)
        if len(s) == 1:
            raise _AddrError(raw, "colon must be followed by more characters", s)
        s = s[1:]
        if s[0] == ":":
            if ellipsis >= 0:
                raise _AddrError(raw, "multiple :: in address", s)
            ellipsis, s = i, s[1:]
            if not s:
                break
    if s:
        raise _AddrError(raw, "trailing garbage after address", s)
    if i < 16:
        if ellipsis < 0:
            raise _AddrError(raw, "address string too short")
        n = 16 - i
        ip = ip[:ellipsis] + [0] * n + ip[ellipsis:i]
    elif ellipsis >= 0:
        raise _AddrError(raw, "the :: must expand to at least one field of zeros", s)
    return ipaddress.IPv6Address(bytes(ip)), zone


def go_parse_addr(raw: str):
    """Go net/netip ParseAddr: (address, zone), or ValueError with Go's message."""
    for c in raw:
        if c == ".":
            return ipaddress.IPv4Address(bytes(_ipv4_fields(raw, raw))), ""
        if c == ":":
            return _ipv6(raw)
        if c == "%":
            raise _AddrError(raw, "missing IPv6 address")
    raise _AddrError(raw, "unable to parse IP")


def _parse_addr(raw: str):
    """pkg/cel/library/ip.go parseIPAddr: no zones, no IPv4-mapped IPv6 addresses."""
    try:
        addr, zone = go_parse_addr(raw)
    except ValueError as e:
        raise CELError(f"IP Address {go_quote(raw)} parse error during conversion from string: {e}") from None
    if zone:
        raise CELError(f"IP address {go_quote(raw)} with zone value is not allowed")
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CELError(f"IPv4-mapped IPv6 address {go_quote(raw)} is not allowed")
    return addr


class CIDR:
    cel_type = "net.CIDR"

    def __init__(self, addr, prefix: int):
        self.addr, self.prefix = addr, prefix

    def __eq__(self, other):
        return isinstance(other, CIDR) and (other.addr, other.prefix) == (self.addr, self.prefix)

    def __hash__(self):
        return hash((self.addr, self.prefix))

    def network(self):
        return ipaddress.ip_network(f"{self.addr}/{self.prefix}", strict=False)

    def text(self) -> str:
        return f"{self.addr}/{self.prefix}"


def _parse_cidr(raw: str) -> CIDR:
    """pkg/cel/library/cidr.go parseCIDR over Go net/netip ParsePrefix."""
    def fail(msg: str) -> CELError:
        return CELError(f"network address parse error during conversion from string: "
                        f"netip.ParsePrefix({go_quote(raw)}): {msg}")
    i = raw.rfind("/")
    if i < 0:
        raise fail("no '/'")
    try:
        addr, zone = go_parse_addr(raw[:i])
    except ValueError as e:
        raise fail(str(e)) from None
    if addr.version == 6 and zone:
        raise fail("IPv6 zones cannot be present in a prefix")
    bits = raw[i + 1:]
    if (len(bits) > 1 and not "1" <= bits[0] <= "9") or not re.fullmatch(r"[+-]?[0-9]+", bits):
        raise fail(f"bad bits after slash: {go_quote(bits)}")
    n = int(bits)
    if not 0 <= n <= addr.max_prefixlen:
        raise fail("prefix length out of range")
    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        raise CELError(f"IPv4-mapped IPv6 address {go_quote(raw)} is not allowed")
    return CIDR(addr, n)


def _cidr(s):
    """stringToCIDR wraps parseCIDR's error once more (cidr.go)."""
    if not isinstance(s, str):
        raise no_overload()
    try:
        return _parse_cidr(s)
    except CELError as e:
        if str(e).startswith("network address parse error"):
            raise CELError(f"network address parse error during conversion from string: {e}") from None
        raise


def _ip(v):
    if isinstance(v, str):
        return IP(_parse_addr(v))
    if isinstance(v, CIDR):
        return IP(v.addr)
    raise no_overload()


def _is_ip(v):
    try:
        _ip(v)
    except CELError:
        return False
    return True


def _is_cidr(v):
    if not isinstance(v, str):
        raise no_overload()
    try:
        _parse_cidr(v)
    except CELError:
        return False
    return True


def _contains_ip(c, v):
    if not isinstance(c, CIDR):
        raise no_overload()
    addr = _parse_addr(v) if isinstance(v, str) else v.addr if isinstance(v, IP) else None
    if addr is None:
        raise no_overload()
    return addr.version == c.addr.version and addr in c.network()


def _contains_cidr(c, v):
    if not isinstance(c, CIDR):
        raise no_overload()
    other = _parse_cidr(v) if isinstance(v, str) else v if isinstance(v, CIDR) else None
    if other is None:
        raise no_overload()
    if other.addr.version != c.addr.version or other.prefix < c.prefix:
        return False
    return other.network().network_address in c.network()


def _masked(c):
    return CIDR(c.network().network_address, c.prefix)


# -- URL (pkg/cel/library/urls.go: url.ParseRequestURI, then url.Parse) -------------------------------
class URL:
    cel_type = "net.URL"

    def __init__(self, raw: str):
        self.raw = raw
        self.parts = urlsplit(raw)

    def __eq__(self, other):
        return isinstance(other, URL) and other.raw == self.raw

    def __hash__(self):
        return hash(self.raw)


_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*")


def _request_uri_ok(s: str) -> bool:
    """Go url.ParseRequestURI: an absolute URI or an absolute path, no fragment splitting, no
    spaces or control characters, a valid scheme."""
    if not s or any(ord(c) < 0x20 or ord(c) == 0x7f for c in s) or " " in s:
        return False
    if s.startswith("/"):
        return True
    scheme, colon, _rest = s.partition(":")
    return bool(colon) and bool(_SCHEME.fullmatch(scheme))


def _url(s):
    if not isinstance(s, str):
        raise no_overload()
    if not _request_uri_ok(s):
        raise CELError(f'URL parse error during conversion from string: parse "{s}": invalid URI for request')
    return URL(s)


def _is_url(s):
    if not isinstance(s, str):
        raise no_overload()
    return _request_uri_ok(s)


def _hostname(u: URL) -> str:
    host = u.parts.netloc.rpartition("@")[2]
    if host.startswith("["):
        return host[1:host.find("]")] if "]" in host else host[1:]
    return host.rpartition(":")[0] if ":" in host else host


def _port(u: URL) -> str:
    host = u.parts.netloc.rpartition("@")[2]
    if host.startswith("["):
        rest = host[host.find("]") + 1:] if "]" in host else ""
        return rest[1:] if rest.startswith(":") else ""
    return host.rpartition(":")[2] if ":" in host else ""


def _query(u: URL) -> dict:
    out: dict[str, list] = {}
    for k, v in parse_qsl(u.parts.query, keep_blank_values=True):
        out.setdefault(k, []).append(v)
    return out


# -- strings extension (cel-go v0.26.0 ext/strings.go, version 2) -----------------------------------
_GO_SPACE = "\t\n\v\f\r \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000"


def _split(s, sep, n=None):
    if not isinstance(s, str) or not isinstance(sep, str):
        raise no_overload()
    if n is None:
        n = -1
    if n == 0:
        return []
    if sep == "":
        parts = list(s)
        if 0 < n < len(parts):
            parts = parts[:n - 1] + ["".join(parts[n - 1:])]
        return parts
    return s.split(sep) if n < 0 else s.split(sep, n - 1)


def _char_at(s, i):
    if not 0 <= i <= len(s):
        raise CELError(f"index out of range: {i}")
    return s[i] if i < len(s) else ""


def _index_of(s, sub, off=0):
    if sub == "":
        return off
    if off < 0:
        raise CELError(f"index out of range: {off}")
    if off >= len(s):
        return -1
    return s.find(sub, off)


def _last_index_of(s, sub, off=None):
    if off is None:
        if sub == "":
            return len(s)
        if len(s.encode()) < len(sub.encode()):
            return -1
        off = len(s) - 1
    if sub == "":
        return off
    if off < 0:
        raise CELError(f"index out of range: {off}")
    if off >= len(s):
        return -1
    off = min(off, len(s) - len(sub))
    return s.rfind(sub, 0, off + len(sub)) if off >= 0 else -1


def _substring(s, start, end=None):
    if end is None:
        if not 0 <= start <= len(s):
            raise CELError(f"index out of range: {start}")
        return s[start:]
    if start > end:
        raise CELError(f"invalid substring range. start: {start}, end: {end}")
    if not 0 <= start <= len(s):
        raise CELError(f"index out of range: {start}")
    if not 0 <= end <= len(s):
        raise CELError(f"index out of range: {end}")
    return s[start:end]


def _ascii_case(s, upper: bool):
    return "".join((c.upper() if upper else c.lower()) if c < "\x80" else c for c in s)


def _replace(s, old, new, n=-1):
    if old == "" and n != 0:   # Go strings.Replace with an empty old inserts around every rune
        pieces, count, out = list(s), 0, []
        limit = len(pieces) + 1 if n < 0 else n
        for i in range(len(pieces) + 1):
            if count < limit:
                out.append(new)
                count += 1
            if i < len(pieces):
                out.append(pieces[i])
        return "".join(out)
    return s.replace(old, new, n if n >= 0 else -1)


def _join(lst, sep=""):
    for e in lst:
        if not isinstance(e, str):
            raise CELError(f"join: invalid input: {e}")
    return sep.join(lst)


def _quote(s):
    esc = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
           "\\": "\\\\", '"': '\\"'}
    return '"' + "".join(esc.get(c, c) for c in s) + '"'


def _format(fmt, args):
    """ext/strings.go format (versions 1-3): %s %d %f %e %x %X %o %b and %%, with .N precision."""
    out, i, n = [], 0, 0
    while i < len(fmt):
        c = fmt[i]
        if c != "%":
            out.append(c)
            i += 1
            continue
        m = re.compile(r"%(?:\.(\d+))?([sdfeExXob%])").match(fmt, i)
        if not m:
            raise CELError("could not parse formatting clause: unrecognized formatting clause")
        prec, verb = m.group(1), m.group(2)
        i = m.end()
        if verb == "%":
            out.append("%")
            continue
        if n >= len(args):
            raise CELError(f"index {n} out of range")
        a = args[n]
        n += 1
        if verb == "s":
            out.append(_format_s(a))
        elif verb == "d":
            if not isinstance(a, int) or isinstance(a, bool):
                raise CELError("error during formatting: decimal clause can only be used on integers")
            out.append(str(int(a)))
        elif verb in "fe E":
            f = float(a) if _is_num(a) else None
            if f is None:
                raise CELError("error during formatting: fixed-point clause can only be used on doubles")
            p = int(prec) if prec is not None else 6
            out.append(f"{f:.{p}{verb}}")
        elif verb in "xX":
            if isinstance(a, int) and not isinstance(a, bool):
                t = format(int(a), "x")
            elif isinstance(a, (str, bytes)):
                t = (a.encode() if isinstance(a, str) else a).hex()
            else:
                raise CELError("error during formatting: only integers, byte buffers, and strings can be formatted as hex")
            out.append(t.upper() if verb == "X" else t)
        elif verb == "o":
            out.append(format(int(a), "o"))
        elif verb == "b":
            out.append(format(int(a), "b") if not isinstance(a, bool) else ("1" if a else "0"))
    return "".join(out)


def _format_s(a) -> str:
    if isinstance(a, list):
        return "[" + ", ".join(_format_s(x) for x in a) + "]"
    if isinstance(a, dict):
        items = sorted((_format_s(k), _format_s(v)) for k, v in a.items())
        return "{" + ", ".join(f"{k}: {v}" for k, v in items) + "}"
    if a is None:
        return "null"
    if isinstance(a, Type):
        return a.name
    return to_string(a)


# -- Kubernetes lists and regex (pkg/cel/library/lists.go, regex.go) --------------------------------------
def _is_sorted(lst):
    return all(compare(lst[i], lst[i + 1]) <= 0 for i in range(len(lst) - 1))


def _sum(lst):
    if not lst:
        return 0
    total = lst[0]
    for x in lst[1:]:
        total = _add(total, x)
    return total


def _extreme(name: str, sign: int):
    def fn(lst):
        if not lst:
            raise CELError(f"{name} called on empty list")
        best = lst[0]
        for x in lst[1:]:
            if compare(x, best) * sign > 0:
                best = x
        return best
    return fn


def _list_index(lst, item, last=False):
    rng = range(len(lst) - 1, -1, -1) if last else range(len(lst))
    for i in rng:
        if equal(lst[i], item):
            return i
    return -1


def go_regex(pattern: str) -> re.Pattern:
    """A Go RE2 pattern compiled with Go's meaning: `\\d`, `\\w`, `\\b` ASCII only, `\\s` is
    [\\t\\n\\f\\r ], `$` and `\\z` match only at the end of the text (without the `m` flag), as
    regexp/syntax (Go 1.24) defines them. Raises re.error."""
    out, i, in_class = [], 0, False
    while i < len(pattern):
        c = pattern[i]
        if c == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            if nxt == "s":
                out.append("\t\n\f\r " if in_class else "[\t\n\f\r ]")
            elif nxt == "S":
                out.append("[^\t\n\f\r ]" if not in_class else "\\S")
            elif nxt == "z":
                out.append("\\Z")
            else:
                out.append(c + nxt)
            i += 2
            continue
        if in_class:
            if c == "]" and out[-1] not in ("[", "[^"):
                in_class = False
            out.append(c)
        elif c == "[":
            in_class = True
            if pattern[i + 1:i + 2] == "^":
                out.append("[^")
                i += 2
                continue
            out.append(c)
        elif c == "$":
            out.append("(?!(?s:.))" if not _multiline(pattern) else "$")
        else:
            out.append(c)
        i += 1
    return re.compile("".join(out), re.ASCII)


def _multiline(pattern: str) -> bool:
    m = re.match(r"\(\?([a-zA-Z]+)\)", pattern)
    return bool(m and "m" in m.group(1))


@functools.lru_cache(maxsize=4096)
def _regex(pattern: str) -> re.Pattern:
    try:
        return go_regex(pattern)
    except re.error as e:
        raise CELError(f"Illegal regex: error parsing regexp: {e}") from None


def _find(s, pattern):
    m = _regex(pattern).search(s)
    return m.group(0) if m else ""


def _find_all(s, pattern, n=-1):
    if n == 0:
        return []
    out = [m.group(0) for m in _regex(pattern).finditer(s)]
    return out if n < 0 else out[:n]


def _matches(s, pattern):
    if not isinstance(s, str) or not isinstance(pattern, str):
        raise no_overload()
    return _regex(pattern).search(s) is not None


# -- sets (cel-go v0.26.0 ext/sets.go) ------------------------------------------------------------------
def _sets_contains(a, b):
    return all(any(equal(x, y) for y in a) for x in b)


def _sets_intersects(a, b):
    return any(any(equal(x, y) for y in a) for x in b)


# -- arithmetic --------------------------------------------------------------------------------------
def _add(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        raise no_overload()
    if isinstance(a, UInt) and isinstance(b, UInt):
        return _uint(a + b)
    if type(a) is int and type(b) is int:
        return _int(a + b)
    if isinstance(a, float) and isinstance(b, float):
        return a + b
    if isinstance(a, str) and isinstance(b, str) or isinstance(a, bytes) and isinstance(b, bytes):
        return a + b
    if isinstance(a, list) and isinstance(b, list):
        return list(a) + list(b)
    if isinstance(a, Duration) and isinstance(b, Duration):
        return Duration(_int(a.nanos + b.nanos))
    if isinstance(a, Timestamp) and isinstance(b, Duration):
        return _ts_add(a, b.nanos)
    if isinstance(a, Duration) and isinstance(b, Timestamp):
        return _ts_add(b, a.nanos)
    raise no_overload()


def _ts_add(t: Timestamp, nanos: int) -> Timestamp:
    total = t.seconds * 10 ** 9 + t.nanos + nanos
    return Timestamp(total // 10 ** 9, total % 10 ** 9)


def _sub(a, b):
    if isinstance(a, bool) or isinstance(b, bool):
        raise no_overload()
    if isinstance(a, UInt) and isinstance(b, UInt):
        return _uint(a - b)
    if type(a) is int and type(b) is int:
        return _int(a - b)
    if isinstance(a, float) and isinstance(b, float):
        return a - b
    if isinstance(a, Duration) and isinstance(b, Duration):
        return Duration(_int(a.nanos - b.nanos))
    if isinstance(a, Timestamp) and isinstance(b, Duration):
        return _ts_add(a, -b.nanos)
    if isinstance(a, Timestamp) and isinstance(b, Timestamp):
        return Duration(_int((a.seconds - b.seconds) * 10 ** 9 + a.nanos - b.nanos))
    raise no_overload()


def _mul(a, b):
    if isinstance(a, UInt) and isinstance(b, UInt):
        return _uint(a * b)
    if type(a) is int and type(b) is int:
        return _int(a * b)
    if isinstance(a, float) and isinstance(b, float):
        return a * b
    raise no_overload()


def _div(a, b):
    if isinstance(a, UInt) and isinstance(b, UInt) or type(a) is int and type(b) is int:
        if b == 0:
            raise CELError("division by zero")
        q = _go_div(a, b)
        return _uint(q) if isinstance(a, UInt) else _int(q)
    if isinstance(a, float) and isinstance(b, float):
        if b == 0:
            return math.copysign(math.inf, a) * math.copysign(1, b) if a != 0 and not math.isnan(a) else math.nan
        return a / b
    raise no_overload()


def _mod(a, b):
    if isinstance(a, UInt) and isinstance(b, UInt) or type(a) is int and type(b) is int:
        if b == 0:
            raise CELError("modulus by zero")
        r = _go_mod(a, b)
        return UInt(r) if isinstance(a, UInt) else r
    raise no_overload()


def _neg(a):
    if type(a) is int:
        return _int(-a)
    if isinstance(a, float):
        return -a
    if isinstance(a, Duration):
        return Duration(_int(-a.nanos))
    raise no_overload()


def _not(a):
    if isinstance(a, bool):
        return not a
    raise no_overload()


def _size(v):
    if isinstance(v, (str, bytes, list, dict)):
        return len(v)
    raise no_overload()


def _index(container, key):
    """`container[key]`: cel-go's interpreter qualifies indexes as attributes (interpreter/attributes.go
    refQualify: missingIndex, missingKey), for data lists and CEL's own lists alike."""
    if isinstance(container, list):
        if isinstance(key, bool) or not _is_num(key):
            raise CELError(f"invalid qualifier type: {type_name(key)}")
        if isinstance(key, float) and key != int(key):
            raise CELError(f"unsupported index value {key} in list")
        i = int(key)
        if not 0 <= i < len(container):
            raise CELError(f"index out of bounds: {key}")
        return container[i]
    if isinstance(container, dict):
        found = _map_find(container, key)
        if found is _MISSING:
            raise CELError(f"no such key: {to_string(key) if not isinstance(key, str) else key}")
        return found
    raise no_overload()


def _in(item, container):
    if isinstance(container, list):
        return any(equal(item, x) for x in container)
    if isinstance(container, dict):
        return _map_find(container, item) is not _MISSING
    raise no_overload()


def _type_of(v):
    return Type(type_name(v))


# -- the function table: name -> {receiver-style?: callable} ---------------------------------------------
def _typed(fn, *types_):
    """Check argument types (one tuple of accepted types per argument, None = any)."""
    def wrapper(*args):
        if len(args) != len(types_):
            raise no_overload()
        for a, t in zip(args, types_):
            if t is not None and (not isinstance(a, t) or (int in t and isinstance(a, (bool, UInt)))):
                raise no_overload()
        return fn(*args)
    return wrapper


def _overloads(*fns):
    """First overload whose arity matches."""
    by_arity = {}
    for arity, fn in fns:
        by_arity[arity] = fn

    def call(*args):
        fn = by_arity.get(len(args))
        if fn is None:
            raise no_overload()
        return fn(*args)
    return call


S, I, L, M = (str,), (int,), (list,), (dict,)

FUNCTIONS: dict[str, Callable] = {
    # standard library
    "size": _overloads((1, _size)),
    "contains": _overloads((2, _typed(lambda s, t: t in s, S, S))),
    "startsWith": _overloads((2, _typed(lambda s, t: s.startswith(t), S, S))),
    "endsWith": _overloads((2, _typed(lambda s, t: s.endswith(t), S, S))),
    "matches": _overloads((2, _matches)),
    "int": _overloads((1, to_int)),
    "uint": _overloads((1, to_uint)),
    "double": _overloads((1, to_double)),
    "string": _overloads((1, to_string)),
    "bool": _overloads((1, to_bool)),
    "bytes": _overloads((1, to_bytes)),
    "dyn": _overloads((1, lambda v: v)),
    "type": _overloads((1, _type_of)),
    "duration": _overloads((1, lambda s: Duration.parse(s) if isinstance(s, str) else _raise(no_overload()))),
    "timestamp": _overloads((1, lambda s: Timestamp.parse(s) if isinstance(s, str) else _raise(no_overload()))),
    # strings extension v2
    "charAt": _overloads((2, _typed(_char_at, S, I))),
    "indexOf": _overloads((2, lambda a, b: _index_of(a, b) if isinstance(a, str) else
                           _list_index(a, b) if isinstance(a, list) else _raise(no_overload())),
                          (3, _typed(_index_of, S, S, I))),
    "lastIndexOf": _overloads((2, lambda a, b: _last_index_of(a, b) if isinstance(a, str) else
                               _list_index(a, b, last=True) if isinstance(a, list) else _raise(no_overload())),
                              (3, _typed(_last_index_of, S, S, I))),
    "lowerAscii": _overloads((1, _typed(lambda s: _ascii_case(s, False), S))),
    "upperAscii": _overloads((1, _typed(lambda s: _ascii_case(s, True), S))),
    "replace": _overloads((3, _typed(_replace, S, S, S)), (4, _typed(_replace, S, S, S, I))),
    "split": _overloads((2, _typed(_split, S, S)), (3, _typed(_split, S, S, I))),
    "substring": _overloads((2, _typed(_substring, S, I)), (3, _typed(_substring, S, I, I))),
    "trim": _overloads((1, _typed(lambda s: s.strip(_GO_SPACE), S))),
    "join": _overloads((1, _typed(_join, L)), (2, _typed(_join, L, S))),
    "format": _overloads((2, _typed(_format, S, L))),
    "strings.quote": _overloads((1, _typed(_quote, S))),
    # sets
    "sets.contains": _overloads((2, _typed(_sets_contains, L, L))),
    "sets.equivalent": _overloads((2, _typed(lambda a, b: _sets_contains(a, b) and _sets_contains(b, a), L, L))),
    "sets.intersects": _overloads((2, _typed(_sets_intersects, L, L))),
    # Kubernetes lists and regex
    "isSorted": _overloads((1, _typed(_is_sorted, L))),
    "sum": _overloads((1, _typed(_sum, L))),
    "min": _overloads((1, _typed(_extreme("min", -1), L))),
    "max": _overloads((1, _typed(_extreme("max", 1), L))),
    "find": _overloads((2, _typed(_find, S, S))),
    "findAll": _overloads((2, _typed(_find_all, S, S)), (3, _typed(_find_all, S, S, I))),
    # URLs
    "url": _overloads((1, _url)),
    "isURL": _overloads((1, _is_url)),
    "getScheme": _overloads((1, _typed(lambda u: u.parts.scheme, (URL,)))),
    "getHost": _overloads((1, _typed(lambda u: u.parts.netloc.rpartition("@")[2], (URL,)))),
    "getHostname": _overloads((1, _typed(_hostname, (URL,)))),
    "getPort": _overloads((1, _typed(_port, (URL,)))),
    "getEscapedPath": _overloads((1, _typed(lambda u: quote(u.parts.path, safe="/:@!$&'()*+,;=-._~%"), (URL,)))),
    "getQuery": _overloads((1, _typed(_query, (URL,)))),
    # quantity
    "quantity": _overloads((1, _quantity)),
    "isQuantity": _overloads((1, _is_quantity)),
    "sign": _overloads((1, _typed(lambda q: (q.value > 0) - (q.value < 0), (Quantity,)))),
    "isGreaterThan": _overloads((2, _typed(lambda a, b: a.value > b.value, (Quantity,), (Quantity,)))),
    "isLessThan": _overloads((2, _typed(lambda a, b: a.value < b.value, (Quantity,), (Quantity,)))),
    "compareTo": _overloads((2, _typed(lambda a, b: (a.value > b.value) - (a.value < b.value), (Quantity,), (Quantity,)))),
    "asApproximateFloat": _overloads((1, _typed(lambda q: float(q.value), (Quantity,)))),
    "asInteger": _overloads((1, _typed(_as_integer, (Quantity,)))),
    "isInteger": _overloads((1, _typed(lambda q: _qty_int(q) is not None, (Quantity,)))),
    "add": _overloads((2, _typed(lambda q, o: Quantity(q.value + _q_arg(o)), (Quantity,), None))),
    "sub": _overloads((2, _typed(lambda q, o: Quantity(q.value - _q_arg(o)), (Quantity,), None))),
    # IP and CIDR
    "ip": _overloads((1, _ip)),
    "isIP": _overloads((1, lambda s: _is_ip(s) if isinstance(s, str) else _raise(no_overload()))),
    "ip.isCanonical": _overloads((1, _typed(lambda s: str(_parse_addr(s)) == s, S))),
    "family": _overloads((1, _typed(lambda i: i.addr.version, (IP,)))),
    "isUnspecified": _overloads((1, _typed(lambda i: i.addr.is_unspecified, (IP,)))),
    "isLoopback": _overloads((1, _typed(lambda i: i.addr.is_loopback, (IP,)))),
    "isLinkLocalMulticast": _overloads((1, _typed(
        lambda i: i.addr in ipaddress.ip_network("224.0.0.0/24") if i.addr.version == 4
        else (int(i.addr) >> 112) & 0xff0f == 0xff02, (IP,)))),
    "isLinkLocalUnicast": _overloads((1, _typed(
        lambda i: i.addr in ipaddress.ip_network("169.254.0.0/16") if i.addr.version == 4
        else i.addr in ipaddress.ip_network("fe80::/10"), (IP,)))),
    "isGlobalUnicast": _overloads((1, _typed(lambda i: not (
        i.addr.is_unspecified or i.addr.is_loopback or i.addr.is_multicast
        or (i.addr.version == 4 and (i.addr in ipaddress.ip_network("169.254.0.0/16") or i.addr == ipaddress.ip_address("255.255.255.255")))
        or (i.addr.version == 6 and i.addr in ipaddress.ip_network("fe80::/10"))), (IP,)))),
    "cidr": _overloads((1, _cidr)),
    "isCIDR": _overloads((1, _is_cidr)),
    "containsIP": _overloads((2, _contains_ip)),
    "containsCIDR": _overloads((2, _contains_cidr)),
    "prefixLength": _overloads((1, _typed(lambda c: c.prefix, (CIDR,)))),
    "masked": _overloads((1, _typed(_masked, (CIDR,)))),
}


def _raise(e):
    raise e


# -- compiling the parse tree into closures -------------------------------------------------------------
Env = dict
Fn = Callable[[Env], Any]
_PARSER: CELParser | None = None
_ESCAPES = {"__dash__": "-", "__dot__": ".", "__slash__": "/", "__underscores__": "__"}
_RESERVED = {"true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function",
             "if", "import", "let", "loop", "package", "namespace", "return", "var", "void", "while"}


def unescape_field(name: str) -> str:
    """A CEL field name back to the object's property name (k8s.io/apiserver v0.36.3
    pkg/cel/escaping.go Unescape)."""
    if name.startswith("__") and name.endswith("__") and name[2:-2] in _RESERVED:
        return name[2:-2]
    return re.sub(r"__(dash|dot|slash|underscores)__", lambda m: _ESCAPES[m.group(0)], name)


def _select(obj, field: str):
    if isinstance(obj, dict):
        key = unescape_field(field) if isinstance(obj, ObjectMap) else field
        if key in obj:
            return obj[key]
        raise CELError(f"no such key: {key}")
    raise no_overload()


class ObjectMap(dict):
    """An object of the validated data (a schema with properties): field names are escaped."""


class Compiler:
    def __init__(self, variables: frozenset[str]):
        self.variables = variables

    def compile(self, tree, bound: frozenset[str] = frozenset()) -> Fn:
        meth = getattr(self, "c_" + tree.data, None)
        if meth is None:
            raise CELError(f"unsupported CEL syntax: {tree.data}")
        return meth([c for c in tree.children if c is not None], bound)

    # expressions
    def c_expr(self, ch, bound):
        if len(ch) == 1:
            return self.compile(ch[0], bound)
        cond, yes, no = (self.compile(c, bound) for c in ch)

        def ternary(env):
            c = cond(env)
            if not isinstance(c, bool):
                raise no_overload()
            return yes(env) if c else no(env)
        return ternary

    def c_conditionalor(self, ch, bound):
        if len(ch) == 1:
            return self.compile(ch[0], bound)
        return _logic(self.compile(ch[0], bound), self.compile(ch[1], bound), True)

    def c_conditionaland(self, ch, bound):
        if len(ch) == 1:
            return self.compile(ch[0], bound)
        return _logic(self.compile(ch[0], bound), self.compile(ch[1], bound), False)

    def _binary(self, ch, bound, ops):
        if len(ch) == 1:
            return self.compile(ch[0], bound)
        op_tree, right_tree = ch
        left = self.compile(op_tree.children[0], bound)
        right = self.compile(right_tree, bound)
        op = ops[op_tree.data]
        return lambda env: op(left(env), right(env))

    def c_relation(self, ch, bound):
        return self._binary(ch, bound, {
            "relation_lt": lambda a, b: compare(a, b) < 0, "relation_le": lambda a, b: compare(a, b) <= 0,
            "relation_gt": lambda a, b: compare(a, b) > 0, "relation_ge": lambda a, b: compare(a, b) >= 0,
            "relation_eq": equal, "relation_ne": lambda a, b: not equal(a, b), "relation_in": _in})

    def c_addition(self, ch, bound):
        return self._binary(ch, bound, {"addition_add": _add, "addition_sub": _sub})

    def c_multiplication(self, ch, bound):
        return self._binary(ch, bound, {"multiplication_mul": _mul, "multiplication_div": _div,
                                        "multiplication_mod": _mod})

    def c_unary(self, ch, bound):
        if len(ch) == 1:
            return self.compile(ch[0], bound)
        inner = self.compile(ch[1], bound)
        op = _not if ch[0].data == "unary_not" else _neg
        return lambda env: op(inner(env))

    def c_member(self, ch, bound):
        return self.compile(ch[0], bound)

    def c_primary(self, ch, bound):
        return self.compile(ch[0], bound)

    def c_paren_expr(self, ch, bound):
        return self.compile(ch[0], bound)

    def c_literal(self, ch, bound):
        value = _literal(ch[0])
        return lambda env: value

    def c_ident(self, ch, bound):
        name = str(ch[0])
        if name not in self.variables and name not in bound:
            if name in ("int", "uint", "double", "string", "bool", "bytes", "list", "map", "null_type", "type"):
                t = Type(name)
                return lambda env: t
            raise CELError(f"undeclared reference to '{name}'")
        return lambda env: env[name]

    def c_list_lit(self, ch, bound):
        items = [self.compile(e, bound) for e in (ch[0].children if ch else [])]
        return lambda env: [f(env) for f in items]

    def c_map_lit(self, ch, bound):
        pairs = []
        if ch:
            kids = ch[0].children
            pairs = [(self.compile(kids[i], bound), self.compile(kids[i + 1], bound)) for i in range(0, len(kids), 2)]

        def build(env):
            out = {}
            for kf, vf in pairs:
                k = kf(env)
                if not isinstance(k, (str, int, bool)):
                    raise CELError(f"unsupported key type: {type_name(k)}")
                if _map_find(out, k) is not _MISSING:
                    raise CELError(f"Failed with repeated key: {k}")
                out[k] = vf(env)
            return out
        return build

    def c_member_dot(self, ch, bound):
        target_tree, field = ch
        name = str(field)
        ns = self._namespace(target_tree, bound)
        if ns is not None:
            raise CELError(f"undeclared reference to '{ns}.{name}'")
        target = self.compile(target_tree, bound)
        return lambda env: _select(target(env), name)

    def c_member_index(self, ch, bound):
        target, key = self.compile(ch[0], bound), self.compile(ch[1], bound)
        return lambda env: _index(target(env), key(env))

    def c_ident_arg(self, ch, bound):
        name = str(ch[0])
        args = list(ch[1].children) if len(ch) > 1 else []
        if name == "has":
            return self._has(args, bound)
        return self._call(name, None, args, bound)

    def c_member_dot_arg(self, ch, bound):
        target_tree, method = ch[0], str(ch[1])
        args = list(ch[2].children) if len(ch) > 2 else []
        ns = self._namespace(target_tree, bound)
        if ns is not None:
            return self._call(f"{ns}.{method}", None, args, bound)
        if method in _MACROS and self._macro_args(args):
            return _MACROS[method](self, self.compile(target_tree, bound), args, bound)
        return self._call(method, self.compile(target_tree, bound), args, bound)

    def _namespace(self, tree, bound) -> str | None:
        """`sets` in `sets.contains(...)`: an identifier that is no variable names a namespace."""
        while tree.data in ("member", "primary") and len(tree.children) == 1:
            tree = tree.children[0]
        if tree.data == "ident":
            name = str(tree.children[0])
            if name not in self.variables and name not in bound:
                return name
        return None

    @staticmethod
    def _macro_args(args) -> bool:
        return len(args) >= 2 and _ident_name(args[0]) is not None

    def _call(self, name: str, target: Fn | None, arg_trees, bound) -> Fn:
        fn = FUNCTIONS.get(name)
        if fn is None:
            raise CELError(f"undeclared reference to '{name}'")
        args = [self.compile(a, bound) for a in arg_trees]
        if target is None:
            return lambda env: fn(*[a(env) for a in args])
        return lambda env: fn(target(env), *[a(env) for a in args])

    def _has(self, args, bound) -> Fn:
        if len(args) != 1:
            raise CELError("invalid argument to has() macro")
        node = args[0]
        while node.data in ("expr", "conditionalor", "conditionaland", "relation", "addition",
                            "multiplication", "unary", "member") and len(node.children) == 1:
            node = node.children[0]
        if node.data != "member_dot":
            raise CELError("invalid argument to has() macro")
        target, field = self.compile(node.children[0], bound), str(node.children[1])

        def has(env):
            obj = target(env)
            if isinstance(obj, dict):
                key = unescape_field(field) if isinstance(obj, ObjectMap) else field
                return key in obj
            raise no_overload()
        return has


def _ident_name(tree) -> str | None:
    node = tree
    while node.data in ("expr", "conditionalor", "conditionaland", "relation", "addition", "multiplication",
                        "unary", "member", "primary") and len(node.children) == 1:
        node = node.children[0]
    return str(node.children[0]) if node.data == "ident" else None


def _logic(left: Fn, right: Fn, is_or: bool) -> Fn:
    """cel-go interpreter evalOr/evalAnd: the deciding value wins over an error; else the first error."""
    decide = is_or

    def run(env):
        err = None
        try:
            a = left(env)
        except CELError as e:
            a, err = None, e
        if a is decide:
            return decide
        if err is None and not isinstance(a, bool):
            err = no_overload()
        try:
            b = right(env)
        except CELError as e:
            if err is None:
                err = e
            b = None
        if b is decide:
            return decide
        if err is not None:
            raise err
        if not isinstance(b, bool):
            raise no_overload()
        return not decide
    return run


def _iter_range(target):
    if isinstance(target, list):
        return list(target)
    if isinstance(target, dict):
        return list(target.keys())
    raise no_overload()


def _pairs(target):
    if isinstance(target, list):
        return list(enumerate(target))
    if isinstance(target, dict):
        return list(target.items())
    raise no_overload()


def _quantifier(kind: str):
    """all / exists / exists_one (and existsOne) with one or two variables: cel-go's
    comprehension macros (parser/macro.go; ext/comprehensions.go)."""
    def build(comp: Compiler, target: Fn, args, bound):
        names = [_ident_name(a) for a in args[:-1]]
        if any(n is None for n in names) or len(names) not in (1, 2):
            raise CELError(f"invalid argument to {kind}() macro")
        pred = comp.compile(args[-1], bound | frozenset(names))

        def run(env):
            items = _pairs(target(env)) if len(names) == 2 else [(x,) for x in _iter_range(target(env))]
            err, count = None, 0
            for item in items:
                local = dict(env)
                local.update(zip(names, item))
                try:
                    v = pred(local)
                except CELError as e:
                    if kind == "exists_one":
                        raise
                    err = err or e
                    continue
                if not isinstance(v, bool):
                    if kind == "exists_one":
                        raise no_overload()
                    err = err or no_overload()
                    continue
                if kind == "all" and not v:
                    return False
                if kind == "exists" and v:
                    return True
                count += v
            if err is not None:
                raise err
            return {"all": True, "exists": False, "exists_one": count == 1}[kind]
        return run
    return build


def _map_macro(comp: Compiler, target: Fn, args, bound):
    var = _ident_name(args[0])
    fns = [comp.compile(a, bound | {var}) for a in args[1:]]
    if len(fns) not in (1, 2):
        raise CELError("invalid argument to map() macro")

    def run(env):
        out = []
        for x in _iter_range(target(env)):
            local = dict(env)
            local[var] = x
            if len(fns) == 2:
                keep = fns[0](local)
                if not isinstance(keep, bool):
                    raise no_overload()
                if not keep:
                    continue
            out.append(fns[-1](local))
        return out
    return run


def _filter_macro(comp: Compiler, target: Fn, args, bound):
    var = _ident_name(args[0])
    pred = comp.compile(args[1], bound | {var})

    def run(env):
        out = []
        for x in _iter_range(target(env)):
            local = dict(env)
            local[var] = x
            keep = pred(local)
            if not isinstance(keep, bool):
                raise no_overload()
            if keep:
                out.append(x)
        return out
    return run


def _transform(kind: str):
    def build(comp: Compiler, target: Fn, args, bound):
        names = [_ident_name(a) for a in args[:2]]
        if None in names or len(args) not in (3, 4):
            raise CELError(f"invalid argument to {kind}() macro")
        fns = [comp.compile(a, bound | frozenset(names)) for a in args[2:]]

        def run(env):
            out_list, out_map = [], {}
            for k, v in _pairs(target(env)):
                local = dict(env)
                local.update(zip(names, (k, v)))
                if len(fns) == 2:
                    keep = fns[0](local)
                    if not isinstance(keep, bool):
                        raise no_overload()
                    if not keep:
                        continue
                value = fns[-1](local)
                if kind == "transformList":
                    out_list.append(value)
                else:
                    out_map[k] = value
            return out_list if kind == "transformList" else out_map
        return run
    return build


_MACROS = {"all": _quantifier("all"), "exists": _quantifier("exists"), "exists_one": _quantifier("exists_one"),
           "existsOne": _quantifier("exists_one"), "map": _map_macro, "filter": _filter_macro,
           "transformList": _transform("transformList"), "transformMap": _transform("transformMap")}


# -- literals ----------------------------------------------------------------------------------------
_STR_ESC = re.compile(r"\\(?:([abfnrtv\"'`\\?])|x([0-9a-fA-F]{2})|u([0-9a-fA-F]{4})|U([0-9a-fA-F]{8})|([0-3][0-7]{2}))")
_SIMPLE_ESC = {"a": "\a", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t", "v": "\v", '"': '"', "'": "'",
               "`": "`", "\\": "\\", "?": "?"}


def _unescape(body: str, raw: bool, as_bytes: bool):
    if raw:
        return body.encode() if as_bytes else body
    if not as_bytes:
        def rep(m):
            if m.group(1):
                return _SIMPLE_ESC[m.group(1)]
            code = m.group(2) or m.group(3) or m.group(4)
            return chr(int(code, 16)) if code else chr(int(m.group(5), 8))
        return _STR_ESC.sub(rep, body)
    out = bytearray()
    pos = 0
    for m in _STR_ESC.finditer(body):
        out += body[pos:m.start()].encode()
        if m.group(1):
            out += _SIMPLE_ESC[m.group(1)].encode()
        elif m.group(2):
            out.append(int(m.group(2), 16))
        elif m.group(5):
            out.append(int(m.group(5), 8))
        else:
            out += chr(int(m.group(3) or m.group(4), 16)).encode()
        pos = m.end()
    out += body[pos:].encode()
    return bytes(out)


def _literal(tok: lark.Token):
    text = str(tok)
    kind = tok.type
    if kind == "BOOL_LIT":
        return text == "true"
    if kind == "NULL_LIT":
        return None
    if kind == "INT_LIT":
        v = int(text, 16) if "0x" in text.lower() else int(text)
        if "0x" in text.lower() and text.startswith("-"):
            v = -int(text[1:], 16)
        return _int(v)
    if kind == "UINT_LIT":
        body = text[:-1]
        return _uint(int(body, 16) if body.lower().startswith("0x") else int(body))
    if kind == "FLOAT_LIT":
        return float(text)
    as_bytes = kind == "BYTES_LIT"
    if as_bytes:
        text = text[1:]
    raw = text[:1] in "rR"
    if raw:
        text = text[1:]
    q = 3 if text[:3] in ('"""', "'''") else 1
    return _unescape(text[q:-q], raw, as_bytes)


# -- public API ------------------------------------------------------------------------------------------
@functools.lru_cache(maxsize=4096)
def compile_rule(rule: str, variables: frozenset[str] = frozenset({"self"})) -> Fn:
    """The rule as a function of its variables; CELError for a syntax error or unknown function."""
    global _PARSER
    if _PARSER is None:
        _PARSER = CELParser()
    try:
        tree = _PARSER.parse(rule)
    except Exception as e:  # noqa: BLE001 - celpy raises its own CELParseError
        raise CELError(f"Syntax error: {e}") from None
    return Compiler(variables).compile(tree)


def evaluate(rule: str, variables: dict[str, Any]):
    """The value of `rule` with `variables` bound (CEL values, see :func:`from_json`); raises CELError."""
    fn = compile_rule(rule, frozenset(variables))
    try:
        return fn(dict(variables))
    except RecursionError:
        raise CELError("max recursion depth exceeded") from None


def from_json(value, schema: dict | None = None):
    """A decoded JSON value as the API server hands it to CEL (k8s.io/apiserver v0.36.3
    pkg/cel/common/valuesunstructured.go UnstructuredToVal): objects with properties allow escaped
    field names, `number` fields are doubles, strings of format duration/date/date-time/byte are
    durations, timestamps and bytes, lists keep their data-list index errors."""
    schema = schema or {}
    if schema.get("x-kubernetes-int-or-string"):
        return value
    if isinstance(value, dict):
        props = schema.get("properties")
        extra = schema.get("additionalProperties") if isinstance(schema.get("additionalProperties"), dict) else None
        out = ObjectMap() if props is not None else {}
        for k, v in value.items():
            sub = (props or {}).get(k) if props is not None else extra
            out[k] = from_json(v, sub)
        return out
    if isinstance(value, list):
        items = schema.get("items") if isinstance(schema.get("items"), dict) else None
        return DataList(from_json(v, items) for v in value)
    if isinstance(value, str):
        fmt = schema.get("format")
        try:
            if fmt == "duration":
                return Duration.parse(value)
            if fmt in ("date-time", "date"):
                return Timestamp.parse(value if fmt == "date-time" else value + "T00:00:00Z")
            if fmt == "byte":
                return base64.b64decode(value, validate=True)
        except (CELError, ValueError):
            return value
        return value
    if isinstance(value, float) and value == int(value) and schema.get("type") == "integer":
        return int(value)
    if isinstance(value, int) and not isinstance(value, bool) and schema.get("type") == "number":
        return float(value)
    return value
