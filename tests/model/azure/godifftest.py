"""Support for the differential test against the provider's own Go code (tests/model/azure/test_difftest.py).

`build()` compiles tools/difftest/main.go against github.com/Azure/karpenter-provider-azure at the
pinned version, in <harness cache>/difftest/<version>/ (~/.cache/karpenter-harness unless $HARNESS_CACHE) (a generated go.mod, `go mod tidy`,
`go build`, all outside the repository; rebuilt only when the source changes). `generate()` makes a
seeded SKU list: real names and plausible capabilities, plus odd inputs (casing, missing fields, odd
numbers, duplicates). `compare()` lines the Go output up with harness.model.azure.instancetypes.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import random
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

from harness.model.azure.instancetypes import ClusterParams, InstanceTypeSet, NodeClassParams, build_instance_types
from harness.model.upstream.skutables import known_sku_families, supported_gpus

PROVIDER_VERSION = "v1.14.0"
PROVIDER_MODULE = "github.com/Azure/karpenter-provider-azure"
SOURCE = Path(__file__).resolve().parents[3] / "tools" / "difftest" / "main.go"
REGION = "southcentralus"
CLUSTER = ClusterParams(region=REGION)


class Unavailable(Exception):
    """Go or the module is not available (the test skips with this reason)."""


class BuildError(Exception):
    """Our Go program does not compile against the module (the test fails)."""


def _cache_dir(version: str) -> Path:
    from harness.backends.binaries.controlplane import cache_dir
    return cache_dir() / "difftest" / version


# the controller's build settings (harness/backends/binaries/build-controller.sh), so this build of the same
# module graph reuses its compiled packages from the Go build cache: -trimpath and CGO_ENABLED are part
# of every package's cache key, and the controller is built first (scripts/test.sh)
GO_ENV = {"GOFLAGS": "-mod=mod", "GOWORK": "off", "CGO_ENABLED": "0"}
GO_BUILD_FLAGS = ["-trimpath", "-pgo=off", "-ldflags", "-s -w"]


def build(version: str = PROVIDER_VERSION, timeout: float = 3600, echo: bool = False) -> Path:
    """The difftest binary for `version`, building it when the source or version changed; `echo`
    says on stderr every 15 s how long the build has taken so far (else an INFO log record)."""
    from harness.backends.binaries.controlplane import Heartbeat
    go = shutil.which("go")
    if go is None:
        raise Unavailable("Go toolchain not found on PATH")
    d = _cache_dir(version)
    d.mkdir(parents=True, exist_ok=True)
    source = SOURCE.read_bytes()
    stamp = hashlib.sha256(source + version.encode()).hexdigest()
    binary, stamp_file = d / "difftest", d / "source.sha256"
    with open(d / "build.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)          # pytest-xdist workers build once
        if binary.exists() and stamp_file.exists() and stamp_file.read_text() == stamp:
            return binary
        (d / "main.go").write_bytes(source)
        (d / "go.mod").write_text(f"module karpenter-harness/difftest\n\ngo 1.26.5\n\n"
                                  f"require {PROVIDER_MODULE} {version}\n")
        env = {**os.environ, **GO_ENV}
        nice = ["nice", "-n", "10"] if shutil.which("nice") else []
        for cmd in ([go, "mod", "tidy"], [go, "build", *GO_BUILD_FLAGS, "-o", str(binary), "."]):
            what = "resolving the module graph" if cmd[1] == "mod" else f"building tools/difftest against {version}"
            try:
                with Heartbeat(what, echo, tag="difftest"):
                    out = subprocess.run(nice + cmd, cwd=d, env=env, capture_output=True, text=True, timeout=timeout)
            except subprocess.TimeoutExpired:
                raise Unavailable(f"`{' '.join(cmd[1:])}` timed out after {timeout:.0f}s") from None
            if out.returncode != 0:
                tail = " | ".join(out.stderr.strip().splitlines()[-3:])
                error = Unavailable if cmd[1] == "mod" else BuildError     # tidy needs the module proxy
                raise error(f"`go {' '.join(cmd[1:])}` failed for {PROVIDER_MODULE}@{version}: {tail}")
        stamp_file.write_text(stamp)
    return binary


def run(binary: Path, skus: list[dict], image_family: str, timeout: float = 600) -> dict:
    """The provider's view of `skus` (see tools/difftest/main.go for the shape)."""
    payload = {"region": CLUSTER.region, "nodeResourceGroup": CLUSTER.node_resource_group,
               "networkPlugin": CLUSTER.network_plugin, "networkPluginMode": CLUSTER.network_plugin_mode,
               "vmMemoryOverheadPercent": CLUSTER.vm_memory_overhead_percent,
               "imageFamily": image_family, "osDiskSizeGB": 128, "skus": skus}
    out = subprocess.run([str(binary)], input=json.dumps(payload), capture_output=True, text=True, timeout=timeout)
    if out.returncode != 0:
        raise AssertionError(f"difftest failed: {out.stderr.strip()[-2000:]}")
    return json.loads(out.stdout)


