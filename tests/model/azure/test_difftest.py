"""Differential test: harness.model.azure.instancetypes against the provider's own Go code.

tools/difftest/main.go, built against github.com/Azure/karpenter-provider-azure v1.14.0, computes
instance types for a SKU list through the provider's exported API (instancetype.DefaultProvider
UpdateInstanceTypes + List). This test feeds it and the model the same seeded SKU list (realistic
SKUs and odd ones) and requires them to agree on every SKU: kept or dropped, every requirement,
every offering (requirements, price, availability), capacity and overhead. The provider is the truth.
Skips, saying why, when Go or the module cannot be had.
"""
from __future__ import annotations

import pytest

import godifftest as gd

# (image family, trusted launch): v1.14.0 has no trusted-launch filter, so the provider's answer for a
# trusted-launch NodeClass is its plain answer.
CASES = [("Ubuntu2204", False), ("AzureLinux", False), ("Ubuntu2204", True)]


@pytest.fixture(scope="module")
def difftest_binary():
    try:
        return gd.build()
    except gd.Unavailable as e:
        pytest.skip(f"differential test needs the provider's Go code: {e}")
    except gd.BuildError as e:
        pytest.fail(str(e))


@pytest.fixture(scope="module")
def batches():
    return gd.generate()


def test_generated_lists_are_large_and_varied(batches):
    assert sum(len(gd.sku_names(b)) for b in batches) >= 1000
    assert any("resourceType" not in s for b in batches for s in b)


@pytest.mark.parametrize("image_family,trusted_launch", CASES, ids=[f"{f}{'-trustedLaunch' * t}" for f, t in CASES])
def test_model_agrees_with_the_provider_on_every_sku(difftest_binary, batches, image_family, trusted_launch):
    compared, kept, failures = 0, 0, []
    for skus in batches:
        result = gd.run(difftest_binary, skus, image_family)
        # UpdateInstanceTypes errors with "no instance types found" when it keeps none: all dropped
        assert result.get("error") in (None, "no instance types found"), result["error"]
        model = gd.model_for(skus, result, image_family, trusted_launch)
        diffs = gd.compare(skus, result, model)
        compared += len(gd.sku_names(skus))
        kept += len(result["instanceTypes"])
        differing = sorted({n for ns in diffs.values() for n in ns})
        if differing:
            summary = ", ".join(f"{k}: {len(v)}" for k, v in diffs.items())
            failures.append(f"{len(differing)} differ ({summary})\n"
                            + "\n".join(gd.explain(n, skus, result, model) for n in differing[:4]))
    assert not failures, f"{compared} SKUs compared, {kept} kept by the provider\n" + "\n".join(failures)
