"""Query generators: DQG's LP optimal by duality and by cvxpy; baselines by hand."""

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.optimize import linprog
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize

from semisup.linear import L2SVM
from semisup.text.querygen import dqg_lp, generate_queries
from semisup.text.search import tokenize

TINY = ["apple apple banana", "apple cherry", "banana date date", "date egg"]
TINY_Y = np.array(["A", "A", "B", "B"])


def tiny():
    cv = CountVectorizer(analyzer=tokenize)
    X = cv.fit_transform(TINY)
    return X, list(cv.get_feature_names_out())


def dual_value(X, s_y, vocab, C):
    """max sum a  s.t.  sum_k a_k s_k x_kj <= 1 (j in V_i),  sum_k a_k s_k = 0,  0 <= a <= C."""
    Xv = X[:, vocab].toarray()
    n = Xv.shape[0]
    res = linprog(-np.ones(n), A_ub=(s_y[:, None] * Xv).T, b_ub=np.ones(len(vocab)),
                  A_eq=s_y[None, :], b_eq=[0.0], bounds=[(0, C)] * n, method="highs-ipm")
    assert res.status == 0
    return -res.fun


@pytest.mark.parametrize("C", [0.1, 1.0, 10.0])
def test_dqg_lp_optimal_by_duality_and_cvxpy(rng, C):
    cp = pytest.importorskip("cvxpy")
    X = sp.random(12, 30, density=0.3, random_state=3, format="csr")
    y = np.array([1] * 6 + [-1] * 6)
    for i in (0, 7):
        vocab = X[i].indices
        s_y = np.where(y == y[i], 1.0, -1.0)
        w, b, obj, grad = dqg_lp(X, s_y, vocab, C)
        assert np.all(w >= -1e-12)
        # dual feasibility and complementary slackness: g_j <= 1, = 1 where w_j > 0
        assert np.all(grad <= 1 + 1e-7)
        np.testing.assert_allclose(grad[w > 1e-9], 1.0, atol=1e-7)
        # primal feasibility and value
        xi = np.maximum(0, 1 - s_y * (X[:, vocab] @ w + b))
        assert obj == pytest.approx(w.sum() + C * xi.sum(), rel=1e-7, abs=1e-9)
        # strong duality with an independent LP (interior point on the dual)
        assert obj == pytest.approx(dual_value(X, s_y, vocab, C), rel=1e-6, abs=1e-8)
        # and the primal by cvxpy
        wv, bv = cp.Variable(vocab.size, nonneg=True), cp.Variable()
        prob = cp.Problem(cp.Minimize(cp.sum(wv) + C * cp.sum(cp.pos(
            1 - cp.multiply(s_y, X[:, vocab].toarray() @ wv + bv)))))
        prob.solve()
        assert obj == pytest.approx(prob.value, rel=1e-5, abs=1e-6)


def test_dqg_queries_use_only_the_documents_terms():
    X, vocab = tiny()
    qs = generate_queries(normalize(X), TINY_Y, vocab, "dqg", query_size=2)
    assert len(qs) == 4
    for q in qs:
        doc_terms = set(tokenize(TINY[q.source]))
        assert set(q.terms) <= doc_terms
        assert q.label == TINY_Y[q.source]
        assert len(q.terms) == min(2, len(doc_terms))
    # discriminative: "apple" (only in class A) outranks "banana" (in both) for document 0
    assert qs[0].terms[0] == "apple"
    assert qs[2].terms[0] == "date"


def test_dqg_multiclass_and_larger_corpus(rng):
    docs = [" ".join(rng.choice(list("abcdefghij"), 8)) + f" cls{c}" for c in range(3)
            for _ in range(4)]
    y = np.repeat([0, 1, 2], 4)
    cv = CountVectorizer(analyzer=tokenize)
    X = cv.fit_transform(docs)
    qs = generate_queries(X, y, cv.get_feature_names_out(), "dqg", query_size=1)
    # the class-marker term separates each class from the rest at the least L1 cost
    assert [q.terms[0] for q in qs] == [f"cls{c}" for c in y]


