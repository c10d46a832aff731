"""Probabilities: Platt scaling on out-of-fold decision values of the labeled rows, and the
scikit-learn meta-estimators that need ``predict_proba``."""

import warnings

import numpy as np
import pytest
from scipy.optimize import minimize
from scipy.special import expit
from sklearn.calibration import CalibratedClassifierCV
from sklearn.datasets import load_digits
from sklearn.ensemble import VotingClassifier
from sklearn.frozen import FrozenEstimator
from sklearn.metrics import log_loss
from sklearn.model_selection import GridSearchCV, cross_val_score
from sklearn.semi_supervised import SelfTrainingClassifier
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisup import (
    L2SVM,
    ClusterLapRLS,
    DeterministicAnnealingSVM,
    LapRLS,
    LapSVM,
    LinearLapRLS,
    PrototypeVectorMachine,
    TransductiveSVM,
)
from semisup.calibration import out_of_fold_decisions, platt_sigmoid
from semisup.model_selection import LabeledStratifiedKFold, labeled_scorer


@pytest.fixture(scope="module")
def digits():
    """90 digits each of 3/5/8 scaled to [0, 1]; 20 labeled rows per class, the rest
    unlabeled."""
    X, y = load_digits(return_X_y=True)
    rng = np.random.default_rng(0)
    keep = np.concatenate([rng.choice(np.flatnonzero(y == c), 90, replace=False)
                           for c in (3, 5, 8)])
    X, y = X[np.sort(keep)] / 16.0, y[np.sort(keep)]
    y_train = np.full(y.shape, -1)
    labeled = np.concatenate([rng.choice(np.flatnonzero(y == c), 20, replace=False)
                              for c in (3, 5, 8)])
    y_train[labeled] = y[labeled]
    return X, y, y_train


@pytest.fixture(scope="module")
def binary(digits):
    X, y, y_train = digits
    keep = y != 5
    return X[keep], y[keep], y_train[keep]


def _platt_loss(theta, f, positive):
    n_pos, n_neg = positive.sum(), (~positive).sum()
    t = np.where(positive, (n_pos + 1) / (n_pos + 2), 1 / (n_neg + 2))
    p = np.clip(expit(-(theta[0] * f + theta[1])), 1e-300, 1 - 1e-16)
    return -np.sum(t * np.log(p) + (1 - t) * np.log1p(-p))


@pytest.mark.parametrize("fit_intercept", [True, False])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_platt_sigmoid_matches_scipy_minimiser(seed, fit_intercept):
    rng = np.random.default_rng(seed)
    f = rng.normal(size=80) * 2
    positive = rng.random(80) < expit(1.5 * f - 0.7)
    A, B = platt_sigmoid(f, positive, fit_intercept=fit_intercept)
    if fit_intercept:
        ref = minimize(_platt_loss, [0.0, 0.0], args=(f, positive), method="BFGS",
                       options={"gtol": 1e-10}).x
    else:
        ref = [minimize(lambda a: _platt_loss([a[0], 0.0], f, positive), [0.0],
                        method="BFGS", options={"gtol": 1e-10}).x[0], 0.0]
        assert B == 0.0
    np.testing.assert_allclose([A, B], ref, atol=1e-5)
    assert A < 0  # larger decision values are more likely positive


def test_platt_sigmoid_finite_on_separable_values():
    f = np.r_[-np.arange(1, 11), np.arange(1, 11)].astype(float)
    A, B = platt_sigmoid(f, f > 0)
    assert np.isfinite(A) and np.isfinite(B) and A < 0


def test_probability_false_has_no_predict_proba(binary):
    X, _, y_train = binary
    clf = L2SVM().fit(X, y_train)
    assert not hasattr(clf, "predict_proba")
    with pytest.raises(AttributeError) as err:
        clf.predict_proba(X)
    assert "probability=True" in str(err.value.__cause__)


@pytest.mark.parametrize("est", [L2SVM(lam=0.1), TransductiveSVM(lam=0.01),
                                 DeterministicAnnealingSVM(lam=0.01),
                                 LinearLapRLS(), LapRLS(), LapSVM(),
                                 PrototypeVectorMachine(n_prototypes=30, random_state=0),
                                 ClusterLapRLS(n_prototypes=30, random_state=0)],
                         ids=lambda e: type(e).__name__)
@pytest.mark.parametrize("n_classes", [2, 3])
def test_predict_proba_is_a_distribution_consistent_with_predict(est, n_classes, digits,
                                                                binary):
    X, y, y_train = digits if n_classes == 3 else binary
    clf = est.set_params(probability=True).fit(X, y_train)
    P = clf.predict_proba(X)
    assert P.shape == (X.shape[0], n_classes)
    assert np.all(P >= 0) and np.allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(clf.classes_[P.argmax(axis=1)], clf.predict(X))
    np.testing.assert_allclose(clf.predict_log_proba(X[:20]), np.log(P[:20]))
    # informative: on the unlabeled rows, a lower log loss than the uniform guess
    unl = y_train == -1
    assert log_loss(y[unl], P[unl], labels=clf.classes_) < 0.8 * np.log(n_classes)


