"""Active search (Fig. 8.1 of the thesis): labeled documents, queries, retrieval, classifier."""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, clone
from sklearn.feature_extraction.text import CountVectorizer
from sklearn.preprocessing import normalize
from sklearn.utils.validation import check_is_fitted

from semisup.text.querygen import METHODS, generate_queries, query_analyzer
from semisup.text.search import SearchBackend

logger = logging.getLogger("semisup.text.pipeline")

LEARNERS = ("svm", "aux", "cccp")


def class_correlation(X, y: np.ndarray) -> np.ndarray:
    """Largest absolute Pearson correlation of each column with a one-vs-rest class indicator."""
    X = sp.csr_matrix(X, dtype=np.float64)
    n = X.shape[0]
    mean = np.asarray(X.mean(axis=0)).ravel()
    sq = np.asarray(X.multiply(X).mean(axis=0)).ravel()
    sd = np.sqrt(np.maximum(sq - mean ** 2, 0.0))
    best = np.zeros(X.shape[1])
    classes = np.unique(y)
    for c in classes[1:] if classes.size == 2 else classes:
        t = (y == c).astype(np.float64)
        tm, ts = t.mean(), t.std()
        cov = np.asarray(X.T @ t).ravel() / n - mean * tm
        with np.errstate(divide="ignore", invalid="ignore"):
            corr = np.where(sd > 0, cov / (sd * max(ts, 1e-300)), 0.0)
        best = np.maximum(best, np.abs(corr))
    return best


