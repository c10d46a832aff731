"""Query generation from labeled documents (section 8.1.2 of the thesis and its baselines).

Terms are those of the given vocabulary; :func:`query_analyzer` drops English stop words and
numbers, which every generator needs (without it TF and even DQG favour "the", "of").

* ``"dqg"`` — Discriminative Query Generation, eq. 8.1: for every labeled document ``i``
  a non-negative L1-regularised linear SVM restricted to the terms ``V_i`` of ``i``,

  ``min sum_{j in V_i} w_j + C sum_k xi_k``
  ``s.t. s_i y_k (sum_{j in V_i} w_j x_kj + b) >= 1 - xi_k,  xi_k >= 0,  w_j >= 0``,

  a linear program solved by HiGHS (``scipy.optimize.linprog``); ``s_i = +1`` for a
  document of the positive class, ``-1`` otherwise (one-vs-rest for several classes), and
  the query is the ``query_size`` terms of largest weight, the terms at zero weight ranked
  by their reduced cost in the LP.  One query per document.
* ``"tf"`` — the most frequent terms of each class (summed counts).
* ``"tfidf"`` — the largest summed ``tf * idf`` of each class, ``idf = log(n / df)`` over the
  labeled documents.
* ``"or"`` — the largest odds ratio ``log[P(w|c)(1 - P(w|~c)) / ((1 - P(w|c)) P(w|~c))]``
  with document frequencies smoothed as ``P(w|c) = (df_c(w) + 0.5) / (n_c + 1)``.
* ``"svm"`` (SVM-LW) — the largest weights of a linear SVM (:class:`semisup.linear.L2SVM`)
  trained on the labeled documents, one-vs-rest; terms with a positive weight for the class.

Baselines give one query per class.  Ties everywhere are broken by the term's count in the
document (or class), then by vocabulary order; when fewer than ``query_size`` terms have a
positive score the query is completed from the remaining terms of the document or class by
count, so a query has ``query_size`` terms whenever the document or class has as many.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp
from scipy.optimize import linprog

logger = logging.getLogger("semisup.text.querygen")

METHODS = ("dqg", "tf", "tfidf", "or", "svm")


def query_analyzer(stop_words="english"):
    """The index's tokenizer minus stop words, numbers and one-character terms.

    Parameters
    ----------
    stop_words : "english", collection of str or None
        ``"english"``: scikit-learn's English list; ``None`` keeps every term.

    Returns
    -------
    callable
        ``text -> list of terms`` (picklable), for ``CountVectorizer(analyzer=...)``.
    """
    if stop_words == "english":
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        stop_words = ENGLISH_STOP_WORDS
    return _Analyzer(frozenset(stop_words or ()))


class _Analyzer:
    def __init__(self, stop: frozenset):
        self.stop = stop

    def __call__(self, text: str) -> list:
        from semisup.text.search import tokenize

        return [t for t in tokenize(text)
                if len(t) > 1 and t not in self.stop and not t.isdigit()]


@dataclass(frozen=True)
class Query:
    """A generated query.

    Attributes
    ----------
    terms : tuple of str
        Query terms, most important first.
    label : object
        Class the query is meant to retrieve documents of.
    source : int or None
        Row of the labeled document it was generated from (DQG), ``None`` for a class query.
    """

    terms: tuple
    label: object
    source: int | None = None


def _top_terms(score: np.ndarray, count: np.ndarray, candidates: np.ndarray,
               query_size: int) -> np.ndarray:
    """``query_size`` candidates: positive scores first (ties by count, index), then by count."""
    s = score[candidates]
    pos = candidates[s > 0]
    order = pos[np.lexsort((pos, -count[pos], -score[pos]))]
    if order.size < query_size:
        rest = candidates[s <= 0]
        order = np.concatenate([order, rest[np.lexsort((rest, -count[rest]))]])
    return order[:query_size]


def _rank_terms(w, grad, count, query_size) -> np.ndarray:
    """Indices by weight, then dual gradient, then count, then position (descending)."""
    idx = np.arange(w.size)
    return np.lexsort((idx, -count, -np.round(grad, 12), -np.round(w, 12)))[:query_size]


def dqg_lp(X_l, s_y: np.ndarray, vocab_i: np.ndarray, C: float = 1.0):
    """Solve the LP of eq. 8.1 for one document.

    Parameters
    ----------
    X_l : sparse matrix of shape (n_labeled, n_terms)
        Term vectors of the labeled documents.
    s_y : ndarray of shape (n_labeled,)
        ``s_i y_k`` for every labeled document ``k``.
    vocab_i : ndarray of int
        ``V_i``, the columns with a positive entry in document ``i``.
    C : float
        Cost of the slacks.

    Returns
    -------
    w : ndarray of shape (len(vocab_i),)
        Optimal non-negative term weights.
    b : float
        Bias.
    objective : float
        Optimal value of eq. 8.1.
    gradient : ndarray of shape (len(vocab_i),)
        ``g_j = sum_k alpha_k s_i y_k x_kj`` with the optimal dual ``alpha``: the term's
        pull towards the margin (``g_j <= 1``, equal for the terms in the solution); its
        reduced cost is ``1 - g_j``.
    """
    Xv = sp.csr_matrix(X_l)[:, vocab_i].toarray()
    n, m = Xv.shape
    # variables [w (m), b, xi (n)]; constraint  -s y_k (x_k w + b) - xi_k <= -1
    c = np.concatenate([np.ones(m), [0.0], np.full(n, C)])
    A = np.hstack([-s_y[:, None] * Xv, -s_y[:, None], -np.eye(n)])
    bounds = [(0, None)] * m + [(None, None)] + [(0, None)] * n
    res = linprog(c, A_ub=A, b_ub=-np.ones(n), bounds=bounds, method="highs")
    if res.status != 0:  # feasible (xi large) and bounded below by 0: cannot happen
        raise RuntimeError(f"DQG linear program failed: {res.message}")
    alpha = -res.ineqlin.marginals
    return res.x[:m], float(res.x[m]), float(res.fun), (alpha * s_y) @ Xv


def generate_queries(X, y, vocabulary, method: str = "dqg", query_size: int = 3,
                     C: float = 10.0, lam: float = 1e-2) -> list[Query]:
    """Generate queries from labeled documents by one of the generators of chapter 8.

    Parameters
    ----------
    X : sparse matrix or ndarray of shape (n_labeled, n_terms)
        Non-negative term vectors (counts or normalised counts) of the labeled documents.
    y : array-like of shape (n_labeled,)
        Their classes (at least two).
    vocabulary : sequence of str
        Term of each column of ``X``.
    method : {"dqg", "tf", "tfidf", "or", "svm"}, default="dqg"
    query_size : int, default=3
        Terms per query.
    C : float, default=10.0
        Slack cost of the DQG linear program (unspecified in the thesis).  With unit-length
        term vectors ``C = 1`` often makes ``w = 0`` optimal (all slack), leaving only the
        tie-break; 10 gave the best precision on the local corpora.
    lam : float, default=0.01
        Regularisation of the SVM of SVM-LW.

    Returns
    -------
    list of Query
        One per labeled document for ``"dqg"`` (in row order), one per class otherwise.
    """
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    if not isinstance(query_size, (int, np.integer)) or query_size < 1:
        raise ValueError(f"query_size must be a positive integer, got {query_size!r}")
    if not C > 0:
        raise ValueError(f"C must be > 0, got {C!r}")
    X = sp.csr_matrix(X, dtype=np.float64)
    y = np.asarray(y)
    vocabulary = np.asarray(list(vocabulary), dtype=object)
    if X.shape[0] != y.shape[0]:
        raise ValueError(f"X has {X.shape[0]} rows but y has {y.shape[0]} labels")
    if X.shape[1] != vocabulary.shape[0]:
        raise ValueError(f"X has {X.shape[1]} columns but vocabulary has "
                         f"{vocabulary.shape[0]} terms")
    if X.nnz and X.data.min() < 0:
        raise ValueError("X must be non-negative term vectors (counts or tf weights)")
    empty = np.flatnonzero(np.diff(X.indptr) == 0)
    if empty.size:
        raise ValueError(f"labeled documents {empty.tolist()} have no term: remove them")
    classes = np.unique(y)
    if classes.size < 2:
        raise ValueError(f"y must contain at least two classes, got {classes.tolist()}")
    queries = []
    if method == "dqg":
        for i in range(X.shape[0]):
            lo, hi = X.indptr[i], X.indptr[i + 1]
            vocab_i, counts_i = X.indices[lo:hi], X.data[lo:hi]
            # s_i y_k of eq. 8.1: +1 for the documents of i's class (one-vs-rest), else -1
            s_y = np.where(y == y[i], 1.0, -1.0)
            w, _, _, grad = dqg_lp(X, s_y, vocab_i, C)
            # LP solutions are sparse (at most n_labeled non-zero weights): the terms left at
            # zero are ranked by their reduced cost, the subgradient argument of section 8.1.2
            pick = _rank_terms(w, grad, counts_i, query_size)
            queries.append(Query(tuple(vocabulary[vocab_i[pick]]), y[i], i))
        return queries
    counts = X.toarray()
    present = counts > 0
    n = X.shape[0]
    for c in classes:
        in_c = y == c
        class_count = counts[in_c].sum(axis=0)
        candidates = np.flatnonzero(class_count > 0)
        if method == "tf":
            score = class_count
        elif method == "tfidf":
            idf = np.log(n / np.maximum(present.sum(axis=0), 1))
            score = class_count * idf
        elif method == "or":
            p_c = (present[in_c].sum(axis=0) + 0.5) / (in_c.sum() + 1.0)
            p_n = (present[~in_c].sum(axis=0) + 0.5) / ((~in_c).sum() + 1.0)
            score = np.log(p_c * (1 - p_n) / ((1 - p_c) * p_n))
        else:
            score = _svm_weights(X, y, c, classes, lam)
        pick = _top_terms(score, class_count, candidates, query_size)
        queries.append(Query(tuple(vocabulary[pick]), c, None))
    return queries


def _svm_weights(X, y, c, classes, lam) -> np.ndarray:
    from semisup.linear.svm import L2SVM

    target = np.where(y == c, 1, 0)
    coef = L2SVM(lam=lam, solver="mfn", penalize_intercept=True).fit(X, target).coef_[0]
    return coef


def merge_queries(queries: list[Query], query_size: int | None = None) -> list[Query]:
    """One query per class from a batch of per-document (DQG) queries.

    The thesis compares DQG with the one-query-per-class generators by merging DQG's batch
    "into a single one by extracting the top N popular terms from the multiple generated
    queries" (section 8.2.2, Table 8.4).  Terms are ranked by how many queries of the class
    contain them; ties by the sum of their ranks' scores (``size - position``, so a term
    that leads its queries wins), then by first appearance.

    Parameters
    ----------
    queries : list of Query
        Queries with their ``label`` (e.g. from ``generate_queries(..., method="dqg")``).
    query_size : int or None, default=None
        Terms of each merged query; ``None`` keeps the size of the longest input query.

    Returns
    -------
    list of Query
        One per class, in order of first appearance, with ``source=None``.
    """
    if not queries:
        raise ValueError("queries is empty: nothing to merge")
    size = max(len(q.terms) for q in queries) if query_size is None else query_size
    if not isinstance(size, (int, np.integer)) or size < 1:
        raise ValueError(f"query_size must be a positive integer or None, got {query_size!r}")
    merged = []
    for label in dict.fromkeys(q.label for q in queries):
        count: dict[str, int] = {}
        score: dict[str, int] = {}
        for q in queries:
            if q.label == label:
                for pos, term in enumerate(q.terms):
                    count[term] = count.get(term, 0) + 1
                    score[term] = score.get(term, 0) + len(q.terms) - pos
        order = sorted(count, key=lambda t: (-count[t], -score[t]))  # stable: first seen
        merged.append(Query(tuple(order[:size]), label, None))
    return merged
