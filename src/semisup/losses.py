"""Loss functions of the linear semi-supervised SVMs, written over classifier outputs.

Every method in the SVMlin family minimises a regulariser plus a sum of weighted
squared hinge terms ``(1/2) c_i max(0, 1 - y_i o_i)^2`` (eq. 2 of the SVMlin paper);
they differ only in which terms they present to the solver:

* supervised L2-SVM: one term per labeled example;
* transductive SVM: one more term per unlabeled example with its temporary label;
* deterministic annealing: two terms per unlabeled example (labels +1 and -1, costs
  proportional to ``p_j`` and ``1 - p_j``) that share one data row.

:class:`HingeTerms` is that list of terms; it maps outputs of the distinct data rows to
the terms and aggregates the terms of each row into one weighted least-squares row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from semisup._accel import njit, use_compiled_vectors

_IDENTITY = np.empty(0, dtype=np.int64)  # "term i uses row i" for the compiled passes
_NO_MARGIN = np.empty(0)  # "every margin is 1" for the compiled passes


def squared_hinge(z: np.ndarray) -> np.ndarray:
    """``l_2(z) = max(0, 1 - z)^2`` (eq. 1 of the SVMlin paper)."""
    return np.maximum(0.0, 1.0 - z) ** 2


def symmetric_squared_hinge(o: np.ndarray) -> np.ndarray:
    """TSVM loss on unlabeled outputs: ``min(l_2(o), l_2(-o)) = max(0, 1 - |o|)^2``."""
    return np.maximum(0.0, 1.0 - np.abs(o)) ** 2


def transductive_objective(reg_value: float, outputs_l: np.ndarray, y_l: np.ndarray,
                           outputs_u: np.ndarray, lam_u: float, weights=None) -> float:
    """TSVM objective (section 3.2.3 of the SVMlin paper).

    ``(lambda/2)||w||^2 + (1/2l) sum_i l_2(y_i o_i) + (lambda_u/2u) sum_j max(0, 1-|o_j|)^2``
    where ``reg_value`` is the regulariser term already evaluated.  With ``weights =
    (c_l, v_u)`` (from :func:`split_sample_weight`) the means become weighted means.
    """
    if weights is None:
        obj = reg_value + 0.5 * float(np.mean(squared_hinge(y_l * outputs_l)))
        if outputs_u.size:
            obj += 0.5 * lam_u * float(np.mean(symmetric_squared_hinge(outputs_u)))
        return obj
    c_l, v_u = weights
    obj = reg_value + 0.5 * float(c_l @ squared_hinge(y_l * outputs_l))
    if outputs_u.size:
        obj += 0.5 * lam_u * float(v_u @ symmetric_squared_hinge(outputs_u))
    return obj


def split_sample_weight(sample_weight, n_labeled: int, n_unlabeled: int):
    """Per-row costs of the transductive objectives: ``(c_l, v_u)``, each summing to one.

    ``sample_weight`` (labeled rows first, then unlabeled) turns the means ``1/l`` and
    ``1/u`` of the SVMlin objectives into weighted means: ``c_i = w_i / sum_l w`` and
    ``v_j = w_j / sum_u w``.  Unit weights give ``1/l`` and ``1/u``; an integer weight
    equals repeating the row.  ``None`` when ``sample_weight`` is ``None``.
    """
    if sample_weight is None:
        return None
    w = np.asarray(sample_weight, dtype=np.float64)
    w_l, w_u = w[:n_labeled], w[n_labeled:n_labeled + n_unlabeled]
    if n_unlabeled and not w_u.sum() > 0:
        raise ValueError("sample_weight is zero for every unlabeled row: give at least one "
                         "unlabeled row a positive weight, or drop the unlabeled rows")
    return w_l / w_l.sum(), (w_u / w_u.sum() if n_unlabeled else w_u)


# One compiled pass per operation: DA presents two terms per unlabeled row (2.5M terms on
# SecStr), where the numpy expressions' gathers and temporaries cost about as much as the
# mat-vecs (benchmarks/results/bench_large.md).  The passes do not branch on whether a term
# is active: that is a coin toss per term (DA's +1 term of a row is active when its output
# is below 1), and the mispredicted branches cost more than the arithmetic; an inactive
# term adds an exact zero instead, which leaves every sum as it was.
@njit(cache=True, nogil=True)
def _terms_value(o, rows, y, cost, m) -> float:
    mapped = rows.shape[0] > 0
    shifted = m.shape[0] > 0
    total = 0.0
    for i in range(y.shape[0]):
        margin = (m[i] if shifted else 1.0) - y[i] * (o[rows[i]] if mapped else o[i])
        margin = max(margin, 0.0)
        total += cost[i] * margin * margin
    return 0.5 * total


@njit(cache=True, nogil=True)
def _terms_active(o, rows, y, cost, m):
    mapped = rows.shape[0] > 0
    shifted = m.shape[0] > 0
    out = np.empty(y.shape[0], dtype=np.bool_)
    for i in range(y.shape[0]):
        # ``&``, not ``and``: no branch
        out[i] = (y[i] * (o[rows[i]] if mapped else o[i]) < (m[i] if shifted else 1.0)) \
            & (cost[i] > 0.0)
    return out


@njit(cache=True, nogil=True)
def _merge_terms(active, rows, y, cost, n_rows, m):
    shifted = m.shape[0] > 0
    row_cost = np.zeros(n_rows)
    row_rhs = np.zeros(n_rows)
    for i in range(y.shape[0]):
        c = cost[i] * np.float64(active[i])  # a product: a conditional compiles to a branch
        row_cost[rows[i]] += c
        row_rhs[rows[i]] += c * y[i] * (m[i] if shifted else 1.0)
    n = 0
    for r in range(n_rows):
        if row_cost[r] > 0.0:
            n += 1
    out_rows = np.empty(n, dtype=np.int64)
    out_cost = np.empty(n)
    out_target = np.empty(n)
    k = 0
    for r in range(n_rows):
        if row_cost[r] > 0.0:
            out_rows[k] = r
            out_cost[k] = row_cost[r]
            out_target[k] = row_rhs[r] / row_cost[r]
            k += 1
    return out_rows, out_cost, out_target


@dataclass
class HingeTerms:
    """Weighted squared hinge terms ``(1/2) sum_i c_i l_2(y_i o[rows_i])``.

    With ``margin`` the terms are ``(1/2) c_i max(0, m_i - y_i o[rows_i])^2``: a negative
    margin ``m_i = -eps`` with ``y_i = -1`` and ``+1`` gives the two halves of the squared
    epsilon-insensitive loss ``max(0, |o| - eps)^2`` of the Universum SVM.

    Parameters
    ----------
    y : ndarray of shape (m,)
        Signs ``+1/-1``.
    cost : ndarray of shape (m,)
        Non-negative costs.
    rows : ndarray of int of shape (m,), optional
        Data row of each term (an index into the operator's rows); term ``i`` uses row
        ``i`` when omitted.
    n_rows : int, optional
        Number of data rows (required when ``rows`` is given).
    margin : ndarray of shape (m,), optional
        Margin ``m_i`` of each term; 1 when omitted.
    """

    y: np.ndarray
    cost: np.ndarray
    rows: np.ndarray | None = None
    n_rows: int | None = None
    margin: np.ndarray | None = None

    def __post_init__(self):
        self.y = np.asarray(self.y, dtype=np.float64)
        self.cost = np.asarray(self.cost, dtype=np.float64)
        if self.rows is None:
            self.n_rows = self.y.shape[0]
        elif self.n_rows is None:
            raise ValueError("n_rows is required when rows is given")
        self._map = _IDENTITY if self.rows is None else np.asarray(self.rows, dtype=np.int64)
        if self.margin is not None:
            self.margin = np.asarray(self.margin, dtype=np.float64)
            if self.margin.shape != self.y.shape:
                raise ValueError("margin must have one entry per term (the shape of y)")
        self._margin = _NO_MARGIN if self.margin is None else self.margin
        self._compiled = use_compiled_vectors(self.y.shape[0])

    def _margins(self, outputs: np.ndarray) -> np.ndarray:
        """``y_i o[rows_i] + 1 - m_i``, the argument of ``l_2`` (numpy path)."""
        z = self.y * (outputs if self.rows is None else outputs[self._map])
        return z if self.margin is None else z + (1.0 - self.margin)

    def _targets(self) -> np.ndarray:
        """Newton targets ``y_i m_i`` of the terms (``y_i`` without margins)."""
        return self.y if self.margin is None else self.y * self.margin

    def expand(self, outputs: np.ndarray) -> np.ndarray:
        """Outputs of the terms from outputs of the data rows."""
        return outputs if self.rows is None else outputs[self.rows]

    def value(self, outputs: np.ndarray) -> float:
        """``(1/2) sum_i c_i l_2(y_i o_i)``."""
        if not self._compiled:
            return 0.5 * float(self.cost @ squared_hinge(self._margins(outputs)))
        return float(_terms_value(np.asarray(outputs, dtype=np.float64), self._map, self.y,
                                  self.cost, self._margin))

    def active(self, outputs: np.ndarray) -> np.ndarray:
        """Mask of the terms in the active (support vector) set ``j(w)``."""
        if not self._compiled:
            return (self._margins(outputs) < 1.0) & (self.cost > 0.0)
        return _terms_active(np.asarray(outputs, dtype=np.float64), self._map, self.y,
                             self.cost, self._margin)

    def newton_system(self, active: np.ndarray):
        """Rows, costs and targets of the least-squares problem of eq. 4.

        Terms sharing a row are merged: ``c = sum c_i`` and ``t = sum c_i y_i m_i / c``
        (the target of a term is ``y_i m_i``), which leaves the Hessian and the right-hand
        side of eq. 4 unchanged.

        Returns
        -------
        rows : ndarray of int
            Data rows with at least one active term.
        cost, target : ndarray
            Merged cost and target of each of those rows.
        """
        if self.rows is None:
            rows = np.flatnonzero(active)
            return rows, self.cost[rows], self._targets()[rows]
        if not self._compiled:
            rows, cost = self._map[active], self.cost[active]
            row_cost = np.bincount(rows, weights=cost, minlength=self.n_rows)
            row_rhs = np.bincount(rows, weights=cost * self._targets()[active],
                                  minlength=self.n_rows)
            keep = np.flatnonzero(row_cost > 0.0)
            return keep, row_cost[keep], row_rhs[keep] / row_cost[keep]
        return _merge_terms(active, self._map, self.y, self.cost, self.n_rows, self._margin)


class LogLoss:
    """Weighted logistic / multinomial log-likelihood ``sum_i s_i L(o_i)`` over outputs.

    One column of outputs and ``+1/-1`` targets: ``L(o) = log(1 + exp(-y o))`` (binary
    logistic regression); ``K`` columns and one-hot targets: ``L(o) = logsumexp(o) - o_y``
    (multinomial).  These are the losses of scikit-learn's ``LogisticRegression``, the
    supervised counterpart of the linear methods under ``fallback="cv"``
    (:func:`semisup.solvers.logistic.logistic_regression`).

    Parameters
    ----------
    targets : ndarray of shape (n, 1) or (n, K)
        ``+1/-1`` (one column) or one-hot rows.
    weights : ndarray of shape (n,)
        Non-negative term weights ``s_i``.
    """

    def __init__(self, targets: np.ndarray, weights: np.ndarray):
        self.targets = np.asarray(targets, dtype=np.float64)
        self.weights = np.asarray(weights, dtype=np.float64)
        self.binary = self.targets.shape[1] == 1

    def evaluate(self, outputs: np.ndarray) -> tuple[float, np.ndarray]:
        """``(value, gradient)`` at ``outputs`` (the shape of the targets)."""
        s = self.weights[:, None]
        if self.binary:
            m = self.targets[:, 0] * outputs[:, 0]
            value = float(self.weights @ np.logaddexp(0.0, -m))
            sig = 0.5 * (1.0 + np.tanh(0.5 * m))        # sigma(y o) without overflow
            return value, s * (-self.targets * (1.0 - sig)[:, None])
        top = outputs.max(axis=1, keepdims=True)
        e = np.exp(outputs - top)
        total = e.sum(axis=1, keepdims=True)
        log_norm = (np.log(total) + top).ravel()
        value = float(self.weights @ (log_norm - np.sum(self.targets * outputs, axis=1)))
        return value, s * (e / total - self.targets)
