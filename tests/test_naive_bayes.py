"""Semi-supervised multinomial naive Bayes by EM (semisup.text.naive_bayes, Nigam et al. 2000)."""

import pickle
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import logsumexp
from sklearn.naive_bayes import MultinomialNB

from semisup._validation import CollapseWarning
from semisup.text.naive_bayes import AUTO_LAM_GRID, SemiSupervisedNB, multinomial_em


def _documents(seed, n=400, d=60, n_classes=3, length=25, n_labeled_per_class=2,
               concentration=0.3):
    """Short documents from one multinomial per class; a few labeled rows per class."""
    rng = np.random.default_rng(seed)
    theta = rng.dirichlet(np.full(d, concentration), size=n_classes)
    y_true = rng.integers(0, n_classes, size=n)
    X = np.stack([rng.multinomial(length, theta[c]) for c in y_true]).astype(float)
    y = np.full(n, -1)
    for c in range(n_classes):
        y[np.flatnonzero(y_true == c)[:n_labeled_per_class]] = c
    return X, y, y_true


def _objective(Xl, yl, Xu, comp, log_theta, log_w, alpha, prior_alpha, lam):
    """EM's objective (eq. 9 with EM-lambda's weights and the Dirichlet prior), by hand."""
    Xl, Xu = np.asarray(Xl), np.asarray(Xu)
    lab = sum(logsumexp([Xl[i] @ log_theta[a] + log_w[a] for a in range(comp.size)
                         if comp[a] == yl[i]]) for i in range(Xl.shape[0]))
    unl = sum(logsumexp([Xu[i] @ log_theta[a] + log_w[a] for a in range(comp.size)])
              for i in range(Xu.shape[0]))
    return alpha * log_theta.sum() + prior_alpha * log_w.sum() + lab + lam * unl


# ------------------------------------------------------------------------- EM as an optimiser

@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 10_000), n_classes=st.integers(2, 4), per_class=st.integers(1, 3),
       lam=st.floats(0.0, 1.0), alpha=st.floats(0.01, 2.0), prior_alpha=st.floats(0.0, 2.0),
       sparse=st.booleans())
def test_em_objective_never_decreases(seed, n_classes, per_class, lam, alpha, prior_alpha,
                                      sparse):
    X, y, _ = _documents(seed, n=60, d=15, n_classes=n_classes, length=8)
    rng = np.random.default_rng(seed)
    comp = np.repeat(np.arange(n_classes), per_class)
    lab, unl = np.flatnonzero(y >= 0), np.flatnonzero(y < 0)
    resp = np.zeros((lab.size, comp.size))
    for i, c in enumerate(y[lab]):
        resp[i, comp == c] = rng.dirichlet(np.ones(per_class))
    A = sp.csr_matrix(X) if sparse else X
    res = multinomial_em(A[lab], y[lab], A[unl], comp, alpha=alpha, prior_alpha=prior_alpha,
                         lam_u=lam, labeled_resp=resp, tol=1e-12, max_iter=25)
    J = res.objective
    assert np.all(np.diff(J) >= -1e-9 * np.maximum(1.0, np.abs(J[1:])))
    # the traced value is the objective of the returned parameters, computed independently
    ref = _objective(X[lab], y[lab], X[unl], comp, res.log_theta, res.log_weights, alpha,
                     prior_alpha, lam)
    assert J[-1] == pytest.approx(ref, rel=1e-9, abs=1e-9)
    np.testing.assert_allclose(np.exp(res.log_theta).sum(axis=1), 1.0)
    np.testing.assert_allclose(np.exp(res.log_weights).sum(), 1.0)


