"""The real Karpenter-on-Azure controller as the real engine runs it: which release's controller answers
a run, its settings, what it needs of the cluster, the fake Azure it talks to, and the one controller
kept per process (keeper.py) with the order of runs that lets a worker keep it (affinity.py)."""
