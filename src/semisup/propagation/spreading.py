"""Label spreading: learning with local and global consistency (Zhou et al., NIPS 2004)."""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from semisup._logging import report_unconverged
from semisup._validation import check_fraction, check_semi_supervised
from semisup.base import SupervisedFallbackMixin
from semisup.propagation._base import (
    FITTED_ATTRIBUTES,
    GRAPH_PARAMS,
    GraphPropagation,
    _normalise_rows,
    matmat_operator,
)
from semisup.propagation._cg import block_pcg


def normalized_affinity(W: sp.csr_matrix, degree: np.ndarray) -> sp.csr_matrix:
    """``S = D^-1/2 W D^-1/2`` (Zhou et al., step 2; isolated rows stay zero).

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> W = sp.csr_matrix(np.array([[0, 1], [1, 0]], dtype=float))
    >>> normalized_affinity(W, np.array([1.0, 1.0])).toarray()
    array([[0., 1.],
           [1., 0.]])
    """
    with np.errstate(divide="ignore"):
        s = np.where(degree > 0, 1.0 / np.sqrt(degree), 0.0)
    S = W.copy().tocsr()
    # scale the stored values in place: row factor by row, column factor by index
    S.data *= np.repeat(s, np.diff(S.indptr)) * s[S.indices]
    return S