def test_one_em_step_against_the_closed_form():
    """One iteration = labeled-only MAP fit, E-step (eq. 7), M-step (eqs. 5-6, EM-lambda)."""
    X, y, _ = _documents(1, n=30, d=8, n_classes=2, length=6)
    lab, unl = np.flatnonzero(y >= 0), np.flatnonzero(y < 0)
    alpha, prior_alpha, lam = 0.5, 1.0, 0.3
    res = multinomial_em(X[lab], y[lab], X[unl], np.arange(2), alpha=alpha,
                         prior_alpha=prior_alpha, lam_u=lam, max_iter=1, tol=1e-300)
    d, C = X.shape[1], 2
    # step 0: naive Bayes on the labeled rows (Laplace-smoothed counts)
    theta = np.zeros((C, d))
    prior = np.zeros(C)
    for c in range(C):
        rows = [i for i in lab if y[i] == c]
        for t in range(d):
            theta[c, t] = (alpha + sum(X[i, t] for i in rows)) / (
                d * alpha + sum(X[i].sum() for i in rows))
        prior[c] = (prior_alpha + len(rows)) / (C * prior_alpha + lab.size)
    # E-step: P(c | x) proportional to P(c) prod_t theta_ct ** x_t
    post = np.zeros((unl.size, C))
    for k, i in enumerate(unl):
        for c in range(C):
            post[k, c] = prior[c] * np.prod(theta[c] ** X[i])
        post[k] /= post[k].sum()
    # M-step: labeled rows weigh 1, unlabeled rows lam
    new_theta = np.zeros((C, d))
    new_prior = np.zeros(C)
    for c in range(C):
        w = np.r_[(y[lab] == c).astype(float), lam * post[:, c]]
        Z = np.r_[X[lab], X[unl]]
        new_theta[c] = (alpha + w @ Z) / (d * alpha + w @ Z.sum(axis=1))
        new_prior[c] = (prior_alpha + w.sum()) / (C * prior_alpha + lab.size + lam * unl.size)
    np.testing.assert_allclose(np.exp(res.log_theta), new_theta, rtol=1e-10)
    np.testing.assert_allclose(np.exp(res.log_weights), new_prior, rtol=1e-10)
    assert res.n_iter == 1


# ------------------------------------------------------------------------- reductions

@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("alpha", [1.0, 0.1])
def test_no_unlabeled_rows_equals_sklearn_multinomialnb(sparse, alpha):
    rng = np.random.default_rng(0)
    X = rng.poisson(0.7, size=(90, 40)).astype(float)
    y = np.array(["ham", "spam", "eggs"])[rng.integers(0, 3, size=90)]
    A = sp.csr_matrix(X) if sparse else X
    ref = MultinomialNB(alpha=alpha).fit(X, y)
    est = SemiSupervisedNB(fallback="none", alpha=alpha, prior_alpha=0.0, lam_u=1.0).fit(A, y)
    assert list(est.classes_) == list(ref.classes_)
    np.testing.assert_allclose(est.feature_log_prob_, ref.feature_log_prob_, rtol=0, atol=1e-10)
    np.testing.assert_allclose(est.class_log_prior_, ref.class_log_prior_, rtol=0, atol=1e-10)
    Xt = rng.poisson(0.7, size=(30, 40)).astype(float)
    np.testing.assert_allclose(est.predict_log_proba(Xt), ref.predict_log_proba(Xt), rtol=0,
                               atol=1e-10)
    np.testing.assert_allclose(est.predict_proba(Xt), ref.predict_proba(Xt), rtol=0, atol=1e-10)
    np.testing.assert_array_equal(est.predict(Xt), ref.predict(Xt))
    np.testing.assert_array_equal(est.transduction_, y)


def test_lambda_zero_is_supervised_naive_bayes():
    X, y, _ = _documents(2, n_labeled_per_class=5)
    lab = y >= 0
    semi = SemiSupervisedNB(fallback="none", lam_u=0.0).fit(X, y)
    sup = SemiSupervisedNB(fallback="none", lam_u=1.0).fit(X[lab], y[lab])
    np.testing.assert_array_equal(semi.feature_log_prob_, sup.feature_log_prob_)
    np.testing.assert_array_equal(semi.class_log_prior_, sup.class_log_prior_)
    ref = MultinomialNB(alpha=1.0).fit(X[lab], y[lab])
    np.testing.assert_allclose(semi.feature_log_prob_, ref.feature_log_prob_, atol=1e-10)
    np.testing.assert_array_equal(semi.predict(X), ref.predict(X))
    # and the unlabeled rows do move the model when lam_u > 0
    moved = SemiSupervisedNB(fallback="none", lam_u=0.5).fit(X, y)
    assert not np.allclose(moved.feature_log_prob_, semi.feature_log_prob_)


