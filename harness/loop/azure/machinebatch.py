"""aksmachineapiheaderbatch: how the provider puts many AKS machine creates into one PUT, and reads one answer per
machine back from it.

Upstream: github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/azclient/aksmachinesheaderbatch
(batchkey.go determineBatchKey and buildSharedAKSMachineTemplate: machines whose bodies agree but for their tags and
zones - and their zones too when ultra SSD is on - share a batch; header.go buildBatchHeader: the BatchPutMachine
header names each machine with its zones and tags; apiresponseutils.go extractPerMachineErrors: a
BatchMachineClientError or BatchMachineInternalServerError carries one error per machine, any other error is every
machine's). The batcher fires after 1 s without a new create, 5 s at most, or at provider.aksMachine.headerBatchMax
machines (pkg/operator/options/options.go PROVIDER_BATCH_*): the creates of one launch round share a batch.
"""
from __future__ import annotations

import json

BATCH_HEADER = "BatchPutMachine"
BATCH_CLIENT_ERROR, BATCH_SERVER_ERROR = "BatchMachineClientError", "BatchMachineInternalServerError"


def shared_template(body: dict) -> dict:
    """buildSharedAKSMachineTemplate: the body less its tags (and status fields), its zones only with ultra SSD."""
    props = {k: v for k, v in (body.get("properties") or {}).items()
             if k not in ("tags", "eTag", "provisioningState", "resourceId", "status")}
    out: dict = {"properties": props}
    if (props.get("hardware") or {}).get("ultraSsdEnabled"):
        out["zones"] = list(body.get("zones") or [])
    return out


def batch_key(body: dict) -> str:
    """determineBatchKey, less the pool's prefix (one pool per run): the shared template's JSON."""
    return json.dumps(shared_template(body), sort_keys=True, separators=(",", ":"))


def batch_header(entries: list[tuple[str, dict]]) -> str:
    """buildBatchHeader: {"batchMachines": [{machineName, zones, tags}, ...]} as encoding/json writes it."""
    return json.dumps({"batchMachines": [
        {"machineName": name, "zones": list(body.get("zones") or []),
         "tags": dict(sorted(((body.get("properties") or {}).get("tags") or {}).items()))}
        for name, body in entries]}, separators=(",", ":"))


class BatchAnswerError(ValueError):
    """A batch error whose per-machine details break the contract (extractPerMachineErrors' own words)."""


def per_machine_errors(body: dict, names: list[str]) -> dict[str, tuple[str, str] | None]:
    """extractPerMachineErrors: machine name -> (code, message) of its error, or None for a machine the batch
    created; `body` is the refused PUT's JSON (AKS answers flat; an ARM-wrapped {"error": ...} is read too)."""
    err = body.get("error") if isinstance(body.get("error"), dict) else body
    code, message = str(err.get("code") or ""), str(err.get("message") or "")
    out: dict[str, tuple[str, str] | None] = {n: None for n in names}
    if code not in (BATCH_CLIENT_ERROR, BATCH_SERVER_ERROR):
        return {n: (code, message) for n in names}
    try:
        details = err.get("details") if code == BATCH_CLIENT_ERROR else json.loads(message).get("details")
    except (ValueError, AttributeError):
        details = None
    if not details:
        raise BatchAnswerError(f'API error has batch error code "{code}" but have no per-machine details')
    for d in details:
        target = str(d.get("target") or "")
        if not target:
            raise BatchAnswerError(f'API error has batch error code but a detail is missing target: '
                                   f'Code="{d.get("code")}" Message="{d.get("message")}"')
        if target not in out:
            raise BatchAnswerError(f'API error detail references machine "{target}" which is not in the batch: '
                                   f'Code="{d.get("code")}" Message="{d.get("message")}"')
        out[target] = (str(d.get("code") or ""), str(d.get("message") or ""))
    return out
