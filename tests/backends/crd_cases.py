"""Seeded objects aimed at every x-kubernetes-validations rule of the provider v1.14.0 CRDs (NodePool,
NodeClaim, AKSNodeClass; github.com/Azure/karpenter-provider-azure v1.14.0 pkg/apis/crds), for the
embedded judge against a real API server (tests/backends/test_cel_agreement.py, bench/cel_agreement.py).

Each generator targets one rule's fields with values on both sides of it (and values the schema
itself refuses: wrong types, bad patterns, out-of-range numbers, missing required fields,
duplicate list-map keys), so both the rule's verdict and the way a blocking schema error stops the
rules are compared. Update cases (an object created, then replaced) reach the transition rules
(`oldSelf`). Deterministic for a seed.
"""
from __future__ import annotations

import copy
import random
from dataclasses import dataclass

REF = {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"}


@dataclass
class Case:
    target: str                 # the rule (or rule family) the object is aimed at
    obj: dict                   # what is written
    old: dict | None = None     # created first (an update case), must be admitted


def _pick(rng: random.Random, *pools):
    return rng.choice([v for pool in pools for v in pool])


# -- AKSNodeClass -------------------------------------------------------------------------------------
def nodeclass(name: str, spec: dict) -> dict:
    return {"apiVersion": "karpenter.azure.com/v1beta1", "kind": "AKSNodeClass", "metadata": {"name": name},
            "spec": spec}


class _Absent:
    """A field left out (survives copy.deepcopy)."""

    def __deepcopy__(self, memo):
        return self

    def __repr__(self) -> str:
        return "ABSENT"


ABSENT = _Absent()


def _put(d: dict, key: str, value) -> dict:
    if value is not ABSENT:
        d[key] = value
    return d


def _int_around(rng: random.Random, lo: int, hi: int):
    """Integers at and beside the bounds, inside, and the odd wrong type."""
    return _pick(rng, [lo - 1, lo, lo + 1, hi - 1, hi, hi + 1, rng.randint(lo, hi), rng.randint(lo, hi)],
                 [rng.randint(lo, hi) for _ in range(6)], [ABSENT, ABSENT, str(lo), 1.5])


def fips(rng: random.Random, name: str) -> Case:
    spec: dict = {}
    _put(spec, "fipsMode", _pick(rng, [ABSENT, "FIPS", "FIPS", "Disabled", "fips"]))
    _put(spec, "imageFamily", _pick(rng, [ABSENT, "Ubuntu", "Ubuntu2204", "Ubuntu2404", "AzureLinux", "Windows"]))
    return Case("AKSNodeClass spec: FIPS imageFamily", nodeclass(name, spec))


def swap(rng: random.Random, name: str) -> Case:
    spec: dict = {}
    os_cfg = _pick(rng, [ABSENT, {}, {"swapFileSize": "1G"}, {"swapFileSize": "512Mi"}, {"swapFileSize": "10"},
                         {"swapFileSize": "abc"}, {"swapFileSize": "4Gi"}])
    kubelet = _pick(rng, [ABSENT, {}, {"failSwapOn": False}, {"failSwapOn": False}, {"failSwapOn": True},
                          {"failSwapOn": "false"}])
    _put(spec, "linuxOSConfig", copy.deepcopy(os_cfg))
    _put(spec, "kubelet", copy.deepcopy(kubelet))
    return Case("AKSNodeClass spec: swap needs failSwapOn false", nodeclass(name, spec))


def image_gc(rng: random.Random, name: str) -> Case:
    kubelet: dict = {}
    high = _int_around(rng, 0, 100)
    low = _pick(rng, [high, high - 1, high + 1] if isinstance(high, int) else [50], [_int_around(rng, 0, 100)])
    _put(kubelet, "imageGCHighThresholdPercent", high)
    _put(kubelet, "imageGCLowThresholdPercent", low)
    return Case("AKSNodeClass kubelet: imageGC high > low", nodeclass(name, {"kubelet": kubelet}))


SYSCTL_PAIRS = [("netCoreRmemDefault", "netCoreRmemMax"), ("netCoreWmemDefault", "netCoreWmemMax"),
                ("netIPv4NeighDefaultGcThresh1", "netIPv4NeighDefaultGcThresh2"),
                ("netIPv4NeighDefaultGcThresh2", "netIPv4NeighDefaultGcThresh3")]


def sysctl_pair(bounds: dict[str, tuple[int, int]]):
    def gen(rng: random.Random, name: str) -> Case:
        a, b = rng.choice(SYSCTL_PAIRS)
        lo, hi = bounds[a]
        sysctls: dict = {}
        va = _int_around(rng, lo, hi)
        vb = _pick(rng, [va, va + 1, va - 1] if isinstance(va, int) else [lo], [_int_around(rng, *bounds[b])])
        _put(sysctls, a, va)
        _put(sysctls, b, vb)
        return Case(f"AKSNodeClass sysctls: {a} <= {b}", nodeclass(name, {"linuxOSConfig": {"sysctls": sysctls}}))
    return gen


PORTS = [0, 1, 1023, 1024, 1025, 32767, 32768, 32769, 60998, 60999, 61000, 65534, 65535, 65536, 99999,
         9223372036854775807, 99999999999999999999]
BAD_RANGES = ["", "32768", "32768  60999", " 32768 60999", "32768 60999 ", "a b", "32768-60999", "+1024 32768",
              "\u0661\u0660\u0662\u0664 32768", "1024 32768\n", "-1 5", "01024 032768", "1024 32768 40000",
              "1024\t32768", "0x400 32768", "1_024 32768", "1024 ", " ", "60999 32768"]


def port_range(rng: random.Random, name: str) -> Case:
    if rng.random() < 0.7:
        value = f"{rng.choice(PORTS)} {rng.choice(PORTS)}"
    else:
        value = rng.choice(BAD_RANGES)
    sysctls = {"netIPv4IPLocalPortRange": value}
    if rng.random() < 0.2:
        sysctls["netCoreRmemDefault"] = 212992
    return Case("AKSNodeClass sysctls: netIPv4IPLocalPortRange (split)",
                nodeclass(name, {"linuxOSConfig": {"sysctls": sysctls}}))


ZONES = [".", "cluster.local", "foo.cluster.local", "example.com", "svc.cluster.local", "contoso.com.",
         "bad zone!", "", "a" * 70 + ".com"]


def _override(rng: random.Random, zone, clean: bool = False) -> dict:
    o = {"zone": zone, "forwardDestination": rng.choice(["ClusterCoreDNS", "VnetDNS"]),
         "forwardPolicy": rng.choice(["Sequential", "RoundRobin", "Random"]), "maxConcurrent": rng.choice([0, 100, 1000]),
         "protocol": rng.choice(["PreferUDP", "ForceTCP"]), "queryLogging": rng.choice(["Error", "Log"]),
         "serveStale": rng.choice(["Verify", "Immediate", "Disable"]), "serveStaleDuration": rng.choice(["1h", "30s"]),
         "cacheDuration": rng.choice(["1h", "10m"])}
    if not clean and rng.random() < 0.05:
        del o[rng.choice(sorted(o))]
    if not clean and rng.random() < 0.03:
        o["forwardDestination"] = "Nowhere"
    return o


def _valid_overrides(rng: random.Random, vnet: bool) -> list[dict]:
    """Overrides every localDNS rule accepts: '.' and 'cluster.local' present, cluster.local to
    ClusterCoreDNS, from vnetDNSOverrides '.' and external zones to VnetDNS, no Verify with ForceTCP."""
    out = []
    for zone in [".", "cluster.local"] + rng.sample(["example.com", "svc.cluster.local"], rng.choice([0, 1])):
        o = _override(rng, zone, clean=True)
        o.update({"serveStale": "Immediate"} if o["protocol"] == "ForceTCP" else {})
        internal = zone.endswith("cluster.local")
        o["forwardDestination"] = "ClusterCoreDNS" if internal else ("VnetDNS" if vnet else rng.choice(["ClusterCoreDNS", "VnetDNS"]))
        out.append(o)
    rng.shuffle(out)
    return out


def local_dns(rng: random.Random, name: str) -> Case:
    if rng.random() < 0.35:
        dns = {"mode": rng.choice(["Preferred", "Required", "Disabled"]),
               "kubeDNSOverrides": _valid_overrides(rng, False), "vnetDNSOverrides": _valid_overrides(rng, True)}
        return Case("AKSNodeClass localDNS: overrides rules", nodeclass(name, {"localDNS": dns}))

    def overrides():
        zones = ["."] * (rng.random() < 0.9) + ["cluster.local"] * (rng.random() < 0.9)
        zones += rng.sample(ZONES, rng.choice([0, 0, 1, 2]))
        if rng.random() < 0.05 and zones:
            zones.append(zones[0])        # a duplicate list-map key
        rng.shuffle(zones)
        return [_override(rng, z) for z in zones]
    dns = {"mode": rng.choice(["Preferred", "Required", "Disabled"]), "kubeDNSOverrides": overrides(),
           "vnetDNSOverrides": overrides()}
    if rng.random() < 0.05:
        del dns[rng.choice(sorted(dns))]
    return Case("AKSNodeClass localDNS: overrides rules", nodeclass(name, {"localDNS": dns}))


TAG_KEYS = ["env", "team", "a" * 511, "b" * 512, "c" * 513, "with<angle", "with>angle", "per%cent", "amp&", "q?",
            "back\\slash", "spaces ok", "unicode-\u00e9", "d" * 600 + "<"]


def tags(rng: random.Random, name: str) -> Case:
    out = {}
    for key in rng.sample(TAG_KEYS, rng.choice([0, 1, 1, 2, 3])):
        out[key] = rng.choice(["v", "x" * 255, "y" * 256, "z" * 257, "", "v<>"])
    if rng.random() < 0.03:
        out["num"] = 5          # a value of the wrong type
    return Case("AKSNodeClass tags: key and value rules", nodeclass(name, {"tags": out}))


# -- NodePool and NodeClaim ------------------------------------------------------------------------------
def nodepool(name: str, spec_extra: dict | None = None, labels: dict | None = None,
             requirements: list | None = None, ref: dict | None = None) -> dict:
    tmpl_spec: dict = {"nodeClassRef": copy.deepcopy(REF) if ref is None else ref,
                       "requirements": [] if requirements is None else requirements}
    spec = {"template": {"metadata": {"labels": labels or {}}, "spec": tmpl_spec}}
    spec.update(spec_extra or {})
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": name}, "spec": spec}


def nodeclaim(name: str, requirements: list | None = None, ref: dict | None = None) -> dict:
    return {"apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": name},
            "spec": {"nodeClassRef": copy.deepcopy(REF) if ref is None else ref,
                     "requirements": [] if requirements is None else requirements}}


