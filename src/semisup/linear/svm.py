"""Supervised linear classifiers of SVMlin: L2-SVM-MFN (``-A 1``) and RLS (``-A 0``)."""

from __future__ import annotations

import numpy as np

from semisup.linear import _core
from semisup.linear._base import LinearSemiSupervisedClassifier

#: ``lam="auto"`` tries ``lam = S * 10^k`` for these ``k`` (see :func:`lam_grid`).
LAM_GRID_EXPONENTS = np.arange(0, -7, -1)


def lam_grid(X, labeled: np.ndarray, fit_intercept: bool = True,
             intercept_scaling: float = 1.0, mean: bool = False) -> np.ndarray:
    """Candidate ``lam`` of the automatic mode (``lam="auto"``), largest (strongest) first.

    ``S`` is the trace of the labeled rows' Gram matrix, ``sum_i ||x_i||^2`` (with the
    constant feature when fitting an intercept): the total curvature the data term can
    set against ``lam I``.  ``mean=True`` divides it by ``l``, for objectives that average
    the loss.  At ``lam = S`` the ridge outweighs the data in every direction (outputs near
    the prior); at ``S 10^-6`` the fit is close to the unregularised one.  The seven
    values ``S 10^k``, ``k = 0, -1, .., -6``, follow the row norms and the number of
    labels, so one grid serves unit-norm text rows and raw pixels alike.

    Parameters
    ----------
    X : array-like or sparse matrix of shape (n_samples, n_features)
        The rows.
    labeled : ndarray of int
        Indices of the labeled rows.
    fit_intercept : bool, default=True
        Count the constant feature in ``S``.
    intercept_scaling : float, default=1.0
        Value of the constant feature.
    mean : bool, default=False
        Divide ``S`` by the number of labeled rows.

    Returns
    -------
    ndarray of shape (7,)
        ``S 10^k`` for ``k = 0, -1, .., -6``.

    Examples
    --------
    >>> import numpy as np
    >>> from semisup.linear.svm import lam_grid
    >>> lam_grid(np.ones((4, 3)), np.arange(2)).tolist()[:3]   # S = 2 * (3 + 1)
    [8.0, 0.8, 0.08]
    """
    from sklearn.utils.extmath import row_norms

    sq = row_norms(X[labeled], squared=True).astype(np.float64)
    if fit_intercept:
        sq = sq + intercept_scaling ** 2
    total = float(np.sum(sq))
    if mean:
        total /= max(labeled.size, 1)
    total = total if total > 0 else 1.0
    return total * 10.0 ** LAM_GRID_EXPONENTS


class _SupervisedLinear(LinearSemiSupervisedClassifier):
    """The estimators' side of L2SVM and RLS: ``lam="auto"`` (the fit is the core's,
    :class:`semisup.linear._core.SupervisedLinearCore`)."""

    _auto_parameters = {"lam": 4.0}

    def _auto_grid(self, name, data, shared):
        return lam_grid(data.X, data.labeled, self.fit_intercept, self.intercept_scaling)

    def _auto_held_out(self, data, shared):
        """Every fold of one ``lam`` by the solver alone, each fold warm-started from its
        solution at the previous (larger) ``lam``: the same fits as refitting the estimator
        on the labeled rows with the held-out ones hidden, without its per-fit overhead."""
        from sklearn.base import clone

        from semisup._validation import SemiSupervisedData
        from semisup.solvers.design import Design

        X, codes = data.X[data.labeled], data.y_index   # the rows select_parameter sees
        design = Design(X, self.fit_intercept, self.intercept_scaling)
        n_classes = data.classes.size
        positives = [1] if n_classes == 2 else list(range(n_classes))
        est = clone(self).set_params(verbose=0)
        previous = {}

        def held_out(value, folds):
            est.lam = value
            out = []
            for f, (train, test) in enumerate(folds):
                fold = SemiSupervisedData(X, data.classes, train,
                                          np.setdiff1d(np.arange(X.shape[0]), train),
                                          codes[train])
                context = est._prepare(design, fold)
                rows = design.restrict(test)
                scores = []
                for k in positives:
                    res = est._fit_binary(design, fold, fold.binary_targets(k), 0.5, None,
                                          context=context, seed=previous.get((f, k)))
                    previous[f, k] = res.w
                    scores.append(rows.matvec(res.w))
                scores = np.column_stack(scores)
                out.append((scores[:, 0] > 0).astype(np.intp) if n_classes == 2
                           else scores.argmax(axis=1))
            return out

        return held_out


