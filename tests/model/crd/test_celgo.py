"""harness.model.crd.celgo: cel-go's semantics and the API server's CEL libraries.

Expectations are upstream's own assertions: cel-go v0.26.0 ext/strings_test.go and ext/sets_test.go
(the `stringTests` / `setsTests` tables), k8s.io/apiserver v0.36.3 pkg/cel/library/quantity_test.go
TestQuantity, ip_test.go TestIP, cidr_test.go TestCIDR, lists_test.go TestLists, regex_test.go TestRegex,
urls_test.go TestURLs; and what a real v1.36.3 kube-apiserver answered (tests/backends/test_cel_agreement.py
checks the CRD rules against one).
"""
from __future__ import annotations

import pytest

from harness.model.crd import cel
from harness.model.crd.celgo import CELError, evaluate, from_json, go_regex


def ev(expr, **variables):
    return evaluate(expr, {k: from_json(v) for k, v in variables.items()})


@pytest.mark.parametrize("expr", [
    # ext/strings_test.go stringTests
    "'tacocat'.charAt(3) == 'o'", "'tacocat'.charAt(7) == ''",
    "'©αT'.charAt(0) == '©' && '©αT'.charAt(1) == 'α' && '©αT'.charAt(2) == 'T'",
    "'tacocat'.indexOf('ac') == 1", "'ta©o©αT'.indexOf('©', 3) == 4", "'tacocat'.indexOf('', 3) == 3",
    "'tacocat'.lastIndexOf('at') == 5", "'TacoCÆt Xii'.lowerAscii() == 'tacocÆt xii'",
    "'TacoCÆt Xii'.upperAscii() == 'TACOCÆT XII'",
    '"{0} days {0} hours".replace("{0}", "2", 1).replace("{0}", "23") == "2 days 23 hours"',
    '"hello hello".replace("", "_") == "_h_e_l_l_o_ _h_e_l_l_o_"',
    '"hello world".split(" ") == ["hello", "world"]', '"hello world events!".split(" ", 0) == []',
    '"hello world events!".split(" ", 1) == ["hello world events!"]', '"o©o©o©o".split("©", -1) == ["o", "o", "o", "o"]',
    '"tacocat".substring(4) == "cat"', "'ta©o©αT'.substring(2, 6) == \"©o©α\"",
    '" \\f\\n\\r\\t\\vtext  ".trim() == "text"', '"\\u0085\\u00a0\\u1680text".trim() == "text"',
    "['x', 'y'].join() == 'xy'", "['x', 'y'].join('-') == 'x-y'", "[].join('-') == ''",
    # ext/sets_test.go
    "sets.contains([1, 2, 3], [3u, 2.0])", "!sets.contains([1], [2])", "sets.equivalent([1, 1, 2], [2, 1])",
    "sets.intersects([1, 2], [2.0, 3])",
    # Kubernetes lists and regex libraries (lists_test.go, regex_test.go)
    "[1, 2, 3].isSorted()", "!['b', 'a'].isSorted()", "[1, 2, 3].sum() == 6", "[1.5, 2.5].sum() == 4.0",
    "[3, 1, 2].min() == 1", "[3, 1, 2].max() == 3", "[1, 2, 2, 3].indexOf(2) == 1", "[1, 2, 2, 3].lastIndexOf(2) == 2",
    "'abc 123'.find('[0-9]+') == '123'", "'abc'.find('[0-9]+') == ''",
    "'123 abc 456'.findAll('[0-9]+') == ['123', '456']", "'123 abc 456'.findAll('[0-9]+', 1) == ['123']",
    # quantity_test.go
    'quantity("50M").isGreaterThan(quantity("50Mi")) == false', 'quantity("50Mi").isGreaterThan(quantity("50M"))',
    'quantity("200M").compareTo(quantity("0.2G")) == 0', 'quantity("50k").add(quantity("20")) == quantity("50.02k")',
    'quantity("50k").sub(20) == quantity("49980")', 'quantity("50.703k").asApproximateFloat() == 50703.0',
    'quantity("50").isInteger()', '!quantity("9999999999999999999999999999999999999G").isInteger()',
    'isQuantity("200M")', '!isQuantity("20ZM")', 'quantity("-50M").sign() == -1',
    # ip_test.go, cidr_test.go
    'ip("192.168.0.1").family() == 4', 'ip("2001:db8::68").family() == 6', 'ip("127.0.0.1").isLoopback()',
    'ip("ff02::1").isLinkLocalMulticast()', 'ip("fe80::1").isLinkLocalUnicast()', 'ip("192.168.0.1").isGlobalUnicast()',
    '!ip("255.255.255.255").isGlobalUnicast()', 'ip.isCanonical("2001:db8::68")', '!ip.isCanonical("2001:DB8::68")',
    'isIP("1.2.3.4")', '!isIP("1.2.3.4%eth0")', 'cidr("192.168.0.0/24").containsIP("192.168.0.1")',
    'cidr("192.168.0.0/24").containsCIDR("192.168.0.0/25")', '!cidr("192.168.0.0/24").containsIP(ip("2001:db8::1"))',
    'cidr("192.168.0.1/24").masked() == cidr("192.168.0.0/24")', 'cidr("192.168.0.0/24").prefixLength() == 24',
    'cidr("192.168.0.0/24").ip() == ip("192.168.0.0")', 'string(cidr("2001:db8::/32")) == "2001:db8::/32"',
    '!isCIDR("192.168.0.0")',
    # urls_test.go
    'url("https://example.com:80/path?query=val#fragment").getScheme() == "https"',
    'url("https://example.com:80/path?query=val").getHost() == "example.com:80"',
    'url("https://[::1]:80/path").getHostname() == "::1"', 'url("https://example.com:80/").getPort() == "80"',
    'url("https://example.com/path").getEscapedPath() == "/path"',
    'url("https://example.com/?k=a&k=b").getQuery() == {"k": ["a", "b"]}', 'isURL("https://example.com")',
    '!isURL("example.com")',
    # cel-go core semantics the API server's environment enables
    "1 == 1.0", "1u == 1", "1 < 1.5", "2u > 1", "[1, 'a'] != [1, 'b']", "{'a': 1} == {'a': 1.0}",
    "-7 / 2 == -3", "-7 % 2 == -1", "string(1e6) == '1e+06'", "string(123456.0) == '123456'",
    "string(0.0001) == '0.0001'", "duration('1h30m') == duration('90m')", "int(' 1'.trim()) == 1",
    "{'a': 1}.all(k, v, v == 1)", "[1, 2].exists(x, x == 2)", "[1, 2, 3].exists_one(x, x > 2)",
    "[1, 2].map(x, x * 2) == [2, 4]", "[1, 2, 3].filter(x, x > 1) == [2, 3]",
])
def test_upstream_true_assertions(expr):
    assert evaluate(expr, {}) is True


