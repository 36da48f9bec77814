"""The two engines behind one interface (base.py): `simulated`, the harness's own loop, and `real`,
the provider's controller against fakeazure and a real API server."""
from __future__ import annotations

from harness.runner.engines.base import Engine, Outcome, execute

ENGINE_NAMES = ("simulated", "real")


def get_engine(name: str, **options) -> Engine:
    """The engine called `name` (options go to its constructor: the real engine's `controller`)."""
    if name == "simulated":
        from harness.runner.engines.simulated import SimulatedEngine
        return SimulatedEngine(**options)
    if name == "real":
        from harness.runner.engines.real.engine import RealEngine
        return RealEngine(**options)
    raise ValueError(f"unknown engine {name!r}; choose one of {', '.join(ENGINE_NAMES)}")


def engine_backends(engine: str, asked: list[str]) -> list[str]:
    """The backends an engine's runs use for the backends `asked` for: the real engine runs on
    `local`, or on `kind` (real kubelets) when that backend is asked for; the simulated engine on
    each one asked for (default: embedded)."""
    if engine == "real":
        return ["kind"] if "kind" in asked else ["local"]
    return list(asked) or ["embedded"]


def run(scenario, profile: str, cluster, *, engine: str = "simulated", why: list[str] | None = None,
        **options) -> Outcome:
    """One scenario under one profile on `cluster`, every expectation checked (base.execute)."""
    return execute(get_engine(engine), scenario, profile, cluster, why=why, **options)
