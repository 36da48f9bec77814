"""The kubeadm configuration of a kind control plane and the bootstrap kubeconfig a worker joins with
(`kubeadm join`'s TLS bootstrap with a bootstrap token)."""
from __future__ import annotations

import yaml

POD_SUBNET = "10.244.0.0/16"
SERVICE_SUBNET = "10.96.0.0/16"


SCHEDULER_CONFIG = "/etc/kubernetes/harness-scheduler.yaml"   # kube-scheduler's --config, when it has one


def kubeadm_config(name: str, k8s: str, cp_ip: str, token: str, scheduler_config: bool = False) -> str:
    """kubeadm's Init/Cluster/Kubelet configuration for the control-plane node. failCgroupV1: false
    lets kubelet 1.36 run on a cgroup v1 host (k8s.io/kubelet v0.36.3 config/v1beta1/types.go FailCgroupV1);
    failSwapOn,
    imageGCHighThresholdPercent and the eviction thresholds at 0% are kind's own kubelet settings
    (sigs.k8s.io/kind v0.33.0 pkg/cluster/internal/kubeadm/config.go: a shared disk must not evict
    the node's pods). kubeadm's defaults are kept for the API server: --authorization-mode=Node,RBAC
    and --enable-admission-plugins=NodeRestriction (k8s.io/kubernetes v1.36.3
    cmd/kubeadm/app/phases/controlplane/manifests.go getAPIServerCommand). `scheduler_config`: kube-scheduler
    reads SCHEDULER_CONFIG (the caller writes it), mounted into its static pod."""
    docs = [
        {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "InitConfiguration",
         "bootstrapTokens": [{"token": token, "ttl": "24h0m0s", "groups": ["system:bootstrappers:kubeadm:default-node-token"],
                              "usages": ["signing", "authentication"]}],
         "localAPIEndpoint": {"advertiseAddress": cp_ip, "bindPort": 6443},
         "nodeRegistration": {"name": f"{name}-control-plane", "criSocket": "unix:///run/containerd/containerd.sock",
                              "kubeletExtraArgs": [{"name": "node-ip", "value": cp_ip}]}},
        {"apiVersion": "kubeadm.k8s.io/v1beta4", "kind": "ClusterConfiguration",
         "clusterName": name, "kubernetesVersion": k8s, "controlPlaneEndpoint": f"{cp_ip}:6443",
         "apiServer": {"certSANs": ["localhost", "127.0.0.1", cp_ip]},
         "networking": {"podSubnet": POD_SUBNET, "serviceSubnet": SERVICE_SUBNET},
         **({"scheduler": {"extraArgs": [{"name": "config", "value": SCHEDULER_CONFIG}],
                           "extraVolumes": [{"name": "harness-scheduler", "hostPath": SCHEDULER_CONFIG,
                                             "mountPath": SCHEDULER_CONFIG, "readOnly": True, "pathType": "File"}]}}
            if scheduler_config else {})},
        {"apiVersion": "kubelet.config.k8s.io/v1beta1", "kind": "KubeletConfiguration",
         "cgroupDriver": "systemd", "failCgroupV1": False, "failSwapOn": False,
         "imageGCHighThresholdPercent": 100,
         "evictionHard": {"nodefs.available": "0%", "nodefs.inodesFree": "0%", "imagefs.available": "0%"}},
        # kind's kube-proxy settings (same file, KubeProxyConfiguration): iptables mode, no global
        # nf_conntrack_max sysctl from inside a node container
        {"apiVersion": "kubeproxy.config.k8s.io/v1alpha1", "kind": "KubeProxyConfiguration",
         "mode": "iptables", "iptables": {"minSyncPeriod": "1s"}, "conntrack": {"maxPerCore": 0}},
    ]
    return yaml.safe_dump_all(docs)


def bootstrap_kubeconfig(server: str, ca_pem: str, token: str) -> str:
    import base64
    return yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config",
        "clusters": [{"name": "kind", "cluster": {"server": server,
                                                  "certificate-authority-data": base64.b64encode(ca_pem.encode()).decode()}}],
        "users": [{"name": "tls-bootstrap-token-user", "user": {"token": token}}],
        "contexts": [{"name": "tls-bootstrap", "context": {"cluster": "kind", "user": "tls-bootstrap-token-user"}}],
        "current-context": "tls-bootstrap"})
