"""`harness new`: a customer's files -> a scenario. The readers (YAML, JSON, rapidyaml, `kubectl get
events` text, a Karpenter log's story), the cluster at a moment, the times a dump implies, where pods
ran without Nodes, AKS names, the scenario written (new.py drives it; logscenario.py from a log alone)."""
