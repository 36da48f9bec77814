"""`harness explain` over many sizes, image families and releases in one call: what the provider of
each release makes of each size under each image family, as a matrix of outcomes.

Each cell follows the provider's path: the API server admits the AKSNodeClass or its release's CRD
refuses it (harness.model.crd.aksnodeclass), then `UpdateInstanceTypes` and `isInstanceTypeSupportedByFilters`
keep or drop the SKU (github.com/Azure/karpenter-provider-azure v1.14.0
pkg/providers/instancetype/instancetypes.go; harness.model.azure.staticpart). The catalog is read once, the
instance types are built once per (release, image family) through harness.model.azure.itcache, and no loop
runs: the single-size `harness explain` runs the loop for the Node's labels. Why this order and how the two
agree: docs/architecture/runner.md.
"""
from __future__ import annotations

from dataclasses import dataclass, field

# the outcome of one cell
OFFERED = "offered"
IMAGE_FAMILY = "dropped-by-image-family"
DROPPED = "dropped"
CRD = "refused-by-crd"
NOT_READY = "nodeclass-not-ready"
NOT_SERVED = "api-version-not-served"
UNKNOWN_SKU = "unknown-sku"

DEFAULT_IMAGE_FAMILY = "Ubuntu2204"
IMAGE_FAMILY_DROP = "GPU SKU not supported by image family "     # harness.model.azure.staticpart's reason


class ExplainError(Exception):
    """Bad `harness explain` input, located at the option (`harness explain --sku X: reason`) or
    at the file and line of `--nodeclass`."""


@dataclass(frozen=True)
class Cell:
    """One (size, image family, release): the outcome, a few words for the matrix and the whole reason."""

    sku: str
    image_family: str
    profile: str
    outcome: str
    short: str
    detail: str
    source: str = ""
    data: dict = field(default_factory=dict, compare=False)     # requirements and offerings when offered

    def key(self) -> tuple[str, str]:
        """What makes two cells the same outcome in the details below the matrix (the source names the
        release's tag: releases that answer alike share a note)."""
        return (self.outcome, self.detail)


@dataclass
class Matrix:
    skus: list[str]
    image_families: list[str]
    profiles: list[str]
    region: str
    catalog: str
    cells: list[Cell]
    synthesized: dict[str, str] = field(default_factory=dict)     # size -> how it was made from its name
    notices: list[str] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._by_key = {(c.sku, c.image_family, c.profile): c for c in self.cells}

    def cell(self, sku: str, image_family: str, profile: str) -> Cell:
        return self._by_key[(sku, image_family, profile)]

    def outcomes(self) -> list[tuple[tuple[str, str], list[Cell]]]:
        """The distinct outcomes, in the order the matrix first shows them, with their cells."""
        groups: dict[tuple[str, str], list[Cell]] = {}
        for c in self.cells:
            groups.setdefault(c.key(), []).append(c)
        return list(groups.items())


def split_values(values: list[str] | None) -> list[str]:
    """Repeated options and comma lists as one list, in order, without repeats."""
    out: list[str] = []
    for v in values or ():
        for part in str(v).split(","):
            part = part.strip()
            if part and part not in out:
                out.append(part)
    return out


def expand_profiles(values: list[str]) -> list[str]:
    """`all-releases` (or `all`) as every release profile, oldest first (harness.model.upstream.releases.expand)."""
    from harness.model.upstream import releases
    return releases.expand([releases.ALL_RELEASES if v == "all" else v for v in values])


# -- the AKSNodeClass as the release's API server stores it -------------------------------------
def probe_nodeclass(profile, image_family: str | None, base: dict | None = None) -> dict:
    """The AKSNodeClass a cell is judged with: `base` (the --nodeclass file) as written, or the probe's, in
    the version the release stores (v1alpha2 before provider v1.0), with `image_family` set."""
    import copy

    from harness.model.crd import apiversions
    if base is not None:
        obj = copy.deepcopy(base)
    else:
        version = apiversions.storage(profile, "AKSNodeClass") or "v1beta1"
        obj = {"apiVersion": f"{apiversions.GROUPS['AKSNodeClass']}/{version}", "kind": "AKSNodeClass",
               "metadata": {"name": "default"}, "spec": {}}
    if image_family:
        obj.setdefault("spec", {})["imageFamily"] = image_family
    return obj