LABEL_KEYS = [
    "kubernetes.azure.com/agentpool", "kubernetes.azure.com/mode", "foo.kubernetes.azure.com/x",
    "kubernetes.azure.com/ebpf-dataplane", "kubernetes.azure.com/cluster", "kubernetes.azure.com/hostedvm",
    "app.kubernetes.io/x", "kubernetes.io/custom", "k8s.io/x", "node-restriction.kubernetes.io/x",
    "node.kubernetes.io/x", "beta.kubernetes.io/arch", "topology.kubernetes.io/zone", "kubernetes.io/hostname",
    "karpenter.sh/nodepool", "karpenter.sh/capacity-type", "karpenter.sh/foo", "my.karpenter.sh/x",
    "karpenter.sh", "karpenter.azure.com/sku-name", "karpenter.azure.com/sku-hyperv-generation",
    "karpenter.azure.com/aksnodeclass", "karpenter.azure.com/placement-scope", "xkarpenter.azure.com/y",
    "agentpool", "storageprofile", "storagetier", "accelerator", "example.com/x", "plain", "team",
    "Upper.Case/x", "-bad", "a/b/c", "x" * 64, "dom.example/" + "n" * 63,
]
LABEL_VALUES = ["x", "", "v1.2", "-bad", "a" * 63, "a" * 64, "with space", "ok_value"]


