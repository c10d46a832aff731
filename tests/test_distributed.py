"""Distributed fits on a local Dask cluster equal the single-machine fits.

Two worker processes (``processes=True``), one thread each, shared by the whole module.
Every fit is compared with the same estimator fitted on the matrix itself: objective to
1e-8 relative and identical transduced labels, for 1, 2 and 7 partitions, unbalanced
partitions, and partitions holding no labeled (or only labeled) rows.
"""

import os
import pickle
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

distributed = pytest.importorskip("distributed")

from semisup import (  # noqa: E402
    L2SVM,
    DeterministicAnnealingSVM,
    RLSClassifier,
    TransductiveSVM,
)
from semisup.distributed import (  # noqa: E402
    DistributedDesign,
    WorkerLostError,
    _solvers,  # noqa: E402
)

N, D, N_LABELED = 120, 12, 16
# labeled rows first: partitions after the first hold none of them
LAYOUTS = {
    "1": dict(n_partitions=1),
    "2": dict(n_partitions=2),
    "7": dict(n_partitions=7),
    "unbalanced": dict(sizes=[2, 9, 88, 1, 20]),
    "labeled-apart": dict(sizes=[N_LABELED, 50, N - N_LABELED - 50]),
}


@pytest.fixture(scope="module")
def problem():
    """Sparse text-like rows (CG and the Jacobi preconditioner as on one machine), classes 3/7."""
    rng = np.random.default_rng(3)
    X = sp.random(N, D, density=0.4, random_state=4, format="csr")
    X.data = rng.normal(size=X.data.size)
    w = rng.normal(size=D)
    y_true = np.where(X @ w + 0.3 * rng.normal(size=N) > 0, 7, 3)
    y = np.full(N, -1)
    y[:N_LABELED] = y_true[:N_LABELED]
    y[0], y[1] = 3, 7  # both classes labeled
    return X, y


ESTIMATORS = {
    "L2SVM": lambda: L2SVM(lam=0.05, solver="mfn", tol=1e-9),
    "TSVM": lambda: TransductiveSVM(lam=0.02, lam_u=1.0, tol=1e-9, lam_u_init=0.05,
                                    lam_u_growth=4.0),
    "TSVM-S1": lambda: TransductiveSVM(lam=0.02, lam_u=0.5, max_switches=1, tol=1e-9,
                                       lam_u_init=0.1, lam_u_growth=3.0),
    "DA": lambda: DeterministicAnnealingSVM(lam=0.02, lam_u=1.0, tol=1e-9,
                                            temperature_init=1.0, temperature_decay=4.0,
                                            kl_tol=1e-3, entropy_tol=1e-2),
}
_REFERENCE = {}


def _reference(name, X, y):
    if name not in _REFERENCE:
        _REFERENCE[name] = ESTIMATORS[name]().fit(X, y)
    return _REFERENCE[name]


def _assert_same_fit(dist, ref):
    assert dist.objective_ == pytest.approx(ref.objective_, rel=1e-8)
    np.testing.assert_array_equal(dist.transduction_, ref.transduction_)
    np.testing.assert_array_equal(dist.classes_, ref.classes_)
    np.testing.assert_allclose(dist.coef_, ref.coef_, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("name", ["L2SVM", "TSVM", "DA"])
def test_distributed_fit_equals_single_machine(client, problem, name, layout):
    if name == "DA" and layout != "7":
        pytest.skip("DA runs on 7 partitions only (keeps the module near a minute)")
    X, y = problem
    design = DistributedDesign.from_arrays(client, X, y, **LAYOUTS[layout])
    try:
        dist = ESTIMATORS[name]().fit(design, design.labels)
    finally:
        design.close()
    _assert_same_fit(dist, _reference(name, X, y))
    # an ordinary fitted estimator: predicts on matrices and pickles (transduction_, a dask
    # array on the workers, pickles as long as the client lives)
    np.testing.assert_array_equal(dist.predict(X[:5]), _reference(name, X, y).predict(X[:5]))
    pickle.loads(pickle.dumps(dist))


def test_single_switching_and_dense_rows(client, problem):
    """S = 1 switching (candidate lists of one pair) on dense partitions."""
    X, y = problem
    Xd = X.toarray()
    design = DistributedDesign.from_arrays(client, Xd, y, n_partitions=3)
    dist = ESTIMATORS["TSVM-S1"]().fit(design, None)
    design.close()
    ref = ESTIMATORS["TSVM-S1"]().fit(Xd, y)
    assert ref.fit_results_[0].n_switches > 0  # the switching path is exercised
    assert dist.fit_results_[0].n_switches == ref.fit_results_[0].n_switches
    _assert_same_fit(dist, ref)


@pytest.mark.parametrize("direct,inline", [(False, False), (True, True)])
def test_call_paths_give_the_same_fit(client, problem, direct, inline):
    """Calls relayed by the scheduler (direct=False, actor thread) or sent straight to the
    workers and run on their event loop: the same TSVM fit as one machine."""
    X, y = problem
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=3, direct=direct,
                                           inline=inline)
    assert design.inline is inline
    dist = ESTIMATORS["TSVM"]().fit(design, design.labels)
    design.close()
    _assert_same_fit(dist, _reference("TSVM", X, y))


