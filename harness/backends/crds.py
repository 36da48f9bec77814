"""The provider's real CRDs, with a profile's label rules, for a real API server to judge.

Sources (Go module proxy, never committed; they live in the Go module cache and the harness cache):
  * Karpenter core `sigs.k8s.io/karpenter@v1.14.0` `pkg/apis/crds/karpenter.sh_nodepools.yaml`,
    `karpenter.sh_nodeclaims.yaml`;
  * Azure provider `github.com/Azure/karpenter-provider-azure@v1.14.0`
    `pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml` (override with AZURE_PROVIDER_VERSION).

What upstream does and we repeat (github.com/Azure/karpenter-provider-azure v1.14.0
pkg/apis/crds/karpenter.sh_nodepools.yaml): the provider's NodePool/NodeClaim CRDs are
core's, with `hack/validation/{labels,requirements}.sh` yq patches replacing the label/requirement-key
rules. Here the replacement rules come from the profile data via `harness.model.crd.rules`:
  * NodePool `spec.template.metadata.labels.x-kubernetes-validations` = label_map_rules(NODEPOOL_LABELS)
    (replacing core's own three label rules);
  * `...requirements.items.properties.key.x-kubernetes-validations` = requirement_key_rules(target) for
    NodePool `spec.template.spec.requirements` (NODEPOOL_REQUIREMENTS) and NodeClaim `spec.requirements`
    (NODECLAIM_REQUIREMENTS);
  * the `requirements` array's own `x-kubernetes-validations` = requirement_list_rules(profile);
  * `...requirements.items.properties.operator.enum` = profile.crd["operators"].

The AKSNodeClass CRD is installed as the provider ships it: v1beta1 is the storage version, with
its defaults (imageFamily Ubuntu, osDiskSizeGB 128, kubelet and gpu defaults), enums, bounds and CEL
rules (e.g. "FIPS is not yet supported for Ubuntu2204 or Ubuntu2404"), which the embedded backend
repeats from the same data (harness.model.crd.aksnodeclass). Only an older module without v1beta1
(v0.7.0) gets a v1beta1 with an open schema added, so its stale v1alpha2 defaults are not injected.
"""
from __future__ import annotations

import copy
import hashlib
import json
import os
import time
from pathlib import Path

from harness.backends.binaries import controlplane as binaries
from harness.backends.base import APIRejected
from harness.backends.kubeclient import RestClient
from harness.model.data import load_yaml

CORE_MODULE = "sigs.k8s.io/karpenter"
AZURE_MODULE = "github.com/Azure/karpenter-provider-azure"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
HASH_ANNOTATION = "karpenter-harness/render-hash"
PROFILE_ANNOTATION = "karpenter-harness/profile"
RENDER_REVISION = "7"    # bump when the patching below changes (part of the cache key)

NODEPOOLS = "nodepools.karpenter.sh"
NODECLAIMS = "nodeclaims.karpenter.sh"
NODEOVERLAYS = "nodeoverlays.karpenter.sh"
AKSNODECLASSES = "aksnodeclasses.karpenter.azure.com"


class CRDError(RuntimeError):
    pass


def module_versions() -> dict[str, str]:
    return {CORE_MODULE: os.environ.get("KARPENTER_CORE_VERSION", "v1.14.0"),
            AZURE_MODULE: os.environ.get("AZURE_PROVIDER_VERSION", "v1.14.0")}


def _upstream_files() -> dict[str, Path]:
    v = module_versions()
    core = binaries.go_module_dir(CORE_MODULE, v[CORE_MODULE]) / "pkg/apis/crds"
    azure = binaries.go_module_dir(AZURE_MODULE, v[AZURE_MODULE]) / "pkg/apis/crds"
    return {NODEPOOLS: core / "karpenter.sh_nodepools.yaml",
            NODECLAIMS: core / "karpenter.sh_nodeclaims.yaml",
            NODEOVERLAYS: core / "karpenter.sh_nodeoverlays.yaml",
            AKSNODECLASSES: azure / "karpenter.azure.com_aksnodeclasses.yaml"}


def _render_key(profile) -> str:
    here = Path(__file__).read_bytes()
    try:
        from harness.model.crd import rules as crdrules
        rules_src = Path(crdrules.__file__).read_bytes()
    except Exception:   # noqa: BLE001
        rules_src = b""
    h = hashlib.sha256()
    for part in (RENDER_REVISION, json.dumps(module_versions(), sort_keys=True),
                 json.dumps(profile.raw, sort_keys=True, default=str)):
        h.update(part.encode())
    h.update(here)
    h.update(rules_src)
    return h.hexdigest()[:16]


