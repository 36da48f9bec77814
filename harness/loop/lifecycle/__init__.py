"""A NodeClaim's life (core pkg/controllers/nodeclaim, node/termination): launch, registration,
initialization, liveness, pod events, expiration, its disruption conditions (conditions.py) and the hashes drift
compares, garbage collection, and termination (the object, then the Node's graceful drain)."""
