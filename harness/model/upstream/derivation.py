"""Deriving one provider source's facts and tables (labels, CRD rules per served API version, AKSNodeClass,
NodePool and NodeClaim spec schemas, GPU/known/restricted SKU tables), for `python -m harness.model.sync` (harness.model.sync, the
command) and the per-release generation (harness.model.upstream.releasesync).

Go source is read (harness.model.upstream.gosource) by matching the specific declarations (string constants,
`sets.New(...)` lists, map assignments); a declaration that does not match the expected shape is an error
naming the file, never a silent guess.
"""
from __future__ import annotations

import json
import os
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.model.upstream.gosource import (STRING_LITERAL, GoResolver, SyncError, balanced, read_source, split_args, strip_comments,
                                   unquote)

PROVIDER_MODULE = "github.com/Azure/karpenter-provider-azure"
CORE_MODULE = "sigs.k8s.io/karpenter"
K8S_API_MODULE = "k8s.io/api"
FACTS_FILE = "provider-facts.yaml"
TABLE_FILES = ("supported-gpus.yaml", "known-skus.txt", "restricted-skus.yaml")


# == locating the modules ===========================================================================
def _escape_module(path: str) -> str:
    """The module cache's case encoding: each capital letter becomes `!` + its lowercase."""
    return re.sub(r"[A-Z]", lambda m: "!" + m.group(0).lower(), path)


def _gomodcache() -> Path | None:
    env = os.environ.get("GOMODCACHE")
    if env:
        return Path(env)
    try:
        out = subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True, timeout=60)
        return Path(out.stdout.strip()) if out.stdout.strip() else None
    except (OSError, subprocess.SubprocessError):
        gopath = os.environ.get("GOPATH") or str(Path.home() / "go")
        return Path(gopath) / "pkg" / "mod"


def module_dir(module: str, version: str, download: bool = True) -> Path:
    """The module's directory in the Go module cache, downloaded with `go mod download -json` if absent."""
    cache = _gomodcache()
    if cache is not None:
        d = cache / f"{_escape_module(module)}@{version}"
        if d.is_dir():
            return d
    if not download:
        raise SyncError(f"{module}@{version}: not in the Go module cache")
    try:
        out = subprocess.run(["go", "mod", "download", "-json", f"{module}@{version}"], capture_output=True,
                             text=True, timeout=600)
    except OSError as e:
        raise SyncError(f"{module}@{version}: cannot run go ({e})") from None
    try:
        info = json.loads(out.stdout or "{}")
    except json.JSONDecodeError:
        info = {}
    if out.returncode != 0 or not info.get("Dir"):
        raise SyncError(f"{module}@{version}: go mod download failed: {info.get('Error') or out.stderr.strip()}")
    return Path(info["Dir"])


def required_versions(provider_dir: Path) -> dict[str, str]:
    """module -> version from the provider's go.mod `require` lines."""
    text = read_source(provider_dir / "go.mod")
    out: dict[str, str] = {}
    for m in re.finditer(r"^\s*(?:require\s+)?([\w./~-]+)\s+(v[\w.+-]+)(?:\s*//.*)?$", text, re.M):
        out.setdefault(m.group(1), m.group(2))
    return out


# == the facts ======================================================================================
@dataclass
class Derived:
    """Everything the sync writes for one profile: file name -> text."""

    files: dict[str, str]
    facts: dict[str, Any]


def header_comment(lines: list[str], prefix: str = "# ") -> str:
    return "".join(f"{prefix}{line}\n" if line else "#\n" for line in lines)