def _version(crd: dict, name: str) -> dict:
    for v in crd["spec"]["versions"]:
        if v["name"] == name:
            return v
    raise CRDError(f"{crd['metadata']['name']} has no version {name}")


def _at(schema: dict, dotted: str) -> dict:
    node = schema
    for part in dotted.split("."):
        if part == "[]":
            node = node["items"]
        else:
            try:
                node = node["properties"][part]
            except KeyError:
                raise CRDError(f"schema path {dotted!r} not found at {part!r}") from None
    return node


def _cel(rendered) -> list[dict]:
    return [{"message": r.message, "rule": r.rule} for r in rendered]


def _patch_requirements(req: dict, profile, target: str) -> None:
    from harness.model.crd import rules as crdrules
    crdrules.patch_requirements(req, profile, target)


def _release_spec(crd: dict, profile, kind: str) -> bool:
    """Give the CRD's v1 version the release's own `spec` schema (the profile's, derived from the release's CRD by
    harness.model.sync, its label and requirement rules rendered in: harness.model.crd.rules.spec_schema, the one the
    embedded API server judges with), so a field or value the release lacks is pruned or refused as that release's
    API server does (spec.replicas before core v1.8.0, consolidationPolicy Balanced before v1.14.0); the scale
    subresource goes where the release has none. False (nothing changed) for a profile without a v1 schema."""
    from harness.model.crd import rules as crdrules
    key = {"NodePool": "nodePool", "NodeClaim": "nodeClaim"}[kind]
    spec = crdrules.spec_schema(profile, kind)
    if spec is None or (profile.raw.get(key) or {}).get("version") != "v1":
        return False
    version = _version(crd, "v1")
    version["schema"]["openAPIV3Schema"]["properties"]["spec"] = copy.deepcopy(spec)
    if profile.crd_scale_replicas_path(kind) is None:
        (version.get("subresources") or {}).pop("scale", None)
    return True


def _patch_nodepool(crd: dict, profile) -> None:
    from harness.model.crd import rules as crdrules
    if _release_spec(crd, profile, "NodePool"):
        return
    schema = _version(crd, "v1")["schema"]["openAPIV3Schema"]
    labels = _at(schema, "spec.template.metadata.labels")
    rules = _cel(crdrules.label_map_rules(profile, crdrules.NODEPOOL_LABELS))
    if rules:
        labels["x-kubernetes-validations"] = rules
    else:
        labels.pop("x-kubernetes-validations", None)
    _patch_requirements(_at(schema, "spec.template.spec.requirements"), profile, crdrules.NODEPOOL_REQUIREMENTS)


def _patch_nodeclaim(crd: dict, profile) -> None:
    from harness.model.crd import rules as crdrules
    if _release_spec(crd, profile, "NodeClaim"):
        return
    schema = _version(crd, "v1")["schema"]["openAPIV3Schema"]
    _patch_requirements(_at(schema, "spec.requirements"), profile, crdrules.NODECLAIM_REQUIREMENTS)


def _patch_nodeoverlay(crd: dict, profile) -> None:
    """The release's own NodeOverlay `spec` schema, the one the embedded API server judges with
    (harness.model.crd.rules.spec_schema: the provider's requirement-key rules rendered from the profile). A
    release without the kind keeps core's CRD installed; its objects are refused before they are sent
    (harness.model.crd.apiversions overlay_rejection)."""
    from harness.model.crd import rules as crdrules
    spec = crdrules.spec_schema(profile, "NodeOverlay")
    if spec is not None:
        _version(crd, "v1alpha1")["schema"]["openAPIV3Schema"]["properties"]["spec"] = copy.deepcopy(spec)


def _patch_aksnodeclass(crd: dict, profile) -> None:
    """The module's v1beta1 AKSNodeClass is installed unchanged (defaults and CEL rules included)
    when the profile carries its admission schema (harness.model.crd.aksnodeclass). A profile without
    one (a provider version the proxy does not serve), or a module without v1beta1 (v0.7.0), gets a
    v1beta1 storage version with an open spec: the object is stored as written, as on embedded."""
    names = [v["name"] for v in crd["spec"]["versions"]]
    if "v1beta1" in names and profile.aks_nodeclass_schema is not None:
        return
    if "v1beta1" not in names:
        crd["spec"]["versions"].append(copy.deepcopy(crd["spec"]["versions"][-1]) | {"name": "v1beta1"})
    v1b1 = _version(crd, "v1beta1")
    for v in crd["spec"]["versions"]:
        v["served"] = True
        v["storage"] = v["name"] == "v1beta1"
    props = v1b1["schema"]["openAPIV3Schema"].setdefault("properties", {})
    for part in ("spec", "status"):
        props[part] = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    v1b1.setdefault("subresources", {"status": {}})
    v1b1.pop("additionalPrinterColumns", None)


