"""UniversumSVM's default for unlabeled rows (issue 26): they are not a universum.

A universum is made of rows of neither class (Weston et al. 2006); the unlabeled rows of a
semi-supervised task belong to the classes, so by default they are ignored and, with no
``X_universum``, the estimator is the supervised L2-SVM.  ``unlabeled="universum"`` keeps the
thesis's chapter 7 baseline.
"""

from __future__ import annotations

import numpy as np

from semisup import L2SVM, UniversumSVM


def _two_blobs(seed: int = 0):
    rng = np.random.default_rng(seed)
    y_true = np.repeat([0, 1], 100)
    X = rng.normal(size=(200, 5)) + 1.5 * (2 * y_true - 1)[:, None] * [1, 1, 0, 0, 0]
    y = np.full(200, -1)
    y[[0, 1, 2, 100, 101, 102]] = y_true[[0, 1, 2, 100, 101, 102]]
    return X, y, y_true


def test_default_ignores_unlabeled_rows():
    X, y, _ = _two_blobs()
    m = UniversumSVM(C=2.0, tol=1e-10).fit(X, y)
    assert m.n_universum_ == 0
    s = L2SVM(lam=1 / 4.0, solver="mfn", tol=1e-10).fit(X[y >= 0], y[y >= 0])
    np.testing.assert_allclose(m.coef_, s.coef_, atol=1e-10)
    np.testing.assert_allclose(m.intercept_, s.intercept_, atol=1e-10)
    # the thesis's baseline is one argument away
    assert UniversumSVM(unlabeled="universum").fit(X, y).n_universum_ == int(np.sum(y < 0))


def _imbalanced(seed: int):
    """400 rows of class 0 and 100 of class 1, three labels each."""
    rng = np.random.default_rng(seed)
    y_true = np.r_[np.zeros(400, int), np.ones(100, int)]
    X = rng.normal(size=(500, 5)) + 2.0 * (2 * y_true - 1)[:, None] * [1, 0, 0, 0, 0]
    y = np.full(500, -1)
    lab = [0, 1, 2, 400, 401, 402]
    y[lab] = y_true[lab]
    return X, y, y_true


def test_default_beats_unlabeled_rows_as_universum():
    """Class rows as universum pull the plane through the mass of the data, i.e. into the
    larger class: the old default (every unlabeled row a universum row) misclassifies part
    of it (measured 80-92 % against 94-98 % here, 8 seeds), the new one does not."""
    for seed in range(3):
        X, y, y_true = _imbalanced(seed)
        unl = y < 0
        new = np.mean(UniversumSVM().fit(X, y).transduction_[unl] == y_true[unl])
        old = np.mean(UniversumSVM(unlabeled="universum").fit(X, y)
                      .transduction_[unl] == y_true[unl])
        assert new > 0.93 and new > old + 0.03, (seed, new, old)


def test_explicit_universum_still_used():
    X, y, _ = _two_blobs()
    Xu = np.random.default_rng(1).normal(scale=0.3, size=(20, 5))
    m = UniversumSVM(C_universum=0.5, tol=1e-10).fit(X, y, X_universum=Xu)
    assert m.n_universum_ == 20
    s = UniversumSVM(tol=1e-10).fit(X, y)
    assert np.abs(m.decision_function(Xu)).mean() < np.abs(s.decision_function(Xu)).mean()
