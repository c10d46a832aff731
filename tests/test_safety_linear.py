"""The guard of :mod:`semisup.safety` in the linear SVMlin family (``fallback="cv"``).

TransductiveSVM, DeterministicAnnealingSVM, CCCPS3VM, LinearLapRLS and LinearLapSVM share the
guard of :meth:`semisup.linear._core.LinearClassifierCore._fit_data`; their supervised
counterpart is scikit-learn's ``LogisticRegression()`` (solved by
:func:`semisup.solvers.logistic.logistic_regression`).  Each class is held to: a fallback
where its fit is clearly worse than the counterpart (the counterpart's weights then), its
own fit where it clearly helps, a clear error for a bad value, pickling; TSVM's guard is
checked against a hand-written loop over the folds, and the command line's
scikit-learn-free route against the estimator.
"""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from sklearn.linear_model import LogisticRegression

from semisup import (
    CCCPS3VM,
    DeterministicAnnealingSVM,
    LinearLapRLS,
    LinearLapSVM,
    TransductiveSVM,
)
from semisup.safety import guard_folds, hide_rows


def imbalanced(m: float = 1.0, u: int = 100, frac: float = 0.95):
    """Balanced labeled rows (6 per class), unlabeled rows 95 % positive: the S3VMs' balance
    constraint (``r`` = the labeled prior, 0.5) pushes their boundary into the positive
    class, while the labeled rows alone place it well."""
    rng = np.random.default_rng(0)
    n_pos = int(frac * u)
    X = np.r_[rng.normal(-m, 1, (6, 2)), rng.normal(m, 1, (6, 2)),
              rng.normal(-m, 1, (u - n_pos, 2)), rng.normal(m, 1, (n_pos, 2))]
    truth = np.r_[np.zeros(6), np.ones(6), np.zeros(u - n_pos), np.ones(n_pos)].astype(int)
    y = np.full(truth.size, -1)
    y[:12] = truth[:12]
    return X, y, truth


def contradicting(n: int = 40):
    """Two clusters along x1 (-4 and +4, spread 2) whose labels follow the sign of x2, with 3
    labeled rows per class in each cluster: the data graph joins the classes inside each
    cluster, so a strong graph term bends the boundary into the gap between the clusters,
    while the labeled rows alone find x2."""
    rng = np.random.default_rng(0)
    X = np.r_[rng.normal([-4, 0], [2.0, 1.0], (n, 2)), rng.normal([4, 0], [2.0, 1.0], (n, 2))]
    truth = (X[:, 1] > 0).astype(int)
    y = np.full(2 * n, -1)
    for half in (np.arange(n), np.arange(n, 2 * n)):
        for c in (0, 1):
            lab = half[truth[half] == c][:3]
            y[lab] = c
    return X, y, truth


def stripes(seed: int, gap: float, n: int = 40):
    """Two long parallel clusters (x1 = -gap, +gap; spread 4 along x2), 3 labels per class:
    two labeled rows per class say little about the direction of the boundary, the
    unlabeled rows show the gap."""
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal([-gap, 0], [0.2, 4.0], (n, 2)), rng.normal([gap, 0], [0.2, 4.0], (n, 2))]
    truth = np.repeat([0, 1], n)
    y = np.full(2 * n, -1)
    y[:3] = 0
    y[n:n + 3] = 1
    return X, y, truth


# (class, parameters, problem where its fit is clearly worse, problem where it clearly helps)
CASES = [
    (TransductiveSVM, {}, imbalanced, lambda: stripes(1, 0.8)),
    (DeterministicAnnealingSVM, {}, imbalanced, lambda: stripes(1, 0.8)),
    (CCCPS3VM, {}, imbalanced, lambda: stripes(1, 0.8)),
    (LinearLapRLS, {"gamma_I": 1e3, "n_neighbors": 5}, contradicting,
     lambda: stripes(0, 1.5)),
    (LinearLapSVM, {"gamma_I": 1e3, "n_neighbors": 5}, contradicting,
     lambda: stripes(0, 1.5)),
]
IDS = [case[0].__name__ for case in CASES]


def _reference_logistic():
    # the counterpart is scikit-learn's LogisticRegression() as it fits by default
    return LogisticRegression()


def _counterpart(X, y):
    lab = y >= 0
    return _reference_logistic().fit(X[lab], y[lab])


def _accuracy(est, X, truth) -> float:
    return float(np.mean(est.predict(X) == truth))


