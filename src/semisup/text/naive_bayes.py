"""Semi-supervised multinomial naive Bayes by EM (Nigam, McCallum, Thrun & Mitchell, 2000).

Nigam et al., "Text classification from labeled and unlabeled documents using EM", Machine
Learning 39 (2000).  Each mixture component ``a`` has a multinomial over the vocabulary,
``theta_a``, and a mixture weight ``w_a``; a document ``x`` (term counts) has, up to its
multinomial coefficient and length term (constant in the parameters), the log-likelihood
``x . log theta_a`` under component ``a`` (eqs. 1-3).  Every class owns one component
(the basic model) or several (EM-multi); labeled documents may only belong to
the components of their class.  EM maximises the log-posterior of the parameters (eq. 9,
with the unlabeled documents down-weighted by ``lambda`` as in EM-lambda)::

    J = alpha sum_a sum_t log theta_{t|a} + alpha_w sum_a log w_a                 (Dirichlet prior)
        + sum_{labeled i}        log sum_{a in class(y_i)} w_a P(x_i | a)
        + lambda sum_{unlabeled i} log sum_a               w_a P(x_i | a)

E-step (eq. 7): the responsibilities ``P(a | x_i)``, restricted to the class's components
for a labeled row.  M-step (eqs. 5-6 with the weights ``Lambda(i)`` of EM-lambda: 1 for a
labeled row, ``lambda`` for an unlabeled one)::

    theta_{t|a} = (alpha + sum_i Lambda(i) P(a | x_i) x_it)
                  / (|V| alpha + sum_i Lambda(i) P(a | x_i) |x_i|)
    w_a         = (alpha_w + sum_i Lambda(i) P(a | x_i)) / (M alpha_w + sum_i Lambda(i))

Both maximise the expected complete log-posterior exactly, so ``J`` never decreases.  The
paper's Laplace smoothing is ``alpha = alpha_w = 1`` (a Dirichlet with exponent 2);
``alpha_w`` is the ``prior_alpha`` parameter.

:func:`multinomial_em` is the one implementation of this EM in the library; the class-prior
estimate :func:`semisup.prior.multinomial_mixture_prior` calls it with the mixture weights
taken from the unlabeled rows alone.
"""

from __future__ import annotations

import numbers
from typing import NamedTuple

import numpy as np
import scipy.sparse as sp
from sklearn.base import BaseEstimator, ClassifierMixin
from sklearn.utils.validation import check_is_fitted

from semisup._logging import (
    convergence_check,
    get_logger,
    report_unconverged,
    verbosity,
    warn_at_caller,
)
from semisup._validation import (
    FLOAT_DTYPES,
    check_choice,
    check_int,
    check_real,
    check_semi_supervised,
    check_X,
    is_collapsed,
    warn_if_collapsed,
)
from semisup.base import SemiSupervisedClassifierMixin, SupervisedFallbackMixin
from semisup.safety import check_fallback

logger = get_logger("text.naive_bayes")

#: the ``lam_u`` values compared by ``lam_u="auto"`` (labeled-only cross-validation)
AUTO_LAM_GRID = (0.0, 0.1, 0.3, 1.0)


class MultinomialEM(NamedTuple):
    """Result of :func:`multinomial_em`.

    Attributes
    ----------
    log_theta : ndarray of shape (n_components, n_features)
        Log word probabilities of each component.
    log_weights : ndarray of shape (n_components,)
        Log mixture weights.
    resp_labeled : ndarray of shape (n_labeled, n_components)
        Component responsibilities of the labeled rows (zero outside their class).
    resp_unlabeled : ndarray of shape (n_unlabeled, n_components)
        Component responsibilities of the unlabeled rows.
    objective : ndarray of shape (n_iter + 1,)
        The objective ``J`` at the start and after each iteration; it never decreases.
    n_iter : int
        EM iterations run.
    converged : bool
        Whether the stopping rule was met before ``max_iter``.
    """

    log_theta: np.ndarray
    log_weights: np.ndarray
    resp_labeled: np.ndarray
    resp_unlabeled: np.ndarray
    objective: np.ndarray
    n_iter: int
    converged: bool


