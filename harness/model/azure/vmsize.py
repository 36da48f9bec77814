"""The Azure VM size name parser (skewer `GetVMSize`, github.com/Azure/skewer@v0.0.24/vmsize.go),
github.com/Azure/skewer@v0.0.24/vmsize.go GetVMSize.

The parser takes the SKU *size* (no `Standard_` prefix, e.g. `D2s_v3`) and splits it into family,
subfamily, vCPUs, constrained vCPUs, additive features, accelerator, version and promo flag. The
provider derives `sku-family`, `sku-series`, `sku-version` and `sku-gpu-name` from the result, and
drops SKUs whose size does not parse or that carry constrained vCPUs (`M8-2ms`).

Our pattern mirrors the documented capture groups one to one. Python's `re` and Go's RE2 both pick
the leftmost-first (Perl-order) submatch for this pattern (no backreferences, no lookaround), so the
groups agree with upstream's for every input.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass

from harness.model.values.gostrconv import parse_int64  # strconv.Atoi on 64-bit: digits must fit an int64

# skewer v0.0.24 vmsize.go `skuSizeScheme` (the version provider v1.14.0 pins in go.mod), capture
# groups in order. `\Z` stands for Go's `$` (end of text; Python's `$` also matches before a final
# newline).
_SIZE_RE = re.compile(
    r"^([A-Z])"                          # 1 family
    r"([A-Z]?)"                          # 2 subfamily, first letter
    r"([A-Z]?)"                          # 3 subfamily, second letter
    r"([0-9]+)"                          # 4 vCPUs
    r"-?((?:[0-9]+)?)"                   # 5 constrained vCPUs
    r"((?:[abcdeiflmnotspPr]+|C+|NP)?)"  # 6 additive features
    r"_?"
    r"(?:(xl_[A-Z]+[0-9]+[A-Z]*|[A-Z]+[0-9]+)_?)?"  # 7 accelerator (leading "xl_" stripped below)
    r"(_cc_)?"                           # 8 confidential child capability
    r"(_[0-9]+_)?"                       # 9 M-series memory/IO variant
    r"(_MI300X_)?"                       # 10
    r"(_H100_)?"                         # 11
    r"((?:[vV][1-9])?)?"                 # 12 version (one digit)
    r"(_Promo)?\Z"                       # 13 promo
)

# skewer's hard-coded special case in GetVMSize (github.com/Azure/skewer@v0.0.24/vmsize.go; reached only
# when the pattern fails).
_SPECIAL = {
    "M416s_8_v2": ("M", "", "416", None, "s", None, False, "v2", False),
}

# Accelerator fallback for sizes whose name carries none, seen in a newer github.com/Azure/skewer
# vmsize.go (which version is not recorded: a harness assumption); skewer v0.0.24
# (github.com/Azure/skewer@v0.0.24/vmsize.go, pinned by provider v1.14.0) has no such table, so upstream
# keeps it off.
ACCELERATOR_FALLBACK = {
    "NC6s_v3": "V100", "NC12s_v3": "V100", "NC24s_v3": "V100", "NC24rs_v3": "V100",
    "ND40rs_v2": "V100",
    "ND96asr_v4": "A100",
    "NV12s_v3": "M60", "NV24s_v3": "M60", "NV48s_v3": "M60",
    "NV4as_v4": "MI25", "NV8as_v4": "MI25", "NV16as_v4": "MI25", "NV32as_v4": "MI25",
}


class VMSizeParseError(ValueError):
    """The size does not match the naming scheme. Upstream drops the SKU and logs "parsing VM size"
    (provider v1.14.0 pkg/providers/instancetype/instancetypes.go UpdateInstanceTypes;
    github.com/Azure/skewer@v0.0.24/vmsize.go GetVMSize); the message text here is the harness's own."""

    def __init__(self, size: str):
        super().__init__(f"could not parse VM size {size}")
        self.size = size


@dataclass(frozen=True, slots=True)
class VMSize:
    size: str
    family: str                      # one uppercase letter
    subfamily: str                   # "" when absent (groups 2+3)
    cpus: str                        # vCPU digits as written
    cpus_constrained: str | None     # the "-N" part, None when absent
    additive_features: str
    accelerator: str | None          # e.g. A100, T4, RTXPRO6000BSE (xl_ stripped), or the fallback
    accelerator_from_fallback: bool
    confidential_child: bool         # "_cc_"
    version: str                     # e.g. "v3", "" when absent
    promo: bool

    @property
    def series(self) -> str:
        """Family + subfamily + additive features, plus `_<version>` when there is one (skewer GetVMSize
        `Series`, github.com/Azure/skewer@v0.0.24/vmsize.go, the provider's sku-series label;
        github.com/Azure/skewer@v0.0.24/vmsize.go GetVMSize)."""
        return self.family + self.subfamily + self.additive_features + (f"_{self.version}" if self.version else "")

    @property
    def version_label(self) -> str | None:
        """`sku-version`: the version without v/V, `1` without a version, None (DoesNotExist) if the
        version does not start with v/V (karpenter-provider-azure v1.14.0 pkg/utils/utils.go
        `ExtractVersionFromVMSize`; github.com/Azure/karpenter-provider-azure v1.14.0
        pkg/providers/instancetype/instancetype.go computeRequirements)."""
        if not self.version:
            return "1"
        if self.version[0] in "vV":
            return self.version[1:]
        return None

    @property
    def constrained(self) -> bool:
        return self.cpus_constrained is not None


@functools.lru_cache(maxsize=8192)
def parse_vm_size(size: str, *, fallback: bool = True) -> VMSize:
    """Parse a size such as `D2s_v3` (not `Standard_D2s_v3`). Raises VMSizeParseError.

    `fallback=False` disables the uncertain accelerator fallback table (ACCELERATOR_FALLBACK above, which
    names where it comes from; github.com/Azure/skewer@v0.0.24/vmsize.go has none)."""
    m = _SIZE_RE.match(size)
    if m is None:
        special = _SPECIAL.get(size)
        if special is None:
            raise VMSizeParseError(size)
        fam, sub, cpus, constrained, add, acc, cc, ver, promo = special
        return VMSize(size, fam, sub, cpus, constrained, add, acc, False, cc, ver, promo)
    g = m.groups()
    if g[4] and parse_int64(g[4]) is None:       # GetVMSize: "converting constrained CPUs" (Atoi range error)
        raise VMSizeParseError(size)
    accelerator = g[6]
    from_fallback = False
    if accelerator:
        if accelerator.startswith("xl_"):
            accelerator = accelerator[3:]
    else:
        accelerator = None
        if fallback:
            base = size[: -len("_Promo")] if size.endswith("_Promo") else size
            accelerator = ACCELERATOR_FALLBACK.get(base)
            from_fallback = accelerator is not None
    return VMSize(
        size=size,
        family=g[0],
        subfamily=(g[1] or "") + (g[2] or "") if g[1] else "",
        cpus=g[3],
        cpus_constrained=g[4] or None,
        additive_features=g[5] or "",
        accelerator=accelerator,
        accelerator_from_fallback=from_fallback,
        confidential_child=g[7] == "_cc_",
        version=g[11] or "",
        promo=g[12] == "_Promo",
    )


def size_from_name(name: str) -> str:
    """`Standard_D2s_v3` -> `D2s_v3` (for SKU dicts without a `size` field)."""
    return name.split("_", 1)[1] if "_" in name and name.split("_", 1)[0] in ("Standard", "Basic") else name