def admit_nodeclass(obj: dict, profile, kubernetes_version: str | None) -> tuple[dict | None, Cell | None]:
    """(the stored AKSNodeClass, None) or (None, a cell template naming the refusal): the embedded API
    server's steps (harness/backends/embedded.py _admit) for one object."""
    from harness.model.crd import aksnodeclass, apiversions
    from harness.model.crd.validation import parse_version
    refused = apiversions.served_rejection(obj, profile)
    if refused is not None:
        versions = ", ".join(apiversions.served(profile, "AKSNodeClass"))
        return None, Cell("", "", "", NOT_SERVED, f"{obj.get('apiVersion')} not served",
                          f"the release's CRDs serve AKSNodeClass {versions} only: {refused.message}")
    schema = apiversions.nodeclass_schema(obj, profile)
    if schema is None:
        return obj, None
    admitted = aksnodeclass.admit(obj, schema, parse_version(kubernetes_version))
    if admitted.errors:
        first = admitted.errors[0]
        fieldname = first.field.rsplit(".", 1)[-1] if first.field else "spec"
        return None, Cell("", "", "", CRD, f"refused by CRD ({fieldname})",
                          "the release's AKSNodeClass CRD refuses the class, so the provider builds no instance type "
                          f"for it: {aksnodeclass.rejection(obj, admitted.errors).message}", crd_source(profile))
    return admitted.obj, None


def held_back(stored: dict, profile, cluster) -> Cell | None:
    """A cell template when the provider's status controllers keep the admitted AKSNodeClass from Ready
    (harness.model.crd.aksnodeclass.not_ready, as harness/loop/provisioning/nodepool.py asks it): its NodePools
    are never Ready, so no size launches whatever the filters keep."""
    from harness.model.crd import aksnodeclass
    held = aksnodeclass.not_ready(stored.get("spec") or {}, cluster.use_sig,
                                  bool(profile.provider.get("fipsRequiresSIG")))
    if held is None:
        return None
    condition, reason, message = held
    return Cell("", "", "", NOT_READY, f"AKSNodeClass not Ready ({condition})",
                f"the release's status controllers hold the AKSNodeClass back ({condition}=False, {reason}: "
                f"{message}), so its NodePools are never Ready and no size launches")


def crd_source(profile) -> str:
    """`github.com/Azure/karpenter-provider-azure@v1.6.2 pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml`:
    the CRD the profile's AKSNodeClass schema was derived from (its provider-facts.yaml header, written by
    harness.model.sync)."""
    import re

    from harness.model.data import DATA_DIR
    from harness.model.azure.switches import Switches
    path = DATA_DIR / Switches.of(profile).tables / "provider-facts.yaml"
    first = path.read_text().splitlines()[0] if path.exists() else ""
    m = re.search(r"(github\.com/\S+@[^\s,]+)", first)
    return f"{m.group(1)} pkg/apis/crds/karpenter.azure.com_aksnodeclasses.yaml" if m else ""


# -- one cell ------------------------------------------------------------------------------------
def requirement_view(r) -> dict:
    """A requirement as `{operator, values}` (all values, sorted; bounds and minValues when set),
    the NodeSelectorRequirement shape rather than core's abbreviated String()."""
    view: dict = {"operator": r.operator, "values": sorted(r.values)}
    for name, value in (("gte", r.gte), ("lte", r.lte), ("minValues", r.min_values)):
        if value is not None:
            view[name] = value
    return view


