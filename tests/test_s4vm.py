"""S4VM (Li & Zhou, TPAMI 2015): the max-min label step, safety, one-vs-rest, the estimator."""

from __future__ import annotations

import itertools
import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC
from sklearn.utils.estimator_checks import parametrize_with_checks

from semisup import L2SVM, S4VM, TransductiveSVM
from semisup._validation import CollapseWarning
from semisup.kernels import scale_gamma
from semisup.linear.s4vm import (
    balance_bounds,
    balanced_labels,
    claimed_scores,
    gain_coefficients,
    kernel_feature_map,
    mean_distance_gamma,
    safe_labels,
    worst_case_gain,
)
from semisup.solvers.lp import max_min_affine_on_box


def _brute_force(separators, y_svm, lam):
    """``max_y min_t gain - lam loss`` by enumerating every labelling (the ILP's optimum)."""
    return max(worst_case_gain(np.array(y), separators, y_svm, lam)
               for y in itertools.product([-1.0, 1.0], repeat=y_svm.size))


def _pm(rng, *shape):
    return rng.choice([-1.0, 1.0], size=shape)


# ------------------------------------------------------------------------- the max-min step

@pytest.mark.parametrize("seed", range(12))
def test_gain_coefficients_are_the_counting_definition(seed):
    rng = np.random.default_rng(seed)
    S, y_svm, y = _pm(rng, 4, 9), _pm(rng, 9), _pm(rng, 9)
    lam = float(rng.uniform(0, 5))
    A, b = gain_coefficients(S, y_svm, lam)
    for t in range(4):  # were S[t] the truth: rows y fixes / rows y breaks, vs the SVM
        gain = np.sum((y == S[t]) & (y_svm != S[t]))
        loss = np.sum((y != S[t]) & (y_svm == S[t]))
        assert A[t] @ y + b[t] == pytest.approx(gain - lam * loss)


@pytest.mark.parametrize("seed", range(15))
def test_exact_label_step_matches_brute_force_enumeration(seed):
    rng = np.random.default_rng(seed)
    u, T = int(rng.integers(4, 10)), int(rng.integers(1, 5))
    S, y_svm = _pm(rng, T, u), _pm(rng, u)
    lam = float(rng.choice([1.0, 2.0, 3.0]))
    best = _brute_force(S, y_svm, lam)
    y, value, fallback = safe_labels(S, y_svm, lam, assignment="exact")
    assert worst_case_gain(y, S, y_svm, lam) == pytest.approx(value)
    if best > 0:  # the ILP optimum
        assert not fallback and value == pytest.approx(best)
    else:  # no guaranteed gain: the SVM's labels
        assert fallback and value == 0 and np.array_equal(y, y_svm)


@pytest.mark.parametrize("seed", range(15))
def test_relaxation_bounds_the_integer_optimum(seed):
    rng = np.random.default_rng(100 + seed)
    u, T = 7, 3
    S, y_svm = _pm(rng, T, u), _pm(rng, u)
    A, b = gain_coefficients(S, y_svm, 3.0)
    best = _brute_force(S, y_svm, 3.0)
    _, lp_value, _ = max_min_affine_on_box(A, b, integer=False)
    _, ip_value, optimal = max_min_affine_on_box(A, b, integer=True)
    assert optimal and ip_value == pytest.approx(best)
    assert lp_value >= best - 1e-9
    y, value, _ = safe_labels(S, y_svm, 3.0, assignment="relaxed")
    assert 0 <= value <= best + 1e-9 and worst_case_gain(y, S, y_svm, 3.0) == value


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(3, 40), st.integers(1, 6),
       st.floats(1.0, 5.0), st.sampled_from(["exact", "relaxed"]))
def test_never_less_accurate_than_the_svm_when_the_truth_is_a_separator(seed, u, T, lam,
                                                                        assignment):
    """The safeness theorem: truth among the separators and lam >= 1 => no accuracy lost."""
    rng = np.random.default_rng(seed)
    truth, y_svm = _pm(rng, u), _pm(rng, u)
    # separators near the truth or near the SVM, the truth itself among them
    flips = rng.random((T, u)) < rng.uniform(0, 0.5, size=(T, 1))
    S = np.where(flips, -truth, truth)
    S[rng.integers(T)] = truth
    y, _, _ = safe_labels(S, y_svm, lam, assignment=assignment)
    assert np.sum(y == truth) >= np.sum(y_svm == truth)


