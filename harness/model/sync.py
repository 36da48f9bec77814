"""Derive a profile's provider data from the provider's own source, instead of copying it by hand.

    python -m harness.model.sync --provider-module v1.14.0          # module from the Go module cache/proxy
    python -m harness.model.sync --provider-src ~/src/karpenter-provider-azure --profile-name mywork
    python -m harness.model.sync --provider-module v1.14.0 --check  # print the diff, write nothing

It reads, from github.com/Azure/karpenter-provider-azure (and the sigs.k8s.io/karpenter and k8s.io/api
versions its go.mod requires):
  pkg/utils/supported-gpus.yaml                   -> supported-gpus.yaml
  pkg/providers/instancetype/known_skus.yaml      -> known-skus.txt
  pkg/providers/instancetype/skus.go              -> restricted-skus.yaml (AKSRestrictedVMSizes,
                                                     karpenterRestrictedVMSKUs)
  pkg/apis/v1beta1/labels.go (+ core pkg/apis/v1/labels.go, k8s.io/api core/v1)
                                                  -> provider-facts.yaml: well-known labels and values,
                                                     restricted domains and labels, image families
  pkg/apis/crds/karpenter.sh_{nodepools,nodeclaims}.yaml
                                                  -> provider-facts.yaml: the CEL rules on label keys and
                                                     requirements, the requirement operators
  pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml
                                                  -> provider-facts.yaml `aksNodeClass`: the storage
                                                     version's spec schema (defaults, enums, bounds,
                                                     patterns, CEL rules) for admission
and writes them into the profile's `derived` directory under harness/data, printing a unified diff.
A profile loads `<derived>/provider-facts.yaml` beneath its own body (harness.model.profile), so the
profile file keeps only decisions and citations. With --profile-name the result is a new profile
`extends: upstream` whose tables and facts live in harness/data/derived/<name>/.

Go source is read (harness.model.gosource) by matching the specific declarations (string constants, `sets.New(...)` lists,
map assignments); a declaration that does not match the expected shape is an error naming the file,
never a silent guess. Nothing from upstream is kept but the derived facts, each file headed by what
it was derived from.
"""
from __future__ import annotations

import argparse
import difflib
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from harness.model.data import DATA_DIR
from harness.model.gosource import STRING_LITERAL, GoResolver, SyncError, balanced, read_source, split_args, unquote

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


def _header(lines: list[str], prefix: str = "# ") -> str:
    return "".join(f"{prefix}{line}\n" if line else "#\n" for line in lines)


def supported_gpus_file(src: Path, origin: str) -> str:
    path = src / "pkg/utils/supported-gpus.yaml"
    try:
        data = yaml.safe_load(read_source(path)) or {}
    except yaml.YAMLError as e:
        raise SyncError(f"{path}: {e}") from None
    lines = [
        f"Derived by `python -m harness.model.sync` from {origin} pkg/utils/supported-gpus.yaml",
        f"({len(data)} sizes). Do not edit: re-run the sync. GPU VM sizes AKS supports, with the vendor and the",
        "OS images that support each (keys lowercased ARM SKU names). Used for sku-gpu-count/-manufacturer,",
        "nvidia.com/gpu / amd.com/gpu capacity, the 'unsupported GPU' filter and the GPU-vs-image-family filter",
        "(utils IsGPUSKU / GetGPUManufacturer / IsGPUSKUSupportedOnOS, pkg/utils/gpu.go).",
    ]
    body = ["skus:"]
    for name, info in data.items():
        if not isinstance(info, dict) or "gpu" not in info:
            raise SyncError(f"{path}: entry {name} has no gpu")
        oses = ", ".join(info.get("os") or [])
        body.append(f"  {name}: {{vendor: {info['gpu']}, os: [{oses}]}}")
    return _header(lines) + "\n".join(body) + "\n"


def known_skus_file(src: Path, origin: str) -> str:
    path = src / "pkg/providers/instancetype/known_skus.yaml"
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
    return _header(lines) + "\n".join(body) + "\n"