def nodepool_labels(rng: random.Random, name: str) -> Case:
    labels = {k: rng.choice(LABEL_VALUES[:3] * 3 + LABEL_VALUES) for k in rng.sample(LABEL_KEYS, rng.choice([1, 1, 2, 3]))}
    if rng.random() < 0.03:
        labels = {f"k{i}": "v" for i in range(101)}     # maxProperties
    return Case("NodePool template labels: restricted keys", nodepool(name, labels=labels))


OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte", "Bogus"]
VALUES = [[], ["1"], ["0"], ["-1"], ["x"], ["1", "2"], ["99999999999999999999"], ["+5"], [" 5"], ["5"],
          ["a", "b", "c"], ["01"]]


def _requirement(rng: random.Random) -> dict:
    req: dict = {"key": rng.choice(LABEL_KEYS + ["node.kubernetes.io/instance-type", "kubernetes.io/arch"] * 3),
                 "operator": rng.choice(OPERATORS[:8] * 2 + OPERATORS)}
    if rng.random() < 0.85:
        req["values"] = list(rng.choice(VALUES))
    if rng.random() < 0.3:
        req["minValues"] = rng.choice([1, 2, 3, 0, 51, 2])
    if rng.random() < 0.02:
        del req["key"]
    return req


def nodepool_requirements(rng: random.Random, name: str) -> Case:
    reqs = [_requirement(rng) for _ in range(rng.choice([1, 1, 2, 3]))]
    return Case("NodePool requirements: key and list rules", nodepool(name, requirements=reqs))


