"""What the real controller needs from the cluster, once per cluster: the provider's own CRDs and a
service account with a token (github.com/Azure/karpenter-provider-azure v1.14.0 pkg/operator/operator.go).

The CRDs are the provider's `pkg/apis/crds/` of the module version the controller was built from
(v1.14.0: core's NodePool, NodeClaim and NodeOverlay plus AKSNodeClass v1beta1), applied unchanged -
not the harness's profile-rendered ones: the controller's `operator.WaitForCRDs` waits for all four
(provider v1.14.0 pkg/operator/operator.go) and the API server judges with upstream's own rules.
"""
from __future__ import annotations

import copy
import functools
from pathlib import Path

import yaml

from harness.backends.base import APIRejected

NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "karpenter"
TOKEN_SECONDS = 24 * 3600


def provider_crds(crds_dir: Path) -> list[dict]:
    """The CRDs in a provider's pkg/apis/crds (fresh copies: the API calls annotate them)."""
    return copy.deepcopy(_read_crds(crds_dir))


@functools.lru_cache(maxsize=8)
def _read_crds(crds_dir: Path) -> list[dict]:
    """Read once per process: parsing ~1 MB of YAML (and, for the module, `go mod download`) took
    2-3 s of every real-engine run."""
    return [yaml.load(f.read_text(), Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))
            for f in sorted(crds_dir.glob("*.yaml"))]


def service_account_token(admin) -> str:
    """kube-system/karpenter bound to cluster-admin, and a TokenRequest token for it (the token the
    controller reads as its in-cluster credential)."""
    base = f"/api/v1/namespaces/{NAMESPACE}/serviceaccounts"
    try:
        admin.request("POST", base, {"apiVersion": "v1", "kind": "ServiceAccount",
                                     "metadata": {"name": SERVICE_ACCOUNT, "namespace": NAMESPACE}})
    except APIRejected as e:
        if e.status != 409:
            raise
    crb = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
           "metadata": {"name": "harness-karpenter-controller"},
           "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
           "subjects": [{"kind": "ServiceAccount", "name": SERVICE_ACCOUNT, "namespace": NAMESPACE}]}
    admin.request("PUT", f"/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/{crb['metadata']['name']}", crb)
    tr = admin.request("POST", f"{base}/{SERVICE_ACCOUNT}/token",
                       {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                        "spec": {"expirationSeconds": TOKEN_SECONDS}})
    return tr["status"]["token"]


def prepare(cluster, ctl, workdir: Path) -> dict[str, Path]:
    """The controller's own CRDs (once per cluster and controller) and fresh token/ca.crt files for
    the sandbox's secrets dir."""
    ident = f"provider {ctl.version} ({ctl.crds_dir})"
    if cluster.installed_crds != ident:
        cluster.install_crds(provider_crds(ctl.crds_dir), ident)
    token = workdir / "sa-token"
    token.write_text(service_account_token(cluster.admin))
    return {"token": token, "ca.crt": Path(cluster.server_ca)}