def test_one_component_per_class_is_the_basic_model():
    X, y, _ = _documents(3)
    lab, unl = np.flatnonzero(y >= 0), np.flatnonzero(y < 0)
    est = SemiSupervisedNB(fallback="none", lam_u=1.0, n_components_per_class=1).fit(X, y)
    res = multinomial_em(X[lab], y[lab], X[unl], np.arange(3), lam_u=1.0)
    np.testing.assert_allclose(est.feature_log_prob_, res.log_theta, atol=1e-12)
    np.testing.assert_array_equal(est.component_class_, [0, 1, 2])
    # two components per class started identical never split: with half the smoothing
    # each, they are the one-component model (the weights halve, the multinomials coincide)
    comp2 = np.repeat(np.arange(3), 2)
    resp = np.where(comp2[None, :] == y[lab][:, None], 0.5, 0.0)
    twin = multinomial_em(X[lab], y[lab], X[unl], comp2, labeled_resp=resp, lam_u=1.0,
                          alpha=0.5, prior_alpha=0.5)
    single = multinomial_em(X[lab], y[lab], X[unl], np.arange(3), lam_u=1.0, alpha=1.0,
                            prior_alpha=1.0)
    np.testing.assert_allclose(twin.log_weights[::2], single.log_weights - np.log(2),
                               atol=1e-10)
    np.testing.assert_allclose(twin.log_theta[::2], single.log_theta, atol=1e-10)
    np.testing.assert_allclose(twin.log_theta[1::2], single.log_theta, atol=1e-10)
    np.testing.assert_allclose(twin.resp_unlabeled.reshape(-1, 3, 2).sum(axis=2),
                               single.resp_unlabeled, atol=1e-10)


def test_several_components_fit_a_class_made_of_two_topics():
    """EM-multi: class 0 is two disjoint topics A and B, class 1 their even blend, so that
    one multinomial per class cannot tell the classes apart (both average to the blend)."""
    rng = np.random.default_rng(4)
    d = 30
    A = np.r_[rng.dirichlet(np.ones(15)), np.zeros(15)]
    B = np.r_[np.zeros(15), rng.dirichlet(np.ones(15))]
    topics = np.stack([A, B, 0.5 * (A + B)])
    z = rng.integers(0, 3, size=600)
    X = np.stack([rng.multinomial(12, topics[k]) for k in z]).astype(float)
    y_true = (z == 2).astype(int)
    y = np.full(600, -1)
    for k in range(3):
        y[np.flatnonzero(z == k)[:3]] = y_true[np.flatnonzero(z == k)[:3]]
    single = SemiSupervisedNB(fallback="none", lam_u=1.0).fit(X, y)
    multi = SemiSupervisedNB(fallback="none", lam_u=1.0, n_components_per_class=2,
                             random_state=0).fit(X, y)
    assert multi.feature_log_prob_.shape == (4, d)
    acc_single = np.mean(single.transduction_ == y_true)
    acc_multi = np.mean(multi.transduction_ == y_true)
    assert acc_multi > 0.9 and acc_multi > acc_single + 0.2, (acc_single, acc_multi)
    # class 0's two components took one topic each
    P = np.exp(multi.feature_log_prob_[:2])
    assert abs(P[0, :15].sum() - P[1, :15].sum()) > 0.8
    # one count per class: two components for the two-topic class, one for the blend
    per_class = SemiSupervisedNB(fallback="none", lam_u=1.0, n_components_per_class=[2, 1],
                                 random_state=0).fit(X, y)
    np.testing.assert_array_equal(per_class.component_class_, [0, 0, 1])
    assert np.mean(per_class.transduction_ == y_true) > 0.9
    with pytest.raises(ValueError, match="n_components_per_class"):
        SemiSupervisedNB(n_components_per_class=[2, 1, 1]).fit(X, y)


# ------------------------------------------------------------------------- behaviour

def test_unlabeled_documents_help_with_few_labels():
    gains = []
    for seed in range(3):
        X, y, y_true = _documents(10 + seed, n=600, d=100, n_classes=4, length=20,
                                  n_labeled_per_class=1, concentration=0.5)
        test = y < 0
        nb = MultinomialNB().fit(X[~test], y[~test])
        em = SemiSupervisedNB(fallback="none", lam_u=1.0).fit(X, y)
        gains.append(np.mean(em.transduction_[test] == y_true[test])
                     - np.mean(nb.predict(X[test]) == y_true[test]))
        assert np.all(np.diff(em.log_likelihood_) >= -1e-8 * abs(em.log_likelihood_[-1]))
    assert np.mean(gains) > 0.1, gains


