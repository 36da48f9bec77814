"""Microsoft.ResourceGraph: the resources query Karpenter's garbage collection sends."""
