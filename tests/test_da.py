"""Deterministic annealing: easy problems, the annealing budget, best-objective bookkeeping,
and the preconditioner carried across MFN calls."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.datasets import make_blobs
from sklearn.exceptions import ConvergenceWarning

from semisup import DeterministicAnnealingSVM, TransductiveSVM
from semisup.losses import HingeTerms, transductive_objective
from semisup.regularizers import Ridge
from semisup.solvers.design import Design
from semisup.solvers.mfn import l2svm_mfn
from semisup.solvers.s3vm import deterministic_annealing


def _blobs(seed, std=1.0):
    X, y = make_blobs(n_samples=60, centers=[[-3, 0], [3, 0]], cluster_std=std,
                      random_state=seed)
    rng = np.random.default_rng(seed)
    labeled = np.concatenate([rng.choice(np.flatnonzero(y == c), 3, replace=False)
                              for c in (0, 1)])
    y_partial = np.full(60, -1)
    y_partial[labeled] = y[labeled]
    return X, y, y_partial


@pytest.mark.parametrize("seed", range(5))
def test_da_on_well_separated_blobs(seed):
    """Issue 14 item 8: defaults, 60 rows, 6 labels: DA separates the blobs and its objective
    is no worse than the TSVM's."""
    X, y, y_partial = _blobs(seed)
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        da = DeterministicAnnealingSVM(fallback="none").fit(X, y_partial)
    # the same objective (both as published: the guard of fallback="cv" may pick L2SVM)
    tsvm = TransductiveSVM(lam=da.lam_, fallback="none").fit(X, y_partial)
    assert np.mean(da.transduction_ == y) >= 0.95
    assert da.objective_ <= 1.05 * tsvm.objective_


def test_da_returns_the_best_objective_on_its_path():
    X, _, y_partial = _blobs(3, std=2.0)
    da = DeterministicAnnealingSVM(fallback="none").fit(X, y_partial)
    res = da.fit_results_[0]
    path = [h["transductive_objective"] for h in res.history]
    assert res.objective <= min(path) + 1e-15
    # and it is the objective of the weights returned
    design = Design(X)
    labeled, unlabeled = np.flatnonzero(y_partial >= 0), np.flatnonzero(y_partial < 0)
    o = design.matvec(res.w)
    y_l = np.where(y_partial[labeled] == 1, 1.0, -1.0)
    obj = transductive_objective(Ridge(da.lam_).value(res.w), o[labeled], y_l, o[unlabeled],
                                 1.0)
    assert obj == pytest.approx(res.objective, rel=1e-10)


def test_da_warns_when_the_temperature_budget_ends_the_path():
    """A schedule that cannot reach low temperatures in max_outer_iter steps used to stop
    silently with soft beliefs."""
    X, _, y_partial = _blobs(0)
    with pytest.warns(ConvergenceWarning, match="max_outer_iter=30"):
        DeterministicAnnealingSVM(temperature_init=100.0, temperature_decay=1.1,
                                  fallback="none").fit(X, y_partial)


def test_balance_floor_ends_the_annealing_without_a_false_warning():
    """An odd number of unlabeled rows with r = 1/2 keeps one belief at 1/2 at every
    temperature (eq. 7): the path stops on the entropy above that floor, hard elsewhere."""
    from semisup.solvers.s3vm import balance_entropy_floor

    assert balance_entropy_floor(55, 0.5) == pytest.approx(np.log(2))
    assert balance_entropy_floor(54, 0.5) == 0.0
    f = 0.3 * 7 - 2
    h = -(f * np.log(f) + (1 - f) * np.log(1 - f))
    assert balance_entropy_floor(7, 0.3) == pytest.approx(h)
    X, y, y_partial = _blobs(1)
    y_partial[np.flatnonzero(y_partial == -1)[0]] = y[np.flatnonzero(y_partial == -1)[0]]
    assert np.sum(y_partial == -1) % 2 == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", ConvergenceWarning)
        da = DeterministicAnnealingSVM(positive_fraction=0.5, fallback="none").fit(X, y_partial)
    res = da.fit_results_[0]
    u = np.sum(y_partial == -1)
    last = res.history[-1]["entropy"]
    assert np.log(2) - 1e-9 <= last < np.log(2) + u * 1e-6      # one belief at 1/2, hard elsewhere
    assert len({h["temperature"] for h in res.history}) < 30  # stopped before the budget


@pytest.mark.parametrize("algorithm", ["tsvm", "da"])
def test_carried_preconditioner_leaves_the_solution(algorithm, monkeypatch):
    """Reusing the previous call's preconditioner changes the CG path, not the minimiser."""
    import semisup.solvers.mfn as mfn

    rng = np.random.default_rng(0)
    X = sp.random(400, 30, density=0.3, format="csr", random_state=1)
    y = np.sign(X @ rng.normal(size=30) - 0.5 + 0.1 * rng.normal(size=400))
    A = Design(X)
    y_l = y[:40]
    run = (lambda: deterministic_annealing(A, 40, y_l, 0.01, 1.0, 0.5)) if algorithm == "da" \
        else (lambda: __import__("semisup.solvers.s3vm", fromlist=["x"]).transductive_svm(
            A, 40, y_l, 0.01, 1.0, 0.5))
    reused = run()
    monkeypatch.setattr(mfn, "REUSE_PRECONDITIONER", -1.0)  # rebuild at every Newton step
    fresh = run()
    assert reused.objective == pytest.approx(fresh.objective, rel=1e-6)
    np.testing.assert_allclose(reused.w, fresh.w, rtol=1e-4, atol=1e-6)


def test_mfn_accepts_a_previous_preconditioner():
    rng = np.random.default_rng(2)
    X = rng.normal(size=(300, 20))
    y = np.sign(X[:, 0] + 0.3 * rng.normal(size=300))
    A, terms, reg = Design(X), HingeTerms(y, np.full(300, 1 / 300)), Ridge(1e-2)
    first = l2svm_mfn(A, terms, reg)
    assert first.preconditioner is not None
    again = l2svm_mfn(A, terms, reg, w0=first.w * 0.5, preconditioner0=first.preconditioner)
    assert again.objective == pytest.approx(first.objective, rel=1e-9)


def test_results_with_a_preconditioner_pickle():
    import pickle

    rng = np.random.default_rng(4)
    X = rng.normal(size=(100, 5))
    y = np.sign(X[:, 0] + 0.1)
    res = l2svm_mfn(Design(X), HingeTerms(y, np.full(100, 0.01)), Ridge(1e-2))
    again = pickle.loads(pickle.dumps(res))
    assert again.preconditioner is None
    np.testing.assert_array_equal(again.w, res.w)