def _gpu_entries(path: Path, data: dict) -> dict[str, tuple[str, list[str]]]:
    """name -> (vendor, os list) from either layout of pkg/utils/supported-gpus.yaml: per size
    (`<size>: {gpu: nvidia, os: [...]}`, provider v1.10+) or per OS and family (`nvidiaEnabledSKUs` for the
    Ubuntu images and `marinerNvidiaEnabledSKUs` for AzureLinux, `<family>: [sizes]`, read by
    IsNvidiaEnabledSKU / IsMarinerEnabledGPUSKU in pkg/utils/gpu.go before v1.10)."""
    if "nvidiaEnabledSKUs" in data:
        out: dict[str, tuple[str, list[str]]] = {}
        for key, os_name in (("nvidiaEnabledSKUs", "ubuntu"), ("marinerNvidiaEnabledSKUs", "azurelinux")):
            for family, sizes in (data.get(key) or {}).items():
                if not isinstance(sizes, list):
                    raise SyncError(f"{path}: {key}.{family} is not a list of sizes")
                for size in sizes:
                    vendor, oses = out.get(str(size).lower(), ("nvidia", []))
                    out[str(size).lower()] = (vendor, oses + [os_name])
        unknown = set(data) - {"nvidiaEnabledSKUs", "marinerNvidiaEnabledSKUs"}
        if unknown:
            raise SyncError(f"{path}: unexpected sections {sorted(unknown)}")
        return out
    out = {}
    for name, info in data.items():
        if not isinstance(info, dict) or "gpu" not in info:
            raise SyncError(f"{path}: entry {name} has no gpu")
        out[name] = (info["gpu"], list(info.get("os") or []))
    return out


def _gpu_maps(path: Path) -> dict[str, list[str]]:
    """The Go-literal layout before supported-gpus.yaml (provider v0.5.0-v0.5.4, v0.6.0, v0.7.0):
    `NvidiaEnabledSKUs` / `MarinerNvidiaEnabledSKUs = map[string]bool{"size": true, ...}` in pkg/utils/gpu.go,
    read as the same two sections."""
    src = strip_comments(read_source(path))
    out: dict[str, list[str]] = {}
    for var, key in (("NvidiaEnabledSKUs", "nvidiaEnabledSKUs"), ("MarinerNvidiaEnabledSKUs", "marinerNvidiaEnabledSKUs")):
        m = re.search(rf"\b{var}\s*=\s*map\[string\]bool\s*\{{", src)
        if m is None:
            raise SyncError(f"{path}: no {var} = map[string]bool{{...}}")
        body = braced(src, m.end() - 1)
        out[key] = [k for k, v in re.findall(r'"([^"]+)"\s*:\s*(true|false)', body) if v == "true"]
    return {key: {"all": sizes} for key, sizes in out.items()}


def supported_gpus_file(src: Path, origin: str) -> str:
    path = src / "pkg/utils/supported-gpus.yaml"
    if path.exists():
        try:
            data = yaml.safe_load(read_source(path)) or {}
        except yaml.YAMLError as e:
            raise SyncError(f"{path}: {e}") from None
        where = "pkg/utils/supported-gpus.yaml"
    else:
        path = src / "pkg/utils/gpu.go"
        data = _gpu_maps(path)
        where = "pkg/utils/gpu.go (NvidiaEnabledSKUs, MarinerNvidiaEnabledSKUs)"
    entries = _gpu_entries(path, data)
    lines = [
        f"Derived by `python -m harness.model.sync` from {origin} {where}",
        f"({len(entries)} sizes). Do not edit: re-run the sync. GPU VM sizes AKS supports, with the vendor and the",
        "OS images that support each (keys lowercased ARM SKU names). Used for sku-gpu-count/-manufacturer,",
        "nvidia.com/gpu / amd.com/gpu capacity, the 'unsupported GPU' filter and the GPU-vs-image-family filter",
        "(utils IsGPUSKU / GetGPUManufacturer / IsGPUSKUSupportedOnOS, pkg/utils/gpu.go; before v1.10",
        "IsNvidiaEnabledSKU = ubuntu, IsMarinerEnabledGPUSKU = azurelinux).",
    ]
    body = ["skus:"]
    for name, (vendor, oses) in entries.items():
        body.append(f"  {name}: {{vendor: {vendor}, os: [{', '.join(oses)}]}}")
    return header_comment(lines) + "\n".join(body) + "\n"