def test_separators_that_agree_with_the_svm_give_the_svms_labels():
    rng = np.random.default_rng(0)
    y_svm = _pm(rng, 30)
    y, value, fallback = safe_labels(np.tile(y_svm, (5, 1)), y_svm, 3.0)
    assert fallback and value == 0 and np.array_equal(y, y_svm)


def test_unanimous_separators_are_followed():
    rng = np.random.default_rng(1)
    y_svm = _pm(rng, 30)
    sep = y_svm.copy()
    sep[:4] *= -1
    y, value, fallback = safe_labels(np.tile(sep, (3, 1)), y_svm, 3.0)
    assert not fallback and value == 4 and np.array_equal(y, sep)


def test_balanced_labels_minimise_the_loss_under_the_balance():
    rng = np.random.default_rng(2)
    o = rng.normal(size=9)
    lo, hi = 5, 6
    got = balanced_labels(o, lo, hi)
    best = min((y for y in itertools.product([-1.0, 1.0], repeat=9)
                if lo <= sum(v > 0 for v in y) <= hi),
               key=lambda y: np.sum(np.maximum(0, 1 - np.array(y) * o) ** 2))
    np.testing.assert_array_equal(got, best)
    assert balance_bounds(100, 0.5, 0.1) == (45, 55)


# ------------------------------------------------------------------------------ the estimator

def _square(seed, n=40):
    """Four blobs at the corners of a square; one label top-left (1), one bottom-right (0).

    Two low-density separators fit the labels (vertical and horizontal); the SVM is the
    diagonal between them.  Whichever one the TSVM picks, it is wrong if the truth is the
    other.
    """
    rng = np.random.default_rng(seed)
    centres = np.array([[-3, 3], [3, 3], [-3, -3], [3, -3]], float)
    X = np.vstack([c + 0.6 * rng.normal(size=(n, 2)) for c in centres])
    y = np.full(4 * n, -1)
    y[np.argmin(np.sum((X - centres[0]) ** 2, axis=1))] = 1
    y[np.argmin(np.sum((X - centres[3]) ** 2, axis=1))] = 0
    return X, y, {"top": (X[:, 1] > 0).astype(int), "left": (X[:, 0] < 0).astype(int)}


@pytest.mark.parametrize("seed", [1, 2, 4])
def test_no_worse_than_the_svm_where_the_tsvm_hurts(seed):
    X, y, truths = _square(seed)
    unl = y == -1
    svm = L2SVM(lam=1 / 100).fit(X[~unl], y[~unl]).predict(X[unl])
    tsvm = TransductiveSVM().fit(X, y).transduction_[unl]
    s4vm = S4VM(fallback="none", kernel="linear", n_candidates=30,
                random_state=0).fit(X, y).transduction_[unl]
    # the truth the TSVM did not pick: there it hurts by a wide margin
    hurt = min(truths.values(), key=lambda t: np.mean(tsvm == t[unl]))[unl]
    assert np.mean(tsvm == hurt) < np.mean(svm == hurt) - 0.1
    assert np.mean(s4vm == hurt) >= np.mean(svm == hurt)


def _blobs(seed=0, n=30, shift=4.0):
    rng = np.random.default_rng(seed)
    X = np.r_[rng.normal(size=(n, 2)) + shift, rng.normal(size=(n, 2)) - shift]
    y = np.full(2 * n, -1)
    y[[0, 1, n, n + 1]] = [1, 1, 0, 0]
    return X, y, np.r_[np.ones(n, int), np.zeros(n, int)]


def test_when_every_separator_agrees_with_the_svm_the_answer_is_the_svm():
    X, y, _ = _blobs()
    clf = S4VM(fallback="none", kernel="linear", n_candidates=20, random_state=0).fit(X, y)
    r = clf.fit_results_[0]
    assert np.all(r.separators == r.svm_labels_u)
    assert clf.svm_labels_kept_.all() and clf.worst_case_gain_[0] == 0
    np.testing.assert_array_equal(clf.transduction_[y == -1], np.where(r.svm_labels_u > 0, 1, 0))
    # the final model is the supervised SVM (independent fit of the same objective)
    svm = L2SVM(lam=1 / clf.C1, tol=1e-10, penalize_intercept=True).fit(X[y != -1], y[y != -1])
    np.testing.assert_allclose(clf.decision_function(X), svm.decision_function(X), rtol=1e-4,
                               atol=1e-5)


