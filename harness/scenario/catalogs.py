"""SKU catalogs as scenarios use them: a bundled catalog by name, or the customer's own files
(`given.catalog: {file: skus.json, prices: prices.json}`), plus SKUs synthesized from their names.

Accepted SKU files: `az vm list-skus --location <region> --all --output json`, a raw ARM
`Microsoft.Compute/skus` list response (one page or a list of pages), or a bundled catalog file.
Accepted price files: Azure Retail Prices API JSON (`{"Items": [...]}`, or a list of pages), or a
bundled price file. Conversion lives in fakeazure.catalog (`skus_from_document`, `prices_from_retail`).

A SKU the scenario names (in `given.skus`, or, without `given.skus`, in a NodePool requirement or a pod
selector on the instance-type / sku-name keys) that the catalog does not hold is synthesized from its
name (harness/model/azure/skusynth.py) and reported as a warning at the line that named it.
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from pathlib import Path

from harness.model.azure.skusynth import SynthesisError, synthesize
from harness.scenario.notices import Notice

SKU_KEYS = ("node.kubernetes.io/instance-type", "beta.kubernetes.io/instance-type", "karpenter.azure.com/sku-name")
DEFAULT_REGION = "southcentralus"


class CatalogError(ValueError):
    """A catalog that cannot be loaded; the loader adds file:line."""


@dataclass(frozen=True)
class CatalogSource:
    """Where a scenario's SKUs and prices come from."""

    name: str | None = None             # a bundled catalog (fakeazure/catalogs/skus/<name>.json)
    sku_file: str | None = None         # absolute paths of the customer's files
    price_file: str | None = None

    @property
    def label(self) -> str:
        return self.name or Path(self.sku_file or "").name


def source_for(given: dict, base_dir: Path, region: str) -> CatalogSource:
    """`given.catalog` (a name, a path, or {file, prices}) or the region's bundled catalog."""
    cat = given.get("catalog")
    if isinstance(cat, dict):
        return CatalogSource(sku_file=str((base_dir / str(cat["file"])).resolve()),
                             price_file=str((base_dir / str(cat["prices"])).resolve()) if cat.get("prices") else None)
    if isinstance(cat, str) and (cat.endswith(".json") or "/" in cat):
        return CatalogSource(sku_file=str((base_dir / cat).resolve()))
    return CatalogSource(name=str(cat or region))


def available_catalogs() -> list[str]:
    from fakeazure.catalog import available_catalogs as bundled
    return bundled()


@functools.lru_cache(maxsize=32)
def catalog(name: str) -> tuple[tuple[dict, ...], dict]:
    """(SKUs, {region: {sku: prices}}) of a bundled catalog name or a path, merged the way
    FakeAzure.load_catalog merges its files. Shared: callers must not mutate them (FakeAzure
    stores its own copies)."""
    from fakeazure import FakeAzure
    fake = FakeAzure(skus=[])            # empty: load only this catalog
    skus = fake.load_catalog(name)
    return tuple(skus), fake.prices


@functools.lru_cache(maxsize=32)
def sku_names(name: str) -> frozenset[str]:
    return frozenset(s["name"] for s in catalog(name)[0])


def _read_json(path: str, what: str):
    p = Path(path)
    if not p.exists():
        raise CatalogError(f"{what} file not found: {path}")
    try:
        return json.loads(p.read_text())
    except ValueError as e:
        raise CatalogError(f"{what} file {path} is not valid JSON: {e}") from None