class L2SVM(_core.L2SVM, _SupervisedLinear):
    """Linear L2-SVM trained by the modified finite Newton method or by dual coordinate descent.

    Minimises ``(lam/2)||w||^2 + (1/2) sum_i c_i max(0, 1 - y_i w^T x_i)^2`` (eq. 2 of
    Sindhwani & Keerthi, 2006) over the labeled rows, ``w`` the feature weights (the bias
    is free; with ``penalize_intercept=True`` it is one more regularised weight, as in
    SVMlin).  Costs ``c_i`` are ``sample_weight`` times ``cost_positive`` or
    ``cost_negative`` (SVMlin's ``-Cp``/``-Cn``).  With ``solver="mfn"`` and
    ``penalize_intercept=True`` this is SVMlin's ``-A 1`` (L2-SVM-MFN).

    Parameters
    ----------
    lam : float or "auto", default=4.0
        Regularisation ``lambda`` (SVMlin ``-W``, whose default is 1).  4 is scikit-learn's
        ``LogisticRegression()`` to second order (``log(1 + e^-m)`` is a quarter of
        ``(2 - m)^2 / 2`` plus a constant near ``m = 0``; rescaling ``w`` by 2 gives a ridge
        of 4 on the squared loss): within a point of it on 64 of 80 SSL-book cells against
        53 at ``lam = 1`` (``benchmarks/results/defaults_linear_lam.md``).  ``"auto"``
        chooses it from the seven values of :func:`lam_grid` (``S 10^k``, ``k = 0..-6``,
        ``S`` the sum of squared norms of the labeled rows) by stratified k-fold CV over
        the labeled rows (``k = min(5, smallest class)``, repeated when the classes are
        tiny; ties go to the larger ``lam``), warm-started along the path, then refits at
        the chosen value (``lam_``, ``cv_results_``).  With a class of one labeled row there
        is no CV: the default 4.0 is used, with a warning.
    cost_positive, cost_negative : float, default=1.0
        Class costs.
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` whose weight is the bias.
    intercept_scaling : float, default=1.0
        Value of the constant feature.
    penalize_intercept : bool, default=False
        Include the bias in ``||w||^2`` (SVMlin's objective, and ``semisup-svmlin``'s).
        The default leaves it free, as ``LogisticRegression()`` does, so that the fit
        follows the labeled rows' class shares and moving every row by the same vector
        moves only the bias.  Measured on development draws
        (``benchmarks/results/defaults_linear_bias.md``): cells within a point of
        LogisticRegression, free -> regularised bias, 58 -> 47 of 64 UCI/IDA cells, where
        the classes are unbalanced and the labeled draws stratified; 45 -> 53 of 64
        SSL-book cells, whose 10-label splits are not stratified and whose classes are
        balanced.
    tol : float, default=1e-6
        ``"mfn"``: CGLS relative residual tolerance; ``"dcd"``: relative duality gap,
        i.e. a certified bound on ``(f(w) - min f) / f(w)``.
    max_iter : int, optional
        Newton iterations (``"mfn"``, default 50) or epochs (``"dcd"``, default 10000).
    max_cg_iter : int, default=10000
        CGLS iterations per Newton system.
    solver : {"auto", "mfn", "dcd"}, default="auto"
        ``"mfn"``: the modified finite Newton method (:func:`~semisup.solvers.mfn.l2svm_mfn`).
        ``"dcd"``: dual coordinate descent (:func:`~semisup.solvers.dcd.l2svm_dual_cd`),
        sparse input only; it regularises the bias (a free one adds an equality constraint
        to the dual), so with ``penalize_intercept=False`` its solution of that problem
        starts ``"mfn"``, which finishes the free-bias fit (``solver_ == "dcd+mfn"``).
        ``"auto"``: ``"dcd"`` for sparse input with fewer than 100 labeled rows per feature
        and at least 10,000 stored entries (below, dual CD's compiled kernel would cost more
        to load than the whole Newton fit), ``"mfn"`` otherwise; when dual CD's duality gap
        falls too slowly to reach ``tol`` within 2,000 epochs (small ``lam``, more labeled rows than
        features), ``"auto"`` finishes with ``"mfn"`` started from its weights
        (``solver_ == "dcd+mfn"``), so the default reaches the optimum on such problems too.
    warm_start : bool, default=False
        Start the solver from the previous fit's weights (``"mfn"``; along a path of
        ``lam`` values, as ``lam="auto"`` does).
    random_state : int, RandomState or None, default=None
        Coordinate order of ``"dcd"`` and the folds of ``lam="auto"``; ``None`` means a
        fixed seed, so fits repeat.
    verbose : int, default=0
        Log progress to the ``semisup`` logger (1: INFO, 2: DEBUG, one line per Newton
        iteration or duality-gap check).
    probability : bool, default=False
        Enable ``predict_proba`` / ``predict_log_proba``: ``fit`` also fits a Platt
        sigmoid to decision values of the labeled rows cross-validated with
        :class:`semisup.model_selection.LabeledStratifiedKFold` (5 extra fits; see
        :mod:`semisup.calibration`).

    Attributes
    ----------
    coef_, intercept_, classes_ : as in scikit-learn linear classifiers.
    objective_ : float or ndarray
        Final objective (one per class for one-vs-rest).
    n_iter_ : ndarray
        Newton iterations (``"mfn"``) or epochs (``"dcd"``) per binary problem.
    fit_results_ : list of MFNResult or DCDResult
        Full solver output, including objective histories and CG iteration counts
        (``"mfn"``) or epochs and the duality gap (``"dcd"``).
    solver_ : str
        The solver used: ``"mfn"``, ``"dcd"``, or ``"dcd+mfn"`` (``"auto"`` switched from
        dual CD to the finite Newton method for at least one binary problem).
    lam_ : float
        With ``lam="auto"``: the value chosen (and refitted).
    cv_results_ : dict
        With ``lam="auto"``: ``param_lam``, ``split<k>_test_score``, ``mean_test_score``,
        ``std_test_score``, ``rank_test_score`` (held-out accuracy; scikit-learn's layout).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import L2SVM
    >>> X = np.array([[-2.0], [-1.5], [-1.0], [-0.8], [1.0], [1.2], [1.5], [2.0]])
    >>> y = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    >>> clf = L2SVM(lam="auto").fit(X, y)
    >>> float(clf.lam_), clf.cv_results_["mean_test_score"].tolist()[:2]
    (24.58, [1.0, 1.0])
    """