@pytest.mark.parametrize("expr, error", [
    ("int('abc')", "type conversion error from 'string' to 'int'"),
    ("int(' 12')", "type conversion error from 'string' to 'int'"),     # strconv.ParseInt: no spaces
    ("int('1_2')", "type conversion error from 'string' to 'int'"),     # nor underscores
    ("int('99999999999999999999')", "type conversion error from 'string' to 'int'"),
    ("'1 2'.split(' ')[2]", "index out of bounds: 2"),                  # attribute qualification (attributes.go)
    ("{'a': 1}['b']", "no such key: b"),
    ("1 / 0", "division by zero"), ("1 % 0", "modulus by zero"), ("9223372036854775807 + 1", "integer overflow"),
    ("'tacocat'.charAt(30)", "index out of range: 30"),
    ("'tacocat'.substring(40)", "index out of range: 40"),
    ("'tacocat'.substring(3, 1)", "invalid substring range. start: 3, end: 1"),
    ("[].min()", "min called on empty list"),
    ("quantity('1.5').asInteger()", "cannot convert value to integer"),
    ("ip('192.168.0.1.0')", 'IP Address "192.168.0.1.0" parse error during conversion from string: '
                            'ParseAddr("192.168.0.1.0"): IPv4 address too long'),
    ("ip('2001:db8:::68')", 'IP Address "2001:db8:::68" parse error during conversion from string: '
                            'ParseAddr("2001:db8:::68"): each colon-separated field must have at least one digit (at ":68")'),
    ("ip('::ffff:1.2.3.4')", 'IPv4-mapped IPv6 address "::ffff:1.2.3.4" is not allowed'),
    ("cidr('192.168.0.0/')", 'network address parse error during conversion from string: network address parse '
                             'error during conversion from string: netip.ParsePrefix("192.168.0.0/"): bad bits after slash: ""'),
    ("'abc'.find('[')", "Illegal regex: "),
    ("nosuch(1)", "undeclared reference to 'nosuch'"),
])
def test_errors_as_cel_go_words_them(expr, error):
    with pytest.raises(CELError) as e:
        evaluate(expr, {})
    assert str(e.value).startswith(error)