def test_out_of_fold_decisions_never_see_their_label(binary):
    X, _, y_train = binary
    est = TransductiveSVM(lam=0.01)
    labeled, dec = out_of_fold_decisions(est, X, y_train, n_folds=4, random_state=3)
    np.testing.assert_array_equal(labeled, np.flatnonzero(y_train != -1))
    expected = np.empty(labeled.size)
    position = {row: i for i, row in enumerate(labeled)}
    for train, test in LabeledStratifiedKFold(4, random_state=3).split(X, y_train):
        assert not set(test) & set(train)
        model = TransductiveSVM(lam=0.01, fallback="none").fit(X[train], y_train[train])
        expected[[position[r] for r in test]] = model.decision_function(X[test])
    np.testing.assert_allclose(dec, expected)


def test_probability_needs_two_labeled_rows_per_class(binary):
    X, _, y_train = binary
    y = y_train.copy()
    y[np.flatnonzero(y == 3)[1:]] = -1
    with pytest.raises(ValueError, match="at least 2 labeled rows"):
        L2SVM(probability=True).fit(X, y)


def test_probability_is_deterministic_and_pickles(binary):
    import pickle

    X, _, y_train = binary
    a = TransductiveSVM(lam=0.01, probability=True).fit(X, y_train)
    b = pickle.loads(pickle.dumps(TransductiveSVM(lam=0.01, probability=True).fit(X, y_train)))
    np.testing.assert_array_equal(a.predict_proba(X), b.predict_proba(X))


def test_self_training_classifier_with_l2svm(digits):
    X, y, y_train = digits
    st = SelfTrainingClassifier(L2SVM(lam=0.1, probability=True), threshold=0.9,
                                max_iter=5).fit(X, y_train)
    assert np.any(st.labeled_iter_ > 0)                 # it did pseudo-label rows
    unl = y_train == -1
    supervised = L2SVM(lam=0.1).fit(X, y_train)
    assert st.score(X[unl], y[unl]) >= supervised.score(X[unl], y[unl]) - 0.02


def test_soft_voting_over_semi_supervised_fits(binary):
    X, y, y_train = binary
    members = [("tsvm", TransductiveSVM(lam=0.01, probability=True).fit(X, y_train)),
               ("laprls", LapRLS(probability=True).fit(X, y_train))]
    lab = y_train != -1
    vote = VotingClassifier([(n, FrozenEstimator(m)) for n, m in members],
                            voting="soft").fit(X[lab], y_train[lab])
    np.testing.assert_array_equal(vote.classes_, [3, 8])
    expected = np.mean([m.predict_proba(X) for _, m in members], axis=0)
    np.testing.assert_allclose(vote.predict_proba(X), expected)
    unl = ~lab
    assert vote.score(X[unl], y[unl]) > 0.9


def test_calibrated_classifier_cv_on_a_frozen_semi_supervised_fit(binary):
    X, y, y_train = binary
    unl = np.flatnonzero(y_train == -1)
    cal, test = unl[:70], unl[70:]  # held-out labeled rows calibrate
    tsvm = TransductiveSVM(lam=0.01).fit(X, y_train)
    calibrated = CalibratedClassifierCV(FrozenEstimator(tsvm), method="isotonic")
    calibrated.fit(X[cal], y[cal])
    np.testing.assert_array_equal(calibrated.classes_, tsvm.classes_)
    P = calibrated.predict_proba(X[test])
    assert P.shape == (test.size, 2) and np.allclose(P.sum(axis=1), 1.0)
    assert calibrated.score(X[test], y[test]) > 0.9


def test_calibrated_classifier_cv_on_raw_y_counts_minus_one_as_a_class(binary):
    """Why the FrozenEstimator route: CalibratedClassifierCV label-encodes ``y`` itself."""
    X, _, y_train = binary
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cal = CalibratedClassifierCV(L2SVM(lam=0.1), cv=LabeledStratifiedKFold(3, random_state=0))
        cal.fit(X, y_train)
    assert -1 in cal.classes_


def test_neg_log_loss_scorer_equals_hand_computed_folds(binary):
    X, _, y_train = binary
    cv = LabeledStratifiedKFold(3, random_state=0)
    est = TransductiveSVM(lam=0.01, probability=True)
    scores = cross_val_score(est, X, y_train, cv=cv, scoring=labeled_scorer("neg_log_loss"))
    by_hand = []
    for train, test in cv.split(X, y_train):
        model = TransductiveSVM(lam=0.01, probability=True).fit(X[train], y_train[train])
        by_hand.append(-log_loss(y_train[test], model.predict_proba(X[test]),
                                 labels=model.classes_))
    np.testing.assert_allclose(scores, by_hand)
    assert np.all(scores < 0) and np.all(scores > -0.7)


def test_grid_search_on_log_loss(binary):
    X, _, y_train = binary
    search = GridSearchCV(L2SVM(probability=True), {"lam": [1e-3, 1e-1, 10.0]},
                          cv=LabeledStratifiedKFold(3, random_state=0),
                          scoring=labeled_scorer("neg_log_loss")).fit(X, y_train)
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    assert search.best_estimator_.predict_proba(X).shape == (X.shape[0], 2)


_SW = ("the internal cross-validation of probability=True draws different folds when rows "
       "are repeated, and the solvers stop at a 1e-6 tolerance")


@parametrize_with_checks(
    [L2SVM(probability=True), TransductiveSVM(probability=True)],
    expected_failed_checks=lambda est: {
        "check_classifiers_classes": "y == -1 marks unlabeled rows",
        "check_sample_weight_equivalence_on_dense_data": _SW,
        "check_sample_weight_equivalence_on_sparse_data": _SW},
)
@pytest.mark.filterwarnings("ignore:y has no unlabeled rows:UserWarning")
def test_sklearn_checks_with_probabilities(estimator, check):
    check(estimator)