@pytest.mark.parametrize("cls, params, worse, _", CASES, ids=IDS)
def test_falls_back_where_the_method_is_clearly_worse(cls, params, worse, _):
    X, y, truth = worse()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")   # the published fit may collapse: that is the point
        plain = cls(fallback="none", **params).fit(X, y)
    ref = _counterpart(X, y)
    # the construction: the published method is clearly worse than the counterpart
    assert _accuracy(plain, X, truth) < _accuracy(ref, X, truth) - 0.05
    guarded = cls(fallback="cv", **params).fit(X, y)
    assert guarded.fallback_ is True
    scores = guarded.cv_scores_
    assert scores["semi_supervised"] <= scores["supervised"] and not scores["keep"]
    # the fallen-back model is LogisticRegression() on the labeled rows
    np.testing.assert_allclose(guarded.coef_, ref.coef_, rtol=0, atol=1e-6)
    np.testing.assert_allclose(guarded.intercept_, ref.intercept_, rtol=0, atol=1e-6)
    np.testing.assert_array_equal(guarded.predict(X), ref.predict(X))
    lab = y >= 0
    np.testing.assert_array_equal(guarded.transduction_[~lab], ref.predict(X[~lab]))
    np.testing.assert_array_equal(guarded.transduction_[lab], y[lab])