def known_skus_file(src: Path, origin: str) -> str | None:
    """None before pkg/providers/instancetype/known_skus.yaml existed (provider v1.12): no known-SKU list."""
    path = src / "pkg/providers/instancetype/known_skus.yaml"
    if not path.exists():
        return None
    try:
        entries = yaml.safe_load(read_source(path)) or []
    except yaml.YAMLError as e:
        raise SyncError(f"{path}: {e}") from None
    families = {e.get("family") for e in entries}
    lines = [
        f"Derived by `python -m harness.model.sync` from {origin} pkg/providers/instancetype/known_skus.yaml",
        f"({len(entries)} names, {len(families)} families). Do not edit: re-run the sync.",
        "Known VM SKU names and their quota families, one per line: <name> <family> (the family may contain",
        "spaces). SKUs not listed are priced at MissingPrice 999 (unknownSKUPolicy: price999, IsKnownSKU).",
    ]
    body = []
    for e in entries:
        if not isinstance(e, dict) or not e.get("name"):
            raise SyncError(f"{path}: entry without a name: {e!r}")
        body.append(f"{e['name']} {e.get('family') or ''}".rstrip())
    return header_comment(lines) + "\n".join(body) + "\n"


def restricted_skus_file(resolver: GoResolver, origin: str) -> str:
    pkg = resolver.package(f"{PROVIDER_MODULE}/pkg/providers/instancetype")
    if "AKSRestrictedVMSizes" in pkg.decls:
        aks = pkg.call_args("AKSRestrictedVMSizes", "sets.New")
        karpenter = pkg.call_args("karpenterRestrictedVMSKUs", "sets.New[string]")
        where = "pkg/providers/instancetype/skus.go\n(AKSRestrictedVMSizes, karpenterRestrictedVMSKUs)"
    else:       # before provider v1.4: one list, RestrictedVMSizes in restricted.go
        aks = pkg.call_args("RestrictedVMSizes", "sets.New")
        karpenter = []
        where = "pkg/providers/instancetype/restricted.go\n(RestrictedVMSizes)"
    lines = [
        f"Derived by `python -m harness.model.sync` from {origin} {where.splitlines()[0]}",
        f"{where.splitlines()[1]}. Do not edit: re-run the sync.",
        "VM sizes the provider never turns into instance types (IsRestrictedSKU in that file).",
    ]
    return (header_comment(lines) + "aksRestricted:        # low-performance sizes AKS does not allow in node pools\n"
            + "".join(f"  - {n}\n" for n in aks)
            + "karpenterRestricted:  # known to be problematic with Karpenter\n"
            + "".join(f"  - {n}\n" for n in karpenter))


def _api_package(resolver: GoResolver, module: str, candidates: tuple[str, ...], marker: str):
    """The first of `candidates` (API version directories under pkg/apis) whose labels.go exists."""
    root = resolver.modules[module]
    for version in candidates:
        if (root / "pkg/apis" / version / marker).is_file():
            return resolver.package(f"{module}/pkg/apis/{version}")
    raise SyncError(f"{root}/pkg/apis: none of {', '.join(candidates)} has {marker}")


# `<alias>.Name = <alias>.Name.Insert(args...)` / `.Union(Other)` in the provider's init()
def _init_amend(init: str, name: str) -> tuple[str, str] | None:
    m = re.search(rf"\b(\w+)\.{name}\s*=\s*\1\.{name}\.(Insert|Union)\(", init)
    if m is None:
        return None
    return m.group(2), balanced(init, m.end() - 1, Path("init"))


def _amended(prov, init: str, path: Path, name: str, base: list[str]) -> list[str]:
    """Core's `name` set as the provider's init() amends it (Insert of listed values, Insert(X...) of
    a []string literal, or Union with a sets.New set)."""
    amend = _init_amend(init, name)
    if amend is None:
        return list(base)
    how, args = amend
    added: list[str] = []
    for arg in split_args(args):
        if how == "Union" or arg.endswith("..."):
            ident = arg.rstrip(".").strip()
            src = prov.source(ident)
            if re.search(rf"\b{ident}\s*=\s*sets\.New", src):
                added += prov.call_args(ident, "sets.New")
            else:
                m = re.search(rf"\b{ident}\s*=\s*\[\]string\s*\{{(.*?)\}}", src, re.S)
                if m is None:
                    raise SyncError(f"{prov.decls[ident][1]}: {ident} is neither sets.New(...) nor a []string literal")
                added += [prov.expr(a, prov.decls[ident][1]) for a in split_args(m.group(1))]
        else:
            added.append(prov.expr(arg, path))
    return list(base) + [k for k in added if k not in base]


