"""Karpenter-on-Azure harness: model, loop, cluster backends and scenario runner."""

__version__ = "0.1.0"
