"""Karpenter's CRDs as an API server judges them: the API versions a release serves, the schema
(pruning, defaults, OpenAPI validation), the CEL rules (cel.py over the celgo.py interpreter, rules.py
their text), AKSNodeClass admission, and NodePool / NodeClaim validation in its two stages."""