def restricted_label_message(core) -> str:
    """core IsRestrictedLabel's error text as a template over {key}, {wellKnown}, {domains}: the fmt.Errorf
    form (`label %s is restricted; ...: %v ...: %v`) or the serrors.Wrap form (message, then the fields in
    key order, as the controller's log prints them)."""
    src = core.source("WellKnownLabels")
    m = re.search(r"\bfunc IsRestrictedLabel\(", src)
    if m is None:
        raise SyncError(f"{core.decls['WellKnownLabels'][1]}: no IsRestrictedLabel")
    body = braced(src, src.index("{", m.end()))
    names = {"key": "{key}", "sets.List(WellKnownLabels)": "{wellKnown}",
             "sets.List(RestrictedLabelDomains)": "{domains}"}
    w = re.search(r"serrors\.Wrap\(fmt\.Errorf\(", body)
    if w is not None:
        args = split_args(balanced(body, w.end() - 1 - len("fmt.Errorf("), core.decls["WellKnownLabels"][1]))
        msg = unquote(split_args(balanced(args[0], args[0].index("("), core.decls["WellKnownLabels"][1]))[0])
        pairs = sorted((unquote(args[i]), names[args[i + 1]]) for i in range(1, len(args) - 1, 2))
        return msg + " (" + ", ".join(f"{k}={v}" for k, v in pairs) + ")"
    e = re.search(r"fmt\.Errorf\(", body)
    if e is None:
        raise SyncError(f"{core.decls['WellKnownLabels'][1]}: IsRestrictedLabel returns no fmt.Errorf")
    args = split_args(balanced(body, e.end() - 1, core.decls["WellKnownLabels"][1]))
    out = unquote(args[0]).replace("{", "{{").replace("}", "}}")
    for arg in args[1:]:
        out = re.sub(r"%[sv]", lambda _m, a=arg: names[a], out, count=1)
    return out


def label_facts(resolver: GoResolver) -> dict[str, Any]:
    """Well-known labels and values, restricted domains and labels, image families: core's
    declarations (pkg/apis/v1, or v1beta1 before core v1.0) as the provider's `init` (pkg/apis/v1beta1,
    or v1alpha2 before provider v1.4, labels.go) amends them."""
    core = _api_package(resolver, CORE_MODULE, ("v1", "v1beta1"), "labels.go")
    prov = _api_package(resolver, PROVIDER_MODULE, ("v1beta1", "v1alpha2"), "labels.go")
    path = prov.decls["RestrictedLabelDomains"][1]
    init_src = prov.source("RestrictedLabelDomains")
    init_m = re.search(r"\bfunc init\(\)\s*\{", init_src)
    if init_m is None:
        raise SyncError(f"{path}: no init()")
    init = "{" + braced(init_src, init_m.end() - 1) + "}"

    well_known = _amended(prov, init, path, "WellKnownLabels", core.call_args("WellKnownLabels", "sets.New"))
    domains = _amended(prov, init, path, "RestrictedLabelDomains", core.call_args("RestrictedLabelDomains", "sets.New"))
    restricted = core.call_args("RestrictedLabels", "sets.New")
    extra_restricted: list[str] = []
    if _init_amend(init, "RestrictedLabels") is not None:
        extra_restricted = _amended(prov, init, path, "RestrictedLabels", [])
    exceptions = core.call_args("LabelDomainExceptions", "sets.New") if "LabelDomainExceptions" in core.decls else []

    values: dict[str, list[str]] = {}
    if "WellKnownValuesForRequirements" in core.decls:
        core_values = core.source("WellKnownValuesForRequirements")
        m = re.search(r"\bWellKnownValuesForRequirements\s*=\s*map\[string\]sets\.Set\[string\]\s*\{", core_values)
        if m is None:
            raise SyncError(f"{core.decls['WellKnownValuesForRequirements'][1]}: unexpected WellKnownValuesForRequirements")
        body = braced(core_values, m.end() - 1)
        for em in re.finditer(r"([\w.]+)\s*:\s*sets\.New\(", body):
            args = balanced(body, em.end() - 1, core.decls["WellKnownValuesForRequirements"][1])
            values[core.expr(em.group(1), core.decls["WellKnownValuesForRequirements"][1])] = [
                core.expr(a, core.decls["WellKnownValuesForRequirements"][1]) for a in split_args(args)]
    for em in re.finditer(r"\w+\.WellKnownValuesForRequirements\[([\w.]+)\]\s*=\s*sets\.New\(", init):
        args = balanced(init, em.end() - 1, path)
        values[prov.expr(em.group(1), path)] = [prov.expr(a, path) for a in split_args(args)]

    if "UbuntuFamilies" in prov.decls:
        ubuntu = prov.call_args("UbuntuFamilies", "sets.New")
    else:   # before the set: the Ubuntu*ImageFamily constants
        ubuntu = [prov.string(n) for n in prov.decls if re.fullmatch(r"Ubuntu\w*ImageFamily", n)]
    os_sku: dict[str, str] = {}
    if "imageFamilyToOSSKU" in prov.decls:
        m = re.search(r"\bimageFamilyToOSSKU\s*=\s*map\[string\]string\s*\{", prov.source("imageFamilyToOSSKU"))
        if m is None:
            raise SyncError(f"{prov.decls['imageFamilyToOSSKU'][1]}: unexpected imageFamilyToOSSKU")
        fam_src = braced(prov.source("imageFamilyToOSSKU"), m.end() - 1)
        os_sku = {prov.expr(k, path): prov.expr(v, path)
                  for k, v in re.findall(r"([\w.\"]+)\s*:\s*([\w.\"]+)\s*,", fam_src)}
    return {
        "core": {"wellKnownLabels": well_known, "wellKnownValues": values,
                 "restrictedLabelDomains": domains, "labelDomainExceptions": exceptions,
                 "restrictedLabels": restricted, "restrictedLabelMessage": restricted_label_message(core)},
        "provider": {"extraRestrictedLabels": extra_restricted,
                     "imageFamilies": {"ubuntu": ubuntu, "azureLinux": prov.string("AzureLinuxImageFamily"),
                                       "osSku": os_sku}},
    }