# == generated SKUs ===================================================================================
_CAP_TRUE = ("True", "True", "True", "False", "true", "TRUE", "false")


def _size(name: str) -> str:
    return name.split("_", 1)[1] if "_" in name else name


def _realistic(rng: random.Random, name: str, family: str) -> dict:
    m = re.match(r"[A-Za-z]+_[A-Z]+(\d+)", name)
    vcpus = int(m.group(1)) if m else rng.choice([2, 4, 8])
    mem = rng.choice([vcpus * 2, vcpus * 4, vcpus * 8, vcpus * 7, vcpus * 3.5, vcpus * 1.75, vcpus * 0.5])
    gpu = supported_gpus().get(name.lower())
    caps = [("MaxResourceVolumeMB", str(rng.choice([0, 16384, 65536, 262144, 2400000]))),
            ("OSVhdSizeMB", "1047552"),
            ("vCPUs", str(vcpus)),
            ("MemoryPreservingMaintenanceSupported", "True"),
            ("HyperVGenerations", rng.choice(["V1,V2", "V2", "V1", "V1,V2", "v1,v2"])),
            ("MemoryGB", f"{mem:g}"),
            ("MaxDataDiskCount", "16"),
            ("CpuArchitectureType", rng.choice(["x64"] * 6 + ["Arm64"])),
            ("LowPriorityCapable", rng.choice(_CAP_TRUE)),
            ("PremiumIO", rng.choice(_CAP_TRUE)),
            ("VMDeploymentTypes", "IaaS"),
            ("vCPUsAvailable", str(vcpus)),
            ("ACUs", "160"),
            ("vCPUsPerCore", "2"),
            ("EphemeralOSDiskSupported", rng.choice(_CAP_TRUE)),
            ("EncryptionAtHostSupported", rng.choice(_CAP_TRUE)),
            ("AcceleratedNetworkingEnabled", rng.choice(_CAP_TRUE)),
            ("RdmaEnabled", "False"),
            ("MaxNetworkInterfaces", "4")]
    if rng.random() < 0.5:
        caps.append(("CachedDiskBytes", str(rng.choice([0, 53687091200, 274877906944, 999999999]))))
    if rng.random() < 0.2:
        caps.append(("NvmeDiskSizeInMiB", str(rng.choice([0, 440000, 915527, 7000000]))))
        caps.append(("SupportedEphemeralOSDiskPlacements", rng.choice(["ResourceDisk,CacheDisk,NvmeDisk", "NvmeDisk",
                                                                        "ResourceDisk,CacheDisk"])))
    if gpu is not None or rng.random() < 0.03:
        caps.append(("GPUs", str(rng.choice([1, 1, 2, 4, 8]))))
    if rng.random() < 0.3:
        caps.append(("UltraSSDAvailable", rng.choice(_CAP_TRUE)))
    if rng.random() < 0.1:
        caps.append(("TrustedLaunchDisabled", "True"))
    zones = rng.choice([["1", "2", "3"], ["1", "2", "3"], ["2", "3"], ["1"], []])
    zone_details = []
    if zones and rng.random() < 0.3:
        zone_details.append({"Name": rng.sample(zones, rng.randint(1, len(zones))),
                             "capabilities": [{"name": "UltraSSDAvailable", "value": "True"}]})
    restrictions = []
    if rng.random() < 0.08:
        restrictions.append({"type": "Zone", "values": [REGION], "reasonCode": "NotAvailableForSubscription",
                             "restrictionInfo": {"locations": [REGION], "zones": rng.sample(["1", "2", "3"], 1)}})
    if rng.random() < 0.03:
        restrictions.append({"type": "Location", "values": [REGION], "reasonCode": "NotAvailableForSubscription",
                             "restrictionInfo": {"locations": [REGION]}})
    return {"resourceType": "virtualMachines", "name": name, "tier": "Standard", "size": _size(name),
            "family": family, "locations": [REGION],
            "locationInfo": [{"location": REGION, "zones": zones, "zoneDetails": zone_details}],
            "capabilities": [{"name": k, "value": v} for k, v in caps], "restrictions": restrictions}