def nodeclaim_requirements(rng: random.Random, name: str) -> Case:
    reqs = [_requirement(rng) for _ in range(rng.choice([1, 1, 2, 3]))]
    return Case("NodeClaim requirements: key and list rules", nodeclaim(name, requirements=reqs))


REF_VALUES = ["", "karpenter.azure.com", "AKSNodeClass", "default", "a/b", ABSENT]


def _ref(rng: random.Random) -> dict:
    ref = copy.deepcopy(REF)
    for field in ("group", "kind", "name"):
        if rng.random() < 0.35:
            v = rng.choice(REF_VALUES)
            if v is ABSENT:
                del ref[field]
            else:
                ref[field] = v
    return ref


def nodepool_ref(rng: random.Random, name: str) -> Case:
    return Case("NodePool nodeClassRef: not empty", nodepool(name, ref=_ref(rng)))


def nodeclaim_ref(rng: random.Random, name: str) -> Case:
    return Case("NodeClaim nodeClassRef: not empty", nodeclaim(name, ref=_ref(rng)))


LIMITS = [ABSENT, {}, {"nodes": "5"}, {"nodes": 5}, {"cpu": "10"}, {"nodes": "5", "cpu": "1"}, {"memory": "10Gi"},
          {"nodes": "x"}, {"nodes": True}]


def nodepool_static(rng: random.Random, name: str) -> Case:
    extra: dict = {}
    _put(extra, "replicas", _pick(rng, [ABSENT, 0, 3, 3, -1, "3"]))
    _put(extra, "limits", copy.deepcopy(rng.choice(LIMITS)))
    _put(extra, "weight", _pick(rng, [ABSENT, ABSENT, 1, 50, 100, 0, 101]))
    return Case("NodePool spec: static NodePool rules", nodepool(name, spec_extra=extra))


SCHEDULES = [ABSENT, "@daily", "0 9 * * 1-5", "* * * * *", "bad", "@hourly"]
DURATIONS = [ABSENT, "1h", "10m", "1h30m", "30s", "bad", "2h0s"]


def nodepool_budgets(rng: random.Random, name: str) -> Case:
    budgets = []
    for _ in range(rng.choice([0, 1, 1, 2, 3])):
        b: dict = {"nodes": rng.choice(["10%", "0", "5", "100%", "101%", "x"] + ["10%"] * 4)}
        _put(b, "schedule", rng.choice(SCHEDULES))
        _put(b, "duration", rng.choice(DURATIONS))
        if rng.random() < 0.2:
            b["reasons"] = rng.choice([["Empty"], ["Drifted", "Underutilized"], ["Empty", "Empty"], ["Other"]])
        budgets.append(b)
    disruption: dict = {"consolidateAfter": rng.choice(["0s", "30s", "Never", "1m", "bad"])}
    if budgets or rng.random() < 0.5:
        disruption["budgets"] = budgets
    if rng.random() < 0.05:
        del disruption["consolidateAfter"]
    return Case("NodePool disruption budgets: schedule with duration", nodepool(name, spec_extra={"disruption": disruption}))


def nodepool_transition(rng: random.Random, name: str) -> Case:
    """An update: the static/dynamic switch and nodeClassRef group/kind immutability (oldSelf)."""
    old = nodepool(name, spec_extra={"replicas": 2} if rng.random() < 0.5 else {})
    new = copy.deepcopy(old)
    spec, ref = new["spec"], new["spec"]["template"]["spec"]["nodeClassRef"]
    for _ in range(rng.choice([1, 1, 2])):
        change = rng.choice(["replicas", "group", "kind", "name", "weight", "labels"])
        if change == "replicas":
            if "replicas" in spec and rng.random() < 0.6:
                del spec["replicas"]
            else:
                spec["replicas"] = rng.choice([0, 1, 5])
        elif change in ("group", "kind", "name"):
            ref[change] = rng.choice([ref[change], ref[change] + "x", ""])
        elif change == "weight":
            spec["weight"] = rng.choice([1, 10])
        else:
            new["spec"]["template"]["metadata"]["labels"] = {rng.choice(LABEL_KEYS[:20]): "x"}
    return Case("NodePool update: transition rules", new, old)