def braced(src: str, open_at: int) -> str:
    depth = 0
    for m in re.compile(rf"{STRING_LITERAL}|[{{}}]").finditer(src, open_at):
        if m.group(0) == "{":
            depth += 1
        elif m.group(0) == "}":
            depth -= 1
            if depth == 0:
                return src[open_at + 1:m.start()]
    raise SyncError("unbalanced braces")


# -- CRD rules ---------------------------------------------------------------------------------------
_DOMAIN_OF = r'(?:KEY)\.find\("\^\(\[\^/\]\+\)"\)'


def _key_rule(rule: str, path: str) -> dict[str, Any]:
    """A label-key CEL predicate (KEY standing for the key) as a profile keyRule."""
    m = re.fullmatch(r'KEY\s*!=\s*("[^"]*"|\'[^\']*\')', rule.strip())
    if m:
        return {"forbidKey": m.group(1)[1:-1]}
    clauses = [c.strip() for c in rule.split("||")]
    out: dict[str, Any] = {}
    for c in clauses:
        if c.startswith("KEY in"):
            lm = re.fullmatch(r"KEY in \[(.*)\]", c, re.S)
            if lm is None:
                raise SyncError(f"{path}: cannot read key list in {rule!r}")
            out["allowKeys"] = [unquote(x) if x.startswith('"') else x[1:-1]
                                for x in re.findall(r'"[^"]*"|\'[^\']*\'', lm.group(1))]
        elif (dm := re.fullmatch(rf'!{_DOMAIN_OF}\.endsWith\("([^"]+)"\)', c)):
            out["domain"] = dm.group(1)
        elif (sm := re.fullmatch(rf'{_DOMAIN_OF}\.endsWith\("([^"]+)"\)', c)):
            out.setdefault("allowDomainSuffixes", []).append(sm.group(1))
        else:
            raise SyncError(f"{path}: unrecognized key rule clause {c!r} in {rule!r}")
    if "domain" not in out:
        raise SyncError(f"{path}: key rule without a restricted domain: {rule!r}")
    return out


