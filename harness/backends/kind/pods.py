"""Pods and machines on kind: what the real kube-scheduler did with the loop's pods (Placement,
Finding), pods made runnable without a registry (pause_pod), and the machine a VM's kubelet is shown
(machine_for)."""
from __future__ import annotations

from dataclasses import dataclass

from harness.backends.kind.nodes import Machine

@dataclass(frozen=True)
class Placement:
    """A pod the loop's kube-scheduler placed and where the real kube-scheduler put it."""
    pod: str                 # namespace/name
    loop_node: str | None
    real_node: str | None
    message: str = ""        # the real scheduler's PodScheduled message when it left the pod unbound


@dataclass(frozen=True)
class Finding:
    """A difference between the loop's result and the real cluster, found when reading it back.
    `blocking`: the run fails (a mismatch); otherwise a notice."""
    path: str
    loop: object
    real: object
    detail: str
    blocking: bool


# A VM with more vCPUs than the Docker host: the kubelet can only be shown the host's CPUs
# (machine-view.sh), so a node-status stand-in writes the VM's CPU into the Node's status, and the
# kubelet's periodic status sync - which would put its own count back - is pushed past any scenario's
# length (its fast sync until Ready is unaffected: k8s.io/kubernetes v1.36.3 pkg/kubelet/kubelet.go
# fastStatusUpdateOnce). (harness assumption: 10 minutes outlasts every scenario on kind.)
SLOW_STATUS_SYNC = {"nodeStatusUpdateFrequency": "10m0s", "nodeStatusReportFrequency": "10m0s"}


def machine_for(node: dict, cpus_available: int) -> Machine | None:
    """The Machine a VM's kubelet is to report, from the capacity and allocatable the loop computed
    for its instance type (None when the loop gave none). Memory: capacity is shown as MemTotal
    (whole KiB), and capacity - allocatable splits into the provider's eviction threshold
    (memory.available, harness/model/azure/overhead.py EVICTION_MEMORY_AVAILABLE) and kubeReserved; CPU:
    capacity - allocatable is kubeReserved."""
    from harness.model.azure.overhead import EVICTION_MEMORY_AVAILABLE
    from harness.model.values.resources import parse_resource_list
    status = node.get("status") or {}
    cap, alloc = parse_resource_list(status.get("capacity")), parse_resource_list(status.get("allocatable"))
    if not {"cpu", "memory"} <= cap.keys() or not {"cpu", "memory"} <= alloc.keys():
        return None
    reserved_mem = max(cap["memory"] - alloc["memory"], 0)
    evict = min(EVICTION_MEMORY_AVAILABLE, reserved_mem)
    vcpus = -(-cap["cpu"] // 1000)
    return Machine(cpus=max(1, min(vcpus, cpus_available)), memory_kib=cap["memory"] // 1024,
                   max_pods=cap.get("pods", 110),
                   kube_reserved={"cpu": f"{max(cap['cpu'] - alloc['cpu'], 0)}m", "memory": str(reserved_mem - evict)},
                   eviction_hard={"memory.available": f"{evict // 1024}Ki"},
                   status_sync=dict(SLOW_STATUS_SYNC) if vcpus > cpus_available else {})


def pause_pod(pod: dict, image: str) -> dict:
    """A copy of `pod` whose containers run `image` (never pulled) with its own entrypoint."""
    import copy
    pod = copy.deepcopy(pod)
    spec = pod.setdefault("spec", {})
    for key in ("initContainers", "containers"):
        for c in spec.get(key) or []:
            c["image"], c["imagePullPolicy"] = image, "Never"
            c.pop("command", None)
            c.pop("args", None)
    return pod


def unscheduled_message(pod: dict) -> str:
    """The real kube-scheduler's verdict on an unbound pod: its PodScheduled=False condition message
    (e.g. "0/2 nodes are available: ...")."""
    for c in ((pod or {}).get("status") or {}).get("conditions") or []:
        if c.get("type") == "PodScheduled" and c.get("status") == "False":
            return c.get("message") or c.get("reason") or ""
    return ""
