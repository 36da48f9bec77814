"""The provider's image cache between AKS publishing a node image and the AKSNodeClass's status (nodeimages.py)."""
from harness.loop.azure.nodeimages import NodeImages
from harness.model.azure.params import ClusterParams

DAY = 86400.0


def _cluster(image: str = "202601.01.0", k8s: str = "1.33.0") -> ClusterParams:
    return ClusterParams.from_dict({"nodeImageVersion": image, "kubernetesVersion": k8s})


def test_a_published_image_is_listed_one_requeue_after_the_cache_expires():
    images = NodeImages(3 * DAY, 300.0, listed_at=100.0)
    old = _cluster()
    held = images.change(old, _cluster("202602.10.0"), 200.0)
    assert held.node_image_version == "202601.01.0" and images.published == "202602.10.0"
    assert images.relist_at() == 100.0 + 3 * DAY + 300
    assert images.due(held, 100.0 + 3 * DAY) is None                   # expired, not read yet
    seen = images.due(held, 100.0 + 3 * DAY + 300)
    assert seen.node_image_version == "202602.10.0" and images.relist_at() is None


def test_listings_before_the_publication_move_its_relist_on():
    images = NodeImages(3 * DAY, 300.0, listed_at=0.0)
    images.change(_cluster(), _cluster("202602.10.0"), 4 * DAY)        # one listing at 3 d 5 min already
    assert images.relist_at() == 2 * (3 * DAY + 300)


def test_an_upgrade_lists_at_once_where_the_status_controller_keys_by_version():
    images = NodeImages(3 * DAY, 300.0)
    held = images.change(_cluster(), _cluster("202602.10.0"), 60.0)
    upgraded = images.change(held, _cluster("202602.10.0", "1.34.1"), 120.0)
    assert upgraded.node_image_version == "202602.10.0" and images.published is None and images.listed_at == 120.0
    before_v1_4 = NodeImages(3 * DAY, 0.0)                              # the key holds the image only
    held = before_v1_4.change(_cluster(), _cluster("202602.10.0"), 60.0)
    assert before_v1_4.change(held, _cluster("202602.10.0", "1.34.1"), 120.0).node_image_version == "202601.01.0"
    assert before_v1_4.relist_at() == 3 * DAY


def test_another_setting_keeps_the_held_image_and_no_cache_follows_at_once():
    images = NodeImages(3 * DAY, 300.0)
    held = images.change(_cluster(), _cluster("202602.10.0"), 60.0)
    other = ClusterParams.from_dict({"nodeImageVersion": "202602.10.0", "kubernetesVersion": "1.33.0",
                                     "kubeletIdentityClientID": "x"})
    assert images.change(held, other, 90.0).node_image_version == "202601.01.0"
    assert NodeImages(None).change(_cluster(), _cluster("202602.10.0"), 60.0).node_image_version == "202602.10.0"