def _dropped_cell(sku: str, family: str, profile, why: str) -> tuple[str, str, str, str]:
    """(outcome, short, detail, source) of a size the release's filters drop, naming the filter. The detail
    leaves the release out, so releases that drop a size alike share one note; the source names the tag."""
    from harness.model.azure.imagefamily import image_family_verdict, table_source
    from harness.model.azure.switches import Switches
    if why.startswith(IMAGE_FAMILY_DROP):
        verdict = image_family_verdict(sku, family, profile)
        return IMAGE_FAMILY, f"dropped by image family {verdict['imageFamily']}", verdict["why"], verdict["source"]
    if why == "unsupported GPU":
        verdict = image_family_verdict(sku, family, profile)
        source = table_source(Switches.of(profile).tables)
        if not verdict["keeps"]:            # the vendor is one the release does not support
            return DROPPED, "dropped: unsupported GPU", verdict["why"], source
        return DROPPED, "dropped: unsupported GPU", (
            "the size has GPUs but the release's GPU table does not list it: isSupported drops it as "
            "'unsupported GPU' before any image-family filter"), source
    return DROPPED, f"dropped: {why}", f"the release's instance-type filters drop it: {why}", ""


# -- the matrix ----------------------------------------------------------------------------------
@dataclass
class Request:
    skus: list[str]
    profiles: list[str]
    image_families: list[str]
    region: str = "southcentralus"
    catalog: str | None = None
    catalog_file: str | None = None
    prices_file: str | None = None
    nodeclass: dict | None = None          # the --nodeclass file's AKSNodeClass
    cluster: dict = field(default_factory=dict)


TEMPLATE_HEAD = """apiVersion: {api_version}
kind: Scenario
metadata: {{name: explain}}
given:
  region: {region}
  catalog: {catalog}
  profiles:
"""


def _scenario(req: Request):
    """The scenario the single-size explain would run, loaded once: region, catalog and synthesized sizes
    as a run resolves them. A size that is neither in the catalog nor a VM size name is left out and
    answered as an unknown SKU; a bad --profile, --region or --catalog is an ExplainError at the option."""
    import json
    from pathlib import Path

    from harness.scenario.load import API_VERSION, load_scenarios_text
    from harness.scenario.yamlsource import SourceError
    catalog = req.catalog or req.region
    if req.catalog_file:                      # the customer's `az vm list-skus` output (and prices)
        catalog = json.dumps({"file": str(Path(req.catalog_file).resolve()),
                              **({"prices": str(Path(req.prices_file).resolve())} if req.prices_file else {})})
    skus = list(req.skus)
    unknown: dict[str, str] = {}
    while True:
        text = TEMPLATE_HEAD.format(api_version=API_VERSION, region=req.region, catalog=catalog)
        lines = {5: ("region", req.region), 6: ("catalog", req.catalog or req.region)}
        if req.catalog_file:
            lines[6] = ("catalog-file", req.catalog_file)
            if req.region == "southcentralus":
                text = text.replace("  region: southcentralus\n", "  # region: the file's own\n")
        if not req.catalog and not req.catalog_file:
            # an unknown region synthesizes the SKUs; the comment keeps the line numbers
            text = text.replace(f"  catalog: {catalog}\n", "  # catalog: the region's own\n")
            lines[6] = ("region", req.region)
        line = 8
        for p in req.profiles:
            text += f"  - {json.dumps(p)}\n"
            lines[line] = ("profile", p)
            line += 1
        text += "  skus:\n"
        line += 1
        for s in skus:
            text += f"  - {json.dumps(s)}\n"
            lines[line] = ("sku", s)
            line += 1
        text += "manifests: []\n"
        try:
            sc = load_scenarios_text(text, "<explain>")[0]
        except SourceError as e:
            option, value = lines.get(e.line or 0, ("", ""))
            if option == "sku":
                unknown[value] = e.reason
                skus.remove(value)
                if skus:
                    continue
                return None, unknown
            where = f"harness explain --{option} {value}" if option else "harness explain"
            raise ExplainError(f"{where}: {e.reason}") from None
        sc.given["cluster"] = dict(req.cluster)
        return sc, unknown


