"""The errors the AKS resource provider answers on its agent-pool and machine routes, with the codes and
wording the provider's own fakes use (github.com/Azure/karpenter-provider-azure v1.14.0 pkg/fake/aksmachinesapi.go,
aksagentpoolsapi.go) and the batch contract its header-batch client parses
(pkg/providers/azclient/aksmachinesheaderbatch/apiresponseutils.go, design 0010).

AKS RP errors are flat (``{"code", "message", "details"}``, no ``error`` envelope: apiresponseutils.go
parseTopLevelError "flat (AKS RP errors)"); :class:`AKSError` answers so."""
from __future__ import annotations

import json

from ..arm import ARMError


class AKSError(ARMError):
    """An ARMError answered flat, as the AKS RP answers (not in ARM's ``error`` envelope)."""

    def envelope(self) -> dict:
        return self.error_body()


def not_found(kind: str, name: str) -> AKSError:
    # pkg/fake/aksmachinesapi.go AKSMachineAPIErrorFromAKSMachineNotFound / ...MachinesPoolNotFound:
    # ErrorCode NotFound, 404 (the message is a harness assumption)
    return AKSError("NotFound", f"{kind} '{name}' not found.", 404)


def vm_size_not_supported(size: str, subscription: str, location: str) -> AKSError:
    """pkg/fake/aksmachinesapi.go AKSMachineAPIErrorVMSizeNotSupported: a size the subscription cannot use,
    refused on the PUT (offerings/aksmachinebegincreateerrorhandlers.go isSKUNotAvailableForSubscription)."""
    return AKSError("VMSizeNotSupported",
                    f"Virtual Machine size: '{size}' is not supported for subscription {subscription} in location "
                    f"'{location}'. Please refer to aka.ms/aks/vm-size-selector to find supported VM sizes in "
                    f"location '{location}'.", 400)


def immutable_property_changed(name: str) -> AKSError:
    # pkg/fake/aksmachinesapi.go AKSMachineAPIErrorFromAKSMachineImmutablePropertyChangeAttempted: vmSize,
    # priority or zone changed on an existing machine (the message is a harness assumption)
    return AKSError("OperationNotAllowed", f"Changing vmSize, priority or zones of machine '{name}' is not allowed.",
                    400)


def precondition_failed() -> AKSError:
    # pkg/fake/aksmachinesapi.go updateExistingAKSMachine: If-Match not the stored eTag
    return AKSError("ConditionNotMet", "The If-Match header does not match the machine's eTag.", 412)


def no_valid_machines(pool: str, valid: list[str]) -> ARMError:
    """pkg/fake/aksagentpoolsapi.go AKSAgentPoolsAPIErrorFromAKSMachineNotFound (wrapped, as that fake's body)."""
    return ARMError("InvalidParameter",
                    f"Cannot find any valid machines to delete. Please check your input machine names. The valid "
                    f"machines to delete in agent pool '{pool}' are: {', '.join(valid)}.", 400)


def provisioning_error(code: str, message: str) -> dict:
    """A VM-side failure as the machine's ``status.provisioningError`` (pkg/fake/aksmachinesapi.go
    AKSMachineAPIProvisioningError*): quota refusals (CRP's OperationNotAllowed) surface as QuotaExceeded, the
    rest keep CRP's code; the message quotes CRP's as ``Code="..." Message="..."`` with one detail holding CRP's."""
    outer = "QuotaExceeded" if code == "OperationNotAllowed" else code
    return {"code": outer, "message": f'Code="{code}" Message="{message}"',
            "details": [{"code": code, "message": message}]}


def batch_error(failures: list[tuple[str, str, str]]) -> AKSError:
    """The answer to a BatchPutMachine PUT some of whose machines failed (pkg/fake/aksmachinesapi.go
    buildFakeBatchError; apiresponseutils.go parsePerMachineDetails): any code not starting ``Internal`` makes it a
    400 BatchMachineClientError with the per-machine details at the top level; only ``Internal*`` codes, a 500
    BatchMachineInternalServerError whose message is the details JSON-encoded."""
    details = [{"code": c, "message": m, "target": t} for t, c, m in failures]
    if any(not c.startswith("Internal") for _, c, _ in failures):
        return AKSError("BatchMachineClientError", "batch client error", 400, details=details)
    return AKSError("BatchMachineInternalServerError", json.dumps({"details": details}, separators=(",", ":")), 500)
