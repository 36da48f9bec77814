"""The run's clock on the real engine: a wall-clock instant read on it, and the fake Azure that keeps its time."""
from harness.runner.engines.real.cluster.runclock import FakeAzureClock, RunClock


def test_a_wall_clock_instant_is_read_with_the_offset_in_effect_then(monkeypatch):
    """The controller's logger stamps the wall clock; an unavailable offering set before a 61-minute jump
    expires on the run's clock, not an hour after its wall-clock line (create-faults unavailable-offering-expires)."""
    wall = iter([100.0, 200.0])
    monkeypatch.setattr("harness.runner.engines.real.cluster.runclock.time.time", lambda: next(wall))
    clock = RunClock()
    clock.bind(None)            # offset 0 from wall 100
    clock.set(3660.0)           # the jump, at wall 200
    assert clock.at(150.0) == 150.0
    assert clock.at(250.0) == 250.0 + 3660.0
    assert clock.at(50.0) == 50.0


def test_the_fake_keeps_the_runs_time_and_moves_only_with_it(monkeypatch):
    from harness.runner.engines.real.cluster import runclock
    monkeypatch.setattr(runclock, "CLOCK", RunClock(offset=10.0))
    monkeypatch.setattr("harness.runner.engines.real.cluster.runclock.time.time", lambda: 1000.0)
    fake = FakeAzureClock(start=500.0)
    assert fake.time() == 500.0
    assert fake.advance(60) == 500.0          # an advance moves the run's clock, not the fake's own
    runclock.CLOCK.set(70.0)                  # the run's clock jumps a minute
    assert fake.time() == 560.0
