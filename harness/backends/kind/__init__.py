"""The `kind` backend: a kubeadm control plane and real kubelets in Docker node containers, built
without any container registry (sigs.k8s.io/kind v0.33.0 pkg/build/nodeimage/build.go).

- `image.py`: the node image (`python -m harness.backends build --kind`), cached by version;
- `cluster.py`: the backend, driven by testcontainers and docker-py;
- `nodes.py`: worker containers whose kubelet boots for a fake VM, shown the VM's machine
  (`machine-view.sh`);
- `field-managers.yaml`: the field manager each harness writer sends, and the writer name it maps to;
- `reaper.py`: removes a killed process's containers (Ryuk's job, without its registry image);
- `rootfs.py`, `build-node-extras.sh`, `runc-nosysresource`: the Debian root filesystem, pause + CNI
  plugins (+ CoreDNS), and the runc wrapper docker-up.sh registers.
"""
