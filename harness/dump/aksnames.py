"""What an AKS cluster's names say of where it runs: the node resource group `MC_<group>_<cluster>_<region>`
(https://learn.microsoft.com/azure/aks/faq#why-are-two-resource-groups-created-with-aks) a provider ID or a
Node label names, and the region of a zone label (`westeurope-2`). Read by `harness new` from a dump's
objects (harness/dump/new.py) and from a customer's log (harness/dump/logstory.py)."""
from __future__ import annotations

import re

NODE_RG = re.compile(r"/resourceGroups/(MC_[^/]+)", re.I)
# a provider ID's resource group and VM (azure:///subscriptions/<id>/resourceGroups/<group>/providers/
# Microsoft.Compute/virtualMachines/<vm>)
PROVIDER_ID = re.compile(r"/resourceGroups/([^/]+)/providers/Microsoft\.Compute/virtualMachines/([^/\s\"]+)", re.I)
ZONE = re.compile(r"^([a-z0-9]+)-\d+$")


def region_of_rg(rg: str) -> str | None:
    """The region an AKS node resource group's name ends in, or None for another name."""
    if rg.lower().startswith("mc_") and rg.count("_") >= 3:
        region = rg.rsplit("_", 1)[1].lower()
        return region if re.fullmatch(r"[a-z0-9]+", region) else None
    return None


def provider_id_group(pid: str) -> str | None:
    """The resource group a provider ID's VM is in."""
    m = PROVIDER_ID.search(str(pid or ""))
    return m.group(1) if m else None
