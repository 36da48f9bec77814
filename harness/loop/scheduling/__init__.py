"""Karpenter core's scheduling simulation (sigs.k8s.io/karpenter pkg/controllers/provisioning/scheduling):
pods as it sees them, existing nodes, planned NodeClaims and their templates, topology spread and
affinity, volumes, host ports, NodePool limits, the instance-type index, and the `why` view."""
