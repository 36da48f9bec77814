"""Resource SKUs list (https://learn.microsoft.com/rest/api/compute/resource-skus/list)
through the real SDK and plain HTTP, both modes."""
from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

from azure.mgmt.compute.models import ResourceSkuRestrictionsReasonCode, ResourceSkuRestrictionsType

from fakeazure import FakeAzure


def test_sdk_lists_region_skus(fake):
    skus = list(fake.compute.resource_skus.list(filter="location eq 'southcentralus'"))
    assert len(skus) == 20
    d2 = next(s for s in skus if s.name == "Standard_D2s_v3")
    assert d2.family == "standardDSv3Family" and d2.size == "D2s_v3" and d2.tier == "Standard"
    assert d2.location_info[0].zones == ["1", "2", "3"]
    caps = {c.name: c.value for c in d2.capabilities}
    assert caps["vCPUs"] == "2" and caps["MemoryGB"] == "8" and caps["LowPriorityCapable"] == "True"
    path, = {r.path for r in fake.state.requests}
    assert path.endswith("/providers/Microsoft.Compute/skus")


def test_sdk_reads_capital_name_zone_details_and_restrictions(make_env, mode):
    env = make_env(mode, region="eastus")
    skus = {s.name: s for s in env.compute.resource_skus.list(filter="location eq 'eastus'")}
    assert len(skus) == 90
    zd = skus["Standard_D2s_v5"].location_info[0].zone_details[0]
    assert zd.name == ["1", "2", "3"]  # the SDK only reads "Name" (azure-mgmt-compute 39.0.0
    # azure/mgmt/compute/models/_models.py ResourceSkuZoneDetails;
    # https://learn.microsoft.com/rest/api/compute/resource-skus/list)
    assert zd.capabilities[0].name == "UltraSSDAvailable"
    r = skus["Standard_D8s_v3"].restrictions[0]
    assert r.type == ResourceSkuRestrictionsType.ZONE
    assert r.reason_code == ResourceSkuRestrictionsReasonCode.NOT_AVAILABLE_FOR_SUBSCRIPTION
    assert r.restriction_info.zones == ["1", "2", "3"]
    assert skus["Standard_D16s_v3"].location_info[0].zones == ["2", "3", "1"]  # unsorted, as observed


def test_unfiltered_list_covers_every_region(make_env, mode):
    env = make_env(mode, catalog=["southcentralus", "westcentralus"])
    skus = list(env.compute.resource_skus.list())
    assert len(skus) == 32
    assert {s.locations[0] for s in skus} == {"southcentralus", "westcentralus"}
    west = list(env.compute.resource_skus.list(filter="location eq 'WestCentralUS'"))
    assert len(west) == 12  # region compare is case-insensitive


def test_paging_next_link_keeps_api_version_and_filter(make_env, mode):
    env = make_env(mode, page_size=6)
    path = f"/subscriptions/{env.sub}/providers/Microsoft.Compute/skus"
    url = env.url(path, **{"api-version": "2021-07-01", "$filter": "location eq 'southcentralus'"})
    names, pages = [], 0
    while url:
        resp = env.http.get(url)
        assert resp.status_code == 200 and resp.headers["Content-Type"].startswith("application/json")
        data = resp.json()
        names += [s["name"] for s in data["value"]]
        url = data.get("nextLink")
        pages += 1
        if url:
            assert url.startswith(env.base)  # absolute
            q = parse_qs(urlsplit(url).query)
            assert q["api-version"] == ["2021-07-01"]
            assert q["$filter"] == ["location eq 'southcentralus'"]
    assert pages == 4 and len(names) == 20 == len(set(names))
    # The SDK follows the same links verbatim.
    assert len(list(env.compute.resource_skus.list(filter="location eq 'southcentralus'"))) == 20


def test_plain_http_wire_shape(fake):
    resp = fake.http.get(fake.url(f"/subscriptions/{fake.sub}/providers/Microsoft.Compute/skus",
                                  **{"api-version": "2021-07-01"}) + "&$filter=location%20eq%20%27southcentralus%27")
    data = resp.json()
    assert "nextLink" not in data  # one page, like the real service
    a0 = next(s for s in data["value"] if s["name"] == "Standard_A0")
    assert set(a0) >= {"resourceType", "name", "tier", "size", "family", "locations", "locationInfo",
                       "capabilities", "restrictions"}
    assert all(isinstance(c["value"], str) for c in a0["capabilities"])