def restricted_skus_file(resolver: GoResolver, origin: str) -> str:
    pkg = resolver.package(f"{PROVIDER_MODULE}/pkg/providers/instancetype")
    aks = pkg.call_args("AKSRestrictedVMSizes", "sets.New")
    karpenter = pkg.call_args("karpenterRestrictedVMSKUs", "sets.New[string]")
    lines = [
        f"Derived by `python -m harness.model.sync` from {origin} pkg/providers/instancetype/skus.go",
        "(AKSRestrictedVMSizes, karpenterRestrictedVMSKUs). Do not edit: re-run the sync.",
        "VM sizes the provider never turns into instance types (IsRestrictedSKU in that file).",
    ]
    return (_header(lines) + "aksRestricted:        # low-performance sizes AKS does not allow in node pools\n"
            + "".join(f"  - {n}\n" for n in aks)
            + "karpenterRestricted:  # known to be problematic with Karpenter\n"
            + "".join(f"  - {n}\n" for n in karpenter))


def label_facts(resolver: GoResolver) -> dict[str, Any]:
    """Well-known labels and values, restricted domains and labels, image families: core's
    declarations as the provider's `init` (pkg/apis/v1beta1/labels.go) amends them."""
    core = resolver.package(f"{CORE_MODULE}/pkg/apis/v1")
    prov = resolver.package(f"{PROVIDER_MODULE}/pkg/apis/v1beta1")
    init_src = prov.source("AzureWellKnownLabels")
    init_m = re.search(r"\bfunc init\(\)\s*\{", init_src)
    if init_m is None:
        raise SyncError(f"{prov.decls['AzureWellKnownLabels'][1]}: no init()")
    init = "{" + _braced(init_src, init_m.end() - 1) + "}"

    well_known = core.call_args("WellKnownLabels", "sets.New")
    if re.search(r"karpv1\.WellKnownLabels\s*=\s*karpv1\.WellKnownLabels\.Union\(AzureWellKnownLabels\)", init):
        well_known += [k for k in prov.call_args("AzureWellKnownLabels", "sets.New") if k not in well_known]
    domains = core.call_args("RestrictedLabelDomains", "sets.New")
    if re.search(r"karpv1\.RestrictedLabelDomains\s*=\s*karpv1\.RestrictedLabelDomains\.Insert\(RestrictedLabelDomains\.\.\.\)", init):
        m = re.search(r"\bRestrictedLabelDomains\s*=\s*\[\]string\s*\{(.*?)\}", prov.source("RestrictedLabelDomains"), re.S)
        if m is None:
            raise SyncError(f"{prov.decls['RestrictedLabelDomains'][1]}: RestrictedLabelDomains is not a []string literal")
        domains += [d for d in (prov.expr(a, prov.decls["RestrictedLabelDomains"][1]) for a in split_args(m.group(1)))
                    if d not in domains]
    restricted = core.call_args("RestrictedLabels", "sets.New")
    extra_restricted: list[str] = []
    if re.search(r"karpv1\.RestrictedLabels\s*=\s*karpv1\.RestrictedLabels\.Union\(RestrictedLabels\)", init):
        extra_restricted = prov.call_args("RestrictedLabels", "sets.New")

    values: dict[str, list[str]] = {}
    core_values = core.source("WellKnownValuesForRequirements")
    m = re.search(r"\bWellKnownValuesForRequirements\s*=\s*map\[string\]sets\.Set\[string\]\s*\{", core_values)
    if m is None:
        raise SyncError(f"{core.decls['WellKnownValuesForRequirements'][1]}: unexpected WellKnownValuesForRequirements")
    body = _braced(core_values, m.end() - 1)
    for em in re.finditer(r"([\w.]+)\s*:\s*sets\.New\(", body):
        args = balanced(body, em.end() - 1, core.decls["WellKnownValuesForRequirements"][1])
        values[core.expr(em.group(1), core.decls["WellKnownValuesForRequirements"][1])] = [
            core.expr(a, core.decls["WellKnownValuesForRequirements"][1]) for a in split_args(args)]
    path = prov.decls["AzureWellKnownLabels"][1]
    for em in re.finditer(r"karpv1\.WellKnownValuesForRequirements\[([\w.]+)\]\s*=\s*sets\.New\(", init):
        args = balanced(init, em.end() - 1, path)
        values[prov.expr(em.group(1), path)] = [prov.expr(a, path) for a in split_args(args)]

    ubuntu = prov.call_args("UbuntuFamilies", "sets.New")
    m = re.search(r"\bimageFamilyToOSSKU\s*=\s*map\[string\]string\s*\{", prov.source("imageFamilyToOSSKU"))
    if m is None:
        raise SyncError(f"{prov.decls['imageFamilyToOSSKU'][1]}: unexpected imageFamilyToOSSKU")
    fam_src = _braced(prov.source("imageFamilyToOSSKU"), m.end() - 1)
    os_sku = {prov.expr(k, path): prov.expr(v, path)
              for k, v in re.findall(r"([\w.\"]+)\s*:\s*([\w.\"]+)\s*,", fam_src)}
    return {
        "core": {"wellKnownLabels": well_known, "wellKnownValues": values,
                 "restrictedLabelDomains": domains, "restrictedLabels": restricted},
        "provider": {"extraRestrictedLabels": extra_restricted,
                     "imageFamilies": {"ubuntu": ubuntu, "azureLinux": prov.string("AzureLinuxImageFamily"),
                                       "osSku": os_sku}},
    }