@functools.lru_cache(maxsize=32)
def load_source(src: CatalogSource) -> tuple[tuple[dict, ...], dict]:
    """(SKUs, prices by region) of a source, in the fake's normalized shape."""
    from fakeazure import catalog as fcat
    if src.name is not None:
        try:
            return catalog(src.name)
        except FileNotFoundError:
            raise CatalogError(unknown_region_reason(src.name)) from None
    data = _read_json(src.sku_file, "SKU catalog")
    if fcat.is_retail_prices(data):
        raise CatalogError(f"{src.sku_file} holds Retail Prices API items, not ResourceSkus: give it as "
                           "given.catalog.prices")
    try:
        skus = [fcat.normalize_sku(s) for s in fcat.skus_from_document(data)]
    except (ValueError, AttributeError, TypeError) as e:
        raise CatalogError(f"{src.sku_file}: {e}") from None
    if not skus:
        raise CatalogError(f"{src.sku_file} holds no virtualMachines ResourceSku (expected the output of "
                           "`az vm list-skus --location <region> --all --output json`)")
    prices: dict = {}
    if isinstance(data, dict) and "prices" in data:
        _, prices = fcat.load_catalog_file(src.sku_file)
    if src.price_file:
        pdata = _read_json(src.price_file, "price")
        if fcat.is_retail_prices(pdata):
            prices = fcat.prices_from_retail(pdata)
        elif isinstance(pdata, dict) and "prices" in pdata:
            _, prices = fcat.load_catalog_file(src.price_file)
        else:
            raise CatalogError(f"{src.price_file} is neither Retail Prices API JSON ({{\"Items\": [...]}}) "
                               "nor a bundled price file ({\"prices\": {...}})")
    return tuple(skus), prices


def unknown_region_reason(region: str) -> str:
    return (f"unknown region {region!r}: no bundled SKU catalog (available: {', '.join(available_catalogs())}); "
            f"give the customer's SKUs as given.catalog: {{file: skus.json}} (`az vm list-skus --location "
            f"{region} --all --output json > skus.json`), or name the SKUs in given.skus to synthesize them")


def catalog_regions(skus) -> list[str]:
    from fakeazure.catalog import catalog_regions as regions
    return regions(list(skus))


def region_zones(skus, region: str) -> list[str] | None:
    """The zones the catalog's SKUs offer in `region` (None: the catalog has no SKU there)."""
    zones: set[str] = set()
    seen = False
    for s in skus:
        for li in s.get("locationInfo") or []:
            if str(li.get("location", "")).lower() == region.lower():
                seen = True
                zones.update(li.get("zones") or [])
    return sorted(zones) if seen else None


@dataclass
class ResolvedCatalog:
    """What the fake gets for one scenario."""

    skus: list[dict]
    prices: dict[str, dict[str, dict]]
    synthesized: dict[str, str] = field(default_factory=dict)          # name -> note
    existing: tuple[str, ...] = ()      # sizes given.existingNodes run that given.skus does not name


def _close(name: str, available) -> str | None:
    squash = name.lower().replace("_", "")
    return next((a for a in sorted(available) if a.lower().replace("_", "") == squash), None)


def named_in_manifests(manifests) -> list[tuple[str, object]]:
    """(SKU name, manifest) for each instance-type / sku-name value a NodePool requirement or a pod
    selector names with `In`."""
    out = []
    for m in manifests:
        obj = m.obj
        spec = obj.get("spec") or {}
        exprs: list[dict] = []
        if obj.get("kind") == "NodePool":
            exprs += ((spec.get("template") or {}).get("spec") or {}).get("requirements") or []
        elif obj.get("kind") in ("Pod", "Deployment", "DaemonSet"):
            pspec = spec if obj["kind"] == "Pod" else ((spec.get("template") or {}).get("spec") or {})
            exprs += [{"key": k, "operator": "In", "values": [v]} for k, v in (pspec.get("nodeSelector") or {}).items()]
            aff = ((pspec.get("affinity") or {}).get("nodeAffinity") or {}).get("requiredDuringSchedulingIgnoredDuringExecution") or {}
            for term in aff.get("nodeSelectorTerms") or []:
                exprs += term.get("matchExpressions") or []
        for e in exprs:
            if isinstance(e, dict) and e.get("key") in SKU_KEYS and e.get("operator") == "In":
                out += [(str(v), m) for v in e.get("values") or []]
    return out