def nodeclaim_transition(rng: random.Random, name: str) -> Case:
    """An update of a NodeClaim: `spec is immutable` (self == oldSelf)."""
    old = nodeclaim(name, requirements=[{"key": "kubernetes.io/arch", "operator": "In", "values": ["amd64"]}])
    new = copy.deepcopy(old)
    change = rng.choice(["none", "values", "ref", "add", "expire"])
    if change == "values":
        new["spec"]["requirements"][0]["values"] = ["arm64"]
    elif change == "ref":
        new["spec"]["nodeClassRef"]["name"] = "other"
    elif change == "add":
        new["spec"]["requirements"].append({"key": "example.com/x", "operator": "Exists"})
    elif change == "expire":
        new["spec"]["expireAfter"] = rng.choice(["720h", "1h"])
    return Case("NodeClaim update: spec is immutable", new, old)


def aksnodeclass_update(rng: random.Random, name: str) -> Case:
    """An update of an AKSNodeClass whose rules hold, to a random rule-targeted spec (ratcheting:
    the unchanged parts keep their verdicts)."""
    old = nodeclass(name, {"imageFamily": "AzureLinux"})
    new = rng.choice([fips, swap, image_gc, port_range, tags])(rng, name).obj
    return Case("AKSNodeClass update", new, old)


def generators(aks_schema: dict):
    """(weight, generator) for every target; `aks_schema` gives the sysctls' bounds."""
    sysctl_props = aks_schema["properties"]["linuxOSConfig"]["properties"]["sysctls"]["properties"]
    bounds = {k: (v.get("minimum", 0), v.get("maximum", 2 ** 31 - 1)) for k, v in sysctl_props.items()
              if v.get("type") == "integer"}
    return [(3, fips), (3, swap), (3, image_gc), (4, sysctl_pair(bounds)), (6, port_range), (5, local_dns),
            (4, tags), (1, aksnodeclass_update),
            (5, nodepool_labels), (6, nodepool_requirements), (5, nodeclaim_requirements), (2, nodepool_ref),
            (3, nodeclaim_ref), (3, nodepool_static), (3, nodepool_budgets), (2, nodepool_transition),
            (1, nodeclaim_transition)]


def cases(seed: int, n: int, aks_schema: dict) -> list[Case]:
    rng = random.Random(seed)
    gens = generators(aks_schema)
    weights = [w for w, _ in gens]
    out = []
    for i in range(n):
        gen = rng.choices([g for _, g in gens], weights)[0]
        out.append(gen(rng, f"c{seed}-{i}"))
    return out


# -- judging on both sides ---------------------------------------------------------------------------------
def upstream_crds() -> list[dict]:
    """The provider v1.14.0 module's three CRDs, verbatim (from the Go module cache, never committed)."""
    import yaml

    from harness.backends.binaries import controlplane as binaries
    from harness.backends import crds
    root = binaries.go_module_dir(crds.AZURE_MODULE, "v1.14.0") / "pkg/apis/crds"
    out = []
    for f in ("karpenter.sh_nodepools.yaml", "karpenter.sh_nodeclaims.yaml", "karpenter.azure.com_aksnodeclasses.yaml"):
        crd = yaml.safe_load((root / f).read_text())
        crd.pop("status", None)
        for k in ("creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"):
            crd["metadata"].pop(k, None)
        crd["metadata"].setdefault("annotations", {})[crds.HASH_ANNOTATION] = "upstream-verbatim"
        out.append(crd)
    return out


def _verdict(fn) -> tuple:
    from harness.backends.base import APIRejected
    try:
        stored = fn()
    except APIRejected as e:
        return ("refused", e.status, e.reason, tuple(sorted((c.field, c.message) for c in e.causes)))
    return ("admitted", stored)


