"""The harness judged: the simulation against the real controller (conformance), a scenario under many
seeds (explore) and up to zone relabeling (zonesym), a provider commit range (bisect), its expectations
mutated, fuzzed inputs and invariants, a run's fingerprint, and what the real-release jobs run."""
