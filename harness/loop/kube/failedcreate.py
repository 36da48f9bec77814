"""A workload's pod the API server refused to create, as kube-controller-manager records it: a FailedCreate
event on the controller object that made the pod - a Deployment's ReplicaSet, a bare ReplicaSet, a DaemonSet,
a Job - with the message "Error creating: <the API server's error>", the pod named by the generateName the
controller sent (k8s.io/kubernetes v1.36.3 pkg/controller/controller_utils.go RealPodControl.createPods,
getPodsPrefix; the event recorder folds identical events into one). The controller then retries; what it
retries is harness/loop/kube/workloads.py's.

Harness assumption: a Deployment's ReplicaSet is named `<deployment>-<hash>` with the harness's own hash of
the stored pod template in ComputeHash's alphabet (upstream hashes a spew dump of the Go object, which the
harness does not reproduce): the name differs from a real cluster's, the message after it does not.
"""
from __future__ import annotations

import json
import zlib

from harness.model.kube.poddefaults import default_template

__all__ = ["controller_object", "failed_create_message", "replicaset_name"]

REASON = "FailedCreate"
# k8s.io/apimachinery v0.36.3 pkg/util/rand/rand.go alphanums (SafeEncodeString)
_ALPHANUMS = "bcdfghjklmnpqrstvwxz2456789"


def replicaset_name(deployment: dict) -> str:
    """The name the harness gives a Deployment's ReplicaSet: `<deployment>-<hash of its defaulted template>`,
    the hash's decimal digits encoded as rand.SafeEncodeString encodes ComputeHash's."""
    tmpl = default_template((deployment.get("spec") or {}).get("template") or {})
    digest = zlib.crc32(json.dumps(tmpl, sort_keys=True, default=str).encode())
    return f"{deployment['metadata']['name']}-" + "".join(_ALPHANUMS[int(d) % len(_ALPHANUMS)] for d in str(digest))


def controller_object(owner_kind: str, owner_name: str, deployment: dict | None) -> tuple[str, str]:
    """(kind, name) of the object whose controller creates the pods of the loop's owner: a Deployment's
    ReplicaSet (`deployment`: the applied Deployment), else the owner itself."""
    if owner_kind == "Deployment" and deployment is not None:
        return "ReplicaSet", replicaset_name(deployment)
    return owner_kind, owner_name


def failed_create_message(pod_name: str, controller_name: str, message: str, validating: bool = False) -> str:
    """`Error creating: <message>` with the pod named as the API server named it: a mutating plugin's refusal
    (Priority, RuntimeClass's Admit) names the generateName the controller sent, `<controller>-`; a validating
    one's (ResourceQuota, LimitRanger's Validate) the name generated from it, `<controller>-<5 chars>` (the
    loop's pod's own 5)."""
    named = f"{controller_name}-" + (pod_name.rsplit("-", 1)[-1] if validating else "")
    return "Error creating: " + message.replace(f'pods "{pod_name}"', f'pods "{named}"', 1)
