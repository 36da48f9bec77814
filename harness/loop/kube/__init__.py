"""The Kubernetes components the loop stands in for: kube-scheduler (filter, score, node tree,
preemption, binding), kube-controller-manager (workloads, Jobs, StatefulSets, rollouts, PDB status,
FailedCreate), the kubelet's pod deletion and a support engineer's kubectl verbs."""