def _confine_catalog_files(sc) -> list:
    """A scenario file's catalog files are `{file:}` references like its manifests: relative,
    inside the scenario's tree, regular files of bounded size (harness/scenario/references.py).
    `harness explain --catalog-file` builds an in-memory scenario with the user's own path."""
    from harness.scenario.references import resolve_reference
    from harness.scenario.yamlsource import SourceError
    cat = sc.given.get("catalog")
    if not Path(sc.file).is_file():
        return []
    refs = []
    if isinstance(cat, dict):
        refs = [(("given", "catalog", k), cat[k], what) for k, what in (("file", "SKU catalog"), ("prices", "price"))
                if cat.get(k) is not None]
    elif isinstance(cat, str) and (cat.endswith(".json") or "/" in cat):
        refs = [(("given", "catalog"), cat, "SKU catalog")]
    errors = []
    for path, ref, what in refs:
        try:
            resolve_reference(sc.doc, path, ref, what)
        except SourceError as e:
            errors.append(e)
    return errors


def check(sc) -> tuple[list, list[Notice]]:
    """Resolve the scenario's catalog once: (SourceErrors, Notices). Sets `given.region` from a
    single-region catalog file when the scenario names none."""
    from harness.scenario.yamlsource import SourceError
    doc, given = sc.doc, sc.given
    where_cat = ("given", "catalog") if "catalog" in given else ("given", "region") if "region" in given else ()
    errors = _confine_catalog_files(sc)
    if errors:
        return errors, []
    src = source_for(given, Path(sc.file).parent, sc.region)
    try:
        skus, _ = load_source(src)
    except CatalogError as e:
        wanted = given.get("skus") or []
        if src.name is not None and "region" in given and "catalog" not in given and wanted:
            skus = ()                    # an unknown region whose SKUs are named (synthesized) or inline
        else:
            return [doc.error(where_cat, str(e))], []
    if src.sku_file and "region" not in given:
        regions = catalog_regions(skus)
        if len(regions) == 1:
            given["region"] = regions[0]
    wanted = given.get("skus") or []
    uses_catalog = not wanted or any(isinstance(s, str) for s in wanted)   # inline SKUs bring their own region
    if skus and uses_catalog and region_zones(skus, sc.region) is None:
        return [doc.error(where_cat, f"catalog {src.label!r} has no SKU in region {sc.region!r} (it covers "
                                     f"{', '.join(catalog_regions(skus))}); set given.region to one of them")], []
    errors, notices = [], []
    available = {s["name"] for s in skus}
    zones = None                  # (the synthesized SKUs' zones,): _zones, once, for the first SKU synthesized
    for name, where in _named(sc):
        if name in available:
            continue
        close = _close(name, available)
        file, line, _ = where
        if close:
            errors.append(SourceError(file, line, f"unknown SKU {name!r} in catalog {src.label!r} (did you mean {close!r}?)"))
            continue
        if zones is None:
            zones = (_zones(sc.given, region_zones(skus, sc.region), sc.region),)
        try:
            synth = synthesize(name, sc.region, zones[0])
        except SynthesisError as e:
            if where[2]:                      # named in given.skus: an error
                errors.append(SourceError(file, line, f"unknown SKU {name!r} in catalog {src.label!r}: {e}"))
            else:                             # named in a manifest: the scenario may mean "no such SKU"
                notices.append(Notice(file, line, f"{name} is in no catalog and is not a VM size name, so no "
                                                  "instance type carries it", "catalog"))
            continue
        available.add(name)
        notices.append(Notice(file, line, synth.note, "synthesized"))
    if not errors:
        wrong, found = existing_disagreements(sc)
        errors += [doc.error(path, reason) for path, reason in wrong]
        notices += [Notice(str(sc.file), sc.doc.line(d.path), d.message, "cluster") for d in found]
    return errors, notices