def explain_matrix(req: Request) -> Matrix:
    """Every (size, image family, release) cell of `req`."""
    from harness.model.azure.instancetypes import build_instance_types
    from harness.model.azure.params import ClusterParams, NodeClassParams
    from harness.model.upstream.profile import ProfileError, load_profile
    from harness.scenario.catalogs import scenario_catalog
    from harness.runner.engines.azureside import cluster_settings
    families = req.image_families or [(req.nodeclass or {}).get("spec", {}).get("imageFamily") or DEFAULT_IMAGE_FAMILY]
    profiles = {}
    for name in req.profiles:
        try:
            profiles[name] = load_profile(name)
        except ProfileError as e:
            raise ExplainError(f"harness explain --profile {name}: {e}") from None
    sc, unknown = _scenario(req)
    if sc is not None:
        resolved = scenario_catalog(sc)
        region = sc.region
        try:
            cluster = ClusterParams.from_dict(cluster_settings(sc))
        except (TypeError, ValueError) as e:        # ClusterParams.from_dict: an unknown --cluster key
            raise ExplainError(f"harness explain --cluster {' --cluster '.join(f'{k}={v}' for k, v in req.cluster.items())}: "
                               f"{e}") from None
        by_name = {s["name"]: s for s in resolved.skus}
        skus = [by_name[n] for n in req.skus if n in by_name]
        prices = resolved.prices.get(region.lower()) or None
        synthesized = {n: note for n, note in resolved.synthesized.items() if n in req.skus}
        notices = [n.message for n in sc.warnings if not any(s in n.message for s in synthesized)]
    else:
        region, cluster, skus, prices, synthesized, notices = req.region, None, [], None, {}, []
    catalog = "the customer's SKU file" if req.catalog_file else (req.catalog or region)
    cells: list[Cell] = []
    built: dict[tuple[str, str], tuple] = {}
    for name, profile in profiles.items():
        for fam in families:
            obj = probe_nodeclass(profile, fam, req.nodeclass)
            stored, refusal = admit_nodeclass(obj, profile, cluster.kubernetes_version if cluster else None)
            if stored is not None and cluster is not None and refusal is None:
                refusal = held_back(stored, profile, cluster)
            its = None
            if stored is not None and cluster is not None:
                its = build_instance_types(skus, NodeClassParams.from_manifest(stored), cluster, profile,
                                           prices=prices)
            built[(name, fam)] = (refusal, its)
    for sku in req.skus:
        for fam in families:
            for name, profile in profiles.items():
                cells.append(_cell(sku, fam, name, profile, built[(name, fam)], unknown))
    return Matrix(list(req.skus), families, list(req.profiles), region, catalog, cells, synthesized, notices)


def _cell(sku: str, fam: str, name: str, profile, built: tuple, unknown: dict[str, str]) -> Cell:
    refusal, its = built
    if sku in unknown:
        return Cell(sku, fam, name, UNKNOWN_SKU, "unknown SKU", unknown[sku])
    if refusal is not None:
        return Cell(sku, fam, name, refusal.outcome, refusal.short, refusal.detail, refusal.source)
    it = its.get(sku)
    if it is None:
        why = its.dropped.get(sku, "not listed by the catalog")
        outcome, short, detail, source = _dropped_cell(sku, fam, profile, why)
        return Cell(sku, fam, name, outcome, short, detail, source)
    available = [o for o in it.offerings if o.available]
    data = {"requirements": {k: requirement_view(it.requirements[k]) for k in sorted(it.requirements)},
            "offerings": [{"zone": o.zone, "capacityType": o.capacity_type, "price": o.price,
                           "available": o.available} for o in it.offerings]}
    if not available:
        return Cell(sku, fam, name, OFFERED, "offered, none available",
                    "an instance type, but no offering is available (quota, price or capacity)", data=data)
    return Cell(sku, fam, name, OFFERED, "offered",
                "an instance type of the release under this image family; `harness explain` with one "
                "--sku, --profile and --image-family shows its requirements and the Node's labels", data=data)