def test_error_absorbed_by_logical_operators_and_all():
    """cel-go evalAnd/evalOr: the deciding value wins over an error; else the first error."""
    assert evaluate("int('x') == 1 || true", {}) is True
    assert evaluate("[1, 2].all(x, x == 2 && int('a') == 1)", {}) is False
    with pytest.raises(CELError, match="type conversion error"):
        evaluate("[1, 2].all(x, int('a') == 1)", {})


def test_port_range_rules_as_the_api_server_judges_them():
    """The three netIPv4IPLocalPortRange rules of the provider v1.14.0 AKSNodeClass CRD call the strings
    extension's split: a valid range holds, a malformed one is an evaluation error (the causes a real
    v1.36.3 API server gives)."""
    first = ("!has(self.netIPv4IPLocalPortRange) || (int(self.netIPv4IPLocalPortRange.split(' ')[0]) >= 1024 "
             "&& int(self.netIPv4IPLocalPortRange.split(' ')[0]) <= 60999)")
    last = ("!has(self.netIPv4IPLocalPortRange) || (int(self.netIPv4IPLocalPortRange.split(' ')[1]) >= 32768 "
            "&& int(self.netIPv4IPLocalPortRange.split(' ')[1]) <= 65535)")
    assert cel.outcome(first, {"netIPv4IPLocalPortRange": "32768 60999"}) is True
    assert cel.outcome(last, {"netIPv4IPLocalPortRange": "32768 60999"}) is True
    assert cel.outcome(first, {"netIPv4IPLocalPortRange": "1 2"}) is False
    assert cel.outcome(first, {"netIPv4IPLocalPortRange": "abc"}) == "type conversion error from 'string' to 'int'"
    assert cel.outcome(last, {"netIPv4IPLocalPortRange": "32768"}) == "index out of bounds: 1"


def test_go_regex_meaning():
    """RE2 (Go regexp/syntax): `$` is the end of the text, `\\d` ASCII only, `\\s` without \\v."""
    assert go_regex(r"^\d+ \d+$").search("1 2")
    assert not go_regex(r"^\d+ \d+$").search("1 2\n")
    assert not go_regex(r"^\d+$").search("\u0661")
    assert not go_regex(r"[\s]").search("\v")


def test_object_fields_escaped_and_formats():
    """Field names are escaped in CEL (k8s.io/apiserver v0.36.3 pkg/cel/escaping.go); a `duration`
    formatted string is a duration (pkg/cel/common/valuesunstructured.go UnstructuredToVal)."""
    schema = {"type": "object", "properties": {"a-b": {"type": "string"}, "d": {"type": "string", "format": "duration"}}}
    value = from_json({"a-b": "x", "d": "1h"}, schema)
    assert evaluate("self.a__dash__b == 'x' && self.d > duration('30m')", {"self": value}) is True
