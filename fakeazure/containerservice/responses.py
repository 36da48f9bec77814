"""HTTP handlers for Microsoft.ContainerService: agent pools, their machines, node image versions and node
bootstrapping, as the provider's clients call them at v1.14.0 (github.com/Azure/karpenter-provider-azure
v1.14.0 pkg/providers/azclient/azclient.go NewAZClient: armcontainerservice/v9 MachinesClient, AgentPoolsClient,
Client.NewListNodeImageVersionsPager; pkg/providers/imagefamily/nodebootstrappingclient.go). Errors are raised as
ARMError (AKS's flat ones as exceptions.AKSError) and answered by the dispatcher."""
from __future__ import annotations

import json
from typing import TYPE_CHECKING

from .. import catalog as cat
from ..arm import ARMError, Request, Response, paginate
from ..compute.models import fault_ctx, is_spot
from . import exceptions as exc
from .models import BOOTSTRAP_MARK, AgentPool, Machine, bootstrap_script, machine_id

if TYPE_CHECKING:  # pragma: no cover
    from ..context import ArmContext

# the header aksmachinesheaderbatch sends one PUT for up to 50 machines with (provider v1.14.0
# pkg/providers/azclient/aksmachinesheaderbatch/executor.go executeBatch, header.go batchPutMachineHeader;
# pkg/consts AKSMachineAPIHeaderBatchMaxSize)
BATCH_HEADER = "BatchPutMachine"
BATCH_MAX = 50


def _pool(ctx: "ArmContext", p: dict) -> AgentPool:
    pool = ctx.aks.pool(p["rg"], p["cluster"], p["pool"])
    if pool is None:
        raise exc.not_found("Agent pool", p["pool"])
    return pool


def get_pool(ctx: "ArmContext", req: Request, p: dict) -> Response:
    return Response(200, _pool(ctx, p).view(ctx.subscription))


def list_pools(ctx: "ArmContext", req: Request, p: dict) -> Response:
    pools = [a for a in ctx.aks.pools.values()
             if a.rg.lower() == p["rg"].lower() and a.cluster.lower() == p["cluster"].lower()]
    return Response(200, paginate(req, [a.view(ctx.subscription) for a in pools], ctx.page_size))


# ----------------------------------------------------------------------------- machines


def machine_operation_name(ctx: "ArmContext", p: dict, method: str) -> str:
    """`machine.create` for a PUT of a machine that does not exist yet, else `machine.update`; `machine.get`."""
    pool = ctx.aks.pool(p["rg"], p["cluster"], p["pool"])
    if method == "PUT":
        return "machine.update" if pool is not None and ctx.aks.get(pool, p["machine"]) else "machine.create"
    return {"GET": "machine.get"}.get(method, "machine.other")


def get_machine(ctx: "ArmContext", req: Request, p: dict) -> Response:
    m = ctx.aks.get(_pool(ctx, p), p["machine"])
    if m is None:
        raise exc.not_found("Machine", p["machine"])
    if m.batched and m.operation and m.provisioning_state == "Creating":
        op = ctx.lro.store.get(m.operation)
        if op is not None:
            ctx.lro.store.poll(op)
    return Response(200, m.view(ctx.subscription))


def list_machines(ctx: "ArmContext", req: Request, p: dict) -> Response:
    machines = ctx.aks.list(_pool(ctx, p))
    return Response(200, paginate(req, [m.view(ctx.subscription) for m in machines], ctx.page_size))


def _batch_entries(req: Request, name: str, body: dict) -> list[tuple[str, list[str], dict]]:
    """(machine name, zones, properties) per machine the PUT creates: the header's entries over the body as
    their template (zones and tags per entry: pkg/fake/aksmachinesapi.go createOneBatchMachine), else the one
    the path names."""
    props = body.get("properties") or {}
    raw = req.header(BATCH_HEADER)
    if not raw:
        return [(name, [str(z) for z in body.get("zones") or []], props)]
    try:
        entries = json.loads(raw)["batchMachines"]
        out = [(str(e["machineName"]), [str(z) for z in e.get("zones") or []],
                {**props, "tags": dict(e.get("tags") or {})}) for e in entries]
    except (ValueError, KeyError, TypeError) as e:
        # (harness assumption: AKS's wording for a header it cannot read)
        raise exc.AKSError("InvalidParameter", f"The {BATCH_HEADER} header is not valid: {e}", 400) from None
    if not out or len(out) > BATCH_MAX:
        raise exc.AKSError("InvalidParameter", f"The {BATCH_HEADER} header must name 1 to {BATCH_MAX} machines, "
                                               f"not {len(out)}.", 400)
    return out