def test_multiclass_one_vs_rest(client):
    rng = np.random.default_rng(5)
    X = rng.normal(size=(90, 6))
    y = np.argmax(X[:, :3], axis=1)
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=4)
    dist = L2SVM(lam=0.1, solver="mfn", tol=1e-9).fit(design, design.labels)
    design.close()
    ref = L2SVM(lam=0.1, solver="mfn", tol=1e-9).fit(X, y)
    assert dist.coef_.shape == (3, 6)
    np.testing.assert_allclose(dist.objective_, ref.objective_, rtol=1e-8)
    np.testing.assert_array_equal(dist.transduction_, ref.transduction_)


def test_selection_matches_numpy(client, problem, monkeypatch):
    """Distributed k-th smallest and quantile (initial TSVM labels, DA's Newton start)."""
    X, y = problem
    design = DistributedDesign.from_arrays(client, X, y, sizes=[30, 1, 89])
    design._call("prepare", True, 1.0, design.classes, design._unl_offsets)
    w = np.random.default_rng(0).normal(size=D + 1)
    design._call("unlabeled_outputs", w)
    values = np.sort(np.concatenate(design._call("values_in", "o_u", -np.inf, np.inf)))
    monkeypatch.setattr(_solvers, "_SELECT_CAP", 7)  # force the bisection path
    for k in (1, 2, 50, values.size):
        assert _solvers.kth_smallest(design, "o_u", k) == values[k - 1]
    for q in (0.0, 0.3, 0.5, 0.77, 1.0):
        assert _solvers.quantile(design, "o_u", q) == np.quantile(values, q)
    design.close()


def test_bad_input(client, problem):
    X, y = problem
    with pytest.raises(ValueError, match="one label per row"):
        DistributedDesign.from_arrays(client, X, y[:-1])
    with pytest.raises(ValueError, match="sum to"):
        DistributedDesign.from_arrays(client, X, y, sizes=[10, 10])
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=2)
    with pytest.raises(ValueError, match="design.labels"):
        TransductiveSVM().fit(design, y)
    with pytest.raises(TypeError, match="only L2SVM, TransductiveSVM"):
        RLSClassifier().fit(design, None)
    with pytest.raises(ValueError, match="gamma_I"):
        TransductiveSVM(gamma_I=1.0).fit(design, None)
    with pytest.raises(ValueError, match="solver='dcd'"):
        L2SVM(solver="dcd").fit(design, None)
    with pytest.raises(ValueError, match="inline must be"):
        DistributedDesign.from_arrays(client, X, y, inline="yes")
    with pytest.raises(TypeError, match="cannot be pickled"):
        pickle.dumps(design)
    design.close()


def test_single_machine_path_imports_no_dask():
    code = ("import sys, semisup, semisup.linear.tsvm, semisup.linear.da, semisup.linear.svm; "
            "assert not any(m.split('.')[0] in ('dask', 'distributed') for m in sys.modules)")
    subprocess.run([sys.executable, "-c", code], check=True, env=os.environ.copy())