def _schema_at(schema: dict, dotted: str, path: str) -> dict:
    node = schema
    for part in dotted.split("."):
        node = (node.get("items") if part == "[]" else (node.get("properties") or {}).get(part)) or {}
        if not node:
            raise SyncError(f"{path}: no schema at {dotted}")
    return node


CRD_FILES = {"NodePool": "karpenter.sh_nodepools.yaml", "NodeClaim": "karpenter.sh_nodeclaims.yaml",
             "AKSNodeClass": "karpenter.azure.com_aksnodeclasses.yaml"}
# CRDs a release ships from some version on: core's NodeOverlay from provider v1.7.2 (core v1.7.0+, #2296)
LATER_CRD_FILES = {"NodeOverlay": "karpenter.sh_nodeoverlays.yaml"}


def _crd_doc(src: Path, file: str) -> dict:
    path = src / "pkg/apis/crds" / file
    try:
        return yaml.safe_load(read_source(path))
    except yaml.YAMLError as e:
        raise SyncError(f"{path}: {e}") from None


def _versions(doc: dict) -> tuple[list[dict], dict]:
    """(served versions in the CRD's order, the storage version)."""
    versions = [v for v in doc["spec"]["versions"] if v.get("served", True)]
    storage = next((v for v in doc["spec"]["versions"] if v.get("storage")), versions[0])
    return versions, storage


def api_facts(src: Path) -> dict[str, Any]:
    """The API versions each CRD serves and stores (pkg/apis/crds/*.yaml spec.versions)."""
    out: dict[str, Any] = {}
    for kind, file in CRD_FILES.items():
        doc = _crd_doc(src, file)
        served, storage = _versions(doc)
        out[kind] = {"group": doc["spec"]["group"], "served": [v["name"] for v in served],
                     "storage": storage["name"]}
    return out


def _required_paths(node: dict, path: tuple[str, ...] = ()) -> list[str]:
    """Every required field reachable through object properties (not through list items): what the API
    server refuses as `Required value` before any CEL rule runs."""
    out: list[str] = []
    required = node.get("required") or []
    for name in required:
        out.append(".".join(path + (name,)))
        child = (node.get("properties") or {}).get(name) or {}
        if child.get("type") == "object":
            out += _required_paths(child, path + (name,))
    for name, child in (node.get("properties") or {}).items():
        if name not in required and child.get("type") == "object":
            out += _required_paths(child, path + (name,))
    return out