def put_machine(ctx: "ArmContext", req: Request, p: dict) -> Response:
    pool = _pool(ctx, p)
    body = req.json() or {}
    existing = ctx.aks.get(pool, p["machine"])
    if existing is not None and not req.header(BATCH_HEADER):
        return _update(ctx, req, existing, body)
    failures: list[tuple[str, str, str]] = []
    first = None
    for name, zones, props in _batch_entries(req, p["machine"], body):
        try:
            m, op = _create(ctx, pool, name, zones, props)
        except exc.AKSError as e:
            if not req.header(BATCH_HEADER):
                raise
            failures.append((name, e.code, e.message))
            continue
        m.batched = bool(req.header(BATCH_HEADER))
        if first is None:
            first = (m, op)
    if failures:
        raise exc.batch_error(failures)
    m, op = first
    return ctx.lro.reply(req, op, 201, m.view(ctx.subscription))


def _update(ctx: "ArmContext", req: Request, m: Machine, body: dict) -> Response:
    """A PUT of an existing machine: If-Match against its eTag, vmSize/priority/zone immutable, tags replaced
    (pkg/fake/aksmachinesapi.go updateExistingAKSMachine, doImmutablePropertiesChanged)."""
    match = req.header("If-Match")
    if match is not None and match != m.etag:
        raise exc.precondition_failed()
    props = body.get("properties") or {}
    size = (props.get("hardware") or {}).get("vmSize")
    zones = [str(z) for z in body.get("zones") or []]
    if ((size and size != (m.props.get("hardware") or {}).get("vmSize"))
            or (props.get("priority") and props["priority"] != m.props.get("priority"))
            or (zones and m.zones and zones[0] != m.zones[0])):
        raise exc.immutable_property_changed(m.name)
    if props.get("tags") is not None:
        m.props = {**m.props, "tags": dict(props["tags"])}
        vm = ctx.aks.vm_of(m)
        if vm is not None:
            vm.body = {**vm.body, "tags": dict(props["tags"])}
    m.etag = ctx.aks.next_etag()
    return Response(200, m.view(ctx.subscription))


def _create(ctx: "ArmContext", pool: AgentPool, name: str, zones: list[str], props: dict):
    """One new machine and its VM. A size the region does not have is refused now (VMSizeNotSupported); what
    refuses the VM (its SKU's restrictions, quota, the scenario's fault rules on `vm.create`) fails the
    machine's operation and stays on it as status.provisioningError."""
    sub, aks, compute = ctx.subscription, ctx.aks, ctx.compute
    m = aks.new_machine(pool, name, zones, props)
    size = str((m.props.get("hardware") or {}).get("vmSize") or "")
    region = pool.location.lower()
    found = compute.find_sku(region, size)
    if found is None:
        raise exc.vm_size_not_supported(size, sub, region)
    body = aks.vm_body(m, None, found)
    parsed = compute.parse_put(body)
    # the scenario's rules on `machine.create` (a code that is no throttling or 5xx): one delivered synchronously
    # refuses the PUT, flat as AKS answers; an asynchronous one fails the machine's operation
    mctx = fault_ctx("machine.create", pool.rg, name, region, size, parsed["zones"], parsed["priority"], "PUT")
    try:
        machine_err = ctx.faults.provision(mctx)
    except ARMError as e:
        raise exc.AKSError(e.code, e.message, e.status, details=getattr(e, "details", None)) from None
    rg = pool.node_resource_group
    fctx = fault_ctx("vm.create", rg, m.vm_name, region, size, parsed["zones"], parsed["priority"], "PUT")
    vm = None
    try:
        sku = compute.validate_new(sub, rg, m.vm_name, parsed)
        async_err = ctx.faults.provision(fctx, sku, parsed)
        compute.quota.check(sub, region, sku, is_spot(parsed["priority"]), cat.sku_vcpus(sku))
        vm = aks.make_vm(sub, m, body, sku)
    except ARMError as e:
        async_err = e
    if machine_err is not None:
        async_err = machine_err
    aks.store(m)

    def finish(o, m=m, vm=vm):
        if aks.get(m.pool, m.name) is not m or m.provisioning_state != "Creating":
            return
        if o.error is not None or vm is None:
            aks.fail(m, async_err)
        else:
            compute.mark_succeeded(vm)
            m.provisioning_state = "Succeeded"

    err = None if async_err is None else exc.AKSError(**_op_error(async_err))
    op = ctx.lro.start("machine.create", "Microsoft.ContainerService", region,
                       machine_id(sub, pool.rg, pool.cluster, pool.name, m.name), err, finish)
    m.operation = op.id
    return m, op


def _op_error(e: ARMError) -> dict:
    d = exc.provisioning_error(e.code, e.message)
    return {"code": d["code"], "message": d["message"], "status": 200, "details": d["details"]}


