"""fakeazure/arm.py: a request's URL read as urllib reads it, and request shapes checked over their tree as
the path walk checks them."""
from __future__ import annotations

from urllib.parse import parse_qsl, urlsplit

import pytest
from hypothesis import given, settings, strategies as st

from fakeazure.arm import ARMError, Request, _walk_paths, check_shape
from fakeazure.compute.responses import SHAPES as COMPUTE_SHAPES
from fakeazure.network.responses import SHAPES as NETWORK_SHAPES

SHAPES = [v for d in (COMPUTE_SHAPES, NETWORK_SHAPES) for k, v in d.items() if not k.startswith("_")]
# the shapes' own field names, and names that could alias a path (dots, brackets, empty)
NAMES = sorted({step for shape in SHAPES for key in shape for step in key.replace("[]", ".").split(".") if step}
               | {"", "a.b", "properties.ipConfigurations", "x[", "[]"})
SCALARS = st.sampled_from([None, 0, 1, 1.5, True, False, "", "s"])
BODIES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=3)
                      | st.dictionaries(st.sampled_from(NAMES), inner, max_size=5), max_leaves=25)


def _verdict(check, body, shape):
    try:
        check(body, shape)
        return None
    except ARMError as e:
        return e.message


@settings(max_examples=150, deadline=None)
@given(body=BODIES, shape=st.sampled_from(SHAPES), wrap=st.booleans())
def test_check_shape_says_what_the_path_walk_says(body, shape, wrap):
    if wrap:
        body = {"location": "eastus", "properties": body}
    assert _verdict(check_shape, body, shape) == _verdict(_walk_paths, body, shape)


def test_a_field_named_like_a_path_is_checked_as_that_path():
    with pytest.raises(ARMError, match="properties.ipConfigurations"):
        check_shape({"properties.ipConfigurations": "x"}, NETWORK_SHAPES["nic"])


URL_CHARS = "abcAZ09_.~!$&'()*+,;=:@/?#%[] \t-\u00e9"
URLS = ["https://management.azure.com/subscriptions/s/resourceGroups/rg/providers/Microsoft.Compute/"
        "virtualMachines/vm?api-version=2026-04-01", "http://127.0.0.1:8080/x?$filter=location eq 'x'",
        "https://prices.azure.com/api/retail/prices?$skip=100&currencyCode=USD", "https://h", "https://h?",
        "https://h/p?a=&b&&c=d=e", "HTTPS://h/p", "https://u@h:1/p?q"]


@settings(max_examples=200, deadline=None)
@given(base=st.sampled_from(URLS), edits=st.lists(st.tuples(st.integers(0, 200), st.sampled_from(URL_CHARS)),
                                                  max_size=3))
def test_a_request_url_is_split_as_urlsplit_and_parse_qsl_split_it(base, edits):
    url = base
    for at, ch in edits:
        url = url[:at] + ch + url[at:]
    try:
        parts = urlsplit(url)
    except ValueError:
        return
    req = Request("GET", url)
    assert (req.scheme, req.netloc, req.path, req.raw_query, req.query_list) == (
        parts.scheme or "http", parts.netloc, parts.path or "/", parts.query,
        parse_qsl(parts.query, keep_blank_values=True))