class RLSClassifier(_core.RLSClassifier, _SupervisedLinear):
    """Regularised least-squares classifier solved by CGLS (SVMlin's ``-A 0``).

    Minimises ``(lam/2)||w||^2 + (1/2) sum_i c_i (y_i - w^T x_i)^2`` over the labeled rows
    with targets ``+1/-1`` (eq. 4 of Sindhwani & Keerthi, 2006, solved by CGLS, section 2.1),
    ``w`` the feature weights (the bias is free unless ``penalize_intercept=True``, SVMlin's
    objective).

    Parameters
    ----------
    lam : float or "auto", default=4.0
        Regularisation ``lambda`` (SVMlin ``-W``, whose default is 1).  4 is scikit-learn's
        ``LogisticRegression()`` to second order (``log(1 + e^-m)`` is a quarter of
        ``(2 - m)^2 / 2`` plus a constant near ``m = 0``; rescaling ``w`` by 2 gives a ridge
        of 4 on the squared loss): within a point of it on 50 of 80 SSL-book cells against
        39 at ``lam = 1`` (``benchmarks/results/defaults_linear_lam.md``).  Where it stays
        below, the squared loss is the reason: scikit-learn's ``RidgeClassifier(alpha=4)``,
        the same objective, answers as it does on 46 of the benchmark's 48 cells
        (``benchmarks/results/linear_loss_peers.md``).  ``"auto"``
        chooses it from the seven values of :func:`lam_grid` (``S 10^k``, ``k = 0..-6``,
        ``S`` the sum of squared norms of the labeled rows) by stratified k-fold CV over
        the labeled rows (``k = min(5, smallest class)``, repeated when the classes are
        tiny; ties go to the larger ``lam``), warm-started along the path, then refits at
        the chosen value (``lam_``, ``cv_results_``).  With a class of one labeled row there
        is no CV: the default 4.0 is used, with a warning.
    cost_positive, cost_negative : float, default=1.0
        Class costs ``c_i`` (times ``sample_weight``).
    fit_intercept : bool, default=True
        Append a constant feature ``intercept_scaling`` whose weight is the bias.
    intercept_scaling : float, default=1.0
        Value of the constant feature.
    penalize_intercept : bool, default=False
        Include the bias in ``||w||^2`` (SVMlin's ``-A 0``); the default leaves it free, as
        :class:`L2SVM`'s does (see there).  On development draws
        (``benchmarks/results/defaults_linear_bias.md``) the free bias put 47 of 64
        UCI/IDA cells within a point of LogisticRegression (40 regularised) and 39 of 64
        SSL-book cells (41).
    tol : float, default=1e-6
        CGLS relative residual tolerance.
    max_iter : int, optional
        Unused: one CGLS solve is the whole fit (kept for a uniform interface).
    max_cg_iter : int, default=10000
        CGLS iterations.
    warm_start : bool, default=False
        Start CGLS from the previous fit's weights.
    random_state : int, RandomState or None, default=None
        Folds of ``lam="auto"``; ``None`` means a fixed seed.
    verbose : int, default=0
        Log progress to the ``semisup`` logger (1: INFO, 2: DEBUG).
    probability : bool, default=False
        Enable ``predict_proba`` / ``predict_log_proba`` (as :class:`L2SVM`).

    Attributes
    ----------
    coef_, intercept_, classes_ : as in scikit-learn linear classifiers.
    objective_ : float or ndarray
        Final objective (one per class for one-vs-rest).
    n_iter_ : ndarray
        CGLS iterations per binary problem.
    fit_results_ : list of MFNResult
        Solver output per binary problem.
    lam_ : float
        With ``lam="auto"``: the value chosen (and refitted).
    cv_results_ : dict
        With ``lam="auto"``: ``param_lam``, ``split<k>_test_score``, ``mean_test_score``,
        ``std_test_score``, ``rank_test_score`` (held-out accuracy; scikit-learn's layout).

    Examples
    --------
    >>> import numpy as np
    >>> from semisup import RLSClassifier
    >>> rng = np.random.default_rng(0)
    >>> X = np.r_[rng.normal(-2, 1, (30, 2)), rng.normal(2, 1, (30, 2))]
    >>> y = np.full(60, -1)
    >>> y[[0, 1, 30, 31]] = [0, 0, 1, 1]          # two labels per class, 56 unlabeled
    >>> clf = RLSClassifier(lam=1e-2).fit(X[y != -1], y[y != -1])  # supervised baseline
    >>> clf.predict([[-2.0, -2.0], [2.0, 2.0]]).tolist()
    [0, 1]
    >>> clf.coef_.shape
    (1, 2)
    """