def test_unsupported_filter_and_missing_api_version(fake):
    base = f"/subscriptions/{fake.sub}/providers/Microsoft.Compute/skus"
    r = fake.http.get(fake.url(base, **{"api-version": "2021-07-01", "$filter": "name eq 'x'"}))
    assert r.status_code == 400 and "Only location filter" in r.json()["error"]["message"]
    r = fake.http.get(fake.url(base))
    assert r.status_code == 400 and r.json()["error"]["code"] == "MissingApiVersionParameter"
    r = fake.http.get(fake.url("/subscriptions/11111111-1111-1111-1111-111111111111/providers/Microsoft.Compute/skus",
                               **{"api-version": "2021-07-01"}))
    assert r.status_code == 404 and r.json()["error"]["code"] == "SubscriptionNotFound"


def test_any_api_version_is_accepted(fake):
    for v in ("2017-09-01", "2019-04-01", "2021-07-01", "2099-01-01-preview"):
        r = fake.http.get(fake.url(f"/subscriptions/{fake.sub}/providers/Microsoft.Compute/skus",
                                   **{"api-version": v}))
        assert r.status_code == 200


def test_usages_list(fake):
    fake.state.set_usage("standardDSv3Family", 10, current=4)
    fake.state.set_regional_quota(50)
    rows = {u.name.value: u for u in fake.compute.usage.list("southcentralus")}
    assert rows["standardDSv3Family"].limit == 10 and rows["standardDSv3Family"].current_value == 4
    assert rows["standardDSv3Family"].name.localized_value == "Standard DSv3 Family vCPUs"
    assert rows["cores"].limit == 50 and rows["cores"].current_value == 4
    assert rows["lowPriorityCores"].current_value == 0
    assert "Standard NCASv3_T4 Family" in rows and "StandardNCADSA100v4Family" in rows
    assert rows["cores"].unit == "Count"


def test_state_skus_api():
    state = FakeAzure()
    assert len(state.skus()) == 20 and state.skus("nowhere") == []
    state.load_catalog("eastus")
    assert len(state.skus("eastus")) == 90 and len(state.skus("*")) == 110


def test_restrict_sku_takes_a_size_away_from_listing_and_creating(fake):
    from azure.core.exceptions import HttpResponseError
    from tests.fakeazure.fa_helpers import create_vm
    fake.state.restrict_sku("Standard_D4s_v3", zones=["southcentralus-2"])
    fake.state.restrict_sku("Standard_D2s_v3")
    skus = {s.name: s for s in fake.compute.resource_skus.list(filter="location eq 'southcentralus'")}
    (d4,) = skus["Standard_D4s_v3"].restrictions
    assert d4.type == ResourceSkuRestrictionsType.ZONE and d4.restriction_info.zones == ["2"]
    (d2,) = skus["Standard_D2s_v3"].restrictions
    assert d2.type == ResourceSkuRestrictionsType.LOCATION and d2.restriction_info.locations == ["southcentralus"]
    assert d2.reason_code == ResourceSkuRestrictionsReasonCode.NOT_AVAILABLE_FOR_SUBSCRIPTION
    try:
        create_vm(fake, "vm-d2", size="Standard_D2s_v3")
        raise AssertionError("created a restricted size")
    except HttpResponseError as e:
        assert "SkuNotAvailable" in str(e)
    try:
        fake.state.restrict_sku("Standard_Nope")
        raise AssertionError("restricted an unknown size")
    except KeyError:
        pass


def test_a_restriction_stays_in_its_own_fake():
    """Fakes of one process share the normalized SKU dicts of a catalog (compute/skus.py NormalizedSkus): a
    restriction replaces the dict in its own catalog, so another fake, before or after, still lists the SKU
    unrestricted, and the restricted fake's encoded SKU page (EncodedPages) is its own."""
    from fakeazure import FakeAzure
    a, b = FakeAzure(seed=1), FakeAzure(seed=1)
    size = a.skus()[0]["name"]
    assert a.compute.skus.find(a.region, size) is b.compute.skus.find(b.region, size)
    a.restrict_sku(size)
    c = FakeAzure(seed=1)
    assert [s["restrictions"] for s in a.skus() if s["name"] == size] != [[]]
    for other in (b, c):
        assert [s["restrictions"] for s in other.skus() if s["name"] == size] == [[]]