_ODD_INTS = [" 4", "4 ", "+4", "-2", "4.0", "0x10", "1e3", "1_000", "\u0664", "9223372036854775807",
             "9223372036854775808", "-9223372036854775809", "", "00004", "inf"]
_ODD_FLOATS = [" 16", "16 ", "+16", "16.", ".5e2", "1e400", "-1e400", "inf", "+Inf", "Infinity", "NaN", "nan",
               "0x1p4", "0x10", "1_6", "3.4999", "3.5", "1e-400", "0x1.8p3", "16e", "\u0661\u0666", "", "7.999",
               "4096", "9223372036854775807", "1e19"]
_ODD_SIZES = ["ND128isr_NDR_GB200_v6", "NP40mds_MI300X", "ND96is_MI300X_v5", "ND96isr_MI300X_v5", "D2s_v3\n",
              "d2s_v3", "D2S_V3", "M8-2ms", "M8-99999999999999999999ms", "DC2s_v3", "EC4as_v5", "D16darm_V3",
              "NC288ds_xl_RTXPRO6000BSE_v6", "NC36ds_xl_RTXPRO6000BSE_v6", "M416s_8_v2", "D2_v2_Promo",
              "ND128isr_GB300_v6", "NC24ads_A100_v4", "D2s_v10", ""]