def _named(sc) -> list[tuple[str, tuple]]:
    """(name, (file, line, from_given_skus)) for every SKU the scenario names."""
    names = [s for s in sc.given.get("skus") or [] if isinstance(s, str)]
    if names:
        return [(s, (str(sc.file), sc.doc.line(("given", "skus", i)), True))
                for i, s in enumerate(sc.given.get("skus") or []) if isinstance(s, str)]
    if sc.given.get("skus"):
        return []                              # inline ResourceSku objects only
    seen, out = set(), []
    for name, m in named_in_manifests(sc.manifests):
        if name not in seen:
            seen.add(name)
            out.append((name, (m.file, m.line, False)))
    return out


def scenario_catalog(sc) -> ResolvedCatalog:
    """The SKUs and prices the fake gets for `sc` (catalog subset or whole, plus synthesized SKUs,
    plus borrowed or estimated prices for SKUs without one), amended where `given.existingNodes`
    disagree with it (harness/scenario/catalogamend.py)."""
    from harness.scenario.catalogamend import SIZE, SUBSET, amend
    base = _base_catalog(sc)
    _, found = existing_disagreements(sc, base)
    if not found:
        return base
    prices = {r: dict(t) for r, t in base.prices.items()}
    table = prices.setdefault(sc.region.lower(), {})
    for d in found:
        if d.kind == SIZE:
            table.setdefault(d.sku, d.prices)
    return ResolvedCatalog(amend(base.skus, sc.region, found, _full_catalog(sc)), prices,
                           {**base.synthesized, **{d.sku: d.message for d in found if d.kind == SIZE}},
                           tuple(d.sku for d in found if d.kind in (SIZE, SUBSET)))


def _base_catalog(sc) -> ResolvedCatalog:
    src = source_for(sc.given, Path(sc.file).parent, sc.region)
    names = tuple(n for n, _ in _named(sc))
    try:
        zones = _zones(sc.given, _source_zones(src, sc.region), sc.region)
    except CatalogError:
        zones = sc.given.get("zones")
    return _resolve(src, sc.region, names, bool([s for s in sc.given.get("skus") or [] if isinstance(s, str)]),
                    tuple(zones) if zones else None)


def _full_catalog(sc) -> list[dict]:
    try:
        return list(load_source(source_for(sc.given, Path(sc.file).parent, sc.region))[0])
    except CatalogError:
        return []


def existing_disagreements(sc, base: ResolvedCatalog | None = None) -> tuple[list, list]:
    """Where `given.existingNodes` disagree with the catalog: (errors as (path, reason), disagreements).
    Inline ResourceSkus only (`given.skus` objects) are the scenario's own catalog: not amended."""
    from harness.scenario.catalogamend import find
    entries = sc.given.get("existingNodes") or []
    wanted = sc.given.get("skus") or []
    if not entries or (wanted and not any(isinstance(w, str) for w in wanted)):
        return [], []
    base = base or _base_catalog(sc)
    names = [w for w in wanted if isinstance(w, str)]
    src = source_for(sc.given, Path(sc.file).parent, sc.region)
    try:
        zones = _source_zones(src, sc.region)
    except CatalogError:
        zones = None                                 # region_zones of no SKUs
    return find(entries, base.skus, sc.region, src.label, zones, sc.given.get("zones"),
                frozenset(names) if names else None, _full_catalog(sc) + base.skus if names else None)


@functools.lru_cache(maxsize=64)
def _source_zones(src: CatalogSource, region: str) -> list[str] | None:
    """region_zones of a source's whole catalog, worked out once per process (a run with given.existingNodes
    asked for it on every run: a walk over every SKU of the catalog). Shared: read it, never change it.
    Raises CatalogError as load_source does."""
    return region_zones(load_source(src)[0], region)


