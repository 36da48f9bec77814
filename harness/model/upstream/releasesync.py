"""One profile per provider release, derived from each release's own source (`python -m harness.model.sync
--provider-git DIR --releases all`).

Why it is built this way: docs/architecture/model.md."""
from __future__ import annotations

import copy
import fnmatch
import functools
import json
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import yaml

from harness.model.upstream import derivation as sync
from harness.model.upstream.corespec import core_probes
from harness.model.data import DATA_DIR, load_yaml
from harness.model.upstream.gosource import (
    GoResolver,
    SyncError,
    balanced,
    read_source,
    strip_comments,
)

LINES = ("v0.5", "v0.6", "v0.7", "v1.4", "v1.5", "v1.6", "v1.7", "v1.10", "v1.12", "v1.13", "v1.14")
RELEASES_DIR = "releases"
INDEX_FILE = "index.yaml"
PROBES_FILE = "release-probes.yaml"
PRICES_DIR = "prices"
_TAG = re.compile(r"^v(\d+)\.(\d+)\.(\d+)$")
# Keys whose derived value is complete: they replace the parent profile's value instead of merging
# into it (harness.model.upstream.profile `!`).
REPLACE = {("core", "wellKnownValues"), ("core", "normalizedLabelValues"), ("provider", "imageFamilies"),
           ("provider", "nodeClassHash"),
           ("aksNodeClass",), ("nodePool",), ("nodeClaim",), ("nodeOverlay",), ("crdVersions",), ("apis",)}
# Facts that are the release's identity, not its behaviour (left out when deciding what differs).
IDENTITY = {("release",), ("core", "version"), ("provider", "version")}


def tag_key(tag: str) -> tuple[int, int, int]:
    m = _TAG.match(tag)
    if m is None:
        raise ValueError(tag)
    return int(m.group(1)), int(m.group(2)), int(m.group(3))


def line_of(tag: str) -> str:
    major, minor, _ = tag_key(tag)
    return f"v{major}.{minor}"


