"""Graph choices of the manifold estimators: the per-point heat width, grid search over every
graph parameter with the labeled-only splitter, and the defaults chosen by
``benchmarks/bench_graph_defaults.py``."""

from __future__ import annotations

import numpy as np
import pytest
from sklearn.datasets import make_moons
from sklearn.model_selection import GridSearchCV

from semisup import LapRLS, LapSVM
from semisup.graph import adjacency_graph
from semisup.model_selection import LabeledStratifiedKFold


def test_local_heat_widths_match_a_brute_force_reference():
    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 3)) * np.r_[1.0, 0.3, 2.0]
    k = 5
    D = np.sqrt(((X[:, None] - X[None]) ** 2).sum(-1))
    np.fill_diagonal(D, np.inf)
    nn = np.argsort(D, axis=1)[:, :k]
    sigma = D[np.arange(40), nn[:, -1]]
    ref = np.zeros((40, 40))
    for i in range(40):
        for j in nn[i]:
            ref[i, j] = ref[j, i] = np.exp(-D[i, j] ** 2 / (sigma[i] * sigma[j]))
    W = adjacency_graph(X, n_neighbors=k, t="local", method="exact").toarray()
    np.testing.assert_allclose(W, ref, rtol=1e-10, atol=1e-12)


def test_local_heat_widths_are_refused_where_they_do_not_apply():
    X = np.random.default_rng(0).standard_normal((20, 2))
    with pytest.raises(ValueError, match="weight='heat'"):
        adjacency_graph(X, n_neighbors=3, weight="binary", t="local")
    with pytest.raises(ValueError, match="kNN graph"):
        adjacency_graph(X, n_neighbors=None, epsilon=1.0, t="local")
    with pytest.raises(ValueError, match="t must be"):
        adjacency_graph(X, n_neighbors=3, t="wide")
    with pytest.raises(ValueError, match="t must be"):
        LapRLS(t="wide").fit(X, np.r_[0, 1, [-1] * 18])


def _moons():
    X, truth = make_moons(160, noise=0.08, random_state=0)
    y = np.full(160, -1)
    lab = np.r_[np.flatnonzero(truth == 0)[:6], np.flatnonzero(truth == 1)[:6]]
    y[lab] = truth[lab]
    return X, y, truth


@pytest.mark.filterwarnings("ignore::semisup.graph.GraphWarning")
@pytest.mark.parametrize("Est, ks", [(LapRLS, [5, 10]), (LapSVM, [10])])  # LapSVM: slower
def test_every_graph_parameter_can_be_chosen_by_grid_search(Est, ks):
    X, y, truth = _moons()
    grid = [
        {"graph_weight": ["heat"], "t": [None, "local"],
         "laplacian": ["unnormalized", "normalized"], "n_neighbors": ks, "laplacian_power": [1, 2]},
        {"graph_weight": ["heat"], "t": [0.05], "n_neighbors": [5]},
        {"graph_weight": ["binary"], "laplacian": ["normalized"], "n_neighbors": [5]},
        {"graph_weight": ["cosine"], "graph_metric": ["cosine"], "n_neighbors": [5]},
    ]
    cv = LabeledStratifiedKFold(3, random_state=0)
    search = GridSearchCV(Est(gamma_A=1e-3, gamma_I=1e3, gamma=5.0), grid, cv=cv,
                          error_score="raise").fit(X, y)
    n_combos = 2 * 2 * len(ks) * 2 + 1 + 1 + 1
    assert len(search.cv_results_["params"]) == n_combos
    assert np.all(np.isfinite(search.cv_results_["mean_test_score"]))
    # the reported score of one combination is the accuracy on its held-out labeled rows
    chosen = {"graph_weight": "heat", "t": "local", "laplacian": "normalized",
              "n_neighbors": 10, "laplacian_power": 2}
    i = search.cv_results_["params"].index(chosen)
    by_hand = []
    for train, test in cv.split(X, y):
        assert np.all(y[test] != -1) and np.all(np.isin(np.flatnonzero(y == -1), train))
        est = Est(gamma_A=1e-3, gamma_I=1e3, gamma=5.0, **chosen)
        est.fit(X[train], y[train])
        by_hand.append(np.mean(est.predict(X[test]) == y[test]))
    assert search.cv_results_["mean_test_score"][i] == pytest.approx(np.mean(by_hand))
    best = search.best_estimator_
    assert np.mean(best.transduction_ == truth) >= 0.9


@pytest.mark.filterwarnings("ignore::semisup.graph.GraphWarning")
def test_default_laprls_graph_still_finds_two_moons_from_one_label_each():
    """The default graph (normalised L) must keep the paper's two-moons behaviour: its square,
    which scored higher on the SSL-book sets, misclassifies 12-46 % here (not the default)."""
    errors = []
    for seed in range(4):
        X, truth = make_moons(200, noise=0.1, random_state=seed)
        y = np.full(200, -1)
        lab = [np.flatnonzero(truth == 0)[0], np.flatnonzero(truth == 1)[0]]
        y[lab] = truth[lab]
        est = LapRLS(gamma_A=1e-3, gamma_I=1e4, gamma=10.0).fit(X, y)
        errors.append(np.mean(est.transduction_ != truth))
    assert max(errors) <= 0.03, errors
