"""The kubelet stand-in reads what the real controller put in customData (aksscriptless bootstrap
script: provider v1.14.0 pkg/providers/imagefamily/bootstrap/cse_cmd.sh.gtpl)."""
import base64

import pytest

from harness.runner.real.kubelet import BootstrapError, bootstrap_of, decode_custom_data, node_status, MachineFacts


def _script(labels: str, flags: str) -> str:
    text = ("#!/bin/bash\nTHP_ENABLED=\"\"\n"
            f'KUBELET_FLAGS="{flags}"\nKUBELET_NODE_LABELS="{labels}"\nKUBE_CA_CRT="x"\n')
    return base64.b64encode(text.encode()).decode()


FLAGS = ("--max-pods=250 --register-with-taints=karpenter.sh/unregistered:NoExecute,dedicated=gpu:NoSchedule "
         "--kube-reserved=cpu=100m,memory=1843Mi --eviction-hard=memory.available<750Mi,nodefs.available<10% "
         "--cloud-provider=external")


def test_labels_flags_and_taints_come_from_the_script():
    boot = decode_custom_data(_script("karpenter.sh/nodepool=default,env=prod,kubernetes.azure.com/mode=user", FLAGS))
    assert boot.node_labels == {"karpenter.sh/nodepool": "default", "env": "prod", "kubernetes.azure.com/mode": "user"}
    assert boot.max_pods == 250
    assert boot.taints == [{"key": "karpenter.sh/unregistered", "effect": "NoExecute"},
                           {"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    assert boot.flags["--cloud-provider"] == "external"


def test_allocatable_subtracts_kube_reserved_and_hard_eviction():
    boot = decode_custom_data(_script("a=b", FLAGS))
    st = node_status(MachineFacts("aks-x", "amd64", 2, 8192, 128), boot)
    assert st["capacity"] == {"cpu": "2", "memory": "8Gi", "pods": "250", "ephemeral-storage": "128Gi"}
    assert st["allocatable"]["cpu"] == "1900m"
    assert st["allocatable"]["memory"] == f"{8192 - 1843 - 750}Mi"


def test_not_a_bootstrap_script_is_an_error():
    with pytest.raises(BootstrapError, match="KUBELET_NODE_LABELS"):
        decode_custom_data(base64.b64encode(b"#cloud-config\n").decode())
    with pytest.raises(BootstrapError, match="no osProfile.customData"):
        bootstrap_of({"properties": {"osProfile": {}}})
