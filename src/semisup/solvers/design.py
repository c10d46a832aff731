"""The data matrix as a linear operator over a subset of its rows, with an implicit bias.

SVMlin appends a constant feature to every example so that the bias is one more
(regularised) weight.  :class:`Design` does the same without copying the data: the
last weight multiplies the constant ``intercept_scaling``.  ``restrict`` gives the
operator over a row subset (the active set ``j(w)`` of the finite Newton method) by
composing index arrays.  The compiled kernels multiply a scattered subset that serves
more than a couple of products on a contiguous copy of its rows, made once per restriction
(at most one more copy of the data; ``SEMISUP_GATHER_ROWS=0`` keeps the indexed products
and that memory).
"""

from __future__ import annotations

import os

import numpy as np
import scipy.sparse as sp

try:  # scipy's compiled CSR products, without the per-call checks of ``@`` (small problems)
    from scipy.sparse._sparsetools import csc_matvec as _csc_matvec
    from scipy.sparse._sparsetools import csr_matvec as _csr_matvec
except ImportError:  # pragma: no cover - private module moved: use the public operator
    _csr_matvec = _csc_matvec = None

from semisup._accel import use_compiled
from semisup.solvers import _kernels


def _unsigned(indices: np.ndarray) -> np.ndarray:
    """CSR column indices viewed as unsigned (spares numba's negative-index check)."""
    return indices.view(np.uint32 if indices.dtype == np.int32 else np.uint64)


#: Gather scattered row subsets into a contiguous copy for the compiled kernels.
GATHER_ROWS = os.environ.get("SEMISUP_GATHER_ROWS", "1") != "0"
#: Products on the indexed rows before the copy is made.  Rows picked here and there (an
#: active set) defeat the hardware prefetcher: an indexed product over a random half of
#: MNIST's rows took 3.2x, of SecStr 1.27M's 2.4x, as long as on a contiguous copy, and
#: the copy costs one to two products.  Copying only once a restriction has served this many
#: products keeps the copy off subsets that are used once or twice (ski rental).
GATHER_AFTER = 2


def _scattered(rows: np.ndarray, breaks: int | None = None) -> bool:
    """True when more than a tenth of consecutive rows are not neighbours in ``X``.

    Whole-data operators and the labeled-first order of the semi-supervised solvers are
    long runs of neighbouring rows; an active set of MFN is not.  ``breaks``: the count of
    non-neighbours when already known.
    """
    if rows.shape[0] <= 1:
        return False
    if breaks is None:
        breaks = np.count_nonzero(np.diff(rows) != 1)
    return breaks > 0.1 * rows.shape[0]


