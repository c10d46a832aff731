"""scikit-learn conformance: pandas feature names, set_output, sample_weight for TSVM and DA,
the declared scikit-learn bound."""

import pathlib
import re
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

from semisup import (
    L2SVM,
    ClusterLapRLS,
    DeterministicAnnealingSVM,
    LaplacianEigenmaps,
    LapRLS,
    LapSVM,
    LinearLapRLS,
    LinearLapSVM,
    NystromLabelSpreading,
    PrototypeVectorMachine,
    RegularizedSpectralClustering,
    RLSClassifier,
    TransductiveSVM,
)
from semisup.losses import transductive_objective

pd = pytest.importorskip("pandas")


@pytest.fixture(scope="module")
def frame():
    rng = np.random.default_rng(0)
    X = np.vstack([rng.normal(-1.5, 1, size=(60, 4)), rng.normal(1.5, 1, size=(60, 4))])
    y = np.full(120, -1)
    y[np.r_[0:6, 60:66]] = np.repeat([0, 1], 6)
    return pd.DataFrame(X, columns=["a", "b", "c", "d"]), y


CLASSIFIERS = [L2SVM(), RLSClassifier(), TransductiveSVM(), DeterministicAnnealingSVM(),
               LinearLapRLS(), LinearLapSVM(), LapRLS(), LapSVM(),
               PrototypeVectorMachine(n_prototypes=20, random_state=0),
               NystromLabelSpreading(n_prototypes=20, random_state=0),
               ClusterLapRLS(n_prototypes=20, random_state=0)]


@pytest.mark.parametrize("est", CLASSIFIERS, ids=lambda e: type(e).__name__)
def test_pandas_feature_names_round_trip(frame, est):
    df, y = frame
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # fit then predict on the same frame: silent
        est.fit(df, y)
        pred = est.predict(df)
        est.score(df, y)
    np.testing.assert_array_equal(est.feature_names_in_, ["a", "b", "c", "d"])
    assert est.n_features_in_ == 4
    with pytest.warns(UserWarning, match="does not have valid feature names"):
        np.testing.assert_array_equal(pred, est.predict(df.to_numpy()))
    with pytest.raises(ValueError, match="feature names"):
        est.predict(df.rename(columns={"a": "z"}))


def test_arrays_set_no_feature_names(frame):
    df, y = frame
    est = TransductiveSVM().fit(df.to_numpy(), y)
    assert not hasattr(est, "feature_names_in_") and est.n_features_in_ == 4


def test_laplacian_eigenmaps_feature_names_out_and_set_output(frame):
    df, _ = frame
    emb = LaplacianEigenmaps(n_components=3).fit(df)
    names = emb.get_feature_names_out()
    np.testing.assert_array_equal(names, [f"laplacianeigenmaps{i}" for i in range(3)])
    out = LaplacianEigenmaps(n_components=3).set_output(transform="pandas").fit_transform(df)
    assert isinstance(out, pd.DataFrame)
    np.testing.assert_array_equal(out.columns, names)
    np.testing.assert_array_equal(out.index, df.index)
    np.testing.assert_allclose(out.to_numpy(), emb.embedding_)
    t = emb.set_output(transform="pandas").transform(df.iloc[:5])
    assert list(t.columns) == list(names)
    rsc = RegularizedSpectralClustering().fit(df)
    np.testing.assert_array_equal(rsc.feature_names_in_, df.columns)


# --------------------------------------------------------------------- sample_weight


@pytest.fixture(scope="module")
def weighted_problem():
    rng = np.random.default_rng(3)
    X = np.vstack([rng.normal(-1, 1, size=(80, 5)), rng.normal(1, 1, size=(80, 5))])
    y = np.full(160, -1)
    lab = np.r_[0:8, 80:88]
    y[lab] = np.repeat([0, 1], 8)
    return X, y, lab


