"""Retail Prices API (https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices;
https://learn.microsoft.com/rest/api/cost-management/retail-prices/azure-retail-prices) and the Karpenter-style
client."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest

from fakeazure import FakeAzure, PricingError, fetch_prices
from fakeazure.pricing.client import karpenter_filter
from fakeazure.pricing.models import compile_filter


def prices_url(env, flt: str, api: str = "2023-01-01-preview", raw: bool = False) -> str:
    from urllib.parse import quote_plus
    return f"{env.prices_base}/api/retail/prices?api-version={api}&$filter={flt if raw else quote_plus(flt)}"


def test_fetch_prices_like_karpenter(fake):
    base = None if fake.mode == "inprocess" else fake.prices_base
    prices = fetch_prices("southcentralus", base)
    assert prices == {k: v for k, v in fake.state.prices["southcentralus"].items()}
    assert prices["Standard_D2s_v3"] == {"on-demand": 0.11, "spot": 0.022}
    assert "spot" not in prices["Standard_B1s"]


def test_fetch_prices_with_a_session(fake):
    prices = fetch_prices("southcentralus", fake.prices_base if fake.mode == "server" else fake.http)
    assert len(prices) == 20


def test_plus_decoding_paging_and_envelope(make_env, mode):
    env = make_env(mode, region="eastus", prices_page_size=100)
    url = prices_url(env, karpenter_filter("eastus"))
    assert "+and+" in url and "%27Consumption%27" in url  # Go url.QueryEscape form
    seen, pages = [], 0
    while url:
        data = env.http.get(url).json()
        assert set(data) == {"BillingCurrency", "CustomerEntityId", "CustomerEntityType", "Items", "NextPageLink",
                             "Count"}
        assert data["Count"] == len(data["Items"])
        seen += data["Items"]
        url = data["NextPageLink"]
        pages += 1
        if url:
            q = parse_qs(urlsplit(url).query)
            assert q["$filter"] == [karpenter_filter("eastus")] and q["api-version"] == ["2023-01-01-preview"]
            if env.mode == "inprocess":
                assert url.startswith("https://prices.azure.com:443/api/retail/prices?")
    # Consumption only (no Reservation), Linux + Windows + Spot + Low Priority variants.
    assert pages > 1 and all(i["type"] == "Consumption" for i in seen)
    d2 = [i for i in seen if i["armSkuName"] == "Standard_D2s_v3"]
    kinds = sorted((i["skuName"], i["productName"].endswith(" Windows")) for i in d2)
    assert kinds == [("D2s v3", False), ("D2s v3", True), ("D2s v3 Low Priority", False), ("D2s v3 Spot", False)]
    item = next(i for i in d2 if i["skuName"] == "D2s v3" and not i["productName"].endswith("Windows"))
    assert item["retailPrice"] == 0.096 and item["unitOfMeasure"] == "1 Hour"
    assert item["location"] == "US East" and item["serviceName"] == "Virtual Machines"
    assert not any(i["armSkuName"] == "Standard_D4as_v7" for i in seen)  # unknown to pricing


def test_filter_subset(fake):
    get = lambda f: fake.http.get(prices_url(fake, f)).json()["Items"]  # noqa: E731
    spot = get("armRegionName eq 'southcentralus' and contains(skuName, 'Spot')")
    assert spot and all(i["skuName"].endswith(" Spot") for i in spot)
    res = get("priceType eq 'Reservation' and armSkuName eq 'Standard_D2s_v3'")
    assert len(res) == 1 and res[0]["reservationTerm"] == "1 Year"
    either = get("(armSkuName eq 'Standard_A0' or armSkuName eq 'Standard_B1s') and priceType eq 'Consumption'"
                 " and not endswith(productName, 'Windows')")
    assert sorted(i["armSkuName"] for i in either) == ["Standard_A0", "Standard_B1s"]
    cheap = get("retailPrice lt 0.02 and priceType eq 'Consumption'")
    assert cheap and all(i["retailPrice"] < 0.02 for i in cheap)
    assert get("armRegionName eq 'nowhere'") == []
    r = fake.http.get(prices_url(fake, "armRegionName eq 'unterminated"))
    assert r.status_code == 400


def test_case_sensitivity_depends_on_api_version():
    item = {"armRegionName": "eastus", "type": "Consumption"}
    assert not compile_filter("armRegionName eq 'EastUS'", case_sensitive=True)(item)
    assert compile_filter("armRegionName eq 'EastUS'", case_sensitive=False)(item)
    assert compile_filter("priceType eq 'Consumption'", case_sensitive=True)(item)
    state = FakeAzure()
    for api, n in (("2023-01-01-preview", 0), ("2021-10-01", 1)):
        status, _, body = state.handle(
            "GET", f"https://prices.azure.com/api/retail/prices?api-version={api}"
                   "&$filter=armSkuName+eq+%27standard_d2s_v3%27+and+priceType+eq+%27Consumption%27"
                   "+and+skuName+eq+%27D2s+v3%27+and+not+endswith(productName,%27Windows%27)")
        assert status == 200 and len(__import__("json").loads(body)["Items"]) == n


def test_prices_faults_and_errors(fake):
    fake.state.add_fault({"code": "ServiceUnavailable", "match": {"operation": "prices.list"}, "times": 1})
    with pytest.raises(PricingError):
        fetch_prices("southcentralus", fake.prices_base if fake.mode == "server" else None)
    assert len(fetch_prices("southcentralus", fake.prices_base if fake.mode == "server" else None)) == 20


def test_set_prices_changes_answers(fake):
    fake.state.set_prices("southcentralus", {"Standard_D2s_v3": {"on-demand": 1.5, "spot": 0.5}})
    p = fetch_prices("southcentralus", fake.prices_base if fake.mode == "server" else None)
    assert p["Standard_D2s_v3"] == {"on-demand": 1.5, "spot": 0.5}