class Design:
    """Rows ``rows`` of ``X`` (CSR or dense), optionally augmented by a constant column.

    Parameters
    ----------
    X : ndarray or scipy.sparse matrix of shape (n_samples, n_features)
        Converted to CSR float64 (sparse) or C-contiguous float64 (dense) once; sparse
        float32 data large enough for the compiled kernels is kept as float32 (products
        and accumulators stay float64).
    fit_intercept : bool
        Append the constant column ``intercept_scaling`` (its weight is the bias).
    intercept_scaling : float
        Value of the constant column.
    rows : ndarray of int, optional
        Row subset (sorted, unique); all rows when omitted.
    parallel : bool or None
        Use the multi-threaded (True) or serial (False) compiled kernels; ``None`` decides
        from the number of non-zeros.

    Sparse data with fewer non-zeros than :data:`semisup._accel.COMPILE_MIN_SIZE` is
    multiplied by scipy.sparse on a row slice made once per restriction (no numba), larger
    data by the compiled kernels on the index arrays (no copy).
    """

    def __init__(self, X, fit_intercept: bool = True, intercept_scaling: float = 1.0,
                 rows: np.ndarray | None = None, parallel: bool | None = None):
        if sp.issparse(X):
            # an explicit ``parallel`` asks for the compiled kernels whatever the size
            compiled = use_compiled(X.nnz) or parallel is not None
            # float32 values stay float32 on the compiled path: its kernels are compiled
            # per dtype and accumulate in float64 (half the memory of the data array).
            # scipy's CSR products need one dtype for matrix and vector: small data only.
            keep32 = compiled and X.dtype == np.float32
            X = sp.csr_matrix(X, dtype=np.float32 if keep32 else np.float64)
            if not X.has_sorted_indices:
                X.sort_indices()
            # int32 or int64 index arrays are used as they are (numba specialises on either):
            # a widening copy would cost more memory than the data.  The column indices are
            # viewed as unsigned, which spares numba's negative-index check in the inner
            # loops (about 20% of a mat-vec on MNIST, benchmarks/bench_cgls_overhead.py).
            self._indptr, self._data = X.indptr, X.data
            self._indices = _unsigned(X.indices)
            self._compiled = compiled
        else:
            X = np.ascontiguousarray(X, dtype=np.float64)
            self._compiled = False  # BLAS does the products
        self.X = X
        self.sparse = sp.issparse(X)
        self.fit_intercept = bool(fit_intercept)
        self.intercept_scaling = float(intercept_scaling)
        self.n_features = X.shape[1]
        self.n_weights = self.n_features + int(self.fit_intercept)
        self._parallel = parallel
        self._set_rows(np.arange(X.shape[0], dtype=np.int64) if rows is None else rows)

    def _set_rows(self, rows: np.ndarray) -> None:
        self.rows = np.asarray(rows, dtype=np.int64)
        self.n_rows = self.rows.shape[0]
        self._dense_block = None
        self._bounds = None
        self._sub = None
        if self.sparse:
            breaks = None
            if self._compiled:
                nnz, breaks = (int(v) for v in
                               _kernels.rows_nnz_and_breaks(self._indptr, self.rows))
            else:
                nnz = int((self._indptr[self.rows + 1] - self._indptr[self.rows]).sum())
            self.nnz = nnz
            par = self._parallel
            # ``parallel=None``: large enough for the parallel kernels, the thread setting
            # (:func:`_kernels.parallel_threads`) sizes the team product by product
            self._auto_threads = False
            if not self._compiled:
                par = False
            elif par is None:
                par = nnz >= _kernels.PARALLEL_MIN_NNZ and _kernels.n_threads() > 1
                self._auto_threads = par
            self._par = bool(par)
            # the arrays the compiled kernels read: X itself through ``rows``, or a copy
            self._kernel_view = (self._indptr, self._indices, self._data, self.rows)
            self._products = 0
            self._gather = self._compiled and GATHER_ROWS and _scattered(self.rows, breaks)
            if self._par and not self._auto_threads:
                self._bounds = _kernels.chunk_bounds(
                    self._indptr, self.rows, max(1, _kernels.n_threads()), self._nnz_arg())
        else:
            self.nnz = self.n_rows * self.n_features
            identity = self.n_rows == self.X.shape[0] and bool(
                np.all(self.rows == np.arange(self.n_rows)))
            if not identity:
                # dense: one gather per restriction, then BLAS for every product
                self._dense_block = self.X[self.rows]

    def _view(self) -> tuple:
        """The arrays the compiled kernels read; gathers a scattered subset when it pays."""
        if self._gather:
            self._products += 1
            if self._products > GATHER_AFTER:
                self._gather = False
                indptr, indices, data = _kernels.csr_gather_rows(*self._kernel_view)
                rows = np.arange(self.n_rows, dtype=np.int64)
                self._kernel_view = (indptr, indices, data, rows)
                self._bounds = None if self._auto_threads or not self._par else \
                    _kernels.chunk_bounds(indptr, rows, max(1, _kernels.n_threads()),
                                          self._nnz_arg())
        return self._kernel_view

    def _team(self, view: tuple):
        """Chunk bounds for the parallel kernels now (one chunk per thread), ``None``: serial."""
        if not self._auto_threads:
            return self._bounds
        threads = _kernels.parallel_threads()
        if threads <= 1:
            return None
        if self._bounds is None or self._bounds.shape[0] != threads + 1:
            self._bounds = _kernels.chunk_bounds(view[0], view[3], threads, self._nnz_arg())
        return self._bounds

    def _nnz_arg(self) -> int | None:
        """The stored entries for :func:`_kernels.chunk_bounds` (its compiled pass)."""
        return self.nnz if self._compiled else None

    def restrict(self, subset: np.ndarray) -> Design:
        """Operator over rows ``self.rows[subset]`` (``subset`` indexes this operator's rows)."""
        new = object.__new__(Design)
        new.__dict__.update(self.__dict__)
        new._set_rows(self.rows[np.asarray(subset, dtype=np.int64)])
        return new

    def _rows_csr(self):
        """The operator's rows as a CSR matrix (numpy path; sliced once, on first use)."""
        if self._sub is None:
            whole = self.n_rows == self.X.shape[0] and bool(
                np.all(self.rows == np.arange(self.n_rows)))
            self._sub = self.X if whole else self.X[self.rows]
        return self._sub

    @property
    def shape(self) -> tuple[int, int]:
        return (self.n_rows, self.n_weights)

    def matvec(self, w: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Outputs ``X_rows w`` (bias included) for the operator's rows."""
        if out is None:
            out = np.empty(self.n_rows)
        wf = w[: self.n_features]
        if self.sparse and not self._compiled:
            sub = self._rows_csr()
            if _csr_matvec is None:
                out[:] = sub @ wf
            else:
                out[:] = 0.0
                n_rows, n_cols = sub.shape  # scipy computes .shape on every access
                _csr_matvec(n_rows, n_cols, sub.indptr, sub.indices, sub.data,
                            np.ascontiguousarray(wf), out)
        elif self.sparse:
            view = self._view()
            _kernels.csr_rows_matvec(*view, np.ascontiguousarray(wf), out, self._team(view))
        else:
            block = self.X if self._dense_block is None else self._dense_block
            np.dot(block, wf, out=out)
        if self.fit_intercept:
            out += w[self.n_features] * self.intercept_scaling
        return out

    def rmatvec(self, q: np.ndarray) -> np.ndarray:
        """``X_rows^T q`` (with the bias component last)."""
        out = np.empty(self.n_weights)
        head = out[: self.n_features]
        if self.sparse and not self._compiled:
            sub = self._rows_csr()
            if _csc_matvec is None:
                head[:] = sub.T @ q
            else:  # CSR rows read as the CSC columns of the transpose
                head[:] = 0.0
                n_rows, n_cols = sub.shape
                _csc_matvec(n_cols, n_rows, sub.indptr, sub.indices, sub.data,
                            np.ascontiguousarray(q, dtype=np.float64), head)
        elif self.sparse:
            view = self._view()
            _kernels.csr_rows_rmatvec(*view, np.ascontiguousarray(q, dtype=np.float64), head,
                                      self._team(view))
        else:
            block = self.X if self._dense_block is None else self._dense_block
            np.dot(q, block, out=head)
        if self.fit_intercept:
            out[self.n_features] = self.intercept_scaling * q.sum()
        return out

    def rmatvec_pair(self, q1: np.ndarray, q2: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """``(X_rows^T q1, X_rows^T q2)``, equal to two :meth:`rmatvec` calls; the compiled
        kernels read the rows once for both."""
        if not (self.sparse and self._compiled):
            return self.rmatvec(q1), self.rmatvec(q2)
        out1, out2 = np.empty(self.n_weights), np.empty(self.n_weights)
        q1 = np.ascontiguousarray(q1, dtype=np.float64)
        q2 = np.ascontiguousarray(q2, dtype=np.float64)
        view = self._view()
        _kernels.csr_rows_rmatvec_pair(*view, q1, q2, out1[: self.n_features],
                                       out2[: self.n_features], self._team(view))
        if self.fit_intercept:
            out1[self.n_features] = self.intercept_scaling * q1.sum()
            out2[self.n_features] = self.intercept_scaling * q2.sum()
        return out1, out2

    @property
    def fused_normal_product(self) -> bool:
        """Whether :meth:`normal_product` reads the rows once (compiled sparse kernels)."""
        return self.sparse and self._compiled

    def normal_product(self, p: np.ndarray, cost: np.ndarray) -> tuple[float, np.ndarray]:
        """``(q^T C q, X_rows^T C q)`` for ``q = X_rows p`` and ``C = diag(cost)``.

        CGLS's curvature and the change of its data residual ``X^T z`` along ``p``; with the
        compiled kernels in one pass over the rows (:attr:`fused_normal_product`).
        """
        if not self.fused_normal_product:
            q = self.matvec(p)
            Cq = cost * q
            return float(q @ Cq), self.rmatvec(Cq)
        out = np.empty(self.n_weights)
        bias = float(p[self.n_features]) * self.intercept_scaling if self.fit_intercept \
            else 0.0
        view = self._view()
        curv, total = _kernels.csr_rows_normal_product(
            *view, np.ascontiguousarray(p[: self.n_features]), bias,
            np.ascontiguousarray(cost, dtype=np.float64), out[: self.n_features],
            self._team(view))
        if self.fit_intercept:
            out[self.n_features] = self.intercept_scaling * total
        return float(curv), out

    def weighted_column_sq(self, c: np.ndarray) -> np.ndarray:
        """``diag(X_rows^T C X_rows)`` for ``C = diag(c)`` (bias component last)."""
        out = np.empty(self.n_weights)
        head = out[: self.n_features]
        c = np.ascontiguousarray(c, dtype=np.float64)
        if self.sparse and not self._compiled:
            sub = self._rows_csr()
            head[:] = np.bincount(sub.indices, weights=np.repeat(c, np.diff(sub.indptr))
                                  * sub.data ** 2, minlength=self.n_features)
        elif self.sparse:
            _kernels.csr_rows_weighted_sq_colsum(*self._view(), c, head)
        else:
            block = self.X if self._dense_block is None else self._dense_block
            np.dot(c, block * block, out=head)
        if self.fit_intercept:
            out[self.n_features] = self.intercept_scaling ** 2 * c.sum()
        return out

    def row_sq_norms(self) -> np.ndarray:
        """``||x_i||^2`` of every row of the operator (the constant column included)."""
        if self.sparse and not self._compiled:
            sub = self._rows_csr()
            out = np.bincount(np.repeat(np.arange(self.n_rows), np.diff(sub.indptr)),
                              weights=sub.data ** 2, minlength=self.n_rows)
        elif self.sparse:
            indptr, _, data, rows = self._view()
            out = _kernels.csr_rows_sq_norms(indptr, data, rows)
        else:
            block = self.X if self._dense_block is None else self._dense_block
            out = np.einsum("ij,ij->i", block, block)
        if self.fit_intercept:
            out += self.intercept_scaling ** 2
        return out

    def materialize(self):
        """The operator's rows as an explicit matrix (CSR or dense), intercept column included.

        A copy of the data: only for direct solvers on small ``d``.
        """
        X = self.X[self.rows].astype(np.float64, copy=False)  # direct solvers: float64
        if not self.fit_intercept:
            return X
        col = np.full((self.n_rows, 1), self.intercept_scaling)
        return sp.hstack([X, sp.csr_matrix(col)], format="csr") if self.sparse \
            else np.hstack([X, col])

    def weights_to_coef(self, w: np.ndarray) -> tuple[np.ndarray, float]:
        """Split the weight vector into ``(coef, intercept)`` in the units of ``X``."""
        coef = np.asarray(w[: self.n_features]).copy()
        b = float(w[self.n_features]) * self.intercept_scaling if self.fit_intercept else 0.0
        return coef, b
