"""When the provider sees a node image AKS publishes: through its image cache, not at once.

A `cluster: {nodeImageVersion}` step is AKS publishing that version. The provider lists node image versions
through a go-cache kept `provider.nodeImageCache` seconds (ImageExpirationInterval, 3 days, in every release:
github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/imagefamily/nodeimage.go List; v0.7.5
pkg/providers/imagefamily/image.go GetLatestImageID), so a version published meanwhile is not seen until the
entry expires. From v1.4 the AKSNodeClass's image status controller reads the list every
`provider.nodeImageRequeue` seconds (5 min: pkg/controllers/nodeclass/status/images.go Reconcile's
RequeueAfter) and moves status.images at the first read after the expiry (go-cache expires an entry strictly
after its time, so that is one requeue past it), while the node OS maintenance window is open - always here:
the harness has no upcoming-maintenance-window ConfigMap, which opens it (isMaintenanceWindowOpen). Its cache
key holds the Kubernetes version, so an upgrade lists at once (and KubernetesUpgrade sets ImagesReady False,
which moves the status whatever the window); before v1.4 the key holds the image definition only.

The status's version is what launches boot and what drift compares with (harness/loop/azure/drift.py reads
`ClusterParams.node_image_version`): this keeps that field at the listed version and holds the published one
until its relist. Harness assumption: the first list is at the run's start (the AKSNodeClass's first
reconcile; before v1.4 the first launch or drift check, which a run has at its start too)."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass


@dataclass
class NodeImages:
    """The provider's listing of node images: when it listed, and a published version it has not seen yet."""
    cache: float | None            # provider.nodeImageCache (seconds); None: the status follows at once
    requeue: float = 0.0           # provider.nodeImageRequeue: the status controller's period (0: none)
    listed_at: float = 0.0         # the run's clock at the last listing
    published: str | None = None   # the newest version AKS published since, not listed yet
    published_at: float = 0.0

    @property
    def period(self) -> float:
        """From one listing to the next: the cache's life, then the read that finds it expired."""
        return (self.cache or 0.0) + self.requeue

    def relist_at(self) -> float | None:
        """When the provider lists the held version, or None when none is held."""
        if self.published is None or self.cache is None:
            return None
        return self.listed_at + self.period

    def change(self, old, new, now: float):
        """The cluster settings a `cluster` step leaves (`new`, over `old`), with node_image_version the one the
        provider lists at `now`; a version published since is held until relist_at."""
        if self.cache is None:
            return new
        upgraded = new.kubernetes_version != old.kubernetes_version and self.requeue > 0
        status = old.node_image_version
        if upgraded or new.node_image_version == status:
            if upgraded:               # a new cache key: listed now
                self.listed_at = now
            self.published = None
            return new
        if self.published != new.node_image_version:
            self.published, self.published_at = new.node_image_version, now
        while self.listed_at + self.period <= now:      # the listings since the last one
            self.listed_at += self.period
        return dataclasses.replace(new, node_image_version=status)

    def due(self, cluster, now: float):
        """`cluster` with the held version once the provider has listed it by `now` (listed_at moves to that
        listing), else None."""
        at = self.relist_at()
        if at is None or now < at:
            return None
        while self.listed_at + self.period <= now:
            self.listed_at += self.period
        version, self.published = self.published, None
        return dataclasses.replace(cluster, node_image_version=version)