def test_baselines_hand_computed():
    X, vocab = tiny()
    # class counts A: apple 3, banana 1, cherry 1; B: banana 1, date 3, egg 1
    q = generate_queries(X, TINY_Y, vocab, "tf", query_size=3)
    assert [x.terms for x in q] == [("apple", "banana", "cherry"), ("date", "banana", "egg")]
    assert [x.label for x in q] == ["A", "B"] and q[0].source is None
    # idf = log(4/df): apple, banana, date log 2; cherry, egg log 4
    # A: apple 3 log2 = 2.08 > cherry log4 = 1.39 > banana log2 = 0.69
    q = generate_queries(X, TINY_Y, vocab, "tfidf", query_size=3)
    assert [x.terms for x in q] == [("apple", "cherry", "banana"), ("date", "egg", "banana")]
    # odds ratio, P = (df + 0.5) / 3: apple log 25 > cherry log 5 > banana 0 (filled by count)
    q = generate_queries(X, TINY_Y, vocab, "or", query_size=3)
    assert [x.terms for x in q] == [("apple", "cherry", "banana"), ("date", "egg", "banana")]
    q = generate_queries(X, TINY_Y, vocab, "or", query_size=1)
    assert [x.terms for x in q] == [("apple",), ("date",)]


def test_svm_lw_takes_largest_weights():
    X, vocab = tiny()
    q = generate_queries(X, TINY_Y, vocab, "svm", query_size=2, lam=0.1)
    coef = L2SVM(lam=0.1, solver="mfn").fit(X, (TINY_Y == "B").astype(int)).coef_[0]
    top_b = [vocab[j] for j in np.argsort(-coef)[:2]]
    top_a = [vocab[j] for j in np.argsort(coef)[:2]]
    assert list(q[1].terms) == top_b and list(q[0].terms) == top_a
    assert "date" in q[1].terms and "apple" in q[0].terms


def test_bad_input():
    X, vocab = tiny()
    with pytest.raises(ValueError, match="method must be one of"):
        generate_queries(X, TINY_Y, vocab, "bm25")
    with pytest.raises(ValueError, match="query_size"):
        generate_queries(X, TINY_Y, vocab, query_size=0)
    with pytest.raises(ValueError, match="two classes"):
        generate_queries(X, ["A"] * 4, vocab)
    with pytest.raises(ValueError, match="vocabulary"):
        generate_queries(X, TINY_Y, vocab[:-1])
    with pytest.raises(ValueError, match="non-negative"):
        generate_queries(-X, TINY_Y, vocab)
    Xe = sp.vstack([X, sp.csr_matrix((1, X.shape[1]))])
    with pytest.raises(ValueError, match=r"documents \[4\] have no term"):
        generate_queries(Xe, np.append(TINY_Y, "A"), vocab)


def test_merge_queries_hand_computed():
    """Merged query = most frequent terms of the class's queries, ties by position score."""
    from semisup.text.querygen import Query, merge_queries

    qs = [Query(("a", "b", "c"), "x", 0), Query(("b", "d", "a"), "x", 1),
          Query(("e", "f", "g"), "y", 2), Query(("c", "d", "e"), "x", 3)]
    # x: counts a2 b2 c2 d2 e1; scores a 3+1=4, b 2+3=5, c 1+3=4, d 2+2=4 -> b, then a/c/d
    # in order of first appearance
    m = merge_queries(qs, 3)
    assert [q.label for q in m] == ["x", "y"]
    assert m[0].terms == ("b", "a", "c") and m[1].terms == ("e", "f", "g")
    assert merge_queries(qs)[0].terms == ("b", "a", "c")  # size of the longest input
    assert all(q.source is None for q in m)
    with pytest.raises(ValueError, match="empty"):
        merge_queries([])
    with pytest.raises(ValueError, match="query_size"):
        merge_queries(qs, 0)
