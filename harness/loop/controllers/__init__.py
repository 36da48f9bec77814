"""The loop's controllers, one module per concern, in the order a real cluster runs them.

Each stands for one upstream controller (Karpenter core sigs.k8s.io/karpenter v1.14.0, the Azure
provider github.com/Azure/karpenter-provider-azure v1.14.0, or a Kubernetes component) and acts on
the one `LoopState` (state.py) the orchestrator (harness/loop/simulation.py) hands it:

  workloads.py         manifests -> API objects; Deployment/DaemonSet pods
  jobs.py              kube-controller-manager's Job and CronJob controllers: pods that complete
  statefulsets.py      kube-controller-manager's StatefulSet controller: ordinal pods and their claims
  nodepool.py          core nodepool/validation + nodepool/readiness
  binding.py           kube-scheduler's bind of pending pods to Nodes
  provisioner.py       core provisioning/provisioner.go: templates, cluster state, Schedule, Create
  launch.py            core nodeclaim/lifecycle/launch.go (cloudprovider.Create via harness/loop/azure.py)
  registration.py      kubelet / CSI node / cloud-node-controller writers, core lifecycle/registration.go
  initialization.py    core nodeclaim/lifecycle/initialization.go, then DaemonSet pods on the Node
  liveness.py          core nodeclaim/lifecycle/liveness.go (launch and registration timeouts)
  garbagecollection.py core nodeclaim/garbagecollection + the provider's instance/NIC collectors
  termination.py       deleting a NodeClaim and finalizing its Node (core node/termination)
  kubelet.py           the kubelet ending a gracefully deleted pod once its containers stopped
"""