def _odd(rng: random.Random, base: dict, i: int) -> dict:
    """One odd variation of a realistic SKU (a new name so it is compared on its own)."""
    sku = json.loads(json.dumps(base))
    kind = i % 24
    caps = sku["capabilities"]

    def setcap(name, value):
        for c in caps:
            if c["name"] == name:
                c["value"] = value
                return
        caps.append({"name": name, "value": value})

    if kind == 0:
        setcap("vCPUs", rng.choice(_ODD_INTS))
    elif kind == 1:
        setcap("MemoryGB", rng.choice(_ODD_FLOATS))
    elif kind == 2:
        setcap("GPUs", rng.choice(_ODD_INTS))
    elif kind == 3:
        sku["size"] = rng.choice(_ODD_SIZES)
        sku["name"] = "Standard_" + sku["size"].strip()
    elif kind == 4:
        # not `size`: a SKU without one makes the provider panic (UpdateInstanceTypes logs *sku.Size)
        sku.pop(rng.choice(["resourceType", "family", "locations", "locationInfo", "capabilities",
                            "restrictions"]))
    elif kind == 5:
        for c in caps:
            c["name"] = rng.choice([c["name"].lower(), c["name"].upper(), c["name"]])
    elif kind == 6:
        sku["restrictions"] = [{"type": rng.choice(["location", "LOCATION", "Location", "Zone", "zone"]),
                                "values": [rng.choice([REGION, "South Central US", "SouthCentralUS", "eastus"])],
                                "restrictionInfo": {"zones": rng.sample(["1", "2", "3"], rng.randint(0, 2))}}]
    elif kind == 7:
        li = sku.setdefault("locationInfo", [{"location": REGION, "zones": ["1", "2", "3"]}])[0]
        li["zones"] = li.get("zones") or ["1", "2", "3"]
        key = rng.choice(["Name", "name", "NAME", "nAmE"])
        li["zoneDetails"] = [{key: [rng.choice(li["zones"])],
                              rng.choice(["capabilities", "Capabilities"]): [
                                  {"name": rng.choice(["UltraSSDAvailable", "ultrassdavailable"]),
                                   "value": rng.choice(["True", "true", "False"])}]}]
        setcap("UltraSSDAvailable", rng.choice(["True", "False"]))
    elif kind == 8:
        sku["resourceType"] = rng.choice(["VirtualMachines", "virtualmachines", "disks", "", "hostGroups/hosts"])
    elif kind == 9:
        renamed = {"resourceType": "ResourceType", "capabilities": "Capabilities", "locationInfo": "LocationInfo",
                   "size": "Size", "name": "NAME", "restrictions": "Restrictions", "locations": "Locations"}
        k = rng.choice(list(renamed))
        if k in sku:
            sku[renamed[k]] = sku.pop(k)
    elif kind == 10:
        setcap("CpuArchitectureType", rng.choice(["arm64", "X64", "Arm64", "ppc64le", None]))
    elif kind == 11:
        caps[:] = [c for c in caps if c["name"] != "CpuArchitectureType"]
    elif kind == 12:
        setcap("EphemeralOSDiskSupported", "True")
        setcap("NvmeDiskSizeInMiB", rng.choice(["9223372036854775807", "17592186044416", "-5", "953", " 440000"]))
        setcap("SupportedEphemeralOSDiskPlacements", rng.choice(["NvmeDisk", "nvmedisk", "Nvme Disk", "ResourceDisk"]))
        setcap("MaxResourceVolumeMB", rng.choice(["8796093022208", "954", "0", "x"]))
        setcap("CachedDiskBytes", rng.choice(["0", "999999999", "1000000000", "-1"]))
    elif kind == 13:
        setcap(rng.choice(["vCPUs", "MemoryGB", "LowPriorityCapable", "PremiumIO"]), None)
    elif kind == 14:
        caps.insert(0, {"name": rng.choice(["vCPUs", "MemoryGB", "PremiumIO"]), "value": rng.choice(["1", "64", "False"])})
    elif kind == 15:
        li = sku.setdefault("locationInfo", [{"location": REGION}])[0]
        li["location"] = rng.choice(["South Central US", "SOUTHCENTRALUS", "eastus", " southcentralus ",
                                     "south\u00a0central\u3000us", "south\x1ccentralus"])
        li["zones"] = rng.choice([["1", "2", "3"], ["10", "2"], ["1", "1"], []])
    elif kind == 16:
        sku["locations"] = rng.choice([["eastus"], ["South Central US"], [], ["eastus", REGION]])
    elif kind == 17:
        setcap("HyperVGenerations", rng.choice(["", "V1", "v2", "V1,V2", "V2,V1", "1,2", "V 1"]))
    elif kind == 18:
        setcap("LowPriorityCapable", rng.choice(["True", "False", "TRUE", "yes", "1", ""]))
        sku.setdefault("locationInfo", [{"location": REGION}])[0]["zones"] = []
    elif kind == 19:
        sku["name"] = rng.choice([sku["name"].lower(), sku["name"].upper(), sku["name"] + "_Promo"])
    elif kind == 20:
        sku["locationInfo"] = sku.get("locationInfo", []) + [
            {"location": "eastus", "zones": ["1"], "zoneDetails": [
                {"Name": ["2"], "capabilities": [{"name": "UltraSSDAvailable", "value": "True"}]}]}]
    elif kind == 21:
        sku["name"] = rng.choice(["Standard_A1_v2", "Standard_B1s", "Standard_E64i_v3", "Standard_E64is_v3",
                                  "Basic_A2", "Standard_F1"])
    elif kind == 22:
        setcap("MemoryGB", rng.choice(["3.4999", "3.5", "0.75", "4", "2048", "12288", "24576.5"]))
        setcap("vCPUs", rng.choice(["1", "2", "3", "416", "1024"]))
    elif kind == 23:
        setcap("EncryptionAtHostSupported", rng.choice(["True", "False", None]))
        setcap("PremiumIO", rng.choice(["True", "tRUE", "False", "", None]))
    return sku