def check_nonnegative(X, name: str = "X") -> None:
    """Refuse negative features: the multinomial model reads them as term counts."""
    data = X.data if sp.issparse(X) else X
    if data.size and float(np.min(data)) < 0:
        raise ValueError(f"Negative values in data passed to {name}: it must be non-negative "
                         f"(term counts or term weights) for a multinomial model, got a "
                         f"minimum of {float(np.min(data)):.3g}; use counts (e.g. sklearn's "
                         "CountVectorizer) rather than centred features, or, for real-valued "
                         "features, a method that models them (e.g. TransductiveSVM, LapRLS "
                         "or LogisticRegression): a Gaussian naive Bayes EM was measured 6 "
                         "points below LogisticRegression on such data "
                         "(benchmarks/results/defaults_round3.md)")


def _log_rows(logp: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Row-wise log-sum-exp and the normalised probabilities (``-inf`` entries allowed)."""
    top = np.max(logp, axis=1, keepdims=True)
    top[~np.isfinite(top)] = 0.0
    with np.errstate(under="ignore"):
        P = np.exp(logp - top)
    tot = P.sum(axis=1, keepdims=True)
    P /= tot
    return (np.log(tot) + top).ravel(), P


def multinomial_em(X_labeled, labeled_class, X_unlabeled, component_class, *,
                   alpha: float = 1.0, prior_alpha: float = 1.0, lam_u: float = 1.0,
                   labeled_resp=None, weights_from: str = "all", stop: str = "objective",
                   tol: float = 1e-6, max_iter: int = 100,
                   solver: str = "nb_em") -> MultinomialEM:
    """EM for a multinomial mixture with labeled and unlabeled rows (Nigam et al., 2000).

    Starts from the MAP fit to the labeled rows alone (``labeled_resp``, the unlabeled rows
    left out), then alternates the E-step (eq. 7) and the M-step (eqs. 5-6 with EM-lambda's
    weights); see the module docstring for the objective ``J`` (eq. 9).

    Parameters
    ----------
    X_labeled : ndarray or csr_matrix of shape (n_labeled, n_features)
        Non-negative features (term counts) of the labeled rows.
    labeled_class : ndarray of int, shape (n_labeled,)
        Class index of each labeled row.
    X_unlabeled : ndarray or csr_matrix of shape (n_unlabeled, n_features)
        Non-negative features of the unlabeled rows (may have no row).
    component_class : ndarray of int, shape (n_components,)
        The class each mixture component belongs to (``arange(n_classes)`` for one
        component per class).
    alpha : float, default=1.0
        Dirichlet (Laplace) smoothing of the word probabilities; > 0.
    prior_alpha : float, default=1.0
        Dirichlet smoothing of the mixture weights; >= 0 (0: unsmoothed shares, as
        scikit-learn's ``MultinomialNB``).  Only with ``weights_from="all"``.
    lam_u : float, default=1.0
        EM-lambda's weight of the unlabeled rows, in [0, 1] (0: the labeled fit).
    labeled_resp : ndarray of shape (n_labeled, n_components), optional
        Starting component memberships of the labeled rows (rows sum to 1, zero outside
        their class).  Default: spread evenly over their class's components.
    weights_from : {"all", "unlabeled"}, default="all"
        ``"all"``: the weights are the mixture's (the class prior of the model, eq. 6).
        ``"unlabeled"``: the weights are the unlabeled rows' mean responsibilities and the
        labeled rows carry no weight term (the prior-shift estimate of
        :mod:`semisup.prior`; one component per class, ``lam_u=1``).
    stop : {"objective", "weights"}, default="objective"
        Stop when ``J`` rises by at most ``tol * |J|`` in an iteration, or when no weight
        changes by more than ``tol``.
    tol : float, default=1e-6
        Tolerance of ``stop``.
    max_iter : int, default=100
        Maximum number of EM iterations.
    solver : str, default="nb_em"
        Name under which a run that hits ``max_iter`` is reported to the enclosing fit's
        convergence warning.

    Returns
    -------
    MultinomialEM
        Parameters, responsibilities and the objective of every iteration.

    Examples
    --------
    >>> import numpy as np
    >>> Xl = np.array([[3, 0, 1], [0, 4, 1]])
    >>> Xu = np.array([[2, 0, 0], [0, 2, 0], [5, 1, 0]])
    >>> res = multinomial_em(Xl, np.array([0, 1]), Xu, np.array([0, 1]))
    >>> res.resp_unlabeled.argmax(axis=1).tolist()
    [0, 1, 0]
    >>> bool(np.all(np.diff(res.objective) >= 0))
    True
    """
    weights_from = check_choice(weights_from, "weights_from", ("all", "unlabeled"))
    stop = check_choice(stop, "stop", ("objective", "weights"))
    alpha = check_real(alpha, "alpha", positive=True)
    prior_alpha = check_real(prior_alpha, "prior_alpha", positive=False)
    lam_u = check_real(lam_u, "lam_u", positive=False)
    if lam_u > 1.0:
        raise ValueError(f"lam_u must be in [0, 1], got {lam_u!r}")
    tol, max_iter = check_real(tol, "tol", positive=True), check_int(max_iter, "max_iter")
    y = np.asarray(labeled_class)
    comp = np.asarray(component_class)
    allowed = comp[None, :] == y[:, None]                    # (n_labeled, n_components)
    if not np.all(allowed.any(axis=1)):
        raise ValueError("every labeled row's class must own at least one component in "
                         "component_class")
    if weights_from == "unlabeled" and (comp.size != np.unique(comp).size or lam_u != 1.0):
        raise ValueError('weights_from="unlabeled" needs one component per class and '
                         "lam_u=1")
    if labeled_resp is None:
        R_l = allowed / allowed.sum(axis=1, keepdims=True)
    else:
        R_l = np.asarray(labeled_resp, dtype=np.float64)
        if R_l.shape != allowed.shape or np.any(R_l[~allowed] != 0) \
                or np.max(np.abs(R_l.sum(axis=1) - 1.0), initial=0.0) > 1e-9:
            raise ValueError("labeled_resp must have shape (n_labeled, n_components), rows "
                             "summing to 1 and zeros outside each row's class components")
    Xl, Xu = X_labeled, X_unlabeled

    def term_mass(X, R):
        return np.asarray(X.T @ R, dtype=np.float64).T        # (n_components, n_features)

    def m_step(R_l, R_u):
        mass = term_mass(Xl, R_l) + alpha
        if R_u is not None and lam_u > 0.0:
            mass += lam_u * term_mass(Xu, R_u)
        log_theta = np.log(mass) - np.log(mass.sum(axis=1, keepdims=True))
        if weights_from == "unlabeled":
            # the prior-shift estimate: weights are the unlabeled rows' shares (the labeled
            # shares only at the start)
            w = R_l.mean(axis=0) if R_u is None else R_u.mean(axis=0)
        else:
            w = prior_alpha + R_l.sum(axis=0)
            if R_u is not None and lam_u > 0.0:
                w = w + lam_u * R_u.sum(axis=0)
            w = w / w.sum()
        with np.errstate(divide="ignore"):
            return log_theta, np.log(w)

    def e_step(log_theta, log_w):
        Lu = np.asarray(Xu @ log_theta.T, dtype=np.float64) + log_w
        lse_u, R_u = _log_rows(Lu)
        Ll = np.asarray(Xl @ log_theta.T, dtype=np.float64)
        if weights_from == "all":
            Ll = Ll + log_w
        Ll[~allowed] = -np.inf
        lse_l, R_l = _log_rows(Ll)
        value = float(lse_l.sum()) + alpha * float(log_theta.sum())
        if weights_from == "unlabeled" or lam_u > 0.0:
            value += (1.0 if weights_from == "unlabeled" else lam_u) * float(lse_u.sum())
        if weights_from == "all" and prior_alpha > 0.0:
            value += prior_alpha * float(log_w.sum())
        return R_l, R_u, value

    log_theta, log_w = m_step(R_l, None)                     # labeled rows only
    R_l, R_u, value = e_step(log_theta, log_w)
    trace, converged, change = [value], False, np.inf
    for _ in range(max_iter):
        log_theta, new_log_w = m_step(R_l, R_u)
        change = float(np.max(np.abs(np.exp(new_log_w) - np.exp(log_w))))
        log_w = new_log_w
        R_l, R_u, value = e_step(log_theta, log_w)
        trace.append(value)
        if stop == "weights":
            done = change < tol
        else:
            change = (trace[-1] - trace[-2]) / max(abs(trace[-1]), 1.0)
            done = change <= tol
        logger.debug("EM iteration %d: objective %.6g, change %.3g", len(trace) - 1, value,
                     change)
        if done:
            converged = True
            break
    n_iter = len(trace) - 1
    if not converged:
        what = "largest weight change" if stop == "weights" else "relative objective gain"
        report_unconverged(solver, f"{what} {change:.2e} > tol {tol:g}")
    return MultinomialEM(log_theta, log_w, R_l, R_u, np.asarray(trace), n_iter, converged)


def _by_class(L: np.ndarray, comp: np.ndarray, n_classes: int) -> np.ndarray:
    """Per-class log-sum-exp of component log scores, shape (n, n_classes)."""
    out = np.empty((L.shape[0], n_classes))
    for c in range(n_classes):
        out[:, c] = _log_rows(L[:, comp == c])[0]
    return out


def _check_lam(lam_u):
    if isinstance(lam_u, str):
        return check_choice(lam_u, "lam_u", ("auto",))
    if isinstance(lam_u, bool) or not isinstance(lam_u, numbers.Real) \
            or not 0.0 <= float(lam_u) <= 1.0:
        raise ValueError(f"lam_u must be 'auto' or a number in [0, 1] (the weight of an "
                         f"unlabeled document relative to a labeled one), got {lam_u!r}")
    return float(lam_u)


def looks_like_words(X) -> bool:
    """Whether ``X`` is sparse enough to be a bag of words (dense or sparse storage).

    Term counts and tf-idf weights are a few percent non-zero (0.4 % for the SSL book's
    ``text``, 1.5 % for pc vs mac counts); more than
    :data:`semisup.meta.auto.COUNT_MAX_DENSITY` non-zero entries is read as real-valued
    features, on which the multinomial model is the wrong one.
    """
    from semisup.meta.auto import COUNT_MAX_DENSITY

    return _density(X) <= COUNT_MAX_DENSITY


def _density(X) -> float:
    """Share of non-zero entries of ``X`` (array-like or sparse; 0 when empty)."""
    X = X if sp.issparse(X) else np.asarray(X)
    n = X.shape[0] * X.shape[1] if X.ndim == 2 else 0
    nnz = X.nnz if sp.issparse(X) else int(np.count_nonzero(X))
    return nnz / n if n else 0.0


def _warn_if_not_words(X) -> None:
    """Warn once when ``X`` does not look like a bag of words (:func:`looks_like_words`).

    On dense real-valued features the multinomial model is the wrong one: on the benchmark
    of defaults' small UCI sets with non-negative features it was below logistic regression
    on all 8 cells, by 10 points on average (``benchmarks/results/defaults_r3s7_uci2.md``).
    """
    from semisup.meta.auto import COUNT_MAX_DENSITY

    density = _density(X)
    if density > COUNT_MAX_DENSITY:
        warn_at_caller(f"SemiSupervisedNB models term counts, but {100 * density:.0f} % of the "
                       f"entries of X are non-zero (a bag of words has a few percent): on "
                       "real-valued features it usually loses to LogisticRegression; use "
                       "semisup.AutoClassifier, or a classifier for continuous features",
                       UserWarning)


def _collapse_hint(X, alpha: float, n_components: int) -> str:
    """The advice of a collapse warning: where the smoothing's pseudo-counts outweigh the
    term mass of a mixture component (normalised rows, e.g. tf-idf of unit length, over a
    large vocabulary), the class prior decides every E-step, whatever ``lam_u``."""
    smoothing = alpha * X.shape[1]
    mass = float(X.sum()) / n_components
    if mass < smoothing:
        return (f"The smoothing (alpha={alpha:g} on each of {X.shape[1]} words: "
                f"{smoothing:.4g} pseudo-counts per component) outweighs the term mass of X "
                f"({mass:.4g} per component), so the class prior decides: pass raw term "
                "counts rather than normalised rows, or lower alpha")
    return ("Lower lam_u (0 is supervised naive Bayes) or use more components per class "
            "(n_components_per_class)")


def _unlabeled_classes(res: MultinomialEM, comp: np.ndarray, n_classes: int) -> np.ndarray:
    """Class index of each unlabeled document: the largest posterior summed over a class's
    components."""
    P = res.resp_unlabeled @ (comp[:, None] == np.arange(n_classes)[None, :])
    return np.argmax(P, axis=1)


class SemiSupervisedNB(SupervisedFallbackMixin, SemiSupervisedClassifierMixin, ClassifierMixin,
                       BaseEstimator):
    """Multinomial naive Bayes trained by EM on labeled and unlabeled documents.

    The algorithm of Nigam, McCallum, Thrun & Mitchell (2000, Table 1): fit naive Bayes to
    the labeled documents, then alternate an E-step that labels the unlabeled documents
    probabilistically (eq. 7) and an M-step that refits naive Bayes to all documents with
    those soft labels (eqs. 5-6), until the log-posterior (eq. 9, with its Dirichlet prior
    term) stops rising.  Two of the paper's extensions:

    * **EM-lambda**: each unlabeled document counts ``lam_u`` of a labeled one in the
      log-posterior and in the M-step.  The paper finds ``lam_u = 1`` best with few
      labeled documents and a smaller weight helpful when labeled documents are plentiful
      and the model fits the data poorly.  ``lam_u="auto"`` (the default) applies that
      rule from the data: it compares ``lam_u`` in :data:`AUTO_LAM_GRID` by 3-fold
      cross-validation over the labeled documents
      (:class:`semisup.model_selection.LabeledStratifiedKFold`, every unlabeled document
      in every training fold; ties go to the larger weight) and uses ``lam_u = 1`` when a
      class has fewer than 3 labeled documents.  A weight whose fit puts every unlabeled
      document in one class while the labeled ones hold several is passed over for the
      next in that order (``lam_u_collapsed_``; the first when every weight collapses):
      a handful of held-out labels cannot see the collapse, which costs the minority
      classes' share of the unlabeled rows.  On the SSL book's ``text`` set (unit-length
      tf-idf rows, where the smoothing outweighs a class's word mass and the prior decides
      the E-step) it lifted 10-label official splits 6, 7 and 10 from 50 % to 54.9, 65.8
      and 52.3 % and changed no 100-label split (``benchmarks/results/nb_collapse.md``);
    * **EM-multi**: ``n_components_per_class`` multinomial components per class, labeled
      documents spread at random over their class's components at the start;
      ``P(class | x)`` sums the class's component posteriors.

    On features that are not a bag of words (more than a tenth of the entries non-zero,
    :func:`looks_like_words`) the multinomial model is the wrong one, and ``fallback="cv"``
    (the default) guards the fit with the library's rule (:mod:`semisup.safety`): 3-fold
    labeled-only cross-validation against ``LogisticRegression()``, the fit kept only when
    it wins the guard's margin test.  On the benchmark of defaults' small UCI sets with
    non-negative features, 8 of 10 cells were more than a point below logistic regression
    without it (``benchmarks/results/nb_guard.md``).  On a bag of words the guard does not
    run: ``lam_u="auto"`` already weighs supervised naive Bayes (``lam_u=0``).

    Input is term counts (CSR or dense, non-negative); no row normalisation is applied.
    The smoothing must stay small next to the labeled term mass of a class: on 20
    Newsgroups with 10,000 unlabeled posts, EM cut naive Bayes' test error by 30-35 % at
    40-400 labeled posts with the 10,000 most frequent words and ``alpha=1``, but not at
    all (-4 % to +2 %) with the full 49,000-word vocabulary and ``alpha=1``, where
    ``alpha=0.1`` restored a 21-33 % cut (``benchmarks/results/nb_em*.md``).  With a
    large vocabulary, lower ``alpha`` or keep the most frequent words.

    Parameters
    ----------
    alpha : float, default=1.0
        Laplace / Dirichlet smoothing of the word probabilities (the paper's 1).
    prior_alpha : float, default=1.0
        Smoothing of the class (component) priors (the paper's 1, eq. 6); 0 gives the
        unsmoothed class shares of scikit-learn's ``MultinomialNB``.
    lam_u : float in [0, 1] or "auto", default="auto"
        Weight of an unlabeled document relative to a labeled one (EM-lambda); 0 is
        supervised naive Bayes.  ``"auto"``: the rule above.
    n_components_per_class : int or sequence of int, default=1
        Mixture components per class (EM-multi), or one count per class in the order of
        ``classes_`` (the paper gives a diverse class, such as "everything else" in a
        one-against-the-rest task, more components than a focused one).
    max_iter : int, default=100
        Maximum number of EM iterations.
    tol : float, default=1e-6
        Stop when an iteration raises the objective by at most ``tol`` times its magnitude.
    random_state : int or None, default=None
        Seed of EM-multi's random start and of the folds of ``lam_u="auto"`` (None: 0).
    verbose : int or bool, default=0
        Log EM's progress (``logging.getLogger("semisup")``).
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: on features that are not a bag of words, the guard above; under a
        fallback the estimator is ``LogisticRegression()`` fitted on the labeled rows
        (``fallback_ is True``; ``predict``, ``predict_proba`` and ``predict_log_proba``
        are then its, the naive Bayes attributes absent).  Costs about four fits.
        ``"none"``: naive Bayes EM on any non-negative features.

    Attributes
    ----------
    classes_ : ndarray of shape (n_classes,)
        Class labels.
    n_features_in_ : int
        Number of features seen in ``fit``.
    feature_log_prob_ : ndarray of shape (n_components, n_features)
        Log word probabilities ``log theta_{t|a}`` of each component.
    component_log_prior_ : ndarray of shape (n_components,)
        Log mixture weights of the components.
    component_class_ : ndarray of shape (n_components,)
        Index into ``classes_`` of each component's class.
    class_log_prior_ : ndarray of shape (n_classes,)
        Log class priors (the log-sum of their components' weights).
    transduction_ : ndarray of shape (n_samples,)
        Label of every training row: its own for labeled rows, the most probable class
        for unlabeled ones.
    log_likelihood_ : ndarray of shape (``n_iter_ + 1``,)
        EM's objective (log-posterior up to a constant) at the start and after each
        iteration; it never decreases.
    n_iter_ : int
        EM iterations run in the final fit.
    lam_u_ : float
        The unlabeled weight used (chosen by ``lam_u="auto"``).
    lam_u_scores_ : dict or None
        With ``lam_u="auto"`` and cross-validation run: mean held-out accuracy of the
        labeled documents for each candidate ``lam_u``.
    lam_u_collapsed_ : tuple of float
        With ``lam_u="auto"``: the weights passed over because their fit put every
        unlabeled document in one class (empty when the first tried did not).
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the method by logistic regression.
    supervised_estimator_ : sklearn.linear_model.LogisticRegression
        Under a fallback only: the counterpart fitted on the labeled rows (classes
        ``0 .. n_classes - 1``).
    cv_scores_ : dict or None
        The guard's held-out accuracies (see :func:`semisup.safety.guard`); ``None`` when
        the guard did not run (a bag of words, ``fallback="none"``, or no fold).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.text.naive_bayes import SemiSupervisedNB
    >>> rng = np.random.default_rng(0)
    >>> theta = rng.dirichlet(np.full(50, 0.2), size=2)
    >>> y_true = rng.integers(0, 2, size=400)
    >>> X = np.stack([rng.multinomial(30, theta[c]) for c in y_true])
    >>> y = np.where(np.arange(400) < 6, y_true, -1)
    >>> model = SemiSupervisedNB(lam_u=1.0).fit(X, y)
    >>> bool(np.mean(model.transduction_ == y_true) > 0.95)
    True
    """

    def __init__(self, alpha: float = 1.0, prior_alpha: float = 1.0, lam_u="auto",
                 n_components_per_class: int = 1, max_iter: int = 100, tol: float = 1e-6,
                 random_state=None, verbose=0, fallback="cv"):
        self.alpha = alpha
        self.prior_alpha = prior_alpha
        self.lam_u = lam_u
        self.n_components_per_class = n_components_per_class
        self.max_iter = max_iter
        self.tol = tol
        self.random_state = random_state
        self.verbose = verbose
        self.fallback = fallback

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        tags.input_tags.positive_only = True
        # a model of word counts: scikit-learn's accuracy check on shifted Gaussian blobs does
        # not apply (as for its own MultinomialNB)
        tags.classifier_tags.poor_score = True
        return tags

    def _seed(self) -> int:
        if self.random_state is None:
            return 0
        if isinstance(self.random_state, bool) or not isinstance(self.random_state,
                                                                 numbers.Integral):
            raise ValueError(f"random_state must be an int or None, got {self.random_state!r}")
        return int(self.random_state)

    def fit(self, X, y) -> SemiSupervisedNB:
        """Fit naive Bayes to the labeled rows, then run EM over all rows.

        With ``fallback="cv"`` on features that are not a bag of words, the guard runs
        first and may make the estimator logistic regression instead (class docstring).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Non-negative term counts.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows.

        Returns
        -------
        self : object
            The fitted estimator.

        Raises
        ------
        ValueError
            When ``X`` has a negative entry, or a parameter is out of range.
        """
        check_fallback(self.fallback)
        self._validate_params()
        self._fit_guarded(X, y)
        if getattr(self, "fallback_", False):
            _warn_if_not_words(X)   # the published fit, which says so, did not run
        return self

    def _validate_params(self) -> tuple[float | str, int]:
        """Check the parameters; return ``lam_u`` (a number or ``"auto"``) and the seed."""
        check_real(self.alpha, "alpha", positive=True)
        check_real(self.prior_alpha, "prior_alpha", positive=False)
        lam = _check_lam(self.lam_u)
        check_int(self.max_iter, "max_iter")
        check_real(self.tol, "tol", positive=True)
        k = self.n_components_per_class
        if isinstance(k, numbers.Integral) and not isinstance(k, bool):
            check_int(k, "n_components_per_class")   # a per-class list is checked in the fit
        return lam, self._seed()

    def _guard_applies(self, X) -> bool:
        """The guard runs on features that are not a bag of words (class docstring)."""
        return not looks_like_words(X) and super()._guard_applies(X)

    def _supervised_counterpart(self):
        from sklearn.linear_model import LogisticRegression

        return LogisticRegression()

    def _fit_plain(self, X, y) -> None:
        """Naive Bayes EM as published (``fallback="none"``); see :meth:`fit`."""
        lam, seed = self._validate_params()
        data = check_semi_supervised(X, y, estimator=self, dtype=FLOAT_DTYPES)
        check_nonnegative(data.X)
        _warn_if_not_words(data.X)
        self.classes_ = data.classes
        comp = self._components(data.classes.size)
        C = data.classes.size
        with verbosity(self.verbose), convergence_check(self, {"nb_em": "max_iter"}):
            self.lam_u_scores_ = None
            order = [lam] if lam != "auto" else self._lam_order(data, np.asarray(y), comp,
                                                                  seed)
            X_l, X_u = data.X[data.labeled], data.X[data.unlabeled]   # sliced once
            fits, classes_u = {}, {}
            for lam in order:
                fits[lam] = self._em(X_l, data.y_index, X_u, lam, comp, seed)
                classes_u[lam] = _unlabeled_classes(fits[lam], comp, C)
                if not is_collapsed(classes_u[lam], C):
                    break
            else:
                lam = order[0]   # every weight collapses: the cross-validation's choice
            self.lam_u_ = lam
            self.lam_u_collapsed_ = tuple(w for w in fits if w != lam)
            if self.lam_u_collapsed_:
                logger.info("lam_u='auto': every unlabeled row in one class at lam_u=%s; "
                            "lam_u=%g used", ", ".join(f"{w:g}" for w in
                                                       self.lam_u_collapsed_), lam)
            res = fits[lam]
        self.component_class_ = comp
        self.feature_log_prob_ = res.log_theta
        self.component_log_prior_ = res.log_weights
        self.class_log_prior_ = _by_class(res.log_weights[None, :], comp, C)[0]
        self.log_likelihood_ = res.objective
        self.n_iter_ = res.n_iter
        yt = np.empty(data.X.shape[0], dtype=data.classes.dtype)
        yt[data.labeled] = data.classes[data.y_index]
        if data.unlabeled.size:
            yt[data.unlabeled] = data.classes[classes_u[lam]]
            warn_if_collapsed(self, yt[data.unlabeled], C, hint=_collapse_hint(
                data.X, self.alpha, comp.size))
        self.transduction_ = yt

    def _components(self, C: int) -> np.ndarray:
        """Class index of each mixture component, from ``n_components_per_class``."""
        k = self.n_components_per_class
        if isinstance(k, numbers.Integral) and not isinstance(k, bool):
            return np.repeat(np.arange(C), check_int(k, "n_components_per_class"))
        arr = np.asarray(k) if isinstance(k, (list, tuple, np.ndarray)) else None
        if arr is None or arr.shape != (C,) or arr.dtype.kind not in "iu" or np.any(arr < 1):
            raise ValueError(f"n_components_per_class must be an integer >= 1 or one such "
                             f"integer per class ({C} classes, in the order of classes_), "
                             f"got {k!r}")
        return np.repeat(np.arange(C), arr)

    def _em(self, Xl, y_index, Xu, lam: float, comp: np.ndarray,
            seed: int) -> MultinomialEM:
        resp = None
        if comp.size > self.classes_.size:
            # EM-multi: labeled documents start spread at random over their class's components
            rng = np.random.default_rng(seed)
            resp = np.zeros((y_index.size, comp.size))
            for i, c in enumerate(y_index):
                own = np.flatnonzero(comp == c)
                resp[i, own] = rng.dirichlet(np.ones(own.size))
        return multinomial_em(Xl, y_index, Xu, comp, alpha=self.alpha,
                              prior_alpha=self.prior_alpha, lam_u=lam, labeled_resp=resp,
                              tol=self.tol, max_iter=self.max_iter)

    def _lam_order(self, data, y: np.ndarray, comp: np.ndarray, seed: int) -> list[float]:
        """EM-lambda's weights of :data:`AUTO_LAM_GRID` in the order ``lam_u="auto"`` tries
        them: by labeled-only cross-validation, ties to the larger weight (see the class
        docstring); without cross-validation from the largest weight down."""
        from semisup.model_selection import LabeledStratifiedKFold

        counts = np.bincount(data.y_index)
        by_weight = sorted(AUTO_LAM_GRID, reverse=True)
        if data.unlabeled.size == 0 or counts.min() < 3:
            logger.info("lam_u='auto': %s, lam_u=1", "no unlabeled rows"
                        if data.unlabeled.size == 0 else "a class has < 3 labeled rows")
            return by_weight
        cv = LabeledStratifiedKFold(3, random_state=seed)
        scores = np.zeros(len(AUTO_LAM_GRID))
        y_index = np.full(y.shape[0], -1)
        y_index[data.labeled] = data.y_index
        for train, test in cv.split(data.X, y_index):
            lab = train[y_index[train] >= 0]
            unl = train[y_index[train] < 0]
            for j, lam in enumerate(AUTO_LAM_GRID):
                res = self._em(data.X[lab], y_index[lab], data.X[unl], lam, comp, seed)
                L = np.asarray(data.X[test] @ res.log_theta.T, dtype=np.float64)
                pred = _by_class(L + res.log_weights, comp, counts.size).argmax(axis=1)
                scores[j] += np.mean(pred == y_index[test]) / cv.get_n_splits()
        self.lam_u_scores_ = dict(zip(AUTO_LAM_GRID, scores.tolist(), strict=True))
        order = sorted(range(len(scores)), key=lambda j: (round(scores[j], 12), j),
                       reverse=True)
        logger.info("lam_u='auto': held-out accuracy %s -> lam_u=%g",
                    {k: round(v, 4) for k, v in self.lam_u_scores_.items()},
                    AUTO_LAM_GRID[order[0]])
        return [float(AUTO_LAM_GRID[j]) for j in order]

    def _joint_log_likelihood(self, X) -> np.ndarray:
        check_is_fitted(self, "feature_log_prob_")
        X = check_X(X, estimator=self, reset=False, dtype=FLOAT_DTYPES)
        check_nonnegative(X)
        L = np.asarray(X @ self.feature_log_prob_.T, dtype=np.float64)
        return _by_class(L + self.component_log_prior_, self.component_class_,
                         self.classes_.size)

    def predict_log_proba(self, X) -> np.ndarray:
        """Log class posteriors ``log P(c | x)`` (eq. 7, summed over a class's components).

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Logarithm of the class probabilities.
        """
        if getattr(self, "fallback_", False):
            return self.supervised_estimator_.predict_log_proba(
                check_X(X, estimator=self, reset=False))
        J = self._joint_log_likelihood(X)
        lse, _ = _log_rows(J)
        return J - lse[:, None]

    def predict_proba(self, X) -> np.ndarray:
        """Class posteriors ``P(c | x)``, columns in the order of ``classes_``.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples, n_classes)
            Class probabilities, columns in the order of ``classes_``.
        """
        return np.exp(self.predict_log_proba(X))

    def predict(self, X) -> np.ndarray:
        """Most probable class of each row.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            New rows.

        Returns
        -------
        ndarray of shape (n_samples,)
            Predicted class labels.
        """
        out = self._fallback_answer(X, "predict")
        if out is not None:
            return out
        scores = self._joint_log_likelihood(X)
        return self.classes_[np.argmax(scores, axis=1)]
