"""Azure Retail Prices model (https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices;
https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices): price items from the state's
price
table, the OData ``$filter`` subset clients send, and paging.  No HTTP here.

For every priced SKU a region gets the item kinds a real query returns, so the
client-side classification Karpenter does is exercised (github.com/Azure/karpenter-provider-azure v1.14.0
pkg/providers/pricing/pricing.go):
Linux on-demand, Linux Spot (``skuName`` ending `` Spot``), Linux Low Priority
(``meterName`` ending `` Low Priority``), Windows (``productName`` ending
`` Windows``) and a 1-year Reservation (``type: Reservation``).
"""
from __future__ import annotations

import hashlib
import re
from typing import Any, Callable

from ..catalog import family_core
from . import exceptions as exc

REGION_DISPLAY = {
    "eastus": "US East", "eastus2": "US East 2", "westus": "US West", "westus2": "US West 2",
    "westus3": "US West 3", "centralus": "US Central", "southcentralus": "US South Central",
    "northcentralus": "US North Central", "westcentralus": "US West Central", "westeurope": "EU West",
    "northeurope": "EU North", "uksouth": "UK South", "eastasia": "AP East", "southeastasia": "AP Southeast",
}


def _hid(*parts: str, n: int = 12) -> str:
    return hashlib.sha1("/".join(parts).encode()).hexdigest()[:n].upper()


def _meter_guid(*parts: str) -> str:
    h = hashlib.sha1("/".join(parts).encode()).hexdigest()
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:32]}"


def _series(sku_name: str, family: str | None) -> str:
    core = family_core(family or "").strip().replace(" ", "")
    return core or sku_name.split("_", 1)[-1]


def build_items(region: str, prices: dict[str, dict], families: dict[str, str]) -> list[dict]:
    items: list[dict] = []
    loc = REGION_DISPLAY.get(region, region)
    for sku in sorted(prices):
        p = prices[sku]
        od = p.get("on-demand")
        short = sku.split("_", 1)[1].replace("_", " ") if "_" in sku else sku
        series = _series(sku, families.get(sku.lower()))
        product = f"Virtual Machines {series} Series"
        product_id = "DZH318Z0" + _hid(product, n=4)

        def item(price: float, sku_name: str, meter: str, prod: str, typ: str = "Consumption",
                 **extra: Any) -> dict:
            d = {"currencyCode": "USD", "tierMinimumUnits": 0.0, "retailPrice": price, "unitPrice": price,
                 "armRegionName": region, "location": loc, "effectiveStartDate": "2024-04-01T00:00:00Z",
                 "meterId": _meter_guid(region, sku, meter, prod, typ), "meterName": meter,
                 "productId": product_id, "skuId": f"{product_id}/{_hid(sku, sku_name, n=4)}",
                 "availabilityId": None, "productName": prod, "skuName": sku_name,
                 "serviceName": "Virtual Machines", "serviceId": "DZH313Z7MMC8", "serviceFamily": "Compute",
                 "unitOfMeasure": "1 Hour", "type": typ, "isPrimaryMeterRegion": True, "armSkuName": sku}
            d.update(extra)
            return d

        if od is not None:
            items.append(item(float(od), short, short, product,
                              savingsPlan=[{"unitPrice": round(od * 0.8, 6), "retailPrice": round(od * 0.8, 6),
                                            "term": "1 Year"}]))
            items.append(item(round(float(od) * 1.6 + 0.02 * 1, 6), short, short, product + " Windows"))
            items.append(item(round(float(od) * 8760 * 0.6, 2), short, short, product, typ="Reservation",
                              reservationTerm="1 Year", unitOfMeasure="1 Hour"))
        spot = p.get("spot")
        if spot is not None:
            items.append(item(float(spot), f"{short} Spot", f"{short} Spot", product))
            items.append(item(round(float(spot) * 1.15, 6), f"{short} Low Priority", f"{short} Low Priority",
                              product))
    return items


class PriceBook:
    """The prices the API serves: region -> {sku: {"on-demand": x, "spot": y}}, and the price
    items built from them (cached per region).  ``families(region)`` names each SKU's VM family
    (the product name's series); the compute model's SKU catalog provides it."""

    def __init__(self, families: Callable[[str], dict[str, str]], page_size: int = 100):
        self.families = families
        self.page_size = int(page_size)
        self.table: dict[str, dict[str, dict]] = {}     # an entry is replaced, never changed (region_prices)
        self._items: dict[str, list] = {}

    def set(self, region: str, table, replace: bool = False) -> None:
        region = region.lower()
        cur = {} if replace else self.table.setdefault(region, {})
        for sku, p in table.items():
            cur[sku] = {k: float(v) for k, v in p.items() if v is not None}
        self.table[region] = cur
        self._items.pop(region, None)

    def items(self) -> list[dict]:
        out: list[dict] = []
        for region in sorted(self.table):
            if region not in self._items:
                self._items[region] = build_items(region, self.table[region], self.families(region))
            out += self._items[region]
        return out


# --------------------------------------------------------------------------- OData subset

_TOKEN = re.compile(r"\s*(?:(?P<str>'(?:[^']|'')*')|(?P<num>-?\d+(?:\.\d+)?)|(?P<lp>\()|(?P<rp>\))|"
                    r"(?P<comma>,)|(?P<word>[A-Za-z_$][A-Za-z0-9_.$]*))")
_CMP = {"eq", "ne", "gt", "ge", "lt", "le"}
_FUNCS = {"contains", "startswith", "endswith", "tolower", "toupper"}


