"""Community gallery image versions (read-only), from ``catalogs/galleries/community.json``.

Karpenter-on-Azure v1.14.0 lists
``/subscriptions/{s}/providers/Microsoft.Compute/locations/{loc}/communityGalleries/{gallery}/images/{image}/versions``
for each image of the AKSNodeClass's family and uses the version with the latest
``properties.publishedDate`` (pkg/providers/imagefamily/nodeimage.go
``latestNodeImageVersionCommunity``); the AKSNodeClass is not Ready until that works.
REST reference: https://learn.microsoft.com/rest/api/compute/community-gallery-image-versions/list
"""
from __future__ import annotations

import datetime
import functools
import json
import pathlib

from ..arm import ARMError

DATA = pathlib.Path(__file__).resolve().parents[1] / "catalogs" / "galleries" / "community.json"
VERSION_TYPE = "Microsoft.Compute/locations/communityGalleryImageVersions"


def gallery_image_not_found(gallery: str, image: str) -> ARMError:
    # (harness assumption, not in reference: CRP's code and wording for an unknown community image)
    return ARMError("GalleryImageNotFound",
                    f"The gallery image /CommunityGalleries/{gallery}/Images/{image} is not available in the "
                    f"requested location or does not exist.", 404)


@functools.lru_cache(maxsize=8)
def _read(path: pathlib.Path) -> tuple[tuple[dict, ...], dict[str, dict[str, str]], dict[str, str]]:
    """The file's versions, images and gallery names, read once per process: every fake (one a run)
    serves the same read-only data, and reading it was ~3 % of a small run's set-up."""
    doc = json.loads(path.read_text())
    images = {g.lower(): {i.lower(): i for i in images} for g, images in doc["galleries"].items()}
    return tuple(doc["versions"]), images, {g.lower(): g for g in doc["galleries"]}


class CommunityGalleries:
    def __init__(self, path: pathlib.Path = DATA):
        self.versions, self.images, self.names = _read(path)

    def publish(self, name: str, published: str) -> None:
        """A new version of every image (AKS releasing a node image), published at `published` (RFC 3339) or a
        second after the newest one there, whichever is later: a release is the newest version, which the
        provider picks by date (a caller's clock may stand before the catalog's dates). A name already there
        keeps its date."""
        if any(v["name"] == name for v in self.versions):
            return
        newest = max((datetime.datetime.fromisoformat(v["publishedDate"]) for v in self.versions), default=None)
        when = datetime.datetime.fromisoformat(published)
        if newest is not None and when <= newest:
            when = newest + datetime.timedelta(seconds=1)
        self.versions = (*self.versions, {"name": name, "publishedDate": when.isoformat()})

    def _image(self, gallery: str, image: str) -> tuple[str, str]:
        g = self.names.get(gallery.lower())
        i = self.images.get(gallery.lower(), {}).get(image.lower())
        if g is None or i is None:
            raise gallery_image_not_found(gallery, image)
        return g, i

    def _view(self, location: str, g: str, i: str, v: dict) -> dict:
        return {"name": v["name"], "location": location, "type": VERSION_TYPE,
                "identifier": {"uniqueId": f"/CommunityGalleries/{g}/Images/{i}/Versions/{v['name']}"},
                "properties": {"publishedDate": v["publishedDate"], "excludeFromLatest": False,
                               "storageProfile": {"osDiskImage": {"diskSizeGB": 30, "hostCaching": "ReadOnly"}}}}

    def list_versions(self, location: str, gallery: str, image: str) -> list[dict]:
        g, i = self._image(gallery, image)
        return [self._view(location.lower(), g, i, v) for v in self.versions]

    def get_version(self, location: str, gallery: str, image: str, version: str) -> dict:
        g, i = self._image(gallery, image)
        for v in self.versions:
            if v["name"] == version:
                return self._view(location.lower(), g, i, v)
        # (harness assumption, not in reference: the wording for an unknown version)
        raise ARMError("GalleryImageVersionNotFound",
                       f"The gallery image version /CommunityGalleries/{g}/Images/{i}/Versions/{version} is not "
                       f"available in the requested location or does not exist.", 404)