def test_multiclass_equals_hand_written_one_vs_rest():
    rng = np.random.default_rng(3)
    centres = np.array([[0, 4], [4, -2], [-4, -2]], float)
    X = np.vstack([c + rng.normal(size=(25, 2)) for c in centres])
    labels = np.repeat([5, 7, 9], 25)
    y = np.full(75, -1)
    for k in range(3):
        y[[25 * k, 25 * k + 1]] = labels[25 * k]
    params = dict(kernel="rbf", n_candidates=10, random_state=7)
    clf = S4VM(fallback="none", **params).fit(X, y)
    final, supervised, claims = [], [], []
    for c in (5, 7, 9):
        yk = np.where(y == -1, -1, (y == c).astype(int))
        binary = S4VM(fallback="none", **params).fit(X, yk)
        final.append(binary.decision_function(X))
        Phi, _ = kernel_feature_map(X, binary.gamma_, binary.n_components)
        w_svm = binary.fit_results_[0].w_svm
        supervised.append(Phi @ w_svm[:-1] + w_svm[-1])
        claims.append(binary.transduction_ == 1)
    final, supervised, claims = (np.column_stack(a) for a in (final, supervised, claims))
    unl = y == -1
    # the claims rule by hand: one claiming class wins; several or none: the supervised SVMs
    expect = []
    for s_row, c_row in zip(supervised[unl], claims[unl], strict=True):
        pool = np.flatnonzero(c_row) if c_row.any() else np.arange(3)
        expect.append(pool[np.argmax(s_row[pool])])
    np.testing.assert_array_equal(clf.transduction_[unl], np.array([5, 7, 9])[expect])
    np.testing.assert_allclose(clf.decision_function(X), claimed_scores(supervised, final > 0),
                               rtol=1e-7, atol=1e-7)
    assert np.mean(clf.predict(X) == labels) > 0.95


@given(st.integers(0, 2**31 - 1), st.integers(1, 12), st.integers(2, 6))
@settings(max_examples=60, deadline=None)
def test_claimed_scores_pick_the_sole_claim_else_the_supervised_choice(seed, n, k):
    rng = np.random.default_rng(seed)
    supervised = rng.normal(scale=rng.choice([1e-3, 1.0, 1e3]), size=(n, k))
    claims = rng.random((n, k)) < 0.4
    winner = claimed_scores(supervised, claims).argmax(axis=1)
    for i in range(n):
        if claims[i].any():
            assert claims[i, winner[i]]
            assert supervised[i, winner[i]] == supervised[i, claims[i]].max()
        else:
            assert winner[i] == supervised[i].argmax()


def test_collapse_warning():
    X, y, _ = _blobs()
    X = X + [50.0, 0.0]  # far from the origin: a vanishing w puts every row on one side
    y[[1, 2, 30]] = [1, 1, 0]  # three positive labels, one negative
    healthy = S4VM(fallback="none", kernel="linear", balance=2.0, n_candidates=5, random_state=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapseWarning)
        healthy.fit(X, y)
    # all weights negligible (C1, C2 tiny) and no balance constraint: every label is 1
    with pytest.warns(CollapseWarning, match="collapsed to one class"):
        S4VM(fallback="none", kernel="linear", C1=1e-8, C2=1e-11, balance=2.0, n_candidates=5,
             random_state=0).fit(X, y)


def test_kernel_feature_map_reproduces_the_gram_matrix():
    X, _, _ = _blobs(n=20, shift=1.0)
    phi, comp = kernel_feature_map(X, 0.3)
    K = rbf_kernel(X, gamma=0.3)
    np.testing.assert_allclose(phi @ phi.T, K, atol=1e-8)
    np.testing.assert_allclose(K @ comp, phi, atol=1e-6)