def _zones(given: dict, have: list[str] | None, region: str) -> list[str] | None:
    """The zones synthesized SKUs are offered in: given.zones (the customer's, `harness new` writes them),
    else the catalog's for the region, else (a catalog without zones there) the zones given.existingNodes
    run in, else the synthesizer's default."""
    from harness.scenario.catalogamend import zones_of
    if given.get("zones"):
        return list(given["zones"])
    return (list(zones_of(given.get("existingNodes"), region)) or have) if have == [] else have


@functools.lru_cache(maxsize=64)
def _resolve(src: CatalogSource, region: str, names: tuple[str, ...], subset: bool,
             zones_given: tuple[str, ...] | None = None) -> ResolvedCatalog:
    try:
        skus, prices = load_source(src)
    except CatalogError:
        skus, prices = (), {}
    by_name = {s["name"]: s for s in skus}
    zones = list(zones_given) if zones_given else region_zones(skus, region)
    synthesized: dict[str, str] = {}
    extra_prices: dict[str, dict] = {}
    for n in names:
        if n in by_name:
            continue
        try:
            synth = synthesize(n, region, zones)
        except SynthesisError:
            continue
        by_name[n] = synth.sku
        synthesized[n] = synth.note
        extra_prices[n] = dict(synth.prices)
    chosen = [by_name[n] for n in names if n in by_name] if subset else list(by_name.values())
    merged = {r: dict(t) for r, t in prices.items()}
    table = merged.setdefault(region.lower(), {})
    for n, p in extra_prices.items():
        table.setdefault(n, p)
    if src.sku_file:
        _fill_prices(table, chosen)
    return ResolvedCatalog(chosen, merged, synthesized)


def _fill_prices(table: dict, skus: list[dict]) -> None:
    """A customer's SKU file without prices: borrow the bundled price of the same size, else
    estimate from vCPUs (the note on `harness validate` says how many)."""
    from fakeazure.catalog import capability, sku_vcpus

    from harness.model.azure.skusynth import estimate_prices
    bundled = {}
    for name in available_catalogs():
        for t in catalog(name)[1].values():
            for k, v in t.items():
                bundled.setdefault(k, v)
    for s in skus:
        if s["name"] in table:
            continue
        if s["name"] in bundled:
            table[s["name"]] = dict(bundled[s["name"]])
        else:
            table[s["name"]] = estimate_prices(max(sku_vcpus(s), 1), float(capability(s, "MemoryGB", "0") or 0))


def price_notices(sc) -> list[Notice]:
    """One notice when a customer's SKU file came without prices for some SKUs."""
    src = source_for(sc.given, Path(sc.file).parent, sc.region)
    if not src.sku_file:
        return []
    try:
        skus, prices = load_source(src)
    except CatalogError:
        return []
    table = prices.get(sc.region.lower(), {})
    missing = [s["name"] for s in skus if s["name"] not in table]
    if not missing:
        return []
    where = ("given", "catalog")
    return [Notice(str(sc.file), sc.doc.line(where),
                   f"{len(missing)} SKU(s) of {src.label} have no price in {sc.region} (e.g. {missing[0]}): they use "
                   "the bundled price of the same size, else an estimate from vCPUs and memory (harness/data/vm-series.yaml); give the Retail Prices API JSON "
                   "as given.catalog.prices", "catalog")]


def zones_where_catalog_has_none(given: dict, base_dir, zones: list[str]) -> list[str]:
    """`given.zones` for a dump whose nodes run in `zones` where the scenario's catalog offers the region
    none (a snapshot taken without them): written into the scenario, so the field says where the run's
    zones come from (harness/scenario/catalogamend.py). [] where the catalog has zones there, or no catalog."""
    try:
        skus, _ = load_source(source_for(given, Path(base_dir), given["region"]))
    except CatalogError:
        return []
    return list(zones) if zones and region_zones(skus, given["region"]) == [] else []