class ActiveSearchPipeline(BaseEstimator):
    """Semi-supervised text categorization by active search (chapter 8 of the thesis).

    ``fit(documents, labels)``: (1) generate queries from the labeled documents
    (:func:`~semisup.text.querygen.generate_queries`), (2) retrieve the top ``per_query``
    documents of each from ``backend`` (the labeled documents themselves excluded), (3) build
    term-frequency features (the ``n_features`` terms most correlated with the classes,
    rows normalised to unit length) and train ``learner`` on the labeled plus retrieved
    documents.  ``report_`` records queries, hits and, when the collection's labels are
    known, retrieval precision.

    Parameters
    ----------
    backend : SearchBackend
        Anything with ``search(query, k) -> (ids, scores)`` and ``documents(ids) -> texts``,
        e.g. :class:`~semisup.text.search.SQLiteIndex`.
    generator : {"dqg", "tf", "tfidf", "or", "svm"}, default="dqg"
        Query generator.
    query_size : int, default=3
        Terms per query.
    per_query : int, default=100
        Documents retrieved per query (``s``).
    learner : {"cccp", "aux", "svm"} or estimator, default="cccp"
        ``"svm"``: :class:`~semisup.linear.L2SVM` on the labeled documents only; ``"aux"``:
        :class:`~semisup.text.AuxiliarySVM` (retrieved documents labeled by their query);
        ``"cccp"``: :class:`~semisup.linear.CCCPS3VM` (retrieved documents unlabeled); an
        estimator: cloned and fitted on ``(X, y)`` with ``y = -1`` for retrieved documents.
    n_features : int or None, default=600
        Terms kept, by class correlation on the labeled and query-labeled retrieved
        documents; ``None`` keeps all.
    lam, gamma : float, default=0.01
        ``lambda`` and ``gamma`` of eqs. 8.2-8.3 (mapped onto each learner's scaling).
    C : float, default=10.0
        Slack cost of the DQG linear programs.
    balance : {"retrieved", "labeled"}, default="retrieved"
        Class fractions of the learner's balance constraint: the shares of the retrieved
        documents' query labels (``"retrieved"``), or the labeled prior (``"labeled"``,
        Collobert et al.'s rule, which with a class-balanced labeled set always asks for
        equal classes).  Applies to ``"cccp"`` and to an estimator learner with a
        ``positive_fraction`` parameter left at ``None`` (e.g.
        :class:`~semisup.linear.TransductiveSVM`; one fraction per class when there are
        more than two).
    s : float, default=0.0
        Ramp parameter of :class:`~semisup.linear.CCCPS3VM`.
    stop_words : "english", collection of str or None, default="english"
        Terms never used in queries or features (numbers are dropped too); ``None`` keeps
        every term of the index's tokenizer.

    Attributes
    ----------
    queries_ : list of Query
    retrieved_ids_ : list of str
        Distinct retrieved documents, in order of first retrieval.
    retrieved_labels_ : ndarray
        Label of the query that retrieved each (majority over queries).
    vectorizer_ : CountVectorizer
    features_ : ndarray of int
        Columns of the vectorizer kept.
    X_train_ : csr_matrix
        Features of the labeled documents followed by the retrieved ones.
    model_ : estimator
        The trained classifier.
    classes_ : ndarray
    report_ : dict
        Queries with their hit counts and precision, totals and overall precision.

    Examples
    --------
    >>> from semisup import ActiveSearchPipeline
    >>> from semisup.text import MemoryBM25Index
    >>> space = ["rocket orbit launch moon", "orbit moon probe rocket", "launch probe orbit",
    ...          "moon rocket launch pad", "probe orbit moon landing"]
    >>> med = ["patient drug dose trial", "drug trial patient cure", "dose patient clinic",
    ...        "clinic drug patient care", "trial dose cure clinic"]
    >>> index = MemoryBM25Index(space + med)
    >>> pipe = ActiveSearchPipeline(index, per_query=4, learner="svm", n_features=None)
    >>> pipe = pipe.fit([space[0], med[0]], ["space", "med"], ids=["0", "5"])
    >>> pipe.predict(["moon rocket", "drug dose"]).tolist()
    ['space', 'med']
    """

    def __init__(self, backend: SearchBackend, generator: str = "dqg", query_size: int = 3,
                 per_query: int = 100, learner="cccp", n_features: int | None = 600,
                 lam: float = 0.01, gamma: float = 0.01, C: float = 10.0,
                 balance: str = "retrieved", s: float = 0.0, stop_words="english"):
        self.backend = backend
        self.generator = generator
        self.query_size = query_size
        self.per_query = per_query
        self.learner = learner
        self.n_features = n_features
        self.lam = lam
        self.gamma = gamma
        self.C = C
        self.balance = balance
        self.s = s
        self.stop_words = stop_words

    def _check(self, documents, labels, ids):
        if not hasattr(self.backend, "search") or not hasattr(self.backend, "documents"):
            raise ValueError("backend must have search(query, k) and documents(ids), e.g. "
                             "semisup.text.SQLiteIndex.open(path)")
        if self.generator not in METHODS:
            raise ValueError(f"generator must be one of {METHODS}, got {self.generator!r}")
        if isinstance(self.learner, str) and self.learner not in LEARNERS:
            raise ValueError(f"learner must be one of {LEARNERS} or an estimator, got "
                             f"{self.learner!r}")
        if self.balance not in ("retrieved", "labeled"):
            raise ValueError(f"balance must be 'retrieved' or 'labeled', got {self.balance!r}")
        if not isinstance(self.per_query, (int, np.integer)) or self.per_query < 1:
            raise ValueError(f"per_query must be a positive integer, got {self.per_query!r}")
        if self.n_features is not None and (not isinstance(self.n_features, (int, np.integer))
                                            or self.n_features < 1):
            raise ValueError(f"n_features must be a positive integer or None, got "
                             f"{self.n_features!r}")
        if isinstance(documents, str) or not all(isinstance(d, str) for d in documents):
            raise ValueError("documents must be a list of strings (the labeled documents)")
        labels = np.asarray(labels)
        if labels.shape != (len(documents),):
            raise ValueError(f"labels must have one entry per document ({len(documents)}), "
                             f"got shape {labels.shape}")
        if ids is not None and len(ids) != len(documents):
            raise ValueError("ids must have one entry per document")
        return labels

    def fit(self, documents: Sequence[str], labels, ids: Sequence[str] | None = None,
            collection_labels: Mapping | Callable | None = None):
        """Run the pipeline.

        Parameters
        ----------
        documents : list of str
            Labeled documents.
        labels : array-like
            Their classes (at least two).
        ids : list of str, optional
            Their ids in the backend, excluded from retrieval (the thesis removes the
            labeled documents from the collection).
        collection_labels : mapping or callable, optional
            Id -> true class of collection documents (``None`` when unknown), for the
            precision in ``report_``.

        Returns
        -------
        self : object
            The fitted estimator.
        """
        labels = self._check(documents, labels, ids)
        exclude = set(map(str, ids)) if ids is not None else set()
        analyzer = query_analyzer(self.stop_words)
        counter = CountVectorizer(analyzer=analyzer)
        try:
            X_l = counter.fit_transform(documents)
        except ValueError:
            raise ValueError("the labeled documents contain no term") from None
        empty = np.flatnonzero(np.diff(X_l.indptr) == 0)
        if empty.size:
            raise ValueError(f"labeled documents {empty.tolist()} are empty (no term): "
                             "remove them")
        vocab = counter.get_feature_names_out()
        self.queries_ = generate_queries(normalize(X_l), labels, vocab, self.generator,
                                         self.query_size, C=self.C)
        logger.info("generated %d queries (%s, size %d)", len(self.queries_), self.generator,
                    self.query_size)
        votes: dict[str, Counter] = {}
        per_query = []
        lookup = collection_labels.get if isinstance(collection_labels, Mapping) \
            else collection_labels
        for q in self.queries_:
            found, scores = self.backend.search(list(q.terms), self.per_query + len(exclude))
            found = [d for d in found if d not in exclude][: self.per_query]
            for d in found:
                votes.setdefault(d, Counter())[q.label] += 1
            entry = {"terms": q.terms, "label": q.label, "source": q.source,
                     "n_hits": len(found)}
            if lookup is not None and found:
                entry["precision"] = float(np.mean([lookup(d) == q.label for d in found]))
            per_query.append(entry)
            logger.info("query %s -> %d documents", " ".join(q.terms), len(found))
        if not votes:
            raise ValueError("no query retrieved any document: check the backend's collection "
                             "or use a larger query_size")
        self.retrieved_ids_ = list(votes)
        self.retrieved_labels_ = np.array([votes[d].most_common(1)[0][0]
                                           for d in self.retrieved_ids_])
        texts = self.backend.documents(self.retrieved_ids_)
        all_docs = list(documents) + list(texts)
        self.vectorizer_ = CountVectorizer(analyzer=analyzer)
        X = self.vectorizer_.fit_transform(all_docs).astype(np.float64)
        weak = np.concatenate([labels, self.retrieved_labels_])
        n_cols = X.shape[1]
        if self.n_features is not None and self.n_features < n_cols:
            corr = class_correlation(normalize(X), weak)
            self.features_ = np.sort(np.argsort(-corr, kind="stable")[: self.n_features])
        else:
            self.features_ = np.arange(n_cols)
        X = normalize(X[:, self.features_])
        n_l, n_r = len(documents), len(texts)
        self.X_train_ = X
        self.model_ = self._train(X, labels, n_l, n_r)
        self.classes_ = self.model_.classes_
        report = {"generator": self.generator, "query_size": self.query_size,
                  "n_queries": len(self.queries_), "queries": per_query,
                  "n_retrieved": int(sum(e["n_hits"] for e in per_query)),
                  "n_unique": n_r, "n_features": int(self.features_.size)}
        if lookup is not None:
            precisions = [e["precision"] for e in per_query if "precision" in e]
            report["precision"] = float(np.mean(precisions)) if precisions else float("nan")
            truth = np.array([lookup(d) for d in self.retrieved_ids_], dtype=object)
            report["weak_label_accuracy"] = float(np.mean(truth == self.retrieved_labels_))
        self.report_ = report
        logger.info("retrieved %d documents (%d distinct); trained %s", report["n_retrieved"],
                    n_r, type(self.model_).__name__)
        return self

    def _train(self, X, labels, n_l, n_r):
        from semisup.linear import L2SVM
        from semisup.linear.cccp import CCCPS3VM
        from semisup.text.auxiliary import AuxiliarySVM

        if self.learner == "svm":
            return L2SVM(lam=2 * self.lam, penalize_intercept=True).fit(X[:n_l], labels)
        if self.learner == "aux":
            y = np.concatenate([labels, self.retrieved_labels_])
            aux = np.r_[np.zeros(n_l, bool), np.ones(n_r, bool)]
            return AuxiliarySVM(lam=2 * self.lam, gamma=self.gamma).fit(X, y, auxiliary=aux)
        y = np.concatenate([labels.astype(object), np.full(n_r, -1, dtype=object)])
        if np.issubdtype(labels.dtype, np.number):
            y = y.astype(labels.dtype)
        r = None
        if self.balance == "retrieved":
            # class shares of the query labels (classes_ order), kept away from 0/1 (a
            # class nobody retrieved still gets a few unlabeled points)
            r = np.clip([np.mean(self.retrieved_labels_ == c) for c in np.unique(labels)],
                        0.02, 0.98)
        if self.learner == "cccp":
            # thesis scaling lambda||w||^2 + sum_D + gamma sum_U  ->  CCCPS3VM's (1/2l, 1/2u)
            model = CCCPS3VM(lam=self.lam / n_l, lam_u=self.gamma * n_r / n_l,
                             positive_fraction=r, s=self.s, fallback="none")
        else:
            model = clone(self.learner)
            params = model.get_params(deep=False)
            if r is not None and "positive_fraction" in params \
                    and params["positive_fraction"] is None:
                # two classes: the fraction of classes_[1], which every estimator takes
                model.set_params(positive_fraction=float(r[1]) if r.size == 2 else r)
        return model.fit(X, y)

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        # input is a list of documents, not a 2-D array: scikit-learn's array checks skip it
        tags.input_tags.two_d_array = False
        tags.input_tags.string = True
        return tags

    def transform(self, documents: Sequence[str]):
        """Compute the features of new documents (selected terms, unit length rows).

        Parameters
        ----------
        documents : sequence of str
            Raw text documents.

        Returns
        -------
        ndarray of shape (n_samples, n_components)
            The rows in the learned representation.
        """
        check_is_fitted(self, "model_")
        return normalize(self.vectorizer_.transform(documents)[:, self.features_]
                         .astype(np.float64))

    def decision_function(self, documents: Sequence[str]):
        """Decision values of the trained model on new documents.

        Parameters
        ----------
        documents : sequence of str
            Raw text documents.

        Returns
        -------
        ndarray of shape (n_samples,) or (n_samples, n_classes)
            Decision values: the score of ``classes_[1]``, or one column per class.
        """
        check_is_fitted(self, "model_")
        return self.model_.decision_function(self.transform(documents))

    def predict(self, documents: Sequence[str]):
        """Predict the classes of new documents.

        Parameters
        ----------
        documents : sequence of str
            Raw text documents.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        check_is_fitted(self, "model_")
        return self.model_.predict(self.transform(documents))

    def score(self, documents: Sequence[str], labels) -> float:
        """Accuracy on labeled documents.

        Parameters
        ----------
        documents : sequence of str
            Raw text documents.
        labels : array-like of shape (n_documents,)
            True labels of ``documents``.

        Returns
        -------
        float
            Accuracy on the labeled rows.
        """
        return float(np.mean(self.predict(documents) == np.asarray(labels)))
