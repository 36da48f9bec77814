"""Karpenter core's provisioner (pkg/controllers/provisioning) and what it reads and writes: the
NodePools' status, the NodeClaim objects it creates, and its reasons in the decision record."""