def test_auto_lambda_by_labeled_cross_validation():
    X, y, _ = _documents(5, n=300, n_labeled_per_class=4)
    est = SemiSupervisedNB(fallback="none", random_state=0).fit(X, y)
    assert set(est.lam_u_scores_) == set(AUTO_LAM_GRID)
    assert est.lam_u_ in AUTO_LAM_GRID
    best = max(est.lam_u_scores_.values())
    assert est.lam_u_scores_[est.lam_u_] == best
    assert est.lam_u_ == max(k for k, v in est.lam_u_scores_.items() if v == best)
    again = SemiSupervisedNB(fallback="none", lam_u=est.lam_u_).fit(X, y)
    np.testing.assert_allclose(again.feature_log_prob_, est.feature_log_prob_)
    # fewer than 3 labeled rows in a class: the paper's lambda = 1, no cross-validation
    X, y, _ = _documents(5, n=300, n_labeled_per_class=2)
    est = SemiSupervisedNB(fallback="none", random_state=0).fit(X, y)
    assert est.lam_u_ == 1.0 and est.lam_u_scores_ is None


def _unit_rows(seed, n=300, d=2000, length=30):
    """Two topics over a 2,000-word vocabulary, each row scaled to unit length (as tf-idf
    rows are): the smoothing (``alpha = 1`` per word) outweighs a class's word mass, the
    class prior decides the E-step, and EM with unlabeled weight puts every row in one
    class, while supervised naive Bayes (``lam_u = 0``) does not."""
    rng = np.random.default_rng(seed)
    topics = rng.dirichlet(np.full(d, 0.1), size=2)
    X = np.r_[rng.multinomial(length, topics[0], n // 2),
              rng.multinomial(length, topics[1], n // 2)].astype(float)
    X /= np.linalg.norm(X, axis=1, keepdims=True)
    y = np.full(n, -1)
    y[[0, 1, 2, n // 2, n // 2 + 1]] = [0, 0, 0, 1, 1]
    return sp.csr_matrix(X), y


def test_auto_lambda_skips_a_weight_whose_transduction_collapses():
    X, y = _unit_rows(0)
    for lam in (1.0, 0.3, 0.1):
        # a fixed weight keeps its collapsed fit; the warning names the smoothing's weight
        with pytest.warns(CollapseWarning, match="2000 pseudo-counts per component"):
            fixed = SemiSupervisedNB(lam_u=lam).fit(X, y)
        assert fixed.lam_u_collapsed_ == ()
    supervised = SemiSupervisedNB(lam_u=0.0).fit(X, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapseWarning)
        auto = SemiSupervisedNB().fit(X, y)
    # a class of 2 labeled rows: no CV, the weights from the largest down
    assert auto.lam_u_scores_ is None
    assert auto.lam_u_ == 0.0 and auto.lam_u_collapsed_ == (1.0, 0.3, 0.1)
    np.testing.assert_array_equal(auto.transduction_, supervised.transduction_)
    np.testing.assert_allclose(auto.feature_log_prob_, supervised.feature_log_prob_)


def test_auto_lambda_keeps_its_choice_when_every_weight_collapses(monkeypatch):
    import semisup.text.naive_bayes as nb

    X, y = _unit_rows(1)
    monkeypatch.setattr(nb, "is_collapsed", lambda *args: True)
    auto = SemiSupervisedNB().fit(X, y)
    assert auto.lam_u_ == 1.0 and auto.lam_u_collapsed_ == (0.3, 0.1, 0.0)
    np.testing.assert_allclose(auto.feature_log_prob_,
                               SemiSupervisedNB(lam_u=1.0).fit(X, y).feature_log_prob_)


def test_sparse_dense_float32_pickle_and_determinism():
    X, y, _ = _documents(6)
    dense = SemiSupervisedNB(fallback="none", lam_u=1.0, n_components_per_class=2,
                             random_state=3).fit(X, y)
    sparse = SemiSupervisedNB(fallback="none", lam_u=1.0, n_components_per_class=2,
                              random_state=3).fit(sp.csr_matrix(X), y)
    np.testing.assert_allclose(sparse.feature_log_prob_, dense.feature_log_prob_, atol=1e-10)
    again = SemiSupervisedNB(fallback="none", lam_u=1.0, n_components_per_class=2,
                             random_state=3).fit(X, y)
    np.testing.assert_array_equal(again.feature_log_prob_, dense.feature_log_prob_)
    f32 = SemiSupervisedNB(fallback="none", lam_u=1.0, n_components_per_class=2,
                           random_state=3).fit(sp.csr_matrix(X, dtype=np.float32), y)
    np.testing.assert_allclose(f32.feature_log_prob_, dense.feature_log_prob_, atol=1e-6)
    np.testing.assert_array_equal(f32.predict(X.astype(np.float32)), dense.predict(X))
    clone = pickle.loads(pickle.dumps(dense))
    np.testing.assert_array_equal(clone.predict_proba(X), dense.predict_proba(X))
    P = dense.predict_proba(X)
    np.testing.assert_allclose(P.sum(axis=1), 1.0)
    np.testing.assert_array_equal(dense.classes_[P.argmax(axis=1)], dense.predict(X))
    assert dense.score(X, y) == np.mean(dense.predict(X[y >= 0]) == y[y >= 0])


def test_long_documents_are_numerically_stable():
    """Posteriors of documents of 10^6 words: log-sum-exp, never 0/0."""
    X, y, _ = _documents(7)
    est = SemiSupervisedNB(fallback="none", lam_u=1.0).fit(X * 1000, y)
    P = est.predict_proba(X * 1e5)
    assert np.all(np.isfinite(P)) and np.allclose(P.sum(axis=1), 1.0)
    assert np.all(np.isfinite(est.log_likelihood_))


def test_collapse_warning():
    # every unlabeled document is a copy of class 0's labeled one: all of them land there
    X = np.array([[5.0, 0, 1], [0, 5, 1]])
    Xu = np.tile([[4.0, 0, 1]], (30, 1))
    y = np.r_[0, 1, np.full(30, -1)]
    with pytest.warns(CollapseWarning, match="collapsed to one class"):
        SemiSupervisedNB(fallback="none", lam_u=1.0).fit(np.r_[X, Xu], y)
    X, y, _ = _documents(8)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CollapseWarning)
        SemiSupervisedNB(fallback="none", lam_u=1.0).fit(X, y)


def test_bad_input():
    X, y, _ = _documents(9)
    with pytest.raises(ValueError, match="non-negative"):
        SemiSupervisedNB().fit(-X, y)
    est = SemiSupervisedNB(fallback="none", lam_u=1.0).fit(X, y)
    with pytest.raises(ValueError, match="non-negative"):
        est.predict(-X)
    for lam in (1.5, -0.1, "bad", None, True):
        with pytest.raises(ValueError, match="lam_u"):
            SemiSupervisedNB(lam_u=lam).fit(X, y)
    for name, value in [("alpha", 0.0), ("prior_alpha", -1.0), ("n_components_per_class", 0),
                        ("max_iter", 0), ("tol", 0.0), ("random_state", "x")]:
        with pytest.raises(ValueError, match=name):
            SemiSupervisedNB(**{name: value}).fit(X, y)
    with pytest.raises(ValueError, match="labeled_resp"):
        multinomial_em(X[:2], np.array([0, 1]), X[2:], np.arange(2),
                       labeled_resp=np.array([[0.5, 0.5], [0.0, 1.0]]))


def test_convergence_warning_names_max_iter():
    from sklearn.exceptions import ConvergenceWarning

    X, y, _ = _documents(11)
    with pytest.warns(ConvergenceWarning, match="max_iter"):
        SemiSupervisedNB(fallback="none", lam_u=1.0, max_iter=1, tol=1e-15).fit(X, y)


# ------------------------------------------------------------------------- scikit-learn API

# scikit-learn's estimator checks: tests/test_sklearn_api.py (every public estimator)


# ------------------------------------------------------------------------- real data

def test_20newsgroups_unlabeled_documents_help(data_dir):
    """Nigam et al.'s setting in small: 5 labeled posts per group + 3,000 unlabeled ones."""
    from sklearn.feature_extraction.text import CountVectorizer

    from semisup.text.corpora import load_20newsgroups

    docs = [d for d in load_20newsgroups(data_dir, remove=("headers",)) if d.split == "train"]
    groups = sorted({d.labels[0] for d in docs})
    y_all = np.array([groups.index(d.labels[0]) for d in docs])
    rng = np.random.default_rng(0)
    perm = rng.permutation(len(docs))
    lab = np.concatenate([perm[y_all[perm] == c][:5] for c in range(20)])
    rest = perm[~np.isin(perm, lab)]                 # shuffled: the archive is by group
    unl, test = rest[:3000], rest[3000:5000]
    vec = CountVectorizer(stop_words="english", token_pattern=r"(?u)\b[a-zA-Z][a-zA-Z]+\b",
                          max_features=10000)
    vec.fit([docs[i].text for i in np.r_[lab, unl]])
    X = vec.transform([docs[i].text for i in np.r_[lab, unl, test]])
    y = np.r_[y_all[lab], np.full(unl.size, -1), y_all[test]]
    tr = np.arange(lab.size + unl.size)
    te = np.arange(lab.size + unl.size, X.shape[0])
    nb = MultinomialNB().fit(X[:lab.size], y[:lab.size])
    em = SemiSupervisedNB(fallback="none", lam_u=1.0).fit(X[tr], y[tr])
    acc_nb = np.mean(nb.predict(X[te]) == y[te])
    acc_em = np.mean(em.predict(X[te]) == y[te])
    # the paper's effect: unlabeled posts cut the error by a large share
    assert acc_em - acc_nb > 0.05, (acc_nb, acc_em)


def test_dense_real_valued_features_are_told_they_are_not_words():
    rng = np.random.default_rng(0)
    y = np.full(60, -1)
    y[:3], y[3:6] = 0, 1
    with pytest.warns(UserWarning, match="models term counts.*100 % of the entries"):
        SemiSupervisedNB().fit(np.abs(rng.normal(size=(60, 5))), y)
    counts = sp.random(60, 500, density=0.02, random_state=0, format="csr") * 5
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        SemiSupervisedNB().fit(counts, y)
    assert not [w for w in caught if "models term counts" in str(w.message)]


# ------------------------------------------------------------------------- the guard

def _magnitudes(seed=0, n=120):
    """Non-negative real-valued features whose class lies in the rows' magnitude (every
    feature near 1.5 in class 0, near 3.5 in class 1): a multinomial model sees only the
    proportions, which are the same for both classes; logistic regression separates them."""
    rng = np.random.default_rng(seed)
    truth = np.repeat([0, 1], n // 2)
    X = rng.uniform(1.0, 2.0, (n, 6)) + 2.0 * truth[:, None]
    y = np.full(n, -1)
    y[[0, 1, 2, 3, n // 2, n // 2 + 1, n // 2 + 2, n // 2 + 3]] = [0] * 4 + [1] * 4
    return X, y, truth


def test_guard_on_real_valued_features_falls_back_to_logistic_regression():
    from sklearn.linear_model import LogisticRegression

    X, y, truth = _magnitudes()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = SemiSupervisedNB(fallback="none").fit(X, y)
    model = SemiSupervisedNB().fit(X, y)
    assert np.mean(plain.transduction_ == truth) < 0.7      # the wrong event model
    assert model.fallback_ is True
    assert model.cv_scores_["semi_supervised"] < model.cv_scores_["supervised"]
    lab = y >= 0
    reference = LogisticRegression().fit(X[lab], y[lab])
    np.testing.assert_array_equal(model.predict(X), reference.predict(X))
    np.testing.assert_allclose(model.predict_proba(X), reference.predict_proba(X))
    np.testing.assert_allclose(model.predict_log_proba(X), np.log(reference.predict_proba(X)))
    np.testing.assert_array_equal(model.transduction_[~lab], reference.predict(X[~lab]))
    assert np.mean(model.transduction_ == truth) > 0.95
    assert not hasattr(model, "feature_log_prob_")
    again = pickle.loads(pickle.dumps(model))
    np.testing.assert_array_equal(again.predict(X), model.predict(X))


def test_guard_keeps_a_helpful_fit_on_dense_counts():
    # ten-word documents over a 40-word vocabulary: 22 % of the entries are non-zero, so
    # the guard runs, and EM on the unlabeled documents beats logistic regression on 8
    # labels (92 % against 74 % of the rows)
    X, y, truth = _documents(0, n=300, d=40, n_classes=2, length=10, n_labeled_per_class=4,
                             concentration=3.0)
    assert np.count_nonzero(X) / X.size > 0.1
    model = SemiSupervisedNB(random_state=0).fit(X, y)
    plain = SemiSupervisedNB(random_state=0, fallback="none").fit(X, y)
    assert model.fallback_ is False
    assert model.cv_scores_ is not None
    np.testing.assert_array_equal(model.transduction_, plain.transduction_)
    np.testing.assert_allclose(model.predict_proba(X), plain.predict_proba(X))


def test_guard_does_not_run_on_a_bag_of_words():
    X, y, _ = _documents(2, n=300, d=600, n_classes=2, length=20, n_labeled_per_class=4)
    X = sp.csr_matrix(X)
    assert X.nnz / (X.shape[0] * X.shape[1]) <= 0.1
    model = SemiSupervisedNB(random_state=0).fit(X, y)
    assert model.fallback_ is False and model.cv_scores_ is None
    plain = SemiSupervisedNB(random_state=0, fallback="none").fit(X, y)
    np.testing.assert_allclose(model.feature_log_prob_, plain.feature_log_prob_)
    with pytest.raises(ValueError, match="fallback"):
        SemiSupervisedNB(fallback="bad").fit(X, y)
