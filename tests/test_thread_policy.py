"""Thread setting of the parallel CSR kernels: every thread by default, or (opt-in
``SEMISUP_THREAD_POLICY=load``) a team no larger than the free cores."""

import os
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import _accel
from semisup.solvers import _kernels
from semisup.solvers.design import Design


@pytest.fixture
def probe(monkeypatch):
    """A 4-core machine, numba with 4 threads, and a fake ``/proc/stat``."""
    state = {"busy": 100.0, "own": 10.0}
    monkeypatch.setattr(_kernels, "THREAD_POLICY", "load")
    monkeypatch.setattr(_kernels, "n_threads", lambda: 4)
    monkeypatch.setattr(_kernels, "_cores", lambda: {0, 1, 2, 3})
    monkeypatch.setattr(_kernels, "_cpu_seconds", lambda cpus: state["busy"])
    monkeypatch.setattr(_kernels, "_own_seconds", lambda: state["own"])
    monkeypatch.setattr(_kernels, "_PROBE", {})
    monkeypatch.setattr(_kernels, "_runnable_others", lambda: 0.0)

    def advance(seconds, others, own_cores=0.0):
        """``seconds`` pass with other processes on ``others`` cores and ours on ``own``."""
        if "time" in _kernels._PROBE:  # as if the last probe were that long ago
            _kernels._PROBE["time"] -= seconds
        state["busy"] += seconds * (others + own_cores)
        state["own"] += seconds * own_cores
        return _kernels.parallel_threads()

    return advance


def test_team_is_the_cores_other_processes_leave_free(probe):
    assert _kernels.parallel_threads() == 4  # first call: nothing else runnable
    assert probe(1.0, others=0.0, own_cores=4.0) == 4  # our own work is not "load"
    assert probe(1.0, others=1.0, own_cores=3.0) == 3
    assert probe(1.0, others=2.2) == 2  # round(4 - 2.2)
    assert probe(1.0, others=8.0, own_cores=1.0) == 1  # cores taken: the serial kernels
    assert probe(2.0, others=0.3, own_cores=2.0) == 4


def test_answer_is_kept_between_probes(probe):
    _kernels.parallel_threads()
    _kernels._PROBE["threads"] = 2
    assert _kernels.parallel_threads() == 2  # within PROBE_INTERVAL: no new measurement
    assert probe(1.0, others=0.0) == 4


def test_first_decision_reads_runnable_threads(probe, monkeypatch):
    monkeypatch.setattr(_kernels, "_runnable_others", lambda: 7.0)
    assert _kernels.parallel_threads() == 1


def test_policy_off_keeps_every_thread(probe, monkeypatch):
    monkeypatch.setattr(_kernels, "THREAD_POLICY", "off")
    assert probe(1.0, others=8.0) == 4
    monkeypatch.setattr(_kernels, "THREAD_POLICY", "load")
    monkeypatch.setattr(_kernels, "_cpu_seconds", lambda cpus: None)  # no /proc: all threads
    assert probe(1.0, others=8.0) == 4


@pytest.mark.parametrize("threads", [1, 2, 3, 5])
def test_products_do_not_depend_on_the_team(rng, monkeypatch, threads):
    """Whatever team the policy picks, ``X w`` is bitwise the serial one (each row's sum in
    the same order) and ``X^T q`` agrees to rounding."""
    X = sp.random(400, 60, density=0.1, format="csr", random_state=1)
    serial = Design(X, parallel=False)
    monkeypatch.setattr(_accel, "COMPILE_MIN_SIZE", 0)  # the compiled kernels, small as it is
    monkeypatch.setattr(_kernels, "PARALLEL_MIN_NNZ", 1)
    monkeypatch.setattr(_kernels, "n_threads", lambda: 8)
    monkeypatch.setattr(_kernels, "parallel_threads", lambda: threads)
    auto = Design(X)
    assert auto._auto_threads
    rows = np.sort(rng.choice(400, 150, replace=False))
    for a, s in ((auto, serial), (auto.restrict(rows), serial.restrict(rows))):
        w, q = rng.normal(size=61), rng.normal(size=a.n_rows)
        np.testing.assert_array_equal(a.matvec(w), s.matvec(w))
        np.testing.assert_allclose(a.rmatvec(q), s.rmatvec(q), rtol=1e-12, atol=1e-12)
        view = a._view()
        team = a._team(view)
        assert (team is None) if threads == 1 else (team.shape[0] == threads + 1)


@pytest.mark.skipif(not os.path.exists("/proc/stat"), reason="needs /proc/stat (Linux)")
def test_real_competing_processes_make_the_kernels_serial(monkeypatch):
    """Twice as many busy processes as cores: the measured free cores round to none."""
    monkeypatch.setattr(_kernels, "THREAD_POLICY", "load")
    monkeypatch.setattr(_kernels, "n_threads", lambda: 2)
    monkeypatch.setattr(_kernels, "_PROBE", {})
    n = 2 * len(os.sched_getaffinity(0))
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    try:
        time.sleep(0.3)
        _kernels.parallel_threads()  # starts the window
        time.sleep(_kernels.PROBE_INTERVAL + 0.5)
        assert _kernels.parallel_threads() == 1, _kernels._PROBE
    finally:
        for p in hogs:
            p.kill()
        for p in hogs:
            p.wait()
