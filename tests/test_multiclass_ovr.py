"""One-vs-rest for the binary thesis estimators (issue 26, part 1).

For each estimator, the multi-class route must equal a one-vs-rest written by hand here:
one binary fit per class on ``1`` (the class) / ``0`` (the other labeled rows) / ``-1`` (every
unlabeled row stays unlabeled), decision values one column per class, argmax.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from semisup import ConvexTSVM, MixtureSSL, RhoTSVM, SDPRelaxedTSVM, UniversumSVM


def _three_blobs(n_per_class: int = 10, seed: int = 0):
    """Three separated 2-D blobs, two labeled rows per class, string labels."""
    rng = np.random.default_rng(seed)
    centres = np.array([[0.0, 3.0], [3.0, -2.0], [-3.0, -2.0]])
    X = np.vstack([c + rng.normal(scale=0.7, size=(n_per_class, 2)) for c in centres])
    truth = np.repeat(np.array(["ant", "bee", "cat"]), n_per_class)
    y = np.full(truth.shape, "-1", dtype=object)
    for k in range(3):
        y[k * n_per_class + np.array([0, 1])] = truth[k * n_per_class]
    return X, y.astype(str), truth


# small, fast settings (the equivalence holds for any parameters)
CASES = {
    "ConvexTSVM": (ConvexTSVM, dict(C_l=10.0, fallback="none")),
    "SDPRelaxedTSVM": (SDPRelaxedTSVM, dict(C=10.0, fallback="none")),
    "RhoTSVM": (RhoTSVM, dict(rho=0.5, C=10.0, fallback="none")),
    "MixtureSSL": (MixtureSSL, dict(random_state=0, fallback="none")),
    "UniversumSVM": (UniversumSVM, dict(C=10.0)),
}


def _training_scores(est, X):
    """A binary estimator's scores of its training rows (what its transduction rounds)."""
    if isinstance(est, ConvexTSVM):
        return est.relaxed_scores_ - est.threshold_
    if isinstance(est, SDPRelaxedTSVM):
        return est.relaxed_scores_
    if isinstance(est, RhoTSVM):
        return est.scores_
    return est.decision_function(X)


def _claims_by_hand(supervised, claims):
    """Scores whose arg max is the sole claiming class, else the supervised choice among the
    claiming classes, else among all (a loop, against semisup.linear.s4vm.claimed_scores)."""
    out = np.zeros(supervised.shape)
    for i in range(supervised.shape[0]):
        allowed = claims[i] if claims[i].any() else np.ones(claims.shape[1], dtype=bool)
        out[i, int(np.flatnonzero(allowed)[np.argmax(supervised[i, allowed])])] = 1.0
    return out


@pytest.mark.parametrize("name", list(CASES))
def test_multiclass_route_equals_hand_written_one_vs_rest(name):
    Est, params = CASES[name]
    X, y, truth = _three_blobs()
    classes = np.unique(y[y != "-1"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        multi = Est(**params).fit(X, y)
        hand = []
        for c in classes:
            y_c = np.where(y == "-1", -1, (y == c).astype(int))
            hand.append(Est(**params).fit(X, y_c))
    assert list(multi.classes_) == list(classes)
    assert len(multi.estimators_) == 3
    scores = np.column_stack([h.decision_function(X) for h in hand])
    train = np.column_stack([_training_scores(h, X) for h in hand])
    if isinstance(multi, SDPRelaxedTSVM):
        # the claims rule: scikit-learn's SVC on the labeled rows decides among the classes
        # whose binary problem claims the row (all of them when none does)
        lab = y != "-1"
        svc = np.column_stack([SVC(C=params["C"], gamma=multi.gamma_, tol=1e-8)
                               .fit(X[lab], y[lab] == c).decision_function(X)
                               for c in classes])
        K = rbf_kernel(X, X[lab], gamma=multi.gamma_)
        np.testing.assert_allclose(K @ multi.supervised_dual_coef_.T
                                   + multi.supervised_intercept_, svc, atol=1e-4)
        scores = _claims_by_hand(svc, scores > 0)
        train = _claims_by_hand(svc, np.column_stack([h.transduction_ == 1 for h in hand]))
    got = multi.decision_function(X)
    assert got.shape == (X.shape[0], 3)
    if not isinstance(multi, SDPRelaxedTSVM):
        np.testing.assert_allclose(got, scores, rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(got.argmax(axis=1), scores.argmax(axis=1))
    np.testing.assert_array_equal(multi.predict(X), classes[np.argmax(scores, axis=1)])
    unl = y == "-1"
    np.testing.assert_array_equal(multi.transduction_[unl],
                                  classes[np.argmax(train[unl], axis=1)])
    np.testing.assert_array_equal(multi.transduction_[~unl], y[~unl])
    # the three blobs are easy: the combination must also be right, not only equal
    assert np.mean(multi.transduction_ == truth) >= 0.9


def test_each_binary_problem_takes_its_class_prior():
    """ConvexTSVM's offset ('prior') and balance of problem k come from class k's labels."""
    X, y, _ = _three_blobs()
    y[[2, 3]] = "ant"            # 4 'ant', 2 'bee', 2 'cat' labeled: unequal priors
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = ConvexTSVM(C_l=10.0, fallback="none").fit(X, y)
    lab = y != "-1"
    for k, c in enumerate(est.classes_):
        ybar = float(np.mean(np.where(y[lab] == c, 1.0, -1.0)))
        assert est.estimators_[k].offset_ == pytest.approx(ybar)
        # every unlabeled row stays unlabeled in each binary problem
        assert est.estimators_[k].n_train_ == X.shape[0]


def test_per_class_positive_fraction_goes_to_its_problem():
    X, y, _ = _three_blobs()
    r = np.array([0.2, 0.3, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = MixtureSSL(positive_fraction=r, random_state=0, fallback="none").fit(X, y)
    assert [e.positive_fraction for e in est.estimators_] == pytest.approx(list(r))
    with pytest.raises(ValueError, match="one fraction per class"):
        MixtureSSL(positive_fraction=[0.2, 0.8]).fit(X, y)


def test_binary_refit_after_multiclass_fit_is_binary():
    X, y, truth = _three_blobs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        est = RhoTSVM(C=10.0).fit(X, y)
        assert est.decision_function(X).ndim == 2
        two = np.isin(truth, ["ant", "bee"])
        est.fit(X[two], y[two])
    assert est.decision_function(X).ndim == 1
    assert est.__dict__.get("estimators_") is None
    assert set(est.predict(X)) <= {"ant", "bee"}