def generate(seed: int = 20260822, realistic: int = 900, odd: int = 700) -> list[list[dict]]:
    """Batches of SKUs, seeded so every run compares the same lists: first `realistic` SKUs with names
    from the known-SKU and GPU tables plus a few duplicate names (which one the provider keeps), then
    `odd` variations of them, each keeping its base's name, split so no batch repeats a name."""
    rng = random.Random(seed)
    families = known_sku_families()
    names = sorted(families)
    gpu_names = sorted({n for n in supported_gpus()})
    picked = rng.sample(names, min(realistic, len(names)))
    first = [_realistic(rng, n, families[n]) for n in picked]
    for g in rng.sample(gpu_names, min(60, len(gpu_names))):
        first.append(_realistic(rng, "Standard_" + _gpu_case(g), "standardNCFamily"))
    bases = list(first)
    for base in rng.sample(bases, 12):
        dup = json.loads(json.dumps(base))
        for c in dup["capabilities"]:
            if c["name"] == "vCPUs":
                c["value"] = rng.choice(["1", "64", "x"])
        first.insert(rng.randrange(len(first) + 1), dup)
    batches: list[list[dict]] = [first]
    taken: list[set[str]] = []
    for i in range(odd):
        sku = _odd(rng, rng.choice(bases), i)
        name = _go_name(sku)
        for j, names_in in enumerate(taken):
            if name not in names_in:
                names_in.add(name)
                batches[j + 1].append(sku)
                break
        else:
            taken.append({name})
            batches.append([sku])
    return batches


def _go_name(sku: dict) -> str:
    name = ""
    for k, v in sku.items():
        if k.lower() == "name" and isinstance(v, str):
            name = v
    return name


def _gpu_case(lower: str) -> str:
    """A GPU table key (`standard_nc24ads_a100_v4`) back in ARM casing (`NC24ads_A100_v4`)."""
    size = lower.split("_", 1)[1]
    parts = size.split("_")
    m = re.match(r"([a-z]+?)(\d+)([a-z]*)$", parts[0])
    head = (m.group(1).upper() + m.group(2) + m.group(3)) if m else parts[0].upper()
    rest = [p if re.fullmatch(r"v\d", p) else ("xl" if p == "xl" else p.upper()) for p in parts[1:]]
    return "_".join([head] + rest)


# == comparison =======================================================================================
def _req_view(req) -> tuple[str, tuple[str, ...]]:
    return req.operator, tuple(sorted(req.values))


def model_view(its: InstanceTypeSet) -> dict[str, dict[str, Any]]:
    out = {}
    for it in its:
        offerings = {}
        for o in it.offerings:
            offerings[(o.zone, o.capacity_type)] = (
                {k: _req_view(r) for k, r in o.requirements.items()}, o.price, o.available)
        out[it.name] = {
            "requirements": {k: _req_view(r) for k, r in it.requirements.items()},
            "offerings": offerings,
            "capacity": dict(it.capacity),
            "kubeReserved": dict(it.overhead.kube_reserved),
            "evictionThreshold": dict(it.overhead.eviction_threshold),
        }
    return out


