"""The `kind` backend: a kubeadm control plane and real kubelets in Docker node containers, built
without any container registry (reference/kind-airgapped.md).

- `image.py`: the node image (`python -m harness.backends build --kind`), cached by version;
- `cluster.py`: the backend, driven by testcontainers and docker-py;
- `nodes.py`: worker containers whose kubelet boots for a fake VM.
"""