def _kill_during_fit(client, design, at_call: int):
    """Kill (SIGKILL) the worker holding partition 0 at the ``at_call``-th call of the fit."""
    original = design._call
    count = [0]

    def call(method, *args):
        count[0] += 1
        if count[0] == at_call:
            victim = design.workers[0]
            os.kill(client.run(os.getpid)[victim], signal.SIGKILL)
            time.sleep(0.5)
        return original(method, *args)

    design._call = call


def test_worker_killed_mid_fit_recovers(client, problem):
    """The Nanny restarts the worker; the design reloads its partitions, the fit resumes
    (tests/test_distributed_faults.py checks how much work that saves)."""
    X, y = problem
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=3, timeout=60)
    _kill_during_fit(client, design, at_call=40)
    dist = ESTIMATORS["TSVM"]().fit(design, design.labels)
    design.close()
    _assert_same_fit(dist, _reference("TSVM", X, y))
    client.wait_for_workers(2, timeout=60)


def test_worker_killed_mid_fit_without_restarts_fails_clearly(client, problem):
    X, y = problem
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=3, max_restarts=0,
                                           timeout=60)
    _kill_during_fit(client, design, at_call=25)
    est = ESTIMATORS["TSVM"]()
    with pytest.raises(WorkerLostError, match="lost during .*no result was stored"):
        est.fit(design, design.labels)
    assert not hasattr(est, "coef_")  # no partial answer left on the estimator
    client.wait_for_workers(2, timeout=60)


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 300), min_size=1, max_size=4).filter(lambda s: sum(s)),
       q=st.floats(0.0, 1.0), levels=st.sampled_from([4, 16, 64]), seed=st.integers(0, 99))
def test_sketch_quantile_is_within_a_level_of_numpys(sizes, q, levels, seed):
    """DA's Newton start from the workers' quantile sketches: exact at 0 and 1, and within
    ``1/levels`` of the rows in rank in between."""
    rng = np.random.default_rng(seed)
    parts = [rng.normal(rng.normal(), rng.uniform(0.1, 3.0), n) for n in sizes]
    sketches = [(p.size, np.quantile(p, np.linspace(0, 1, levels + 1)) if p.size else
                 np.empty(0)) for p in parts]
    values = np.concatenate(parts)
    got = _solvers.sketch_quantile(sketches, q)
    assert values.min() <= got <= values.max()
    if q in (0.0, 1.0):
        assert got == np.quantile(values, q)
    below = np.count_nonzero(values < got) / values.size
    at_most = np.count_nonzero(values <= got) / values.size
    slack = 1.0 / levels + 1.0 / values.size
    assert below - slack <= q <= at_most + slack


def test_da_p_step_and_w_step_fuse_their_round_trips(client, problem):
    """A (p, w) pair: the Newton iterations on the balance, one round trip for the beliefs
    with everything the loop reads next, the MFN's, and one for its final outputs with the
    objectives' parts and the next p-step's g; no distributed selection."""
    X, y = problem
    design = DistributedDesign.from_arrays(client, X, y, n_partitions=3)
    design.reset_counters()
    dist = ESTIMATORS["DA"]().set_params(fallback="none").fit(design, design.labels)
    calls = dict(design.calls_by_method)
    design.close()
    ref = ESTIMATORS["DA"]().set_params(fallback="none").fit(X, y)
    _assert_same_fit(dist, ref)
    p_steps = ref.fit_results_[0].n_iter
    assert calls["set_beliefs"] == calls["finish_annealing"] == p_steps
    for selection in ("count_le", "values_in", "value_range"):
        assert selection not in calls
    for fused in ("annealing_parts", "problem_annealing", "loss", "keep_best_beliefs"):
        assert calls.get(fused, 0) == 0, (fused, calls)
    # once, after the supervised start (its objective, the first p-step's g)
    assert calls.get("transductive_parts", 0) <= 1 and calls.get("compute_g", 0) <= 1
