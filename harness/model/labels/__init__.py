"""Labels and requirements: the label-key policy (policy.py), the well-known keys, Karpenter core's
requirement algebra and the per-profile knobs it reads, and the writers that put each label on a Node."""
