"""What the real engine plays on the cluster: customer state and updates (existing.py, history.py),
kubectl's verbs and drain, the kubelet, cloud-node-controller and CSI stand-ins, Jobs' completions,
and the run's clock that `advance` steps move."""