def _strip(crd: dict) -> dict:
    """Keep what `kubectl apply` would send: drop status and server-owned metadata."""
    crd.pop("status", None)
    md = crd.setdefault("metadata", {})
    for k in ("creationTimestamp", "resourceVersion", "uid", "generation", "managedFields"):
        md.pop(k, None)
    return crd


def render_crds(profile_name) -> list[dict]:
    """NodePool, NodeClaim, NodeOverlay and AKSNodeClass CRDs judging with the profile's rules. `profile_name`
    is a profile name or a Profile (one carrying a scenario's knobs).

    Cached on disk under <harness cache>/crds/<profile>-<hash>.json (hash of module versions, the
    profile data and the rendering code), so later sessions need neither Go nor the module cache.
    """
    from harness.model.upstream.profile import load_profile
    profile = load_profile(profile_name) if isinstance(profile_name, str) else profile_name
    profile_name = profile.name
    key = _render_key(profile)
    cache = binaries.cache_dir() / "crds" / f"{profile_name}-{key}.json"
    if cache.exists():
        try:
            return json.loads(cache.read_text())
        except ValueError:
            pass
    files = _upstream_files()
    out = []
    for name, path in files.items():
        crd = _strip(load_yaml(path.read_text()))
        if crd["metadata"]["name"] != name:
            raise CRDError(f"{path} holds {crd['metadata']['name']}, expected {name}")
        if name == NODEPOOLS:
            _patch_nodepool(crd, profile)
        elif name == NODECLAIMS:
            _patch_nodeclaim(crd, profile)
        elif name == NODEOVERLAYS:
            _patch_nodeoverlay(crd, profile)
        else:
            _patch_aksnodeclass(crd, profile)
        ann = crd["metadata"].setdefault("annotations", {})
        ann[PROFILE_ANNOTATION] = profile_name
        ann[HASH_ANNOTATION] = key
        out.append(crd)
    cache.parent.mkdir(parents=True, exist_ok=True)
    tmp = cache.with_suffix(f".tmp{os.getpid()}")
    tmp.write_text(json.dumps(out))
    os.replace(tmp, cache)
    return out


# -- probing: has the API server picked up the new rules yet? -------------------------------------------
def _violates(rule, key: str) -> bool:
    """Python mirror of crdrules._predicate (CEL `find("^([^/]+)")` = text before the first '/')."""
    if rule.forbid_key is not None:
        return key == rule.forbid_key
    domain = key.split("/", 1)[0]
    if key in rule.allow_keys or any(domain.endswith(s) for s in rule.allow_domain_suffixes):
        return False
    return domain.endswith(rule.domain)


def _probe_keys(profile, target: str) -> list[str]:
    keys = []
    for r in profile.key_rules:
        if target not in r.targets:
            continue
        k = r.forbid_key if r.forbid_key is not None else f"{r.domain}/harness-probe"
        if k not in keys:
            keys.append(k)
    return keys


def _expected(profile, target: str, keys: list[str], field_of) -> set[tuple[str, str]]:
    out = set()
    for i, k in enumerate(keys):
        for r in profile.key_rules:
            if target in r.targets and _violates(r, k):
                out.add((field_of(i), r.message))
    return out