def test_rbf_decision_function_on_training_rows_matches_the_feature_route():
    X, y, y_true = _blobs(n=25, shift=1.5)
    clf = S4VM(fallback="none", n_candidates=10, random_state=0).fit(X, y)
    order = np.r_[np.flatnonzero(y != -1), np.flatnonzero(y == -1)]
    phi, _ = kernel_feature_map(X, clf.gamma_)
    w = clf.fit_results_[0].w
    np.testing.assert_allclose(clf.decision_function(X)[order], phi[order] @ w[:-1] + w[-1],
                               atol=1e-6)
    assert np.mean(clf.predict(X) == y_true) > 0.8


def test_sparse_input_equals_dense_and_pickle_and_determinism():
    X, y, _ = _blobs(n=25, shift=1.0)
    dense = S4VM(fallback="none", kernel="linear", n_candidates=15, random_state=3).fit(X, y)
    again = S4VM(fallback="none", kernel="linear", n_candidates=15, random_state=3).fit(X, y)
    np.testing.assert_array_equal(dense.transduction_, again.transduction_)
    sparse = S4VM(fallback="none", kernel="linear", n_candidates=15,
                  random_state=3).fit(sp.csr_matrix(X), y)
    np.testing.assert_array_equal(dense.transduction_, sparse.transduction_)
    np.testing.assert_allclose(dense.decision_function(X), sparse.decision_function(X),
                               rtol=1e-6, atol=1e-8)
    clone = pickle.loads(pickle.dumps(dense))
    np.testing.assert_array_equal(clone.predict(X), dense.predict(X))
    assert dense.score(X, y) == 1.0  # score ignores the -1 rows


@pytest.mark.parametrize("bad", [dict(kernel="poly"), dict(assignment="lp"), dict(lam=-1),
                                 dict(n_candidates=0), dict(n_separators=1.5),
                                 dict(n_components=0), dict(gamma=-1.0)])
def test_bad_parameters_name_the_argument(bad):
    X, y, _ = _blobs()
    name = next(iter(bad))
    with pytest.raises(ValueError, match=name):
        S4VM(**bad).fit(X, y)


def test_no_unlabeled_rows_is_the_svm():
    X, _, y_true = _blobs()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        clf = S4VM(fallback="none", kernel="linear", random_state=0).fit(X, y_true)
    assert clf.svm_labels_kept_.all() and np.mean(clf.predict(X) == y_true) == 1.0


@parametrize_with_checks(
    [S4VM(n_candidates=5, random_state=0), S4VM(kernel="linear", n_candidates=5, random_state=0)],
    expected_failed_checks=lambda est: {
        "check_classifiers_classes": "y == -1 marks unlabeled rows (the sklearn.semi_supervised "
                                     "convention), so the check's class label -1 cannot be a "
                                     "class"})
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="y has no unlabeled rows")
        check(estimator)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 10_000), n=st.integers(2, 30), d=st.integers(1, 8),
       scale=st.floats(1e-3, 1e3), density=st.floats(0.05, 1.0))
def test_scale_gamma_is_scikit_learns_svc_width(seed, n, d, scale, density):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d)) * scale * (rng.random((n, d)) < density)
    y = np.arange(n) % 2
    reference = SVC(gamma="scale").fit(X, y)._gamma   # scikit-learn's own rule
    assert scale_gamma(X) == pytest.approx(reference, rel=1e-9)
    assert scale_gamma(sp.csr_matrix(X)) == pytest.approx(reference, rel=1e-9)


def test_default_width_is_the_counterparts_and_the_papers_is_on_request():
    X, y, _ = _blobs(n=25, shift=1.5)
    clf = S4VM(fallback="none", n_candidates=5, random_state=0).fit(X, y)
    # SVC()'s kernel over the same rows (S4VM reads the width off all of X, labeled and
    # unlabeled, as scikit-learn reads it off the rows it is given)
    assert clf.gamma_ == pytest.approx(SVC().fit(X, np.arange(len(X)) % 2)._gamma)
    paper = S4VM(fallback="none", gamma="mean_distance", n_candidates=5, random_state=0).fit(X, y)
    assert paper.gamma_ == pytest.approx(mean_distance_gamma(X))
    old = S4VM(fallback="none", gamma=None, n_candidates=5, random_state=0).fit(X, y)
    assert old.gamma_ == paper.gamma_
    with pytest.raises(ValueError, match="gamma"):
        S4VM(gamma="auto").fit(X, y)