@pytest.mark.parametrize("cls", [TransductiveSVM, DeterministicAnnealingSVM])
def test_unit_weights_change_nothing(weighted_problem, cls):
    X, y, _ = weighted_problem
    a = cls().fit(X, y)
    b = cls().fit(X, y, sample_weight=np.ones(y.size))
    np.testing.assert_allclose(b.coef_, a.coef_, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("cls", [TransductiveSVM, DeterministicAnnealingSVM])
@pytest.mark.parametrize("sparse", [False, True])
def test_integer_weights_equal_repeated_labeled_rows(weighted_problem, cls, sparse):
    X, y, lab = weighted_problem
    w = np.ones(y.size)
    w[lab[[0, 3, 9]]] = [2, 3, 2]
    rep = np.r_[np.arange(y.size), lab[0], lab[3], lab[3], lab[9]]
    Xw, Xr = (sp.csr_matrix(X), sp.csr_matrix(X[rep])) if sparse else (X, X[rep])
    a = cls(tol=1e-10).fit(Xw, y, sample_weight=w)
    b = cls(tol=1e-10).fit(Xr, y[rep])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-9)
    np.testing.assert_allclose(a.objective_, b.objective_, rtol=1e-9)


@pytest.mark.parametrize("cls", [TransductiveSVM, DeterministicAnnealingSVM])
def test_zero_weight_equals_removing_a_labeled_row(weighted_problem, cls):
    X, y, lab = weighted_problem
    w = np.ones(y.size)
    w[lab[[1, 10]]] = 0
    keep = np.setdiff1d(np.arange(y.size), lab[[1, 10]])
    a = cls(tol=1e-10).fit(X, y, sample_weight=w)
    b = cls(tol=1e-10).fit(X[keep], y[keep])
    np.testing.assert_allclose(a.coef_, b.coef_, rtol=1e-7, atol=1e-9)


def test_unlabeled_weights_enter_the_objective(weighted_problem):
    X, y, lab = weighted_problem
    unl = np.flatnonzero(y == -1)
    w = np.ones(y.size)
    w[unl[:40]] = 5.0
    # the published method: its objective is checked (the guard could return L2SVM())
    est = TransductiveSVM(tol=1e-10, fallback="none").fit(X, y, sample_weight=w)
    plain = TransductiveSVM(tol=1e-10, fallback="none").fit(X, y)
    assert not np.allclose(est.coef_, plain.coef_)
    # the reported objective is the weighted TSVM objective at the returned weights
    wv = np.r_[est.coef_.ravel(), est.intercept_]
    o = np.c_[X, np.ones(len(X))] @ wv
    y_pm = np.where(y[lab] == 1, 1.0, -1.0)
    weights = (w[lab] / w[lab].sum(), w[unl] / w[unl].sum())
    expected = transductive_objective(0.5 * est.lam * wv @ wv, o[lab], y_pm, o[unl],
                                      est.lam_u, weights)
    np.testing.assert_allclose(est.objective_, expected, rtol=1e-8)


@pytest.mark.parametrize("bad, match", [
    (lambda w, y: -w, "non-negative"),
    (lambda w, y: np.where(y == -1, 0.0, w), "zero for every unlabeled row"),
    (lambda w, y: np.where(y == -1, w, 0.0), "zero for every labeled row"),
    (lambda w, y: w[:-1], "one entry per row"),
])
def test_bad_sample_weight_is_rejected(weighted_problem, bad, match):
    X, y, _ = weighted_problem
    with pytest.raises(ValueError, match=match):
        TransductiveSVM().fit(X, y, sample_weight=bad(np.ones(y.size), y))


# --------------------------------------------------------------------- packaging


def test_declared_scikit_learn_bound_covers_the_apis_used():
    """``validate_data``, ``__sklearn_tags__`` and ``FrozenEstimator`` arrived in 1.6."""
    text = (pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text()
    bound = re.search(r'"scikit-learn>=(\d+)\.(\d+)', text)
    assert bound is not None and (int(bound[1]), int(bound[2])) >= (1, 6)
    assert re.search(r'"pandas>=', text.split("[project.optional-dependencies]")[1])
