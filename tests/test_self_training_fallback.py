"""The wrappers' default ``fallback="cv"`` (SelfTraining, CoTraining, TriTraining).

Checked against a hand-written labeled-only CV on a small problem (same folds, the wrapper
as published on the held-out-hidden labels vs LogisticRegression on the kept labels), and on
a constructed drift where unbalanced self-training collapses to one class: the guard keeps
the supervised model instead.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.linear_model import LogisticRegression

from semisup import CoTraining, SelfTraining, TriTraining
from semisup._validation import CollapseWarning
from semisup.safety import guard_folds


@pytest.fixture(autouse=True, scope="module")
def _one_blas_thread():
    """Many tiny logistic fits: BLAS threads only add overhead."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        yield


def _blobs(seed: int = 0, n: int = 80, shift: float = 1.2):
    rng = np.random.default_rng(seed)
    y_true = np.repeat([0, 1], n // 2)
    X = rng.normal(size=(n, 4)) + shift * (2 * y_true - 1)[:, None] * [1, 0.5, 0, 0]
    y = np.full(n, -1)
    lab = np.r_[np.flatnonzero(y_true == 0)[:4], np.flatnonzero(y_true == 1)[:4]]
    y[lab] = y_true[lab]
    return X, y, y_true


def _hand_cv(model, X, y, seed):
    """Mean held-out accuracy of the wrapper as published and of LogisticRegression."""
    ssl, sup = [], []
    for train, test in guard_folds(y, seed):
        y_fold = np.full(y.size, -1)
        y_fold[train] = y[train]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            inner = clone(model).set_params(fallback="none").fit(X, y_fold)
        ssl.append(np.mean(inner.predict(X[test]) == y[test]))
        lr = LogisticRegression().fit(X[train], y[train])
        sup.append(np.mean(lr.predict(X[test]) == y[test]))
    return float(np.mean(ssl)), float(np.mean(sup))


@pytest.mark.parametrize("make, seed, shift", [
    (lambda: SelfTraining(), 0, 1.2),       # falls back
    (lambda: SelfTraining(), 2, 1.2),       # keeps the wrapper
    (lambda: CoTraining(pool_size=20, max_iter=3, random_state=0), 0, 1.2),
    (lambda: TriTraining(random_state=0), 0, 1.2),
])
def test_guard_equals_a_hand_written_cv(make, seed, shift):
    X, y, _ = _blobs(seed, shift=shift)
    model = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model.fit(X, y)
    ssl, sup = _hand_cv(model, X, y, getattr(model, "random_state", None))
    assert model.cv_scores_["semi_supervised"] == pytest.approx(ssl, abs=1e-12)
    assert model.cv_scores_["supervised"] == pytest.approx(sup, abs=1e-12)
    assert model.cv_scores_["n_folds"] == 3
    assert model.fallback_ == (not ssl > sup)
    if model.fallback_:
        # the supervised model: LogisticRegression on the labeled rows, for every output
        lr = LogisticRegression().fit(X[y >= 0], y[y >= 0])
        np.testing.assert_array_equal(model.predict(X), lr.predict(X))
        np.testing.assert_allclose(model.predict_proba(X), lr.predict_proba(X), atol=1e-12)
        np.testing.assert_allclose(model.decision_function(X), lr.decision_function(X),
                                   atol=1e-12)
        np.testing.assert_array_equal(model.transduction_[y < 0], lr.predict(X[y < 0]))
        assert model.termination_condition_ == "supervised_fallback" and model.n_iter_ == 0
    else:
        published = clone(model).set_params(fallback="none")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            published.fit(X, y)
        np.testing.assert_array_equal(model.transduction_, published.transduction_)


def test_both_outcomes_occur():
    """The guard is not constant: on the same kind of problem one draw keeps the wrapper
    and another falls back (so the test above exercises both branches)."""
    outcomes = []
    for seed in (0, 2):
        X, y, _ = _blobs(seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            outcomes.append(bool(SelfTraining().fit(X, y).fallback_))
    assert outcomes == [True, False]


def _drift_problem(seed):
    """Class 0 broad and far from the boundary, class 1 tight beside it: unbalanced
    self-training of a strongly regularised logistic model drifts to class 0."""
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(-4, 1.5, size=(150, 1)), rng.normal(0, 0.3, size=(150, 1))]
    y_true = np.repeat([0, 1], 150)
    y = np.full(300, -1)
    y[[0, 1, 2, 150, 151, 152]] = [0, 0, 0, 1, 1, 1]
    return X, y, y_true


def test_guard_prevents_the_drift_collapse():
    X, y, y_true = _drift_problem(0)
    unl = y == -1
    est = LogisticRegression(C=0.1)
    kw = dict(criterion="k_best", k_best=20, max_iter=None, balance=False)
    with pytest.warns(CollapseWarning) as record:
        drift = SelfTraining(est, fallback="none", **kw).fit(X, y)
    assert record[0].filename == __file__      # points at this fit call
    assert np.unique(drift.transduction_[unl]).size == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapseWarning)
        safe = SelfTraining(est, **kw).fit(X, y)
    assert safe.fallback_
    assert safe.cv_scores_["semi_supervised"] < safe.cv_scores_["supervised"]
    acc_safe = np.mean(safe.transduction_[unl] == y_true[unl])
    acc_sup = np.mean(clone(est).fit(X[~unl], y[~unl]).predict(X[unl]) == y_true[unl])
    assert acc_safe == acc_sup > 0.9


def test_one_labeled_row_in_a_class_keeps_the_wrapper():
    X, y, _ = _blobs(0)
    y = y.copy()
    y[np.flatnonzero(y == 1)[1:]] = -1              # class 1 has a single label: no fold
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = SelfTraining().fit(X, y)
    assert model.cv_scores_ is None and not model.fallback_


@pytest.mark.parametrize("cls", [SelfTraining, CoTraining, TriTraining])
def test_bad_fallback_names_the_choices(cls):
    X, y, _ = _blobs(0)
    with pytest.raises(ValueError, match="fallback"):
        cls(fallback="always").fit(X, y)