def matrix_json(m: Matrix) -> dict:
    """The matrix as data: every cell, and the distinct outcomes the text output footnotes."""
    from harness.model.upstream.releases import modeled_text
    index = {k: i + 1 for i, (k, _) in enumerate(m.outcomes())}
    return {
        "region": m.region, "catalog": m.catalog,
        "skus": m.skus, "imageFamilies": m.image_families,
        "profiles": [{"profile": p, "modeled": modeled_text(p)} for p in m.profiles],
        "synthesized": m.synthesized,
        "cells": [{"sku": c.sku, "imageFamily": c.image_family, "profile": c.profile, "outcome": c.outcome,
                   "short": c.short, "note": index[c.key()], **({"source": c.source} if c.source else {}), **c.data}
                  for c in m.cells],
        "outcomes": [{"note": index[k], "outcome": k[0], "detail": k[1], "cells": len(cs),
                      "profiles": [p for p in m.profiles if any(c.profile == p for c in cs)],
                      "sources": list(dict.fromkeys(c.source for p in m.profiles for c in cs
                                                    if c.profile == p and c.source))}
                     for k, cs in m.outcomes()],
        **({"notices": m.notices} if m.notices else {}),
    }


# more releases than this go down the rows (`all-releases` is 27): a column per release would not fit
WIDE_RELEASES = 6


@dataclass(frozen=True)
class Layout:
    """How the matrix is printed: the row headers' names, the columns' names, and per row its header
    values and the (size, image family, release) of each column."""

    row_names: tuple[str, ...]
    columns: list[str]
    rows: list[tuple[tuple[str, ...], list[tuple[str, str, str]]]]


def layout(m: Matrix) -> Layout:
    """Releases across and sizes x image families down; one release with several image families puts
    the families across; many releases go down, with sizes (x image families) across."""
    if len(m.profiles) > WIDE_RELEASES:
        combos = [(s, f) for s in m.skus for f in m.image_families]
        names = [s if len(m.image_families) == 1 else f"{s} / {f}" for s, f in combos]
        return Layout(("release",), names, [((p,), [(s, f, p) for s, f in combos]) for p in m.profiles])
    if len(m.profiles) == 1 and len(m.image_families) > 1:
        p = m.profiles[0]
        return Layout(("size", "release"), list(m.image_families),
                      [((s, p), [(s, f, p) for f in m.image_families]) for s in m.skus])
    return Layout(("size", "image family"), list(m.profiles),
                  [((s, f), [(s, f, p) for p in m.profiles]) for s in m.skus for f in m.image_families])


def releases_text(profiles: list[str], every: list[str]) -> str:
    """`v1.4.1, v1.6.2`; a run of more than three consecutive releases of the matrix as `v0.5.4 .. v1.7.2 (20)`;
    all of them as `every release asked`."""
    if profiles == every and len(every) > 1:
        return "every release asked"
    pos = [every.index(p) for p in profiles]
    if len(pos) > 3 and pos == list(range(pos[0], pos[0] + len(pos))):
        return f"{profiles[0]} .. {profiles[-1]} ({len(profiles)})"
    return ", ".join(profiles)


def sources_text(sources: list[str]) -> list[str]:
    """One line per upstream file, its tags together: `github.com/X@{v0.5.5,v0.6.2} pkg/utils/supported-gpus.yaml`."""
    by_file: dict[tuple[str, str], list[str]] = {}
    for src in sources:
        where, _, path = src.partition(" ")
        repo, _, tag = where.partition("@")
        by_file.setdefault((repo, path), []).append(tag)
    return [f"{repo}@{tags[0] if len(tags) == 1 else '{' + ','.join(tags) + '}'} {path}"
            for (repo, path), tags in by_file.items()]
