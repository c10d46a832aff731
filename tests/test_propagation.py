"""Label propagation (harmonic function) and label spreading against independent references:
dense closed forms (numpy solves), scikit-learn's iterative LabelPropagation / LabelSpreading
on the same graph, and hand-computed CMN and out-of-sample extensions."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from sklearn.exceptions import ConvergenceWarning
from sklearn.neighbors import NearestNeighbors

from semisup.graph import GraphWarning, adjacency_graph
from semisup.propagation import LabelPropagation, LabelSpreading
from semisup.propagation._cg import block_pcg

# the method as published (the default guard may replace it by SVC on these easy blobs)
EXACT = dict(graph_method="exact", tol=1e-12, max_iter=5000, fallback="none")


def _blobs(n_per=20, n_classes=3, d=4, labeled_per=2, spread=4.0, seed=0):
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(n_classes, d)) * spread
    y_true = np.repeat(np.arange(n_classes), n_per)
    X = centres[y_true] + rng.normal(size=(y_true.size, d))
    y = np.full(y_true.size, -1)
    for c in range(n_classes):
        y[np.flatnonzero(y_true == c)[:labeled_per]] = c
    return X, y, y_true


def _graph(X, k, **kw):
    """The graph the estimators build (same builder, same defaults), as a dense array."""
    return adjacency_graph(X, n_neighbors=k, method="exact", warn=False, **kw).toarray()


def _one_hot(y, n_classes):
    Y = np.zeros((y.size, n_classes))
    lab = y >= 0
    Y[lab, y[lab]] = 1.0
    return Y


def _dense_harmonic(W, y, n_classes):
    """Zhu et al. eq. 5: f_u = (D_uu - W_uu)^-1 W_ul f_l, by a dense solve."""
    lab, unl = y >= 0, y < 0
    L = np.diag(W.sum(axis=1)) - W
    F = _one_hot(y, n_classes)
    F[unl] = np.linalg.solve(L[np.ix_(unl, unl)], W[np.ix_(unl, lab)] @ F[lab])
    return F


def _dense_spreading(W, y, n_classes, alpha):
    """Zhou et al.: F = (1 - alpha) (I - alpha D^-1/2 W D^-1/2)^-1 Y, rows normalised."""
    s = 1.0 / np.sqrt(W.sum(axis=1))
    S = s[:, None] * W * s[None, :]
    F = (1 - alpha) * np.linalg.solve(np.eye(W.shape[0]) - alpha * S, _one_hot(y, n_classes))
    return F / F.sum(axis=1, keepdims=True)


# ----------------------------------------------------------------------------- the solver

def test_block_pcg_matches_dense_solve_column_by_column():
    rng = np.random.default_rng(3)
    M = rng.normal(size=(30, 30))
    A = M @ M.T + 30 * np.eye(30)
    B = rng.normal(size=(30, 4))
    B[:, 2] = 0.0                          # a zero column stays zero and counts as converged
    res = block_pcg(lambda P: A @ P, B, inv_diag=1 / np.diag(A), tol=1e-12)
    assert res.converged
    np.testing.assert_allclose(res.X, np.linalg.solve(A, B), atol=1e-10)
    # warm start at the solution: no iteration
    again = block_pcg(lambda P: A @ P, B, inv_diag=1 / np.diag(A), X0=res.X, tol=1e-8)
    assert again.n_iter == 0


def test_adjacency_graph_weights_a_given_search_like_its_own():
    from semisup.graph import knn_search

    X, _, _ = _blobs(seed=12)
    idx, dist = knn_search(X, 5, method="exact")
    for t in (None, 0.5, "local"):
        own = adjacency_graph(X, n_neighbors=5, method="exact", t=t, warn=False)
        given = adjacency_graph(X, n_neighbors=5, t=t, neighbors=(idx, dist), warn=False)
        assert (own != given).nnz == 0
    with pytest.raises(ValueError, match="neighbors must be"):
        adjacency_graph(X, neighbors=(idx[:-1], dist[:-1]))


# ----------------------------------------------------------------------------- closed forms

@pytest.mark.parametrize("weight", ["heat", "binary"])
def test_harmonic_function_equals_dense_closed_form(weight):
    X, y, _ = _blobs()
    clf = LabelPropagation(n_neighbors=6, graph_weight=weight, **EXACT).fit(X, y)
    W = _graph(X, 6, weight=weight)
    F = _dense_harmonic(W, y, 3)
    np.testing.assert_allclose(clf.label_distributions_, F, atol=1e-9)
    # harmonic property (eq. 3): every unlabeled row is the average of its neighbours
    unl = y < 0
    avg = (W @ clf.label_distributions_) / W.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(clf.label_distributions_[unl], avg[unl], atol=1e-9)


@pytest.mark.parametrize("alpha", [0.5, 0.99])
def test_label_spreading_equals_dense_closed_form(alpha):
    X, y, _ = _blobs(seed=1)
    clf = LabelSpreading(alpha=alpha, n_neighbors=6, **EXACT).fit(X, y)
    F = _dense_spreading(_graph(X, 6), y, 3, alpha)
    np.testing.assert_allclose(clf.label_distributions_[y < 0], F[y < 0], atol=1e-9)
    # labeled rows keep their given labels in transduction_ (not clamped in the solve)
    np.testing.assert_array_equal(clf.transduction_[y >= 0], y[y >= 0])


# ----------------------------------------------------------------------------- scikit-learn

def _sklearn_on_graph(cls, W, X, y, **params):
    """scikit-learn's estimator with a callable kernel returning our affinity ``W``.

    With a symmetric ``W`` with zero diagonal both solve the same problem: scikit-learn's
    LabelPropagation iterates ``F <- D^-1 W F`` with the labeled rows clamped (Jacobi's
    iteration for eq. 5) and LabelSpreading ``F <- alpha S F + (1 - alpha) Y`` with
    ``S = D^-1/2 W D^-1/2``; ours solve the limits by CG.  What differs otherwise: its
    ``kernel='knn'`` graph is directed (not symmetrised), LabelSpreading's keeps self loops
    in the degrees, and both stop after a fixed number of sweeps or an absolute change.
    """
    return cls(kernel=lambda A, B: W, max_iter=100_000, tol=1e-14, **params).fit(X, y)


def test_label_propagation_equals_scikit_learn_on_the_same_graph():
    from sklearn.semi_supervised import LabelPropagation as SkLabelPropagation

    X, y, _ = _blobs(seed=2, spread=1.5)                     # overlapping classes
    ours = LabelPropagation(n_neighbors=6, **EXACT).fit(X, y)
    theirs = _sklearn_on_graph(SkLabelPropagation, _graph(X, 6), X, y)
    np.testing.assert_allclose(ours.label_distributions_, theirs.label_distributions_,
                               atol=1e-6)
    np.testing.assert_array_equal(ours.transduction_, theirs.transduction_)


@pytest.mark.parametrize("alpha", [0.2, 0.99])
def test_label_spreading_equals_scikit_learn_on_the_same_graph(alpha):
    from sklearn.semi_supervised import LabelSpreading as SkLabelSpreading

    X, y, _ = _blobs(seed=3, spread=1.5)                     # overlapping classes
    ours = LabelSpreading(alpha=alpha, n_neighbors=6, **EXACT).fit(X, y)
    theirs = _sklearn_on_graph(SkLabelSpreading, _graph(X, 6), X, y, alpha=alpha)
    unl = y < 0
    np.testing.assert_allclose(ours.label_distributions_[unl],
                               theirs.label_distributions_[unl], atol=1e-6)
    np.testing.assert_array_equal(ours.transduction_[unl], theirs.transduction_[unl])
    # the one convention that differs: our labeled rows keep their given (one-hot) labels,
    # scikit-learn reports the spread distribution there too
    np.testing.assert_array_equal(ours.label_distributions_[~unl], np.eye(3)[y[~unl]])


# ----------------------------------------------------------------------------- CMN

def test_class_mass_normalisation_matches_hand_computation():
    # unbalanced labels: 1 labeled row in class 0, 4 in class 1, on equal-sized blobs
    X, y, y_true = _blobs(n_per=30, n_classes=2, labeled_per=4, spread=1.2, seed=4)
    y[np.flatnonzero(y == 0)[1:]] = -1
    clf = LabelPropagation(n_neighbors=6, cmn=True, **EXACT).fit(X, y)
    F = _dense_harmonic(_graph(X, 6), y, 2)
    unl = y < 0
    q = np.bincount(y[~unl]) / (~unl).sum()              # labeled class frequencies
    G = F * (q / F[unl].sum(axis=0))                     # Zhu et al., section 4
    expected = G / G.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(clf.label_distributions_[unl], expected[unl], atol=1e-9)
    np.testing.assert_array_equal(clf.transduction_[unl], np.argmax(G[unl], axis=1))
    plain = LabelPropagation(n_neighbors=6, cmn=False, **EXACT).fit(X, y)
    np.testing.assert_array_equal(plain.transduction_[unl], np.argmax(F[unl], axis=1))


# ----------------------------------------------------------------------------- predict

@pytest.mark.parametrize("Est", [LabelPropagation, LabelSpreading])
def test_out_of_sample_on_training_duplicates_equals_transduction(Est):
    X, y, _ = _blobs(seed=5)
    clf = Est(n_neighbors=6, **EXACT).fit(X, y)
    np.testing.assert_array_equal(clf.predict(X), clf.transduction_)
    np.testing.assert_allclose(clf.predict_proba(X), clf.label_distributions_, atol=1e-12)


def test_duplicates_are_found_by_the_brute_force_search_too():
    # 40 dims: scikit-learn searches by brute force, whose self-distances are ~1e-6, not 0
    rng = np.random.default_rng(14)
    X = rng.normal(size=(120, 40)) + 5.0
    X[60:] += 2.0
    y = np.full(120, -1)
    y[[0, 1, 60, 61]] = [0, 0, 1, 1]
    clf = LabelSpreading(n_neighbors=6, **EXACT).fit(X, y)
    assert clf._neighbours_of(X)[1][:, 0].max() > 0      # the search is inexact here
    np.testing.assert_allclose(clf.predict_proba(X), clf.label_distributions_, atol=1e-12)


@pytest.mark.parametrize("t", [None, 0.7, "local"])
def test_out_of_sample_is_the_weighted_neighbour_average(t):
    X, y, _ = _blobs(seed=6)
    clf = LabelPropagation(n_neighbors=6, t=t, **EXACT).fit(X, y)
    X_new = X[:5] + 0.3
    dist, idx = NearestNeighbors(n_neighbors=6).fit(X).kneighbors(X_new)
    if t == "local":
        sig_train = NearestNeighbors(n_neighbors=7).fit(X).kneighbors(X)[0][:, -1]
        w = np.exp(-dist ** 2 / (dist[:, -1:] * sig_train[idx]))
    else:
        # the default width: a quarter of the mean squared 6-NN distance of the training rows
        t_used = t if t is not None else \
            np.mean(NearestNeighbors(n_neighbors=7).fit(X).kneighbors(X)[0][:, 1:] ** 2) / 4
        assert clf.t_ == pytest.approx(t_used)
        w = np.exp(-dist ** 2 / (4 * t_used))
    expected = np.einsum("ij,ijk->ik", w, clf.label_distributions_[idx]) / w.sum(1)[:, None]
    np.testing.assert_allclose(clf.predict_proba(X_new), expected, atol=1e-12)


@pytest.mark.parametrize("Est", [LabelPropagation, LabelSpreading])
def test_sparse_input_gives_the_dense_answer_and_pickles(Est):
    X, y, _ = _blobs(seed=7)
    dense = Est(n_neighbors=6, **EXACT).fit(X, y)
    sparse = Est(n_neighbors=6, **EXACT).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.label_distributions_, dense.label_distributions_,
                               atol=1e-10)
    X_new = X[:4] + 0.1
    proba = dense.predict_proba(X_new)
    again = pickle.loads(pickle.dumps(dense))
    np.testing.assert_array_equal(again.predict_proba(X_new), proba)
    np.testing.assert_allclose(sparse.predict_proba(sp.csr_matrix(X_new)), proba, atol=1e-10)


# ----------------------------------------------------------------------------- graph issues

@pytest.mark.parametrize("Est", [LabelPropagation, LabelSpreading])
def test_component_without_labels_gets_the_prior_and_one_warning(Est):
    X, y, _ = _blobs(n_per=15, n_classes=2, labeled_per=2, seed=8)
    far = np.random.default_rng(0).normal(size=(12, X.shape[1])) + 100.0
    X = np.vstack([X, far])
    y = np.r_[y, np.full(12, -1)]
    y[1] = -1                                          # priors 1/3 and 2/3
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        clf = Est(n_neighbors=5, **EXACT).fit(X, y)
    graph_warnings = [w for w in caught if issubclass(w.category, GraphWarning)]
    assert len(graph_warnings) == 1
    assert "12 rows" in str(graph_warnings[0].message)
    assert "n_neighbors" in str(graph_warnings[0].message)
    np.testing.assert_array_equal(clf.unreached_, np.r_[np.zeros(30, bool), np.ones(12, bool)])
    np.testing.assert_allclose(clf.label_distributions_[30:], [[1 / 3, 2 / 3]] * 12)
    # the labeled components are solved as if alone
    alone = Est(n_neighbors=5, **EXACT).fit(X[:30], y[:30])
    np.testing.assert_allclose(clf.label_distributions_[:30], alone.label_distributions_,
                               atol=1e-9)


def test_iteration_limit_draws_one_convergence_warning_naming_max_iter():
    X, y, _ = _blobs(seed=9)
    with pytest.warns(ConvergenceWarning, match="max_iter") as record:
        LabelPropagation(n_neighbors=6, graph_method="exact", tol=1e-12, max_iter=2,
                         fallback="none").fit(X, y)
    assert len([w for w in record if issubclass(w.category, ConvergenceWarning)]) == 1


def test_warm_start_refit_with_more_labels_starts_closer():
    X, y, _ = _blobs(n_per=60, seed=10)
    params = dict(n_neighbors=6, graph_method="exact", tol=1e-10, max_iter=5000,
                  fallback="none")
    cold = LabelPropagation(**params).fit(X, y)
    warm = LabelPropagation(warm_start=True, **params).fit(X, y)
    warm.fit(X, y)
    assert warm.n_iter_ < cold.n_iter_
    np.testing.assert_allclose(warm.label_distributions_, cold.label_distributions_,
                               atol=1e-8)


# ----------------------------------------------------------------------------- accuracy

@pytest.mark.parametrize("Est", [LabelPropagation, LabelSpreading])
def test_multiclass_blobs_are_recovered(Est):
    rng = np.random.default_rng(11)
    y_true = np.repeat(np.arange(5), 40)
    X = 6.0 * np.eye(5)[y_true] + rng.normal(size=(200, 5))   # centres 8.5 apart
    y = np.full(200, -1)
    y[::20] = y_true[::20]                                      # two labels per class
    clf = Est(**EXACT).fit(X, y)
    assert list(clf.classes_) == [0, 1, 2, 3, 4]
    assert np.mean(clf.transduction_ == y_true) >= 0.95
    labels = np.array(["a", "b", "c", "d", "e"])
    y_str = np.where(y < 0, "-1", labels[np.maximum(y, 0)])
    named = Est(**EXACT).fit(X, y_str)
    np.testing.assert_array_equal(named.transduction_, labels[clf.transduction_])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), n_classes=st.integers(2, 4), k=st.integers(2, 8),
       spreading=st.booleans())
def test_property_distributions_and_labeled_rows(seed, n_classes, k, spreading):
    rng = np.random.default_rng(seed)
    n = 30
    X = rng.normal(size=(n, 3))
    y = np.full(n, -1)
    y[:n_classes] = np.arange(n_classes)             # every class labeled once
    y[n_classes:2 * n_classes] = rng.integers(n_classes, size=n_classes)
    Est = LabelSpreading if spreading else LabelPropagation
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")                # disconnected graphs are allowed here
        clf = Est(n_neighbors=k, graph_method="exact", tol=1e-10, max_iter=2000,
                  fallback="none").fit(X, y)
    for P in (clf.label_distributions_, clf.predict_proba(rng.normal(size=(7, 3)))):
        assert np.all(P >= 0)
        np.testing.assert_allclose(P.sum(axis=1), 1.0, atol=1e-12)
    lab = y >= 0
    np.testing.assert_array_equal(clf.transduction_[lab], y[lab])
    if not spreading:   # the harmonic function clamps the labeled rows
        np.testing.assert_array_equal(clf.label_distributions_[lab],
                                      np.eye(n_classes)[y[lab]])


def test_verbose_logs_the_graph_and_the_solve(caplog):
    import logging

    X, y, _ = _blobs(seed=13)
    with caplog.at_level(logging.INFO, logger="semisup"):
        LabelSpreading(n_neighbors=6, graph_method="exact", verbose=1,
                       fallback="none").fit(X, y)
    text = caplog.text
    assert "6-NN graph over 60 rows" in text
    assert "block CG over 60 rows x 3 classes" in text


@pytest.mark.parametrize("Est", [LabelPropagation, LabelSpreading])
def test_scikit_learn_estimator_checks(Est):
    from sklearn.utils.estimator_checks import check_estimator

    expected = {"check_classifiers_classes": "y == -1 marks unlabeled rows, so the check's "
                                             "class label -1 cannot be a class"}
    if Est is LabelPropagation:
        expected["check_non_transformer_estimators_n_iter"] = (
            "a fully labeled y leaves nothing to solve for the harmonic function: n_iter_ = 0")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = check_estimator(Est(), on_fail=None, expected_failed_checks=expected)
    failed = [(r["check_name"], str(r["exception"])[:200]) for r in results
              if r["status"] == "failed"]
    assert not failed


@pytest.mark.parametrize("n_classes", [2, 3])
def test_spreading_held_out_scores_equal_refits(n_classes):
    """All folds of the transductive CV in one block solve equal refits with hidden labels."""
    from sklearn.datasets import make_blobs

    X, y_true = make_blobs(240, centers=n_classes, cluster_std=2.5, random_state=0)
    labeled = np.sort(np.concatenate([np.flatnonzero(y_true == k)[:4]
                                      for k in range(n_classes)]))
    y = np.full(y_true.size, -1)
    y[labeled] = y_true[labeled]
    order = np.random.default_rng(0).permutation(labeled.size)
    folds = [(np.setdiff1d(np.arange(labeled.size), te), te) for te in np.array_split(order, 3)]
    scores = LabelSpreading(tol=1e-10)._held_out_scores(X, y, folds)
    for (_, test), got in zip(folds, scores, strict=True):
        y_fold = y.copy()
        y_fold[labeled[test]] = -1
        P = LabelSpreading(tol=1e-10, fallback="none").fit(X, y_fold).label_distributions_
        ref = P[:, 1] - P[:, 0] if n_classes == 2 else P
        hidden = y_fold == -1
        np.testing.assert_allclose(got[hidden], ref[hidden], atol=1e-9)
