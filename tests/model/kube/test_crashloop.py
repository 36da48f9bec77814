from harness.model.kube.crashloop import CrashLoop


def test_the_first_exit_restarts_at_once_then_the_back_off_doubles():
    loop = CrashLoop()
    assert loop.exited(100.0, "exit code 2", False).restart_at == 100.0
    assert loop.exited(105.0, "exit code 2", False).restart_at == 115.0
    assert loop.exited(116.0, "exit code 2", False).restart_at == 136.0
    assert loop.exited(140.0, "exit code 2", False).restart_at == 180.0


def test_the_back_off_stops_at_five_minutes():
    loop = CrashLoop()
    at = 0.0
    for _ in range(8):
        at = loop.exited(at + 1.0, "exit", False).restart_at
    assert loop.backoff == 300.0


def test_ten_minutes_after_the_last_restart_the_back_off_is_forgotten():
    loop = CrashLoop()
    loop.exited(0.0, "crash", True)
    loop.exited(5.0, "crash", True)                 # restarted at 15
    assert loop.exited(616.0, "crash", True).restart_at == 616.0
    assert len(loop.chain) == 1 and len(loop.exits) == 3


def test_a_loop_is_the_process_exiting_by_itself_within_the_back_off():
    loop = CrashLoop()
    loop.exited(0.0, "crash step", True)
    loop.exited(1.0, "exit code 2", False)
    assert loop.looping(3) is None                  # a step asked for the first
    loop.exited(12.0, "exit code 2", False)
    assert loop.looping(3) is None
    loop.exited(32.0, "exit code 2", False)
    assert [e.at for e in loop.looping(3)] == [1.0, 12.0, 32.0]