def delete_machines(ctx: "ArmContext", req: Request, p: dict) -> Response:
    """AgentPools_DeleteMachines: 202 + Location while the machines and their VMs go (as long as a VM deletion
    takes); a name the pool does not hold refuses the whole request (pkg/fake/aksagentpoolsapi.go
    BeginDeleteMachines)."""
    pool = _pool(ctx, p)
    names = [str(n) for n in ((req.json() or {}).get("machineNames") or [])]
    machines = [ctx.aks.get(pool, n) for n in names]
    if not names or any(m is None for m in machines):
        raise exc.no_valid_machines(pool.name, sorted(m.name for m in ctx.aks.list(pool)))
    for m in machines:
        m.provisioning_state = "Deleting"

    def finish(o, machines=machines):
        for m in machines:
            ctx.aks.remove(m)

    # AKS deletes each machine's VM: the operation lasts as long as a VM deletion does, unless machine deletions
    # are timed themselves (FakeAzure.set_operation_seconds)
    op = ctx.lro.start("machine.delete", "Microsoft.ContainerService", pool.location,
                       machine_id(ctx.subscription, pool.rg, pool.cluster, pool.name, names[0]), None, finish,
                       timed_as=("vm.delete",))
    return ctx.lro.reply(req, op, 202, location_header=True)


# ----------------------------------------------------------------------------- node images and bootstrapping


def list_node_image_versions(ctx: "ArmContext", req: Request, p: dict) -> Response:
    """ManagedClusters_ListNodeImageVersions: every version of every image of the community galleries the
    fake serves, as AKS's SIG publishes them (``os`` the gallery: AKSUbuntu, AKSAzureLinux; ``sku`` the image
    definition; provider v1.14.0 pkg/providers/imagefamily/nodeimageversionsclient.go FilteredNodeImages keeps
    the newest per os and sku)."""
    rows = []
    for gallery, images in ctx.galleries.images.items():
        os_name = ctx.galleries.names[gallery].split("-", 1)[0]
        for image in images.values():
            for v in ctx.galleries.versions:
                rows.append({"fullName": f"{os_name}-{image}-{v['name']}", "os": os_name, "sku": image,
                             "version": v["name"]})
    return Response(200, paginate(req, rows, ctx.page_size))


# pkg/fake/nodebootstrappingapi.go validateProvisionProfile / validateProvisionHelperValues: the fields the
# service needs
_PROFILE_FIELDS = ("name", "vmSize", "osType", "osSku", "storageProfile", "distro", "orchestratorVersion",
                   "vnetCidrs", "vnetSubnetID", "mode", "architecture", "maxPods")
_HELPER_FIELDS = ("skuCPU", "skuMemory")
_GO_NAMES = {"name": "Name", "vmSize": "VMSize", "osType": "OsType", "osSku": "OsSku",
             "storageProfile": "StorageProfile", "distro": "Distro", "orchestratorVersion": "OrchestratorVersion",
             "vnetCidrs": "VnetCidrs", "vnetSubnetID": "VnetSubnetID", "mode": "Mode", "architecture": "Architecture",
             "maxPods": "MaxPods", "skuCPU": "SkuCPU", "skuMemory": "SkuMemory"}


def node_bootstrapping(ctx: "ArmContext", req: Request, p: dict) -> Response:
    """NodeBootstrapping_Get (provider v1.14.0 pkg/provisionclients/client/operations/operations_client.go: GET
    with the ProvisionValues as its JSON body, over the plain http of NODEBOOTSTRAPPING_SERVER_URL): the
    kubelet's bootstrap for the profile (``customData``, base64, with the ``{{.TokenID}}.{{.TokenSecret}}``
    placeholder the provider hydrates: customscriptsbootstrap/utils.go hydrateBootstrapTokenIfNeeded) and a CSE.
    Missing fields are refused as the provider's fake refuses them (pkg/fake/nodebootstrappingapi.go)."""
    values = req.json() or {}
    profile = values.get("provisionProfile")
    helper = values.get("provisionHelperValues")
    for part, fields, what in ((profile, _PROFILE_FIELDS, "ProvisionProfile"),
                               (helper, _HELPER_FIELDS, "ProvisionHelperValues")):
        if not isinstance(part, dict):
            raise ARMError("MissingRequiredProperty",
                           f"ConvertProvisionProfile failed with error: {what} cannot be empty", 400)
        for f in fields:
            if part.get(f) is None:
                raise ARMError("MissingRequiredProperty", f"ConvertProvisionProfile failed with error: missing "
                                                          f"field: {_GO_NAMES[f]} cannot be empty", 400)
    labels = {str(k): str(v) for k, v in (profile.get("customNodeLabels") or {}).items()}
    taints = [str(t) for t in (profile.get("nodeInitializationTaints") or []) + (profile.get("nodeTaints") or [])]
    return Response(200, {"customData": bootstrap_script(labels, taints, profile.get("maxPods")),
                          "cse": f"{BOOTSTRAP_MARK}\n# kubelet TLS bootstrap token {{{{.TokenID}}}}.{{{{.TokenSecret}}}}\n",
                          "osImageConfig": None, "sigImageConfig": None})