def _braced(src: str, open_at: int) -> str:
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


def crd_facts(src: Path) -> dict[str, Any]:
    """The CEL rules on label keys and requirements and the requirement operators (pkg/apis/crds)."""
    targets = {
        "nodePoolLabels": ("karpenter.sh_nodepools.yaml", "spec.template.metadata.labels", "map"),
        "nodePoolRequirements": ("karpenter.sh_nodepools.yaml", "spec.template.spec.requirements.[].key", "key"),
        "nodeClaimRequirements": ("karpenter.sh_nodeclaims.yaml", "spec.requirements.[].key", "key"),
    }
    schemas: dict[str, dict] = {}

    def schema(file: str) -> dict:
        if file not in schemas:
            path = src / "pkg/apis/crds" / file
            try:
                doc = yaml.safe_load(read_source(path))
            except yaml.YAMLError as e:
                raise SyncError(f"{path}: {e}") from None
            versions = doc["spec"]["versions"]
            storage = next((v for v in versions if v.get("storage")), versions[0])
            schemas[file] = storage["schema"]["openAPIV3Schema"]
        return schemas[file]

    rules: list[dict[str, Any]] = []
    for target, (file, dotted, kind) in targets.items():
        node = _schema_at(schema(file), dotted, file)
        for v in node.get("x-kubernetes-validations") or ():
            text = v["rule"].strip()
            if kind == "map":
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
    reqs = _schema_at(schema("karpenter.sh_nodepools.yaml"), "spec.template.spec.requirements", "nodepools")
    requirement_rules = [{"message": v["message"], "rule": v["rule"].strip()}
                         for v in reqs.get("x-kubernetes-validations") or ()]
    operators = list((reqs.get("items") or {}).get("properties", {}).get("operator", {}).get("enum") or ())
    ordered = [o for o in ("In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt", "Gte", "Lte") if o in operators]
    ordered += [o for o in operators if o not in ordered]
    return {"crd": {"operators": ordered, "requirementRules": requirement_rules, "keyRules": rules},
            "core": {"operators": list(ordered)},
            "aksNodeClass": aksnodeclass_facts(src)}


