"""The real engine (`--harness-engine real`, engine.py): one scenario with the real Karpenter-on-Azure
controller against a real API server. controller/ (the controller run and kept), cluster/ (what the
run plays on the cluster), outcome/ (what it produced, and when it has settled)."""