def _tokens(text: str) -> list[tuple[str, str]]:
    out = []
    pos = 0
    text = text.strip()
    while pos < len(text):
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            raise exc.invalid_filter(f"unexpected text at position {pos}: {text[pos:pos + 20]!r}")
        kind = m.lastgroup
        val = m.group(kind)
        if kind == "str":
            val = val[1:-1].replace("''", "'")
        out.append((kind, val))
        pos = m.end()
        while pos < len(text) and text[pos].isspace():
            pos += 1
    return out


class _Parser:
    """Recursive-descent parser producing a predicate over a price item."""

    def __init__(self, tokens: list[tuple[str, str]], case_sensitive: bool):
        self.t = tokens
        self.i = 0
        self.cs = case_sensitive

    def peek(self, k: int = 0) -> tuple[str, str] | None:
        return self.t[self.i + k] if self.i + k < len(self.t) else None

    def take(self, kind: str | None = None, word: str | None = None) -> tuple[str, str]:
        tok = self.peek()
        if tok is None or (kind and tok[0] != kind) or (word and tok[1].lower() != word):
            raise exc.invalid_filter(f"expected {word or kind}, got {tok[1] if tok else 'end of filter'}")
        self.i += 1
        return tok

    def parse(self) -> Callable[[dict], bool]:
        pred = self.or_expr()
        if self.peek() is not None:
            raise exc.invalid_filter(f"unexpected {self.peek()[1]!r}")
        return pred

    def _chain(self, keyword: str, operand, combine):
        """``operand (keyword operand)*``, folded left with ``combine(left, right)``."""
        left = operand()
        while self.peek() and self.peek()[0] == "word" and self.peek()[1].lower() == keyword:
            self.take()
            left = combine(left, operand())
        return left

    def or_expr(self):
        return self._chain("or", self.and_expr, lambda a, b: lambda it: a(it) or b(it))

    def and_expr(self):
        return self._chain("and", self.unary, lambda a, b: lambda it: a(it) and b(it))

    def unary(self):
        tok = self.peek()
        if tok and tok[0] == "word" and tok[1].lower() == "not":
            self.take()
            inner = self.unary()
            return lambda it: not inner(it)
        if tok and tok[0] == "lp":
            self.take("lp")
            inner = self.or_expr()
            self.take("rp")
            return inner
        return self.comparison()

    def value(self) -> Callable[[dict], Any]:
        tok = self.peek()
        if tok is None:
            raise exc.invalid_filter("unexpected end of filter")
        kind, val = tok
        if kind == "str":
            self.take()
            return lambda it, v=val: v
        if kind == "num":
            self.take()
            num = float(val)
            return lambda it, v=num: v
        if kind == "word" and val.lower() in _FUNCS and self.peek(1) and self.peek(1)[0] == "lp":
            self.take()
            self.take("lp")
            args = [self.value()]
            while self.peek() and self.peek()[0] == "comma":
                self.take("comma")
                args.append(self.value())
            self.take("rp")
            return self._func(val.lower(), args)
        if kind == "word" and val.lower() in ("true", "false", "null"):
            self.take()
            lit = {"true": True, "false": False, "null": None}[val.lower()]
            return lambda it, v=lit: v
        if kind == "word":
            self.take()
            field = val
            return lambda it, f=field: _field(it, f)
        raise exc.invalid_filter(f"unexpected {val!r}")

    def _func(self, name: str, args):
        def s(x):
            return "" if x is None else str(x)
        if name in ("tolower", "toupper"):
            (a,) = args
            return (lambda it: s(a(it)).lower()) if name == "tolower" else (lambda it: s(a(it)).upper())
        if len(args) != 2:
            raise exc.invalid_filter(f"{name}() takes two arguments")
        a, b = args
        fn = {"contains": lambda x, y: y in x, "startswith": str.startswith, "endswith": str.endswith}[name]
        if self.cs:
            return lambda it: fn(s(a(it)), s(b(it)))
        return lambda it: fn(s(a(it)).lower(), s(b(it)).lower())

    def comparison(self):
        left = self.value()
        tok = self.peek()
        if tok and tok[0] == "word" and tok[1].lower() in _CMP:
            op = self.take()[1].lower()
            right = self.value()
            return self._cmp(op, left, right)
        return lambda it: bool(left(it))

    def _cmp(self, op: str, left, right):
        cs = self.cs

        def norm(v):
            if isinstance(v, str) and not cs:
                return v.lower()
            return v

        def f(it):
            a, b = norm(left(it)), norm(right(it))
            if op == "eq":
                return a == b
            if op == "ne":
                return a != b
            try:
                return {"gt": a > b, "ge": a >= b, "lt": a < b, "le": a <= b}[op]
            except TypeError:
                return False
        return f


def _field(item: dict, name: str) -> Any:
    if name in item:
        return item[name]
    low = name.lower()
    for k, v in item.items():
        if k.lower() == low:
            return v
    return None


def compile_filter(text: str | None, case_sensitive: bool) -> Callable[[dict], bool]:
    """``priceType eq 'Consumption' and armRegionName eq 'eastus'`` -> predicate.

    ``priceType`` is the filter's name for the item field ``type``.  In api-version
    ``2023-01-01-preview`` values compare case-sensitively
    (https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices)."""
    if not text or not text.strip():
        return lambda it: True
    pred = _Parser(_tokens(text), case_sensitive).parse()

    def wrapped(item: dict) -> bool:
        view = dict(item)
        view.setdefault("priceType", item.get("type"))
        return pred(view)
    return wrapped