# == git ============================================================================================
def git(git_dir: Path, *args: str, binary: bool = False) -> Any:
    try:
        out = subprocess.run(["git", "--git-dir", str(git_dir), *args], capture_output=True, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
        raise SyncError(f"{git_dir}: git {' '.join(args[:2])}: {e}") from None
    if out.returncode != 0:
        raise SyncError(f"{git_dir}: git {' '.join(args)}: {out.stderr.decode(errors='replace').strip()}")
    return out.stdout if binary else out.stdout.decode(errors="replace")


def git_dir_of(path: str | Path) -> Path:
    """The git directory of a checkout or of a bare/mirror repository."""
    p = Path(path).expanduser()
    if (p / ".git").exists():
        p = p / ".git"
    if not (p / "HEAD").exists():
        raise SyncError(f"{path}: not a git directory or checkout")
    return p


def release_tags(git_dir: Path, lines: tuple[str, ...] = LINES) -> list[str]:
    tags = [t for t in git(git_dir, "tag", "--list").split() if _TAG.match(t) and line_of(t) in lines]
    return sorted(tags, key=tag_key)


def extract(git_dir: Path, rev: str, dest: Path, paths: tuple[str, ...] = ("go.mod", "pkg")) -> Path:
    """`git archive rev paths | tar -x -C dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    data = git(git_dir, "archive", "--format=tar", rev, *paths, binary=True)
    out = subprocess.run(["tar", "-x", "-C", str(dest)], input=data, capture_output=True, timeout=300)
    if out.returncode != 0:
        raise SyncError(f"{dest}: tar: {out.stderr.decode(errors='replace').strip()}")
    return dest


def commit_info(git_dir: Path, rev: str) -> tuple[str, str]:
    """(full commit id, commit date) of a tag or commit."""
    sha, date = git(git_dir, "log", "-1", "--format=%H %cs", rev).split()
    return sha, date


def file_at(git_dir: Path, rev: str, path: str) -> str | None:
    try:
        return git(git_dir, "show", f"{rev}:{path}")
    except SyncError:
        return None


# == the modules a tag pins =========================================================================
def replaces(go_mod: str) -> dict[str, tuple[str, str]]:
    """module -> (replacement module, version) of go.mod's `replace` directives."""
    out = {}
    for m in re.finditer(r"^\s*(?:replace\s+)?([\w./~-]+)(?:\s+v[\w.+-]+)?\s*=>\s*([\w./~-]+)\s+(v[\w.+-]+)\s*$",
                         go_mod, re.M):
        out[m.group(1)] = (m.group(2), m.group(3))
    return out


def core_source(src: Path, versions: dict[str, str], core_git: Path | None, scratch: Path) -> tuple[Path, str]:
    """(directory of the core module the tag builds with, its description). A `replace` of
    sigs.k8s.io/karpenter by a pseudo-version is tried on the Go module proxy, then read from
    `core_git` (kubernetes-sigs/karpenter's history) at the pseudo-version's commit."""
    core = sync.CORE_MODULE
    repl = replaces(read_source(src / "go.mod")).get(core)
    if repl is None:
        return sync.module_dir(core, versions[core]), versions[core]
    module, version = repl
    try:
        return sync.module_dir(module, version), f"{version} ({module}, go.mod replace)"
    except SyncError as proxy_error:
        commit = version.rsplit("-", 1)[-1]
        if core_git is None or not re.fullmatch(r"[0-9a-f]{12,40}", commit):
            raise SyncError(f"{src / 'go.mod'}: replaces {core} by {module} {version}, which the module proxy "
                            f"does not serve ({proxy_error}); give --core-git with kubernetes-sigs/karpenter's "
                            "history") from None
        dest = scratch / f"core-{commit}"
        if not dest.exists():
            extract(core_git, commit, dest, ("go.mod", "pkg"))
        return dest, f"{version} ({module}, go.mod replace, from the core history at {commit})"


# == behaviour probes ===============================================================================
@functools.lru_cache(maxsize=None)
def probes_spec(data_dir: str = str(DATA_DIR)) -> tuple[dict, ...]:
    path = Path(data_dir) / PROBES_FILE
    # core's behaviour switches are probes too (harness/data/core-behaviour.yaml, harness.model.coresync)
    return tuple(load_yaml(path.read_text())["probes"]) + core_probes(data_dir)


def _func_body(src: str, name: str) -> str:
    """The body of `func name(...)` (or of a method of that name), "" when the file has none."""
    m = re.search(rf"^func (?:\([^)]*\)\s*)?{re.escape(name)}\(", src, re.M)
    if m is None:
        return ""
    params = balanced(src, m.end() - 1, Path(name))
    brace = re.compile(r"\{[ \t]*\n").search(src, m.end() + len(params))
    return sync.braced(src, brace.start()) if brace else ""


def _struct_body(src: str, name: str) -> str:
    """The body of `type name struct {...}`, "" when the file has none."""
    m = re.search(rf"^type {re.escape(name)} struct\s*\{{", src, re.M)
    return sync.braced(src, m.end() - 1) if m else ""


def _names(value: str | list | None) -> list[str]:
    return [value] if isinstance(value, str) else list(value or ())


def _probe_text(probe: dict, read: Callable[[str], list[tuple[str, str]]]) -> str:
    """The comment-free text of the probe's files: only the bodies of `func` (a name or a list of names, each
    file's in that order) and of `struct` when given; with `firstFile`, only the first file in `files` order
    that holds any of them."""
    parts = []
    files = list(read(probe.get("module", "provider")))
    if probe.get("firstFile"):
        files.sort(key=lambda f: next((i for i, g in enumerate(probe["files"]) if fnmatch.fnmatch(f[0], g)),
                                      len(probe["files"])))
    for name, text in files:
        if name.endswith("_test.go") or not any(fnmatch.fnmatch(name, g) for g in probe["files"]):
            continue
        text = strip_comments(text) if name.endswith(".go") else text
        if probe.get("func") or probe.get("struct"):
            found = [_func_body(text, f) for f in _names(probe.get("func"))]
            found += [_struct_body(text, t) for t in _names(probe.get("struct"))]
        else:
            found = [text]
        parts += found
        if probe.get("firstFile") and any(found):
            break
    return "\n".join(p for p in parts if p)


def evaluate_probe(probe: dict, read: Callable[[str], list[tuple[str, str]]],
                   resolver: GoResolver | None = None) -> Any:
    """The probe's value for one source tree; `read(module)` lists (relative path, text) of candidates."""
    if "setsNew" in probe:
        if resolver is None:
            return None
        pkg_dir = str(Path(probe["files"][0]).parent)
        try:
            pkg = resolver.package(f"{sync.PROVIDER_MODULE}/{pkg_dir}")
        except SyncError:                 # a release without that package
            return copy.deepcopy(probe.get("else"))
        opener = probe.get("opener", "sets.New")       # sets.NewString in older k8s.io/apimachinery style
        return pkg.call_args(probe["setsNew"], opener) if probe["setsNew"] in pkg.decls else probe.get("else")
    if "caseOf" in probe:
        return _case_values(probe, read, resolver)
    text = _probe_text(probe, read)
    if "fromLast" in probe:
        cuts = list(re.finditer(probe["fromLast"], text, re.M))
        text = text[cuts[-1].end():] if cuts else text
    if "between" in probe:
        start, end = probe["between"]
        m = re.search(start, text, re.M)
        stop = re.compile(end, re.M).search(text, m.end()) if m else None
        text = "" if m is None else text[m.end():stop.start() if stop else len(text)]
    if "order" in probe:
        found = [(m.start(), i) for i, e in enumerate(probe["order"]) if (m := re.search(e["match"], text, re.M))]
        return [copy.deepcopy(probe["order"][i]["value"]) for _, i in sorted(found)]
    if "capture" in probe:
        values = list(dict.fromkeys(m.group(1) for m in re.finditer(probe["capture"], text, re.M)))
        if probe.get("all"):
            return values
        return values[0] if values else copy.deepcopy(probe.get("else"))
    if "each" in probe:
        values = [copy.deepcopy(e["value"]) for e in probe["each"]
                  if re.search(e["match"], text, re.M) and not (e.get("unless") and re.search(e["unless"], text, re.M))]
        if probe.get("first"):
            return values[0] if values else probe.get("else")
        return values
    return copy.deepcopy(probe["then"] if re.search(probe["match"], text, re.M) else probe["else"])


_CASE = re.compile(r"^[ \t]*case[ \t]+(.*?):[ \t]*$", re.M)
_CASE_END = re.compile(r"^[ \t]*(?:case[ \t]|default:)", re.M)


def _case_values(probe: dict, read: Callable[[str], list[tuple[str, str]]], resolver: GoResolver | None) -> Any:
    """`caseOf`: the strings accepted by the `case` of `func`'s switch whose body matches the pattern (the
    module doc of release-probes.yaml), each constant and `sets.New` set resolved through the file's package."""
    if resolver is None:
        return None
    module = probe.get("module", "provider")
    module_path = sync.CORE_MODULE if module == "core" else sync.PROVIDER_MODULE
    for name, text in read(module):
        if name.endswith("_test.go") or not any(fnmatch.fnmatch(name, g) for g in probe["files"]):
            continue
        body = _func_body(strip_comments(text), probe["func"])
        for m in _CASE.finditer(body):
            end = _CASE_END.search(body, m.end())
            if not re.search(probe["caseOf"], body[m.end():end.start() if end else len(body)]):
                continue
            pkg = resolver.package(f"{module_path}/{Path(name).parent}")
            out: list[str] = []
            for part in re.split(r",|\|\|", m.group(1)):
                part = part.strip()
                has = re.fullmatch(r"(?:(\w+)\.)?(\w+)\.Has\(.*\)", part)
                if has:
                    owner = resolver.package(pkg.imports[has.group(1)]) if has.group(1) else pkg
                    opener = next((o for o in ("sets.New", "sets.New[string]")
                                   if re.search(rf"\b{has.group(2)}\s*=\s*{re.escape(o)}\(", owner.source(has.group(2)))),
                                  "sets.New")
                    values = owner.call_args(has.group(2), opener)
                else:
                    values = [pkg.expr(part.split("==")[-1].strip(), pkg.dir / Path(name).name)]
                out += [v for v in values if v not in out]
            return out
    return copy.deepcopy(probe.get("else"))


def _tree_reader(roots: dict[str, Path]) -> Callable[[str], list[tuple[str, str]]]:
    @functools.lru_cache(maxsize=None)
    def read(module: str) -> list[tuple[str, str]]:
        root = roots[module]
        out = []
        for p in sorted(root.glob("pkg/**/*")):
            if p.is_file() and p.suffix in (".go", ".yaml"):
                out.append((str(p.relative_to(root)), p.read_text(errors="replace")))
        return out
    return read


def probe_facts(roots: dict[str, Path], resolver: GoResolver, data_dir: Path = DATA_DIR) -> dict[str, Any]:
    """fact path -> value for every probe of release-probes.yaml."""
    read = _tree_reader(roots)
    return {p["fact"]: evaluate_probe(p, read, resolver) for p in probes_spec(str(data_dir))}


def set_path(facts: dict, dotted: str, value: Any) -> None:
    parts = dotted.split(".")
    node = facts
    for part in parts[:-1]:
        node = node.setdefault(part, {})
    node[parts[-1]] = value


def get_path(facts: dict, dotted: str | tuple) -> Any:
    node: Any = facts
    for part in (dotted.split(".") if isinstance(dotted, str) else dotted):
        if not isinstance(node, dict):
            return None
        node = node.get(part, node.get(part + "!"))
    return node


# == tables ==========================================================================================
def known_skus_from_go(resolver: GoResolver, origin: str) -> str | None:
    """Provider v1.4-v1.11 kept the known VM sizes as Go literals (`allAzureVMSkus = []skewer.SKU{{Name:
    ptr.To("...")}, ...}` in pkg/providers/instancetype/skus.go, filtered by GetKarpenterWorkingSKUs)."""
    pkg = resolver.package(f"{sync.PROVIDER_MODULE}/pkg/providers/instancetype")
    if "allAzureVMSkus" not in pkg.decls:
        return None
    src = pkg.source("allAzureVMSkus")
    m = re.search(r"\ballAzureVMSkus\s*=\s*\[\]skewer\.SKU\s*\{", src)
    if m is None:
        return None     # v1.12+: built from known_skus.yaml
    body = sync.braced(src, m.end() - 1)
    names = re.findall(r'Name:\s*\w+\.(?:To|ToPtr)\("([^"]+)"\)', body)
    lines = [
        f"Derived by `python -m harness.model.sync` from {origin} pkg/providers/instancetype/skus.go",
        f"(allAzureVMSkus, {len(names)} names). Do not edit: re-run the sync.",
        "Known VM SKU names, one per line (this release recorded no quota family). SKUs not listed are not",
        "instance types (GetKarpenterWorkingSKUs filter, unknownSKUPolicy: exclude).",
    ]
    return sync.header_comment(lines) + "\n".join(names) + "\n"


def price_table(src: Path, origin: str) -> tuple[str, str] | None:
    """(generation stamp, our matrix text) of pkg/providers/pricing/zz_generated.pricing.go's
    initialOnDemandPrices, or None when the release has no compiled-in table."""
    path = src / "pkg/providers/pricing/zz_generated.pricing.go"
    if not path.exists():
        return None
    text = read_source(path)
    stamp = (re.search(r'InitialPriceUpdate,\s*_\s*=\s*time\.Parse\(time\.RFC3339,\s*"([^"]+)"\)', text)
             or re.search(r"^// generated at (\S+)", text, re.M))
    if stamp is None:
        raise SyncError(f"{path}: no generation time (InitialPriceUpdate or `// generated at`)")
    tables: dict[str, dict[str, str]] = {}
    for m in re.finditer(r'initialOnDemandPrices\["([^"]+)"\]\s*=\s*map\[string\]float64\{(.*?)\n\s*\}', text, re.S):
        tables[m.group(1)] = {k: _price(v) for k, v in re.findall(r'"([^"]+)":\s*([0-9.eE+-]+),', m.group(2))}
    if not tables:
        raise SyncError(f"{path}: no initialOnDemandPrices[region] maps")
    regions = sorted(tables)
    sizes = sorted({s for t in tables.values() for s in t})
    head = [
        f"Derived by `python -m harness.model.sync` from {origin} pkg/providers/pricing/zz_generated.pricing.go",
        f"(initialOnDemandPrices, generated at {stamp.group(1)}: {len(regions)} regions, {len(sizes)} sizes). Do not edit.",
        "The provider's compiled-in on-demand prices (USD per hour), which it keeps when it does not poll the",
        "Retail Prices API (NewProvider, pkg/providers/pricing/pricing.go: outside the public cloud, spot = on-demand).",
        "First line: `regions`, a tab and the region names; then one line per VM size: its name (which may hold",
        "spaces), a tab and its price in each region, in that order, `-` where the region has none. Read by",
        "harness.model.upstream.skutables.compiled_prices.",
    ]
    rows = ["regions\t" + " ".join(regions)]
    rows += [s + "\t" + " ".join(tables[r].get(s, "-") for r in regions) for s in sizes]
    return stamp.group(1), sync.header_comment(head) + "\n".join(rows) + "\n"


def _price(literal: str) -> str:
    value = float(literal)
    text = f"{value:.6f}".rstrip("0").rstrip(".")
    return text if float(text) == value else repr(value)


def price_file_name(stamp: str) -> str:
    return re.sub(r"[^0-9A-Za-z]+", "-", stamp).strip("-") + ".txt"


# == one release =====================================================================================
@dataclass
class Release:
    tag: str
    commit: str
    date: str
    core: str
    facts: dict[str, Any]
    files: dict[str, str]                     # file name -> text (under the profile's directory)
    prices: tuple[str, str] | None = None     # (stamp, text)
    evidence: dict[str, Any] = field(default_factory=dict)

    @property
    def key(self) -> str:
        """What must be equal for two releases to share a profile: every fact but their identity, the
        tables (less their headers) and the price table's stamp."""
        facts = {k: v for k, v in self.facts.items() if (k,) not in IDENTITY}
        for section, key in (i for i in IDENTITY if len(i) == 2):
            if isinstance(facts.get(section), dict):
                facts[section] = {k: v for k, v in facts[section].items() if k != key}
        tables = {n: "\n".join(l for l in t.splitlines() if not l.startswith("#"))
                  for n, t in self.files.items() if n != sync.FACTS_FILE}
        return json.dumps([facts, tables, self.prices[0] if self.prices else None], sort_keys=True)


def _mark_replace(facts: dict) -> dict:
    """The facts with `!` on each REPLACE key, every key keeping its place (the output is deterministic)."""
    def walk(node: dict, path: tuple) -> dict:
        out = {}
        for k, v in node.items():
            here = path + (k,)
            key = k + "!" if here in REPLACE else k
            out[key] = walk(v, here) if isinstance(v, dict) and len(here) < 2 and key == k else copy.deepcopy(v)
        return out
    return walk(facts, ())


def derive_source(src: Path, tag: str, commit: str, date: str, core_dir: Path, core_desc: str,
                  data_dir: Path = DATA_DIR) -> Release:
    """Every fact of one provider source tree (at `tag`) with the core module at `core_dir`."""
    versions = sync.required_versions(src)
    origin = f"{sync.PROVIDER_MODULE}@{tag}"
    modules = {sync.PROVIDER_MODULE: src, sync.CORE_MODULE: core_dir,
               sync.K8S_API_MODULE: sync.module_dir(sync.K8S_API_MODULE, versions[sync.K8S_API_MODULE])}
    derived = sync.derive(src, origin, versions, modules)
    resolver = GoResolver(modules)
    facts = derived.facts
    for dotted, value in probe_facts({"provider": src, "core": core_dir}, resolver, data_dir).items():
        if value is not None:
            set_path(facts, dotted, value)
    facts["core"]["version"] = core_desc.split(" ", 1)[0]
    facts["provider"]["version"] = tag
    facts["release"] = {"provider": tag, "commit": commit, "date": date, "core": core_desc,
                        "k8sApi": versions.get(sync.K8S_API_MODULE, "")}
    files = dict(derived.files)
    if "known-skus.txt" not in files:
        go_known = known_skus_from_go(resolver, origin)
        if go_known is not None:
            files["known-skus.txt"] = go_known
    prices = price_table(src, origin)
    if prices is not None:
        facts["provider"]["compiledPrices"] = {"generatedAt": prices[0],
                                               "table": f"{RELEASES_DIR}/{PRICES_DIR}/{price_file_name(prices[0])}"}
    facts = {k: facts[k] for k in ("release", "apis", "core", "crd", "crdVersions", "aksNodeClass", "nodePool",
                                   "nodeClaim", "nodeOverlay", "provider")
             if k in facts}
    head = [
        f"Derived by `python -m harness.model.sync --provider-git` from {origin} (commit {commit[:12]}, {date}) with",
        f"{sync.CORE_MODULE} {core_desc} and {sync.K8S_API_MODULE}@{versions.get(sync.K8S_API_MODULE)}: the",
        "label facts of pkg/apis/{v1beta1,v1alpha2}/labels.go init() over core pkg/apis/{v1,v1beta1}/labels.go, the",
        "CRDs of pkg/apis/crds (served API versions, CEL rules, required fields, AKSNodeClass/NodePool/NodeClaim/"
        "NodeOverlay",
        "spec schemas), and the behaviour probes of harness/data/release-probes.yaml. Do not edit: re-run the sync.",
        "A key ending in `!` replaces the value of the profile it extends (harness.model.upstream.profile).",
    ]
    files[sync.FACTS_FILE] = sync.header_comment(head) + yaml.safe_dump(_mark_replace(facts), sort_keys=False, width=200,
                                                                    allow_unicode=True)
    return Release(tag, commit, date, core_desc, facts, files, prices)


def derive_tag(git_dir: Path, tag: str, scratch: Path, core_git: Path | None,
               data_dir: Path = DATA_DIR) -> Release:
    src = extract(git_dir, tag, scratch / tag)
    commit, date = commit_info(git_dir, tag)
    versions = sync.required_versions(src)
    for mod in (sync.CORE_MODULE, sync.K8S_API_MODULE):
        if mod not in versions:
            raise SyncError(f"{tag}: go.mod does not require {mod}")
    core_dir, core_desc = core_source(src, versions, core_git, scratch)
    return derive_source(src, tag, commit, date, core_dir, core_desc, data_dir)


# == grouping and what changed =======================================================================
@dataclass
class Group:
    releases: list[Release]

    @property
    def name(self) -> str:
        return self.releases[-1].tag

    @property
    def newest(self) -> Release:
        return self.releases[-1]

    @property
    def covers(self) -> list[str]:
        return [r.tag for r in self.releases]


def group(releases: list[Release]) -> list[Group]:
    """Consecutive releases of a line with equal facts share a profile."""
    groups: list[Group] = []
    for r in sorted(releases, key=lambda r: tag_key(r.tag)):
        last = groups[-1] if groups else None
        if last is not None and line_of(last.name) == line_of(r.tag) and last.newest.key == r.key:
            last.releases.append(r)
        else:
            groups.append(Group([r]))
    return groups


def _leaves(facts: Any, path: tuple = ()) -> dict[tuple, Any]:
    """Comparable leaves: dicts are walked (`!` dropped from keys); lists and scalars are leaves."""
    if isinstance(facts, dict) and facts:
        out: dict[tuple, Any] = {}
        for k, v in facts.items():
            out.update(_leaves(v, path + (k.rstrip("!"),)))
        return out
    return {path: facts}


_DEEP = {("provider", "requirements"), ("provider", "zones"), ("provider", "offerings"), ("provider", "drift"),
         ("provider", "nodeClassHash"), ("crdVersions",)}


def report_path(path: tuple) -> tuple:
    """The granularity changes are reported at: `section.key`, one level deeper for the switch maps and
    the other API versions' rules."""
    if path[:1] in _DEEP or path[:2] in _DEEP:
        return path[:3]
    return path[:2]


def comparable(r: Release) -> dict[tuple, Any]:
    """The release's facts and tables at report granularity (identity left out)."""
    leaves = {p: v for p, v in _leaves(r.facts).items() if p[:1] != ("release",) and p not in IDENTITY}
    out: dict[tuple, Any] = {}
    for p, v in leaves.items():
        out.setdefault(report_path(p), {})[p] = v
    for name, text in r.files.items():
        if name != sync.FACTS_FILE:
            out[("tables", name)] = "\n".join(l for l in text.splitlines() if not l.startswith("#"))
    return out


def diff_facts(old: Release, new: Release) -> list[tuple]:
    """The report paths whose facts (or tables) differ between two releases."""
    a, b = comparable(old), comparable(new)
    return [p for p in sorted(set(a) | set(b), key=lambda t: ".".join(t)) if a.get(p) != b.get(p)]


def source_kind(path: tuple) -> tuple[str, tuple[str, ...]]:
    """(how the fact is derived, the provider paths it is derived from)."""
    if path[0] in ("crd", "crdVersions", "apis", "aksNodeClass", "nodePool", "nodeClaim", "nodeOverlay") or \
            path[:2] == ("core", "operators"):
        return "crds", ("pkg/apis/crds",)
    if path[0] == "tables":
        return {"supported-gpus.yaml": ("gpus", ("pkg/utils/supported-gpus.yaml",)),
                "known-skus.txt": ("list", ("pkg/providers/instancetype/known_skus.yaml",
                                            "pkg/providers/instancetype/skus.go")),
                "restricted-skus.yaml": ("list", ("pkg/providers/instancetype/skus.go",
                                                  "pkg/providers/instancetype/restricted.go"))}[path[1]]
    if path[:2] == ("provider", "compiledPrices"):
        return "list", ("pkg/providers/pricing/zz_generated.pricing.go",)
    dotted = ".".join(path)
    matching = [p for p in probes_spec()
                if dotted == p["fact"] or p["fact"].startswith(dotted + ".") or dotted.startswith(p["fact"] + ".")]
    if matching and matching[0].get("module") == "core":
        return "core", ("go.mod",)
    # a report path over several probes (provider.aksMachine): the sources of every provider probe under it
    sources = {str(Path(g).parent) if "*" in g else g for p in matching if p.get("module") != "core"
               for g in p["files"]} | {r for p in matching if p.get("module") != "core" for r in p.get("reads") or ()}
    if sources:
        return "probe", tuple(sorted(sources))
    return "labels", ("pkg/apis/v1beta1", "pkg/apis/v1alpha2")


def commits_between(git_dir: Path, old: str, new: str, paths: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """(commit, date, subject) of the non-merge commits in old..new touching `paths`, oldest first."""
    out = git(git_dir, "log", "--no-merges", "--reverse", "--topo-order", "--format=%H%x09%cs%x09%s",
               f"{old}..{new}", "--", *paths)
    return [tuple(line.split("\t", 2)) for line in out.splitlines() if line.strip()]  # type: ignore[misc]


class Attributor:
    """Finds the commits that changed each differing fact between two tags: the candidates are the commits
    in old..new touching the fact's sources; each is evaluated on the new tag's tree with those sources
    as they were after the commit, and the commits after which the value changed are kept."""

    def __init__(self, git_dir: Path, scratch: Path, core_dirs: dict[str, Path]):
        self.git_dir = git_dir
        self.scratch = scratch
        self.core_dirs = core_dirs      # tag -> its core module directory

    def _value(self, kind: str, tree: Path, core_dir: Path, tag: str) -> dict[tuple, Any]:
        """Report path -> leaves of the derivation `kind` on `tree`."""
        if kind == "crds":
            facts = sync.crd_facts(tree)
        elif kind == "gpus":
            text = sync.supported_gpus_file(tree, tag)
            return {("tables", "supported-gpus.yaml"): "\n".join(l for l in text.splitlines() if not l.startswith("#"))}
        elif kind == "labels":
            facts = sync.label_facts(GoResolver(self._modules(tree, core_dir)))
        elif kind == "probe":
            read = _tree_reader({"provider": tree, "core": core_dir})
            resolver = GoResolver(self._modules(tree, core_dir))
            facts = {}
            for p in probes_spec():
                if p.get("module", "provider") == "provider":
                    try:
                        set_path(facts, p["fact"], evaluate_probe(p, read, resolver))
                    except SyncError:
                        continue    # one probe that cannot read this commit does not blank the others
        else:
            return {}
        out: dict[tuple, Any] = {}
        for p, v in _leaves(facts).items():
            out.setdefault(report_path(p), {})[p] = v
        return out

    def _modules(self, tree: Path, core_dir: Path) -> dict[str, Path]:
        k8s = sync.required_versions(tree).get(sync.K8S_API_MODULE)
        modules = {sync.PROVIDER_MODULE: tree, sync.CORE_MODULE: core_dir}
        if k8s:
            modules[sync.K8S_API_MODULE] = sync.module_dir(sync.K8S_API_MODULE, k8s)
        return modules

    def changes(self, old: Release, new: Release, paths: list[tuple]) -> list[dict[str, Any]]:
        """[{fact, commits: [{commit, date, subject}]}] for the differing report paths."""
        by_kind: dict[tuple[str, tuple[str, ...]], list[tuple]] = {}
        for p in paths:
            by_kind.setdefault(source_kind(p), []).append(p)
        out = []
        new_tree = self.scratch / new.tag
        linear = is_ancestor(self.git_dir, old.tag, new.tag)
        for (kind, sources), facts in by_kind.items():
            candidates = commits_between(self.git_dir, old.tag, new.tag, sources)
            found: dict[tuple, list[tuple[str, str, str]]] = {p: [] for p in facts}
            if kind in ("crds", "gpus", "labels", "probe") and candidates:
                work = self.scratch / "narrow"
                if work.exists():
                    shutil.rmtree(work)
                shutil.copytree(new_tree, work, symlinks=True)
                core_dir = self.core_dirs[new.tag]
                prev = self._value_at(kind, sources, old.tag, work, core_dir)
                for c in candidates:
                    value = self._value_at(kind, sources, c[0], work, core_dir)
                    for p in facts:
                        if value.get(p) != prev.get(p):
                            found[p].append(c)
                    prev = value
            core_bumps: list[tuple[str, str, str]] | None = None
            for p in facts:
                commits = found[p]
                entry: dict[str, Any] = {"fact": ".".join(p)}
                if not commits and kind in ("labels", "core") and old.core != new.core:
                    # the provider's sources did not change it: the core version did
                    if core_bumps is None:
                        core_bumps = [c for c in commits_between(self.git_dir, old.tag, new.tag, ("go.mod",))
                                      if self._core_changed(c[0])]
                    commits = core_bumps
                    entry["core"] = f"{old.core.split(' ', 1)[0]} -> {new.core.split(' ', 1)[0]}"
                elif not commits and kind != "core":
                    commits = candidates
                    entry["narrowed"] = False
                entry["commits"] = [{"commit": c[0][:12], "date": c[1], "subject": c[2]} for c in commits[-8:]]
                if not linear:
                    entry["note"] = (f"{old.tag} is not an ancestor of {new.tag} (separate release branches): a "
                                     "backport on one branch can make the value differ; the commits are "
                                     f"{old.tag}..{new.tag}'s that changed it")
                if not entry["commits"]:
                    entry["note"] = (f"no commit in {old.tag}..{new.tag} changed it: the two tags are on release "
                                     "branches that differ here")
                out.append(entry)
        return sorted(out, key=lambda e: e["fact"])

    def _core_changed(self, sha: str) -> bool:
        text = git(self.git_dir, "show", "--format=", sha, "--", "go.mod")
        return bool(re.search(r"^[-+]\s*(?:replace\s+)?sigs\.k8s\.io/karpenter\s", text, re.M))

    def _value_at(self, kind: str, sources: tuple[str, ...], rev: str, work: Path, core_dir: Path) -> dict:
        for src in sources:
            target = work / src
            if target.is_dir():
                shutil.rmtree(target)
            elif target.exists():
                target.unlink()
            if _git_has(self.git_dir, rev, src):
                extract(self.git_dir, rev, work, (src,))
        try:
            return self._value(kind, work, core_dir, rev)
        except SyncError:
            return {}


def is_ancestor(git_dir: Path, old: str, new: str) -> bool:
    try:
        git(git_dir, "merge-base", "--is-ancestor", old, new)
        return True
    except SyncError:
        return False


def _git_has(git_dir: Path, rev: str, path: str) -> bool:
    try:
        git(git_dir, "cat-file", "-e", f"{rev}:{path}")
        return True
    except SyncError:
        return False


# == writing ==========================================================================================
def profile_file_text(g: Group) -> str:
    r = g.newest
    covers = g.covers
    span = covers[0] if len(covers) == 1 else f"{covers[0]}-{covers[-1]}"
    return (f"# Generated by `python -m harness.model.sync --provider-git DIR --releases all` from the provider's\n"
            f"# release {span} (harness/data/releases/{INDEX_FILE}). Do not edit: re-run the sync.\n"
            f"# Facts the sync does not derive are upstream's (the profile this one extends).\n"
            f"extends: upstream\n"
            f"derived: {RELEASES_DIR}/{g.name}\n"
            f"description: >-\n"
            f"  Azure/karpenter-provider-azure {span} with sigs.k8s.io/karpenter {r.core.split(' ', 1)[0]},\n"
            f"  derived from the release's source.\n")


def index_text(groups: list[Group], changes: dict[str, list[dict]], git_origin: str) -> str:
    head = [
        "Generated by `python -m harness.model.sync --provider-git DIR --releases all`. Do not edit: re-run the sync.",
        "The provider release profiles: which tags each covers (consecutive patches with equal facts), the",
        "sigs.k8s.io/karpenter version it builds with, and what differs from the profile before it, with the",
        "upstream commits (github.com/Azure/karpenter-provider-azure) after which the derived value changed",
        "(`narrowed: false`: the commits touching the fact's sources, none of which alone changed it).",
        f"Read by harness.model.upstream.releases. Source: {git_origin}.",
    ]
    doc: dict[str, Any] = {"lines": list(LINES), "newest": groups[-1].name, "profiles": {}}
    prev = None
    for g in groups:
        r = g.newest
        entry: dict[str, Any] = {"line": line_of(g.name), "covers": g.covers, "commit": r.commit[:12],
                                 "date": r.date, "core": r.core}
        if prev is not None:
            entry["previous"] = prev
            entry["changes"] = changes.get(g.name, [])
        doc["profiles"][g.name] = entry
        prev = g.name
    return sync.header_comment(head) + yaml.safe_dump(doc, sort_keys=False, width=160, allow_unicode=True)


def generate(git_dir: Path, tags: list[str], core_git: Path | None, data_dir: Path = DATA_DIR,
             attribute: bool = True, log: Callable[[str], None] = lambda s: None) -> dict[Path, str]:
    """Every file the release profiles consist of: path -> text."""
    with tempfile.TemporaryDirectory(prefix="harness-releases-") as tmp:
        scratch = Path(tmp)
        releases: list[Release] = []
        core_dirs: dict[str, Path] = {}
        for tag in tags:
            log(f"deriving {tag}")
            r = derive_tag(git_dir, tag, scratch, core_git, data_dir)
            releases.append(r)
            core_dirs[tag] = _core_dir_for(scratch / tag, core_git, scratch)
        groups = group(releases)
        changes: dict[str, list[dict]] = {}
        if attribute:
            att = Attributor(git_dir, scratch, core_dirs)
            for a, b in zip(groups, groups[1:]):
                within = line_of(a.name) == line_of(b.name)
                old = a.newest
                new = b.releases[0] if within else b.newest
                log(f"attributing {old.tag} -> {new.tag}")
                changes[b.name] = att.changes(old, new, diff_facts(old, new))
        files: dict[Path, str] = {}
        root = data_dir / RELEASES_DIR
        for g in groups:
            r = g.newest
            for name, text in r.files.items():
                files[root / g.name / name] = text
            if r.prices is not None:
                files[root / PRICES_DIR / price_file_name(r.prices[0])] = r.prices[1]
            files[data_dir / "profiles" / f"{g.name}.yaml"] = profile_file_text(g)
        files[root / INDEX_FILE] = index_text(groups, changes, git_origin=_origin_url(git_dir))
        upstream = data_dir / "profiles" / "upstream.yaml"
        text = upstream.read_text()
        files[upstream] = re.sub(r"^derived: .*$", f"derived: {RELEASES_DIR}/{groups[-1].name}", text, count=1,
                                 flags=re.M)
        return files


def _core_dir_for(src: Path, core_git: Path | None, scratch: Path) -> Path:
    versions = sync.required_versions(src)
    return core_source(src, versions, core_git, scratch)[0]


def _origin_url(git_dir: Path) -> str:
    try:
        url = git(git_dir, "config", "--get", "remote.origin.url").strip()
    except SyncError:
        url = ""
    return url or sync.PROVIDER_MODULE


def stale(files: dict[Path, str], data_dir: Path) -> list[Path]:
    """Generated files under releases/ (and release profiles) the new generation no longer writes."""
    root = data_dir / RELEASES_DIR
    keep = set(files)
    out = [p for p in root.rglob("*") if p.is_file() and p not in keep] if root.exists() else []
    idx = root / INDEX_FILE
    if idx.exists():
        old = load_yaml(idx.read_text()) or {}
        for name in (old.get("profiles") or {}):
            p = data_dir / "profiles" / f"{name}.yaml"
            if p not in keep and p.exists():
                out.append(p)
    return sorted(out)
