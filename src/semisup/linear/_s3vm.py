"""Plumbing shared by the semi-supervised linear SVMs (one definition, one check)."""

from __future__ import annotations

from abc import abstractmethod

import numpy as np

from semisup._validation import check_int, check_positive
from semisup.linear._base import LinearSemiSupervisedClassifier, check_positive_fraction
from semisup.regularizers import GraphRidge


class SemiSupervisedLinearSVM(LinearSemiSupervisedClassifier):
    """Base of TSVM and DA: parameters ``lam``, ``lam_u``, ``positive_fraction``.

    Subclasses name their algorithm (a function of the design with labeled rows first,
    the number of labeled rows, their +1/-1 labels, ``lam``, ``lam_u`` and ``r``) and the
    keyword arguments it takes from the estimator's parameters.
    """

    _float32 = True
    _convergence_parameters = {"mfn": "max_iter", "cgls": "max_cg_iter",
                               "label switching": "lam_u_growth",
                               "DA inner": "max_inner_iter", "DA annealing": "max_outer_iter"}

    def _validate_params(self) -> None:
        check_positive(self.lam, "lam")
        check_positive(self.lam_u, "lam_u", allow_zero=True)
        check_positive(self.gamma_I, "gamma_I", allow_zero=True)
        check_positive_fraction(self.positive_fraction)
        # the subclasses' schedule parameters, through the same shared checks (a negative
        # start or a NaN tolerance would otherwise loop until the iteration limits)
        for name in ("max_outer_iter", "max_inner_iter"):
            if hasattr(self, name):
                check_int(getattr(self, name), name)
        for name in ("lam_u_init", "kl_tol", "entropy_tol"):
            if hasattr(self, name):
                check_positive(getattr(self, name), name)

    def _positive_fraction(self, prior: float) -> float:
        """``r``: the given fraction, else ``prior`` (clipped).

        ``prior`` is the class prior among the labeled rows, or this problem's entry of a
        per-class ``positive_fraction`` (see :func:`semisup.linear._base.class_fractions`).
        """
        if self.positive_fraction is not None and np.ndim(self.positive_fraction) == 0:
            return float(self.positive_fraction)
        return min(max(prior, 1e-3), 1 - 1e-3)

    @staticmethod
    @abstractmethod
    def _algorithm(A, n_labeled, y_l, lam, lam_u, positive_fraction, **options):
        """The training algorithm (e.g. :func:`semisup.solvers.s3vm.transductive_svm`)."""

    @abstractmethod
    def _algorithm_options(self) -> dict:
        """Keyword arguments of ``_algorithm`` taken from the estimator's parameters."""

    def _prepare(self, design, data):
        """With ``gamma_I > 0``: the regulariser ``lam I + gamma_I/n^2 X^T L X`` (graph + S3VM)."""
        if not self.gamma_I:
            return None
        from semisup.linear.laplacian import graph_laplacian

        L, W = graph_laplacian(data.X, graph=self.graph)
        self.adjacency_ = W
        n = data.X.shape[0]
        return GraphRidge(self.lam, self.gamma_I / n ** 2, design, L)

    def fit(self, X, y, sample_weight=None):
        """Fit on ``(X, y)``; rows with ``y == -1`` are the unlabeled data.

        Parameters
        ----------
        X : array-like or sparse matrix of shape (n_samples, n_features)
            Training rows, labeled and unlabeled.
        y : array-like of shape (n_samples,)
            Class labels, ``-1`` for unlabeled rows.
        sample_weight : array-like of shape (n_samples,), optional
            Non-negative row weights, labeled and unlabeled: the means ``1/l`` and ``1/u``
            of the objective become weighted means (an integer weight equals repeating
            the row).

        Returns
        -------
        self : object
            The fitted estimator.
        """
        return self._fit(X, y, sample_weight)

    def _fit_binary(self, design, data, y_pm, prior, sample_weight, context=None, seed=None):
        order = np.concatenate([data.labeled, data.unlabeled])
        A = design.restrict(order)
        mfn_options = dict(tol=self.tol, max_iter=self.max_iter, max_cg_iter=self.max_cg_iter)
        return self._algorithm(A, data.labeled.size, y_pm, self.lam, self.lam_u,
                               self._positive_fraction(prior), mfn_options=mfn_options,
                               verbose=self.verbose, reg=context,
                               sample_weight=None if sample_weight is None
                               else sample_weight[order], **self._algorithm_options())