def probes(profile) -> list[tuple[dict, set[tuple[str, str]]]]:
    """Dry-run objects that violate every key rule of the profile once, with the (field, message)
    causes the API server must answer when - and only when - exactly this profile's rules are live."""
    from harness.model.crd import rules as crdrules
    ref = {"group": "karpenter.azure.com", "kind": "AKSNodeClass", "name": "default"}
    np_labels = _probe_keys(profile, crdrules.NODEPOOL_LABELS)
    np_reqs = _probe_keys(profile, crdrules.NODEPOOL_REQUIREMENTS)
    nc_reqs = _probe_keys(profile, crdrules.NODECLAIM_REQUIREMENTS)
    nodepool = {
        "apiVersion": "karpenter.sh/v1", "kind": "NodePool", "metadata": {"name": "harness-crd-probe"},
        "spec": {"template": {"metadata": {"labels": {k: "x" for k in np_labels}},
                              "spec": {"nodeClassRef": ref,
                                       "requirements": [{"key": k, "operator": "Exists"} for k in np_reqs]}}},
    }
    exp_np = _expected(profile, crdrules.NODEPOOL_LABELS, np_labels, lambda i: "spec.template.metadata.labels")
    exp_np |= _expected(profile, crdrules.NODEPOOL_REQUIREMENTS, np_reqs,
                        lambda i: f"spec.template.spec.requirements[{i}].key")
    nodeclaim = {
        "apiVersion": "karpenter.sh/v1", "kind": "NodeClaim", "metadata": {"name": "harness-crd-probe"},
        "spec": {"nodeClassRef": ref, "requirements": [{"key": k, "operator": "Exists"} for k in nc_reqs]},
    }
    exp_nc = _expected(profile, crdrules.NODECLAIM_REQUIREMENTS, nc_reqs,
                       lambda i: f"spec.requirements[{i}].key")
    return [(nodepool, exp_np), (nodeclaim, exp_nc)]


def _probe_once(client: RestClient, obj: dict, expected: set) -> tuple[bool, str]:
    try:
        client.create(obj, dry_run=True)
        got: set = set()
        detail = "accepted"
    except APIRejected as e:
        if e.status == 404:
            return False, f"not served yet: {e.message}"
        got = {(c.field, c.message) for c in e.causes}
        detail = e.message
    return got == expected, detail


# -- installing -------------------------------------------------------------------------------------
def apply_crds(client: RestClient, crds: list[dict]) -> list[str]:
    """Create or replace each CRD whose render hash differs (one without a hash, e.g. a provider's
    CRD applied unchanged, is always replaced); returns the names written."""
    written = []
    for crd in crds:
        name = crd["metadata"]["name"]
        cur = client.request("GET", f"{CRD_PATH}/{name}", ok_missing=True)
        if cur is None:
            client.request("POST", CRD_PATH, crd)
            written.append(name)
            continue
        want = (crd["metadata"].get("annotations") or {}).get(HASH_ANNOTATION)
        if want and (cur["metadata"].get("annotations") or {}).get(HASH_ANNOTATION) == want:
            continue
        body = copy.deepcopy(crd)
        body["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
        client.request("PUT", f"{CRD_PATH}/{name}", body)
        written.append(name)
    return written


def wait_established(client: RestClient, names: list[str], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    pending = list(names)
    while pending:
        name = pending[0]
        cur = client.request("GET", f"{CRD_PATH}/{name}", ok_missing=True) or {}
        conds = {c["type"]: c for c in (cur.get("status") or {}).get("conditions") or ()}
        if conds.get("Established", {}).get("status") == "True":
            pending.pop(0)
            continue
        if conds.get("NamesAccepted", {}).get("status") == "False":
            raise CRDError(f"CRD {name}: NamesAccepted=False: {conds['NamesAccepted'].get('message')}")
        if time.monotonic() > deadline:
            raise CRDError(f"CRD {name} not Established within {timeout:.0f}s: {list(conds.values())}")
        time.sleep(0.05)


def install_profile(client: RestClient, profile_name, timeout: float = 60.0) -> dict:
    """(Re)apply the CRDs for the profile (a name or a Profile) and wait until the API server
    judges with them.

    Returns timings {"render": s, "apply": s, "effective": s, "written": [...]}.
    """
    from harness.model.upstream.profile import load_profile
    profile = load_profile(profile_name) if isinstance(profile_name, str) else profile_name
    profile_name = profile.name
    t0 = time.monotonic()
    crds = render_crds(profile)
    t1 = time.monotonic()
    written = apply_crds(client, crds)
    wait_established(client, [c["metadata"]["name"] for c in crds], timeout)
    t2 = time.monotonic()
    deadline = t2 + timeout
    for obj, expected in probes(profile):
        while True:
            ok, detail = _probe_once(client, obj, expected)
            if ok:
                break
            if time.monotonic() > deadline:
                raise CRDError(
                    f"profile {profile_name!r}: the API server still does not apply the new rules to a "
                    f"probe {obj['kind']} after {timeout:.0f}s; expected causes {sorted(expected)}, "
                    f"last answer: {detail}")
            time.sleep(0.05)
    return {"render": t1 - t0, "apply": t2 - t1, "effective": time.monotonic() - t2, "written": written}
