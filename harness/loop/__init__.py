"""The simulated Karpenter-on-Azure loop: simulation.py runs the controllers in the order a real cluster
does, on one LoopState (state.py, seeded from customer state by seed.py); the run's clock, result,
decisions and history. scheduling/, provisioning/, lifecycle/, disruption/ (Karpenter core), azure/
(the provider), kube/ (kube-scheduler, kube-controller-manager, the kubelet, kubectl)."""
