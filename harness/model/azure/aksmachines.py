"""An AKS machine's name on the Machine API path (the machine a NodeClaim becomes) and the annotation that ties the
NodeClaim to the machine.

Upstream: github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instance/aksmachineinstanceutils.go
GetAKSMachineNameFromNodeClaimName (the name's length limit per release: release-probes.yaml
provider.aksMachine.nameMaxLength, 35 before v1.12.1, 34 since #1691); pkg/utils/utils.go GetAlphanumericHash;
pkg/apis/v1beta1/labels.go AnnotationAKSMachineResourceID.
"""
from __future__ import annotations

# pkg/apis/v1beta1/labels.go AnnotationAKSMachineResourceID: the machine's ARM ID, on the NodeClaim Create returns
MACHINE_ANNOTATION = "karpenter.azure.com/aks-machine-resource-id"
# the length of the hash that replaces a long name's excess (GetAKSMachineNameFromNodeClaimName prefixHashLength)
PREFIX_HASH_LENGTH = 6
_BASE36 = "0123456789abcdefghijklmnopqrstuvwxyz"
_FNV64_OFFSET, _FNV64_PRIME = 0xcbf29ce484222325, 0x100000001b3


class MachineNameError(ValueError):
    """A NodeClaim name the provider cannot make a machine name of (its own error's words)."""


def alphanumeric_hash(text: str, length: int) -> str:
    """GetAlphanumericHash: hashstructure v2's hash of a string (github.com/mitchellh/hashstructure/v2 v2.0.2
    hashstructure.go: FNV-1 64 of its bytes, the default Hasher fnv.New64), written in base 36, most significant
    digit first, `length` digits."""
    h = _FNV64_OFFSET
    for b in text.encode():
        h = (h * _FNV64_PRIME) & 0xFFFFFFFFFFFFFFFF
        h ^= b
    out = []
    for _ in range(length):
        out.append(_BASE36[h % 36])
        h //= 36
    return "".join(reversed(out))


def machine_name(nodeclaim_name: str, max_length: int) -> str:
    """GetAKSMachineNameFromNodeClaimName: the NodeClaim's name when it has at most `max_length` characters; else
    its prefix (before the last dash) cut to fit and the cut part's hash appended, the suffix kept."""
    if len(nodeclaim_name) <= max_length:
        return nodeclaim_name
    dash = nodeclaim_name.rfind("-")
    if dash == -1:
        raise MachineNameError(f'invalid NodeClaim name format: no dash found in "{nodeclaim_name}"')
    prefix, suffix = nodeclaim_name[:dash], nodeclaim_name[dash:]
    keep = max_length - len(suffix) - PREFIX_HASH_LENGTH
    return prefix[:keep] + alphanumeric_hash(prefix[keep:], PREFIX_HASH_LENGTH) + suffix

