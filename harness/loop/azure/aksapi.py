"""The AKS machines and agent pools API as the provider calls it on the Machine API path: a machine's PUT (a
long-running operation), GET and deleteMachines, sent through the harness's ARM pipeline
(fakeazure/clients.py ContainerServicePipeline) with the shapes armcontainerservice/v9 sends.

Upstream: github.com/Azure/karpenter-provider-azure v1.14.0 pkg/providers/instance/aksmachineinstance.go
(beginCreateMachineNonBatch, getCreatedMachineAndHandleEarlyProvisioningError, deleteMachine), through the Go SDK's
MachinesClient.BeginCreateOrUpdate / Get and AgentPoolsClient.BeginDeleteMachines.
"""
from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

from azure.core.exceptions import HttpResponseError, ResourceNotFoundError
from azure.core.polling import LROPoller
from azure.core.rest import HttpRequest
from azure.mgmt.core.exceptions import ARMErrorFormat

from harness.loop.azure.sdk import PollWhenAsked


def _json_of(pipeline_response, *_):
    return pipeline_response.http_response.json()


@dataclass(frozen=True)
class MachinesPool:
    """The agent pool the provider creates machines in (AZURE_RESOURCE_GROUP, CLUSTER_NAME, AKS_MACHINES_POOL_NAME)."""
    resource_group: str
    cluster: str
    pool: str


class AKSMachines:
    """The machines of one pool, through a ContainerServicePipeline."""

    def __init__(self, pipeline, where: MachinesPool):
        self.pipeline, self.where = pipeline, where

    def _path(self, tail: str = "") -> str:
        w = self.where
        return (f"/subscriptions/{self.pipeline.subscription_id}/resourceGroups/{quote(w.resource_group)}/providers/"
                f"Microsoft.ContainerService/managedClusters/{quote(w.cluster)}/agentPools/{quote(w.pool)}{tail}")

    def _send(self, method: str, tail: str, body: dict | None = None, headers: dict | None = None,
              ok: tuple[int, ...] = (200,)):
        req = HttpRequest(method, self._path(tail), params={"api-version": self.pipeline.api_version},
                          json=body, headers=dict(headers or {}))
        resp = self.pipeline.send(req)
        status = resp.http_response.status_code
        if status not in ok:
            if status == 404:
                raise ResourceNotFoundError(response=resp.http_response, error_format=ARMErrorFormat)
            raise HttpResponseError(response=resp.http_response, error_format=ARMErrorFormat)
        return resp

    def begin_create_or_update(self, name: str, machine: dict, headers: dict | None = None) -> LROPoller:
        """MachinesClient.BeginCreateOrUpdate: the PUT (with `headers`: the BatchPutMachine header of a batch); its
        result (the machine's JSON) when asked for."""
        initial = self._send("PUT", f"/machines/{quote(name)}", machine, headers, ok=(200, 201))
        return LROPoller(self.pipeline.client, initial, _json_of, PollWhenAsked(raw=True))

    def update(self, name: str, machine: dict, etag: str | None) -> dict:
        """DefaultAKSMachineProvider.Update: the whole machine PUT back, If-Match its eTag when it has one (the
        Machine API has no PATCH); the updated machine's JSON."""
        headers = {"If-Match": etag} if etag else {}
        return self._send("PUT", f"/machines/{quote(name)}", machine, headers, ok=(200, 201)).http_response.json()

    def get(self, name: str) -> dict:
        """MachinesClient.Get: the machine's JSON; ResourceNotFoundError when it is not there."""
        return self._send("GET", f"/machines/{quote(name)}").http_response.json()

    def list(self) -> list[dict]:
        """MachinesClient.NewListPager: every machine of the pool, page after page."""
        out, resp = [], self._send("GET", "/machines").http_response.json()
        out += resp.get("value") or []
        while resp.get("nextLink"):
            nxt = self.pipeline.send(HttpRequest("GET", resp["nextLink"])).http_response
            if nxt.status_code != 200:
                raise HttpResponseError(response=nxt, error_format=ARMErrorFormat)
            resp = nxt.json()
            out += resp.get("value") or []
        return out

    def begin_delete(self, names: list[str]) -> LROPoller:
        """AgentPoolsClient.BeginDeleteMachines: POST deleteMachines {machineNames}, 202 while they go."""
        initial = self._send("POST", "/deleteMachines", {"machineNames": list(names)}, ok=(200, 202))
        return LROPoller(self.pipeline.client, initial, _json_of, PollWhenAsked())


def vm_name_of(machine: dict) -> str:
    """The name of the machine's VM: the last segment of properties.resourceId."""
    rid = str((machine.get("properties") or {}).get("resourceId") or "")
    return rid[rid.rfind("/") + 1:]


def provisioning_error(machine: dict) -> dict | None:
    """properties.status.provisioningError of a machine's JSON, or None."""
    return (((machine.get("properties") or {}).get("status") or {}).get("provisioningError")) or None