def _rules_of(schemas: dict[str, dict]) -> dict[str, Any]:
    """The label/requirement-key CEL rules, requirement-list rules, operators and required fields of one
    API version of the NodePool and NodeClaim CRDs (`schemas`: kind -> openAPIV3Schema)."""
    targets = {
        "nodePoolLabels": ("NodePool", "spec.template.metadata.labels", "map"),
        "nodePoolRequirements": ("NodePool", "spec.template.spec.requirements.[].key", "key"),
        "nodeClaimRequirements": ("NodeClaim", "spec.requirements.[].key", "key"),
    }
    rules: list[dict[str, Any]] = []
    for target, (kind, dotted, shape) in targets.items():
        file = CRD_FILES[kind]
        node = _schema_at(schemas[kind], dotted, file)
        for v in node.get("x-kubernetes-validations") or ():
            text = v["rule"].strip()
            if shape == "map":
                m = re.fullmatch(r"self\.all\(x,\s*(.*)\)", text, re.S)
                if m is None:
                    raise SyncError(f"{file}: {dotted}: unexpected label map rule {text!r}")
                pred = re.sub(r"\bx\b", "KEY", m.group(1))
            else:
                pred = re.sub(r"\bself\b", "KEY", text)
            parsed = {"message": v["message"], **_key_rule(pred, f"{file}: {dotted}")}
            same = next((r for r in rules if {k: r[k] for k in r if k != "targets"} == parsed), None)
            if same is None:
                rules.append({**parsed, "targets": [target]})
            elif target not in same["targets"]:
                same["targets"].append(target)
    reqs = _schema_at(schemas["NodePool"], "spec.template.spec.requirements", "nodepools")
    requirement_rules = [{"message": v["message"], "rule": v["rule"].strip()}
                         for v in reqs.get("x-kubernetes-validations") or ()]
    operators = list((reqs.get("items") or {}).get("properties", {}).get("operator", {}).get("enum") or ())
    ordered = [o for o in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte") if o in operators]
    ordered += [o for o in operators if o not in ordered]
    return {"operators": ordered, "requirementRules": requirement_rules, "keyRules": rules,
            "required": {kind: _required_paths(schemas[kind]) for kind in ("NodePool", "NodeClaim")}}


def crd_facts(src: Path) -> dict[str, Any]:
    """The CEL rules on label keys and requirements, the requirement operators and the required fields
    (pkg/apis/crds), for the storage version (`crd`) and any other served version (`crdVersions`), the
    API versions served (`apis`) and the admission schemas of AKSNodeClass, NodePool, NodeClaim and, where the
    release ships its CRD, NodeOverlay (`aksNodeClass`, `nodePool`, `nodeClaim`, `nodeOverlay`: each served
    version's `spec` schema)."""
    by_version: dict[str, dict[str, dict]] = {}
    storage_name = None
    for kind in ("NodePool", "NodeClaim"):
        served, storage = _versions(_crd_doc(src, CRD_FILES[kind]))
        if kind == "NodePool":
            storage_name = storage["name"]
        for v in served:
            by_version.setdefault(v["name"], {})[kind] = v["schema"]["openAPIV3Schema"]
    crd = _rules_of(by_version[storage_name])
    others = {name: _rules_of(schemas) for name, schemas in by_version.items()
              if name != storage_name and set(schemas) == {"NodePool", "NodeClaim"}}
    out: dict[str, Any] = {"apis": api_facts(src), "crd": crd, "core": {"operators": list(crd["operators"])},
                           "aksNodeClass": aksnodeclass_facts(src),
                           "nodePool": spec_schema_facts(src, "NodePool"),
                           "nodeClaim": spec_schema_facts(src, "NodeClaim")}
    if (src / "pkg/apis/crds" / LATER_CRD_FILES["NodeOverlay"]).is_file():
        out["nodeOverlay"] = spec_schema_facts(src, "NodeOverlay")
    if others:
        out["crdVersions"] = others
    return out


# What admission reads from a CRD schema node (harness.model.crd.schema); descriptions and the other
# markers are dropped.
_SCHEMA_KEYS = ("type", "format", "enum", "default", "minimum", "maximum", "minLength", "maxLength", "pattern",
                "minItems", "maxItems", "maxProperties", "required", "x-kubernetes-int-or-string",
                "x-kubernetes-list-type", "x-kubernetes-list-map-keys", "x-kubernetes-validations")


def _prune_schema(node: dict) -> dict:
    out: dict[str, Any] = {k: node[k] for k in _SCHEMA_KEYS if k in node}
    if "x-kubernetes-validations" in out:
        out["x-kubernetes-validations"] = [{"message": v.get("message", ""), "rule": v["rule"].strip()}
                                           for v in out["x-kubernetes-validations"]]
    if node.get("properties"):
        out["properties"] = {k: _prune_schema(v) for k, v in node["properties"].items()}
    if isinstance(node.get("items"), dict):
        out["items"] = _prune_schema(node["items"])
    if isinstance(node.get("additionalProperties"), dict):
        out["additionalProperties"] = _prune_schema(node["additionalProperties"])
    return out


def aksnodeclass_facts(src: Path) -> dict[str, Any]:
    """The `spec` schema of each served version of pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml:
    defaults, enums, bounds, patterns and CEL rules, which the API server applies on admission. The
    storage version's is `spec`; the others' are under `versions`."""
    return spec_schema_facts(src, "AKSNodeClass")


def spec_schema_facts(src: Path, kind: str) -> dict[str, Any]:
    """The `spec` schema of each served version of the kind's CRD (pkg/apis/crds, CRD_FILES): the storage
    version's is `spec`, the others' are under `versions`; with each, the scale subresource's
    specReplicasPath when the version has one (`scaleSpecReplicasPath`, NodePool's `.spec.replicas`)."""
    file = {**CRD_FILES, **LATER_CRD_FILES}[kind]
    path = src / "pkg/apis/crds" / file
    served, storage = _versions(_crd_doc(src, file))

    def of(v: dict) -> dict[str, Any]:
        spec = (v["schema"]["openAPIV3Schema"].get("properties") or {}).get("spec")
        if not isinstance(spec, dict):
            raise SyncError(f"{path}: version {v['name']} has no spec schema")
        out: dict[str, Any] = {"spec": _prune_schema(spec)}
        scale = (v.get("subresources") or {}).get("scale")
        if scale:
            out["scaleSpecReplicasPath"] = scale["specReplicasPath"]
        return out

    out: dict[str, Any] = {"version": storage["name"], **of(storage)}
    others = {v["name"]: of(v) for v in served if v["name"] != storage["name"]}
    if others:
        out["versions"] = others
    return out


def _deep_merge(a: dict, b: dict) -> dict:
    out = dict(a)
    for k, v in b.items():
        out[k] = _deep_merge(out[k], v) if isinstance(out.get(k), dict) and isinstance(v, dict) else v
    return out


def derive(src: Path, origin: str, versions: dict[str, str], modules: dict[str, Path]) -> Derived:
    """All derived files for the provider source at `src`."""
    resolver = GoResolver(modules)
    facts = _deep_merge(label_facts(resolver), crd_facts(src))
    facts["core"]["version"] = versions.get(CORE_MODULE, "")
    facts["provider"]["version"] = origin.rsplit("@", 1)[-1] if "@" in origin else origin.rsplit(" ", 1)[-1]
    head = [
        f"Derived by `python -m harness.model.sync` from {origin} (with {CORE_MODULE}@{versions.get(CORE_MODULE)},",
        f"{K8S_API_MODULE}@{versions.get(K8S_API_MODULE)}): pkg/apis/v1beta1/labels.go init() over core",
        "pkg/apis/v1/labels.go (well-known labels and values, restricted domains and labels), the image",
        "families (UbuntuFamilies, imageFamilyToOSSKU), and the CEL rules of pkg/apis/crds/karpenter.sh_nodepools.yaml",
        "and karpenter.sh_nodeclaims.yaml, and the spec schemas of those and of karpenter.azure.com_aksnodeclasses.yaml.",
        "Do not edit: re-run the sync. Loaded beneath the profile that names this directory as `derived`",
        "(harness.model.upstream.profile).",
    ]
    facts_text = header_comment(head) + yaml.safe_dump(facts, sort_keys=False, width=200, allow_unicode=True)
    files = {
        "supported-gpus.yaml": supported_gpus_file(src, origin),
        "restricted-skus.yaml": restricted_skus_file(resolver, origin),
        FACTS_FILE: facts_text,
    }
    known = known_skus_file(src, origin)
    if known is not None:
        files["known-skus.txt"] = known
    return Derived(files, facts)


def _describe(src: Path) -> str:
    """`git describe --tags --always --dirty` of a checkout, or its directory name."""
    try:
        out = subprocess.run(["git", "-C", str(src), "describe", "--tags", "--always", "--dirty"],
                             capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return src.name
    return out.stdout.strip() if out.returncode == 0 and out.stdout.strip() else src.name


def load_source(provider_module: str | None, provider_src: str | None) -> tuple[Path, str, dict[str, str], dict[str, Path]]:
    """(provider dir, origin text, required versions, module dirs for the resolver)."""
    if provider_src:
        src = Path(provider_src).expanduser()
        if not (src / "go.mod").is_file():
            raise SyncError(f"{src}: not a provider checkout (no go.mod)")
        origin = f"{PROVIDER_MODULE} working copy {_describe(src)}"
    else:
        version = provider_module or "v1.14.0"
        src = module_dir(PROVIDER_MODULE, version)
        origin = f"{PROVIDER_MODULE}@{version}"
    versions = required_versions(src)
    modules = {PROVIDER_MODULE: src}
    for mod in (CORE_MODULE, K8S_API_MODULE):
        if mod not in versions:
            raise SyncError(f"{src / 'go.mod'}: does not require {mod}")
        modules[mod] = module_dir(mod, versions[mod])
    return src, origin, versions, modules