# What admission reads from a CRD schema node (harness.model.aksnodeclass); descriptions and list-map
# markers are dropped.
_SCHEMA_KEYS = ("type", "format", "enum", "default", "minimum", "maximum", "minLength", "maxLength", "pattern",
                "minItems", "maxItems", "required", "x-kubernetes-validations")


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
    """The storage version's `spec` schema of pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml:
    defaults, enums, bounds, patterns and CEL rules, which the API server applies on admission."""
    path = src / "pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml"
    try:
        doc = yaml.safe_load(read_source(path))
    except yaml.YAMLError as e:
        raise SyncError(f"{path}: {e}") from None
    versions = doc["spec"]["versions"]
    storage = next((v for v in versions if v.get("storage")), versions[-1])
    spec = (storage["schema"]["openAPIV3Schema"].get("properties") or {}).get("spec")
    if not isinstance(spec, dict):
        raise SyncError(f"{path}: version {storage['name']} has no spec schema")
    return {"version": storage["name"], "spec": _prune_schema(spec)}


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
        "and karpenter.sh_nodeclaims.yaml, and the AKSNodeClass spec schema of karpenter.azure.com_aksnodeclasses.yaml.",
        "Do not edit: re-run the sync. Loaded beneath the profile that names this directory as `derived`",
        "(harness.model.profile).",
    ]
    facts_text = _header(head) + yaml.safe_dump(facts, sort_keys=False, width=200, allow_unicode=True)
    files = {
        "supported-gpus.yaml": supported_gpus_file(src, origin),
        "known-skus.txt": known_skus_file(src, origin),
        "restricted-skus.yaml": restricted_skus_file(resolver, origin),
        FACTS_FILE: facts_text,
    }
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


# == writing ========================================================================================
def profile_text(name: str, origin: str) -> str:
    return (f"# Profile: a provider working copy ({origin}), made by `python -m harness.model.sync --profile-name {name}`.\n"
            f"# Its tables and provider facts are in harness/data/derived/{name}/; everything else is upstream's.\n"
            f"extends: upstream\n"
            f"derived: derived/{name}\n"
            f"description: >-\n  upstream with the data derived from {origin}.\n")


def plan(derived: Derived, target_dir: Path) -> dict[Path, str]:
    return {target_dir / name: text for name, text in derived.files.items()}


def diff(files: dict[Path, str], root: Path) -> str:
    out = []
    for path, text in files.items():
        old = path.read_text() if path.exists() else ""
        if old != text:
            rel = os.path.relpath(path, root)
            out.extend(difflib.unified_diff(old.splitlines(keepends=True), text.splitlines(keepends=True),
                                            f"a/{rel}", f"b/{rel}"))
    return "".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m harness.model.sync", description=__doc__.split("\n\n")[0])
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--provider-module", metavar="VERSION", help="provider module version (default v1.14.0)")
    src.add_argument("--provider-src", metavar="DIR", help="a provider checkout")
    ap.add_argument("--profile-name", metavar="NAME",
                    help="write a new profile NAME (extends: upstream) instead of regenerating upstream's data")
    ap.add_argument("--check", action="store_true", help="print the diff and exit 1 if any, writing nothing")
    ap.add_argument("--data-dir", default=str(DATA_DIR), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    data_dir = Path(args.data_dir)
    try:
        provider_dir, origin, versions, modules = load_source(args.provider_module, args.provider_src)
        derived = derive(provider_dir, origin, versions, modules)
    except SyncError as e:
        print(f"sync: {e}", file=sys.stderr)
        return 2
    if args.profile_name:
        if not re.fullmatch(r"[a-z0-9][a-z0-9._-]*", args.profile_name) or args.profile_name == "upstream":
            print(f"sync: invalid profile name {args.profile_name!r}", file=sys.stderr)
            return 2
        files = plan(derived, data_dir / "derived" / args.profile_name)
        files[data_dir / "profiles" / f"{args.profile_name}.yaml"] = profile_text(args.profile_name, origin)
    else:
        files = plan(derived, data_dir)
    text = diff(files, data_dir.parent.parent)
    sys.stdout.write(text or "no changes\n")
    if args.check:
        return 1 if text else 0
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content)
    return 0


if __name__ == "__main__":
    sys.exit(main())
