"""Community gallery image versions through azure-mgmt-compute, in both serving modes
(fakeazure/compute/galleries.py; the image definitions of karpenter-provider-azure v1.14.0
pkg/providers/imagefamily)."""
from __future__ import annotations

import pytest
from azure.core.exceptions import HttpResponseError, ResourceNotFoundError

UBUNTU = "AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2"
AZURELINUX = "AKSAzureLinux-f7c7cda5-1c9a-4bdc-a222-9614c968580b"


@pytest.mark.parametrize("gallery, image", [
    (UBUNTU, "2204gen2containerd"), (UBUNTU, "2204containerd"), (UBUNTU, "2204gen2arm64containerd"),
    (UBUNTU, "2404gen2containerd"), (AZURELINUX, "V2gen2"), (AZURELINUX, "V3gen2arm64fips"),
])
def test_versions_of_every_known_image(fake, gallery, image):
    versions = list(fake.compute.community_gallery_image_versions.list("southcentralus", gallery, image))
    assert len(versions) >= 1
    latest = max(versions, key=lambda v: v.properties.published_date)  # as nodeimage.go picks it
    assert latest.name == "202508.20.0"
    assert latest.identifier.unique_id == f"/CommunityGalleries/{gallery}/Images/{image}/Versions/202508.20.0"
    assert latest.type == "Microsoft.Compute/locations/communityGalleryImageVersions"
    assert latest.properties.exclude_from_latest is False
    got = fake.compute.community_gallery_image_versions.get("southcentralus", gallery, image, latest.name)
    assert got.identifier.unique_id == latest.identifier.unique_id


def test_unknown_image_or_version_is_404(fake):
    with pytest.raises(ResourceNotFoundError):
        list(fake.compute.community_gallery_image_versions.list("southcentralus", UBUNTU, "1804containerd"))
    with pytest.raises(ResourceNotFoundError):
        fake.compute.community_gallery_image_versions.get("southcentralus", UBUNTU, "2204gen2containerd", "1.0.0")


def test_gallery_route_takes_fault_rules(fake):
    fake.state.add_fault({"code": "ServiceUnavailable", "match": {"operation": "gallery.versions.list"}, "times": 1})
    with pytest.raises(HttpResponseError) as e:
        list(fake.compute.community_gallery_image_versions.list("southcentralus", UBUNTU, "2204gen2containerd"))
    assert e.value.status_code == 503
    assert fake.state.request_details[-1]["operation"] == "gallery.versions.list"


def test_a_published_node_image_is_the_newest_of_every_image(fake):
    """FakeAzure.publish_node_image (the real engine's `cluster: {nodeImageVersion}`): the provider picks it by
    date even when the fake's clock stands before the catalog's dates; publishing it again changes nothing."""
    fake.state.publish_node_image("202602.10.0")
    fake.state.publish_node_image("202602.10.0")
    for image in ("2204gen2containerd", "2404gen2containerd"):
        versions = list(fake.compute.community_gallery_image_versions.list("southcentralus", UBUNTU, image))
        assert [v.name for v in versions].count("202602.10.0") == 1
        assert max(versions, key=lambda v: v.properties.published_date).name == "202602.10.0"