@pytest.mark.parametrize("cls, params, _, helps", CASES, ids=IDS)
def test_keeps_the_fit_where_the_method_clearly_helps(cls, params, _, helps):
    X, y, truth = helps()
    guarded = cls(fallback="cv", **params).fit(X, y)
    assert guarded.fallback_ is False
    assert guarded.cv_scores_["semi_supervised"] > guarded.cv_scores_["supervised"]
    plain = cls(fallback="none", **params).fit(X, y)
    assert plain.cv_scores_ is None and plain.fallback_ is False
    np.testing.assert_allclose(guarded.coef_, plain.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(guarded.intercept_, plain.intercept_, rtol=0, atol=1e-12)
    np.testing.assert_array_equal(guarded.transduction_, plain.transduction_)
    assert _accuracy(guarded, X, truth) >= _accuracy(_counterpart(X, y), X, truth)


@pytest.mark.parametrize("cls", [case[0] for case in CASES], ids=IDS)
def test_bad_fallback_is_refused(cls):
    X, y, _ = stripes(1, 0.8)
    with pytest.raises(ValueError, match="fallback"):
        cls(fallback="bad").fit(X, y)


@pytest.mark.parametrize("cls, params, worse, _", CASES, ids=IDS)
def test_fallen_back_model_pickles(cls, params, worse, _):
    X, y, _truth = worse()
    est = cls(fallback="cv", **params).fit(X, y)
    assert est.fallback_
    again = pickle.loads(pickle.dumps(est))
    assert again.fallback_ is True
    np.testing.assert_array_equal(again.predict(X), est.predict(X))
    np.testing.assert_array_equal(again.decision_function(X), est.decision_function(X))


def _fold_accuracies(X, y, folds) -> np.ndarray:
    """The guard by hand: per fold, TransductiveSVM(fallback="none") with the held-out labels
    hidden (row 0) and LogisticRegression() on the labeled rows kept (row 1), accuracy on
    the held-out rows."""
    acc = np.zeros((2, len(folds)))
    for f, (train, test) in enumerate(folds):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            semi = TransductiveSVM(fallback="none").fit(X, hide_rows(y, train))
        sup = _reference_logistic().fit(X[train], y[train])
        acc[0, f] = np.mean(semi.predict(X[test]) == y[test])
        acc[1, f] = np.mean(sup.predict(X[test]) == y[test])
    return acc


def test_guard_equals_a_hand_written_loop():
    """TSVM's guard against :func:`_fold_accuracies` on its folds."""
    for X, y, _ in (imbalanced(), stripes(1, 0.8)):
        folds = guard_folds(y, None)   # TSVM has no random_state: the guard's seed is 0
        acc = _fold_accuracies(X, y, folds)
        est = TransductiveSVM().fit(X, y)
        np.testing.assert_array_equal(est.cv_scores_["split_scores"], acc)
        assert est.cv_scores_["n_folds"] == len(folds) == 3
        assert est.fallback_ is not bool(acc[0].mean() > acc[1].mean())


def test_guard_is_off_without_folds_or_unlabeled_rows():
    """A class with one labeled row (no fold) or no unlabeled row: the method's own fit."""
    X, y, _ = imbalanced()
    y1 = y.copy()
    y1[1:6] = -1   # one labeled row of class 0
    est = TransductiveSVM().fit(X, y1)
    assert est.fallback_ is False and est.cv_scores_ is None
    np.testing.assert_array_equal(est.coef_, TransductiveSVM(fallback="none").fit(X, y1).coef_)


def test_guard_folds_around_a_class_of_one_labeled_row():
    """Three classes, one with a single labeled row: that row stays in every fold's training
    rows and the guard runs on the other classes' rows (a hand-written loop over those folds;
    with two classes and a singleton it stays off, as the test above checks)."""
    rng = np.random.default_rng(3)
    centres = np.array([[-3.0, 0.0], [3.0, 0.0], [0.0, 4.0]])
    truth = np.repeat([0, 1, 2], 30)
    X = centres[truth] + rng.normal(0, 1, (90, 2))
    y = np.full(90, -1)
    y[[0, 30, 31, 32, 33, 60, 61, 62, 63]] = truth[[0, 30, 31, 32, 33, 60, 61, 62, 63]]
    folds = guard_folds(y, None, keep_singletons=True)
    assert guard_folds(y, None) is None and len(folds) == 3
    assert all(0 in train for train, _ in folds)
    acc = _fold_accuracies(X, y, folds)
    est = TransductiveSVM().fit(X, y)
    assert est.cv_scores_ is not None and est.cv_scores_["n_folds"] == 3
    np.testing.assert_array_equal(est.cv_scores_["split_scores"], acc)


@pytest.mark.parametrize("problem, expected", [(imbalanced, True),
                                               (lambda: stripes(1, 0.8), False)])
def test_command_line_route_decides_as_the_estimator(tmp_path, problem, expected):
    """``semisup fit TransductiveSVM`` without scikit-learn (the core route) takes the same
    decision and weights as the estimator."""
    from semisup import io
    from semisup.cli import _modelfile, fitpredict
    from semisup.cli import main as semisup_main
    from semisup.linear import _core

    X, y, _ = problem()
    svmlight = np.select([y == 1, y == 0], [1, -1], 0)   # SVMlight: 0 = unlabeled
    path = tmp_path / "data.svm"
    io.write_svmlight(path, X, svmlight)
    assert isinstance(fitpredict._make_core("TransductiveSVM", [], 2), _core.TransductiveSVM)
    model = tmp_path / "tsvm.model"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert semisup_main.main(["fit", "TransductiveSVM", str(path), "-m", str(model)]) == 0
    fitted = _modelfile.loads(model.read_bytes(), bundle=True)["estimator"]
    X_read, _ = io.read_svmlight(path)
    est = TransductiveSVM().fit(X_read, y)
    assert fitted.fallback_ is est.fallback_ is expected
    np.testing.assert_array_equal(fitted.cv_scores_["split_scores"],
                                  est.cv_scores_["split_scores"])
    np.testing.assert_allclose(fitted.coef_, est.coef_, rtol=0, atol=1e-12)
    np.testing.assert_allclose(fitted.intercept_, est.intercept_, rtol=0, atol=1e-12)


def test_defaults_follow_the_measurement():
    """``"cv"`` where the SSL-book splits showed more cells within a point of the supervised
    counterpart, ``"none"`` where they did not (benchmarks/results/defaults_fallback_linear.md,
    defaults_fallback_logistic.md)."""
    assert [c().fallback for c in (TransductiveSVM, CCCPS3VM, LinearLapRLS,
                                   DeterministicAnnealingSVM, LinearLapSVM)] == ["cv"] * 5


def test_da_guard_folds_fit_at_the_looser_tolerances(monkeypatch):
    """DA's semi-supervised fold fits stop CGLS and the KL loop at ``GUARD_FOLD_TOL``; the
    supervised folds and the final fit keep the estimator's own tolerances, and the guard's
    folds equal hand-written DA fits at those tolerances."""
    from semisup.linear import _core

    X, y, _ = imbalanced()
    seen = []
    original = _core.DeterministicAnnealingSVM._fit_problems

    def record(self, data, sample_weight, supervised):
        seen.append((supervised, self.tol, self.kl_tol))
        return original(self, data, sample_weight, supervised)

    monkeypatch.setattr(_core.DeterministicAnnealingSVM, "_fit_problems", record)
    est = DeterministicAnnealingSVM().fit(X, y)   # no random_state: the guard's seed is 0
    loose = _core.GUARD_FOLD_TOL
    folds = [s for s in seen[:-1] if not s[0]]
    assert len(folds) == est.cv_scores_["n_folds"] == 3
    assert all(tol == loose and kl == loose for _, tol, kl in folds)
    assert all(tol == 1e-6 for sup, tol, _ in seen[:-1] if sup)
    assert seen[-1][1:] == (1e-6, 1e-6)
    monkeypatch.undo()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        hand = [np.mean(DeterministicAnnealingSVM(fallback="none", tol=loose, kl_tol=loose)
                        .fit(X, hide_rows(y, train)).predict(X[test]) == y[test])
                for train, test in guard_folds(y, None)]
    np.testing.assert_array_equal(est.cv_scores_["split_scores"][0], hand)