class LabelSpreading(SupervisedFallbackMixin, GraphPropagation):
    """Label spreading (Zhou, Bousquet, Lal, Weston & Schölkopf 2004) by conjugate gradients.

    The labels are the closed form ``F* = (1 - alpha) (I - alpha S)^-1 Y`` (eq. 4 up to the
    ``1 - alpha`` factor, which does not change the classes) with the normalised affinity
    ``S = D^-1/2 W D^-1/2`` of a kNN graph without self loops (``W_ii = 0``, step 1): the
    limit of the iteration ``F <- alpha S F + (1 - alpha) Y`` (step 3) and the minimiser of
    the cost of eq. 5.  ``I - alpha S`` is symmetric positive definite with unit
    diagonal, so the system is solved for all classes at once by conjugate gradients (the
    symmetric normalisation is already the Jacobi scaling of ``D - alpha W``) to a
    relative residual ``tol``; memory is linear in ``n k``.  Unlike the harmonic function
    the labeled rows are not clamped during the solve, but ``label_distributions_`` and
    ``transduction_`` report their given labels.

    With the same graph, scikit-learn's :class:`sklearn.semi_supervised.LabelSpreading`
    reaches the same ``label_distributions_`` on the unlabeled rows at convergence (its
    ``kernel='knn'`` graph keeps self loops in the degrees and is not symmetrised; pass it
    the same affinity to compare; on the labeled rows it reports the spread distribution).

    Parameters
    ----------
    alpha : float, default=0.9
        Relative weight of the neighbours' labels against the initial labels, in (0, 1).
        The paper's experiments use 0.99 (scikit-learn's default is 0.2).  The default is
        0.9 because near 1 the top eigenvector of ``S`` (``v ~ sqrt(d)``, eigenvalue 1)
        dominates: ``(I - alpha S)^-1`` weighs it ``(1 - alpha lambda) / (1 - alpha)`` times
        more than an eigenvector of eigenvalue ``lambda < 1``, and its part of ``F`` is
        ``v_i (v^T Y_k)`` for class ``k``, the same shape for every class scaled by the
        class's (degree-weighted) labeled mass, so every row goes to the class with the
        larger labeled mass.  On official split 2 of the SSL-book sets (10 and 100 labels)
        0.99 put all 1,400 unlabeled rows of usps and 1,399 of text (100 labels) in one
        class (80.1 %, 50.0 %) where 0.9 gives 93.8 % and 72.1 %; 0.9 reached SVC - 1 point
        on 11 of 16 cells (0.99: 10), failing only on g241c, g241d and bci, sets without
        cluster structure (``benchmarks/results/defaults_graph.md``).
{graph_params}

    Attributes
    ----------
{fitted_attributes}

    Examples
    --------
    >>> import numpy as np
    >>> from sklearn.datasets import make_moons
    >>> from semisup.propagation import LabelSpreading
    >>> X, y_true = make_moons(300, noise=0.05, random_state=0)
    >>> y = np.full(300, -1)
    >>> y[[0, 2]] = y_true[[0, 2]]          # one label per moon
    >>> clf = LabelSpreading().fit(X, y)
    >>> float(np.mean(clf.transduction_ == y_true))
    1.0
    """

    def __init__(self, alpha: float = 0.9, n_neighbors: int = 10, graph_weight: str = "heat",
                 t=None, graph_metric: str = "euclidean", graph_method: str = "auto",
                 tol: float = 1e-4, max_iter: int = 1000, warm_start: bool = False,
                 n_jobs: int | None = None, random_state: int | None = None,
                 verbose: int = 0, fallback: str = "cv"):
        self.alpha = alpha
        self.n_neighbors = n_neighbors
        self.graph_weight = graph_weight
        self.t = t
        self.graph_metric = graph_metric
        self.graph_method = graph_method
        self.tol = tol
        self.max_iter = max_iter
        self.warm_start = warm_start
        self.n_jobs = n_jobs
        self.random_state = random_state
        self.verbose = verbose
        self.fallback = fallback

    def _check_method_params(self) -> None:
        check_fraction(self.alpha, "alpha")

    def _solve(self, W, degree, labeled_local, Y, X0, prior):
        alpha = float(self.alpha)
        S_mat = matmat_operator(normalized_affinity(W, degree))

        def matmat(P):
            out = S_mat(P)
            out *= -alpha
            out += P
            return out

        res = block_pcg(matmat, (1.0 - alpha) * Y, X0=X0, tol=float(self.tol),
                        max_iter=int(self.max_iter), verbose=self.verbose)
        return res.X, res

    def _held_out_scores(self, X, y, folds) -> list[np.ndarray]:
        """Transductive cross-validation at the cost of one fit.

        ``I - alpha S`` depends on ``X`` alone and the solution is linear in ``Y``
        (eq. 4), so every fold's label block is one more set of columns of a single block
        CG solve on the graph of all rows.  A fold keeps the labels of the labeled rows
        ``train`` and hides those of ``test`` (they stay in ``X`` as unlabeled rows); the
        result equals refitting with ``y[labeled[test]] = -1`` on the rows that the fold's
        labels reach (rows of a component without a fold label get the fold's prior, as
        in :meth:`fit`).

        Parameters
        ----------
        X, y : as for :meth:`fit`
        folds : list of (train, test)
            Positions into the labeled rows of ``y`` (in row order).

        Returns
        -------
        list of ndarray
            Per fold, scores of every row: ``p_1 - p_0`` of the label distributions for
            two classes (shape ``(n,)``), else the distributions (``(n, n_classes)``).
        """
        data = check_semi_supervised(X, y, require_unlabeled=True, estimator=self)
        self._check_graph_params()
        self._check_method_params()
        W, _, _, _ = self._graph(data.X)
        n, c = data.X.shape[0], data.classes.size
        degree = np.asarray(W.sum(axis=1)).ravel()
        Y = np.zeros((n, c * len(folds)))
        priors = []
        for f, (train, _) in enumerate(folds):
            train = np.asarray(train)
            classes = data.y_index[train]
            Y[data.labeled[train], f * c + classes] = 1.0
            priors.append(np.bincount(classes, minlength=c) / train.size)
        F, res = self._solve(W, degree, None, Y, None, None)
        if not res.converged:
            report_unconverged("cg", f"relative residual {res.residual.max():.3g} > tol "
                               f"{self.tol:g} after {res.n_iter} iterations")
        out = []
        for f, prior in enumerate(priors):
            P = _normalise_rows(F[:, f * c:(f + 1) * c], prior)
            out.append(P[:, 1] - P[:, 0] if c == 2 else P)
        return out


LabelSpreading.__doc__ = LabelSpreading.__doc__.replace(
    "{graph_params}", GRAPH_PARAMS).replace("{fitted_attributes}", FITTED_ATTRIBUTES)
