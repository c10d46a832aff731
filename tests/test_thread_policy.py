"""Thread setting of the parallel CSR kernels: every thread by default, or (opt-in
``SEMISUP_THREAD_POLICY=load``) a team no larger than the free cores; and the BLAS policy of
every fit (one thread on a busy machine)."""

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


def test_every_fit_takes_one_blas_thread_on_a_busy_machine(monkeypatch):
    """The fit policy of semisup.base: one BLAS thread for a whole fit (nested fits decide
    nothing) when another process's thread is runnable as it starts, the team otherwise;
    every public semi-supervised estimator's fit carries it."""
    import inspect

    from sklearn.base import BaseEstimator, ClassifierMixin
    from threadpoolctl import threadpool_info

    import semisup
    from semisup.base import SemiSupervisedClassifierMixin, SemiSupervisedRegressorMixin

    def blas_threads():
        return {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}

    class Probe(SemiSupervisedClassifierMixin, ClassifierMixin, BaseEstimator):
        def __init__(self, inner=None):
            self.inner = inner

        def fit(self, X, y):
            self.seen_ = blas_threads()
            if self.inner is not None:
                # the machine turns idle mid-fit: a nested fit keeps the outer decision
                monkeypatch.setattr(_kernels, "machine_busy", lambda: False)
                self.inner.fit(X, y)
            return self

    before = blas_threads()
    X, y = np.zeros((4, 2)), np.array([0, 1, -1, -1])
    monkeypatch.setattr(_kernels, "machine_busy", lambda: False)
    assert Probe().fit(X, y).seen_ == before
    monkeypatch.setattr(_kernels, "machine_busy", lambda: True)
    outer = Probe(inner=Probe()).fit(X, y)
    assert outer.seen_ <= {1} and outer.inner.seen_ <= {1}
    assert blas_threads() == before  # restored on exit
    for name in semisup.__all__:
        obj = getattr(semisup, name)
        if inspect.isclass(obj) and issubclass(obj, (SemiSupervisedClassifierMixin,
                                                     SemiSupervisedRegressorMixin)):
            assert getattr(obj.fit, "thread_policy", False), name


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("wrapper", ["SelfTraining", "CoTraining", "TriTraining"])
def test_wrappers_fit_their_base_models_on_one_blas_thread(wrapper, monkeypatch):
    """The wrappers' many small base fits run with one BLAS thread: over a scikit-learn base
    model at any width (a LogisticRegression took 3x longer with the team at 2,000 x 784),
    over a semisup base model on dense data of at most NARROW_FEATURES features, and with the
    team on wider dense data while the machine is idle."""
    from sklearn.base import BaseEstimator, ClassifierMixin
    from sklearn.linear_model import LogisticRegression
    from threadpoolctl import threadpool_info

    import semisup

    seen = []

    class Probe(ClassifierMixin, BaseEstimator):
        def fit(self, X, y):
            seen.append({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})
            keep = np.asarray(y) >= 0     # a semisup base is also given the other rows as -1
            self.lr_ = LogisticRegression().fit(X[keep], np.asarray(y)[keep])
            self.classes_ = self.lr_.classes_
            return self

        def predict_proba(self, X):
            return self.lr_.predict_proba(X)

        def predict(self, X):
            return self.lr_.predict(X)

    class SemisupProbe(Probe):
        pass

    SemisupProbe.__module__ = "semisup.probe"   # what the wrappers read to pass -1 rows
    monkeypatch.setattr(_kernels, "machine_busy", lambda: False)
    team = {p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"}
    rng = np.random.default_rng(0)
    y = np.full(60, -1)
    y[:10] = np.arange(10) % 2
    wide = _kernels.NARROW_FEATURES + 1
    for base, d, expect in ((Probe, 20, {1}), (Probe, wide, {1}), (SemisupProbe, 20, {1}),
                            (SemisupProbe, wide, team)):
        seen.clear()
        X = rng.normal(size=(60, d))
        getattr(semisup, wrapper)(base(), fallback="none").fit(X, y)
        assert seen and all(s == expect for s in seen), (base.__name__, d, seen)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name, inner", [("MixtureSSL", "LogisticRegression"),
                                         ("SelfTaughtClassifier", "SVC")])
def test_guarded_estimators_make_their_small_fits_on_one_thread(name, inner, monkeypatch):
    """MixtureSSL's and SelfTaughtClassifier's many small fits (the guard's logistic
    regressions, the SVMs on the codes) run with one BLAS thread on narrow dense data, idle
    or not."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.svm import SVC
    from threadpoolctl import threadpool_info

    import semisup

    cls = {"LogisticRegression": LogisticRegression, "SVC": SVC}[inner]
    seen = []
    fit = cls.fit

    def recording_fit(self, X, y, *args, **kwargs):
        seen.append({p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"})
        return fit(self, X, y, *args, **kwargs)

    monkeypatch.setattr(cls, "fit", recording_fit)
    monkeypatch.setattr(_kernels, "machine_busy", lambda: False)
    rng = np.random.default_rng(0)
    X = rng.normal(size=(80, 12))
    y = np.full(80, -1)
    y[:12] = np.arange(12) % 2
    getattr(semisup, name)(random_state=0).fit(X, y)
    assert seen and all(s == {1} for s in seen), seen
