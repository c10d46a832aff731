"""Transductive SVM with multiple label switching (section 3.1 of the SVMlin paper)."""

from __future__ import annotations

from semisup.linear import _core
from semisup.linear._s3vm import SemiSupervisedLinearSVM

# the algorithm lives with the solvers (no scikit-learn import); re-exported for compatibility
from semisup.solvers.s3vm import (  # noqa: F401
    TSVMResult,
    initial_labels,
    smallest,
    switch_labels,
    transductive_svm,
)


class TransductiveSVM(_core.TransductiveSVM, SemiSupervisedLinearSVM):
    """Linear transductive SVM with multiple switching (TSVM, SVMlin's ``-A 2``).

    Minimises over ``w`` and the labels ``y'`` of the unlabeled rows

    ``(lam/2)||w||^2 + (1/2l) sum_i l_2(y_i w^T x_i) + (lam_u/2u) sum_j l_2(y'_j w^T x'_j)``

    subject to a fraction ``positive_fraction`` of unlabeled rows being positive, by
    Joachims' label-switching scheme on top of L2-SVM-MFN (Sindhwani & Keerthi, 2006,
    section 3.1), switching up to ``max_switches`` pairs per round and raising
    ``lam_u'`` from ``lam_u_init`` to ``lam_u`` by ``lam_u_growth``.

    Parameters
    ----------
    lam : float or None, default=1e-3
        ``lambda`` (the paper's experiments use 0.001; SVMlin ``-W``).  ``None``: ``0.001 *
        s`` with ``s`` the spread of the training rows (mean squared distance to their mean,
        :func:`semisup.linear._defaults.default_lam`), DeterministicAnnealingSVM's default;
        for TSVM it did not beat 0.001 on the SSL-book benchmark
        (``benchmarks/results/defaults_s3vm.md``).
    lam_u : float, default=1.0
        ``lambda'``, weight of the unlabeled rows (SVMlin ``-U``).
    positive_fraction : float, array-like or None, default=None
        ``r`` (SVMlin ``-R``); ``None`` takes the positive fraction of the labeled rows.  An
        array gives one fraction per class, in the order of ``classes_``: the ``r`` of each
        one-vs-rest problem (e.g. class shares estimated from weakly labeled data); with two
        classes the entry of ``classes_[1]`` is used.
    max_switches : int or None, default=None
        ``S`` (SVMlin ``-S``); ``1`` recovers Joachims' single switching, ``None`` is
        ``S = max``.
    lam_u_init : float, default=1e-5
        Starting weight ``lam_u'`` of the unlabeled loss in the annealing loop.
    lam_u_growth : float, default=1.5
        Factor by which ``lam_u'`` grows each round until it reaches ``lam_u``.
    gamma_I : float, default=0.0
        Weight of a graph (manifold) regulariser ``(gamma_I / 2n^2) (Xw)^T L (Xw)`` added to
        the objective; 0 is the paper's method.
    graph : sparse matrix of shape (n_samples, n_samples), optional
        Adjacency for the graph term (e.g. ``semisup.graph.adjacency_graph(X, 10,
        metric='cosine')`` for text); a 10-NN heat-kernel graph when omitted.
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` whose weight is the bias.
    intercept_scaling : float, default=1.0
        Value of the constant feature.
    tol : float, default=1e-6
        CGLS relative residual tolerance of each Newton step.
    max_iter : int, default=50
        Newton iterations per solve.
    max_cg_iter : int, default=10000
        CGLS iterations per Newton system.
    fallback : {"cv", "none"}, default="cv"
        ``"cv"``: the guard of :mod:`semisup.safety` -- 3-fold labeled-only
        cross-validation (held-out labeled rows hidden among the unlabeled ones) against
        the supervised counterpart (scikit-learn's ``LogisticRegression()`` objective: ``C = 1``,
        unpenalised intercept, multinomial beyond two classes); the semi-supervised fit is kept
        only when it wins the guard's margin test, otherwise the estimator is
        that counterpart fitted on the labeled rows (``fallback_ is True``).  Costs about
        four fits.  ``"none"``: the method as published.
    verbose : int, default=0
        Log progress to the ``semisup`` logger (1: INFO, 2: DEBUG); 1 also shows a
        progress bar (elapsed time) over the annealing loop.
    probability : bool, default=False
        Enable ``predict_proba`` / ``predict_log_proba`` (Platt sigmoids fitted on
        cross-validated decision values of the labeled rows, :mod:`semisup.calibration`).

    Attributes
    ----------
    coef_, intercept_, classes_ : fitted hyperplane(s).
    transduction_ : ndarray
        Labels of the training rows (given for labeled rows, predicted for unlabeled).
    lam_ : float
        The ``lambda`` used (``lam``, or its data-driven value when ``lam=None``).
    objective_ : float or ndarray
        Transductive objective at ``lam_u``.
    fit_results_ : list of TSVMResult
        Rounds, switches, CG iterations and per-round objective history.
    fallback_ : bool
        Whether the guard (``fallback="cv"``) replaced the semi-supervised fit by its
        supervised counterpart: ``coef_`` and ``intercept_`` are then the logistic
        regression's on the labeled rows, and ``objective_`` and ``fit_results_`` those of
        :func:`semisup.solvers.logistic.logistic_regression`
        (``lam_`` is then not set).
    cv_scores_ : dict or None
        The guard's result (see :func:`semisup.safety.guard`): mean held-out accuracies
        ``semi_supervised`` and ``supervised``, ``n_folds``, ``split_scores``, the margin
        scores' ``gain`` and ``gain_se``, and ``keep``; ``None`` with ``fallback="none"`` or
        when the guard cannot run (no unlabeled row, or a class with one labeled row and
        fewer than two classes with two: :func:`semisup.safety.guard_folds`).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import TransductiveSVM
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-2, 1, (30, 2)), rng.normal(2, 1, (30, 2))]
    >>> y = np.full(60, -1)
    >>> y[[0, 1, 30, 31]] = [0, 0, 1, 1]          # two labels per class, 56 unlabeled
    >>> clf = TransductiveSVM(lam=1e-2, lam_u=1.0).fit(X, y)
    >>> float(np.mean(clf.transduction_ == np.repeat([0, 1], 30)))
    1.0
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    """