def _real_write(client, case: Case) -> tuple:
    from harness.backends.kinds import KINDS
    from harness.backends.kubeclient import path_for
    if case.old is None:
        return _verdict(lambda: client.create(case.obj, dry_run=True))
    created = client.create(case.old)
    try:
        body = copy.deepcopy(case.obj)
        body["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
        k = KINDS[body["kind"]]
        return _verdict(lambda: client.request("PUT", path_for(k, body["metadata"]["name"]), body,
                                               params={"dryRun": "All"}))
    finally:
        client.request("DELETE", path_for(KINDS[case.old["kind"]], case.old["metadata"]["name"]), ok_missing=True)


def _embedded_write(cluster, case: Case) -> tuple:
    kind, name = case.obj["kind"], case.obj["metadata"]["name"]
    if case.old is None:
        out = _verdict(lambda: cluster.create(case.obj))
    else:
        created = cluster.create(case.old)
        body = copy.deepcopy(case.obj)
        body["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
        out = _verdict(lambda: cluster.update(body))
    if cluster.get(kind, name) is not None:
        cluster.delete(kind, name)
    return out


def _comparable(v: tuple, kind: str) -> tuple:
    """Refusals compare status, reason and the causes (field, message) as a set (the real server lists
    sibling errors in Go map order); admissions compare the stored spec of an AKSNodeClass (defaults;
    the embedded store keeps a NodePool/NodeClaim as written)."""
    if v[0] == "admitted":
        return ("admitted", v[1].get("spec") if kind == "AKSNodeClass" else None)
    return v


@dataclass
class Result:
    case: Case
    real: tuple
    embedded: tuple

    @property
    def agree(self) -> bool:
        kind = self.case.obj["kind"]
        return _comparable(self.real, kind) == _comparable(self.embedded, kind)


def judge_all(local_cluster, the_cases: list[Case], profile: str = "upstream") -> list[Result]:
    """Each case on the real API server (provider v1.14.0's CRDs installed verbatim) and on the
    embedded store under `profile`. The local cluster gets the profile's CRDs back afterwards."""
    import time

    from harness.backends import crds
    from harness.backends.embedded import EmbeddedCluster
    client = local_cluster.admin
    written = crds.apply_crds(client, upstream_crds())
    crds.wait_established(client, [c["metadata"]["name"] for c in upstream_crds()])
    if written:
        time.sleep(2.0)     # the API server swaps the CRD's validators shortly after Established
    emb = EmbeddedCluster(profile)
    out = []
    try:
        for case in the_cases:
            out.append(Result(case, _real_write(client, case), _embedded_write(emb, case)))
    finally:
        local_cluster.install_profile(profile, force=True)
    return out


def rule_coverage(results: list[Result], aks_schema: dict, np_schema: dict, nc_schema: dict) -> dict:
    """Per rule of the three CRDs (kind, path, message): how many cases the real server refused with
    the rule's message (or its evaluation error), and how many targeted cases it admitted."""
    rules: dict[tuple[str, str, str], list[int]] = {}

    def walk(kind, node, path):
        for r in node.get("x-kubernetes-validations") or ():
            rules[(kind, path, r["message"])] = [0, 0]
        for k, sub in (node.get("properties") or {}).items():
            walk(kind, sub, f"{path}.{k}")
        if isinstance(node.get("items"), dict):
            walk(kind, node["items"], f"{path}[]")
        if isinstance(node.get("additionalProperties"), dict):
            walk(kind, node["additionalProperties"], f"{path}.*")
    walk("AKSNodeClass", aks_schema, "spec")
    walk("NodePool", np_schema, "spec")
    walk("NodeClaim", nc_schema, "spec")
    import re
    for res in results:
        kind = res.case.obj["kind"]
        messages = {m for _f, m in res.real[3]} if res.real[0] == "refused" else set()
        for (k, path, msg), counts in rules.items():
            if k != kind:
                continue
            hit = any(m == msg or m.endswith(f"evaluating rule: {msg}") for m in messages)
            if hit:
                counts[0] += 1
            elif res.real[0] == "admitted" and _present(res.case.obj.get("spec"), re.split(r"\.", path)[1:]):
                counts[1] += 1
    return rules


def _present(value, parts: list[str]) -> bool:
    """Whether the object has the node a rule sits on (so an admission means the rule held there)."""
    if not parts:
        return value is not None
    head, rest = parts[0], parts[1:]
    if head.endswith("[]"):
        key = head[:-2]
        items = value.get(key) if isinstance(value, dict) else None
        return isinstance(items, list) and any(_present(i, rest) for i in items)
    if head == "*":
        return isinstance(value, dict) and any(_present(v, rest) for v in value.values())
    return isinstance(value, dict) and head in value and _present(value[head], rest)