def go_view(result: dict) -> dict[str, dict[str, Any]]:
    out = {}
    for it in result["instanceTypes"]:
        offerings = {}
        for o in it.get("offerings") or ():
            reqs = {k: (v["operator"], tuple(v["values"])) for k, v in o["requirements"].items()}
            key = (reqs["topology.kubernetes.io/zone"][1][0], reqs["karpenter.sh/capacity-type"][1][0])
            offerings[key] = (reqs, o["price"], o["available"])
        out[it["name"]] = {
            "requirements": {k: (v["operator"], tuple(v["values"])) for k, v in it["requirements"].items()},
            "offerings": offerings,
            "capacity": {k: int(v) for k, v in it["capacity"].items()},
            "kubeReserved": {k: int(v) for k, v in it["kubeReserved"].items()},
            "evictionThreshold": {k: int(v) for k, v in it["evictionThreshold"].items()},
        }
    return out


def model_for(skus: list[dict], result: dict, image_family: str, trusted_launch: bool = False) -> InstanceTypeSet:
    prices = result.get("prices") or {}

    def price(name: str, ct: str) -> float | None:
        p = (prices.get(name) or {}).get(ct)
        return None if p is None or p == 999.0 else p       # pricing.MissingPrice means no price
    nodeclass = NodeClassParams(image_family=image_family, trusted_launch=trusted_launch)
    return build_instance_types(skus, nodeclass, CLUSTER, "upstream",
                                prices=price, use_cache=False)


def sku_names(skus: list[dict]) -> list[str]:
    """Every SKU name as Go decodes it (case-insensitive `name` key, last wins)."""
    return sorted({_go_name(s) for s in skus})


def compare(skus: list[dict], result: dict, model: InstanceTypeSet) -> dict[str, list[str]]:
    """Category -> names that differ: kept (kept/dropped), requirements, offerings, capacity, overhead."""
    go, ours = go_view(result), model_view(model)
    diffs: dict[str, list[str]] = {"kept": [], "requirements": [], "offerings": [], "capacity": [], "overhead": []}
    for name in sku_names(skus):
        if (name in go) != (name in ours):
            diffs["kept"].append(name)
            continue
        if name not in go:
            continue
        g, o = go[name], ours[name]
        if g["requirements"] != o["requirements"]:
            diffs["requirements"].append(name)
        if g["offerings"] != o["offerings"]:
            diffs["offerings"].append(name)
        if g["capacity"] != o["capacity"]:
            diffs["capacity"].append(name)
        if (g["kubeReserved"], g["evictionThreshold"]) != (o["kubeReserved"], o["evictionThreshold"]):
            diffs["overhead"].append(name)
    return diffs


def explain(name: str, skus: list[dict], result: dict, model: InstanceTypeSet) -> str:
    """A readable side-by-side of one differing SKU (for assertion messages)."""
    go, ours = go_view(result).get(name), model_view(model).get(name)
    sku = [s for s in skus if any(k.lower() == "name" and v == name for k, v in s.items())]
    lines = [f"SKU {name}: {json.dumps(sku)[:1500]}", f"  model: {model.explain(name)}",
             f"  provider: {'kept' if go else 'dropped'}"]
    if go and ours:
        for part in ("requirements", "capacity", "kubeReserved", "evictionThreshold"):
            for k in sorted(set(go[part]) | set(ours[part])):
                if go[part].get(k) != ours[part].get(k):
                    lines.append(f"  {part}[{k}]: provider={go[part].get(k)} model={ours[part].get(k)}")
        for k in sorted(set(go["offerings"]) | set(ours["offerings"])):
            if go["offerings"].get(k) != ours["offerings"].get(k):
                lines.append(f"  offering{k}: provider={go['offerings'].get(k)} model={ours['offerings'].get(k)}")
    return "\n".join(lines)
