"""Karpenter core's disruption controller (pkg/controllers/disruption): candidates and budgets, the
Emptiness, Drift and consolidation methods, the scheduling simulation they run, the orchestration
queue, what it remembers between passes, and its reasons (record.py, reasonwords.py)."""
