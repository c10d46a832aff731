"""Worker side of the graph methods: the distributed PVM and the linear LapRLS.

Mixed into :class:`~semisup.distributed._worker.BlockWorker`.  Every method does its blocks'
share with the single-machine kernels (:func:`semisup.prototypes.lowrank.prototype_kernel`,
:func:`~semisup.prototypes.lowrank.weighted_cross`,
:func:`semisup.linear.laplacian.graph_laplacian`, :class:`semisup.regularizers.GraphRidge`)
and returns the sum over its blocks; the per-row arrays (``H = K(X, V)``, degrees, the
partition-local Laplacians) stay here.

This module imports no Dask.
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp


def _dense(M) -> np.ndarray:
    return M.toarray() if sp.issparse(M) else np.asarray(M)


class GraphWorkerMixin:
    """PVM and LapRLS steps over the blocks of one worker (see the module docstring)."""

    blocks: list

    # --- rows by global index (k-means seeds, the default kernel width) ------------------
    def set_row_offsets(self, offsets: dict) -> None:
        for b in self.blocks:
            b.row0 = offsets[b.index]

    def fetch_rows(self, rows: np.ndarray) -> list:
        """``(global positions, dense rows)`` of the requested rows this worker holds."""
        out = []
        for b in self.blocks:
            n_b = b.X.shape[0]
            mask = (rows >= b.row0) & (rows < b.row0 + n_b)
            if mask.any():
                pos = rows[mask]
                out.append((pos, _dense(b.X[pos - b.row0])))
        return out

    # --- k-means (Lloyd) -------------------------------------------------------------------
    def kmeans_step(self, V: np.ndarray) -> np.ndarray:
        """Sums and counts of the rows nearest to each centre: ``[sums | counts | inertia]``.

        One Lloyd iteration's per-row work (the assignment); the client divides.
        """
        m, d = V.shape
        v_sq = np.einsum("ij,ij->i", V, V)
        out = np.zeros((m, d + 1))
        inertia = 0.0
        for b in self.blocks:
            X = b.X
            if X.shape[0] == 0:
                continue
            x_sq = np.asarray(X.multiply(X).sum(axis=1)).ravel() if sp.issparse(X) \
                else np.einsum("ij,ij->i", X, X)
            dist = np.asarray(X @ V.T) * -2.0 + v_sq[None, :]
            near = np.argmin(dist, axis=1)
            inertia += float(np.sum(np.maximum(dist[np.arange(near.size), near] + x_sq, 0.0)))
            onehot = sp.csr_matrix((np.ones(near.size), (near, np.arange(near.size))),
                                   shape=(m, near.size))
            out[:, :d] += _dense(onehot @ X)
            out[:, d] += np.bincount(near, minlength=m)
        return np.concatenate([out.ravel(), [inertia]])

    # --- PVM: H = K(X, V) and the m x m products (eqs. 12-14, 17) ---------------------------
    def pvm_kernel(self, V: np.ndarray, gamma: float, n_nearest: int | None) -> np.ndarray:
        """Build ``E = K(X_b, V)`` (and the sparsified ``H``) per block; returns ``E^T 1``."""
        from semisup.prototypes.lowrank import prototype_kernel, sparsify_rows

        col_sums = np.zeros(V.shape[0])
        for b in self.blocks:
            b.E = prototype_kernel(b.X, V, gamma)
            b.H = b.E if n_nearest is None else sparsify_rows(b.E, n_nearest)
            col_sums += b.E.sum(axis=0)
        return col_sums

    def pvm_degree(self, t: np.ndarray) -> np.ndarray:
        """Degrees ``E (W^+ E^T 1)`` (``t`` from the client); returns ``[sum, max]``."""
        total, top = 0.0, -np.inf
        for b in self.blocks:
            b.degree = b.E @ t
            if b.degree.size:
                total += float(b.degree.sum())
                top = max(top, float(b.degree.max()))
        return np.array([total, top])

    def pvm_products(self, kind: str, floor: float) -> np.ndarray:
        """``[H^T H, C, H^T D H]`` summed over the blocks (``3 x m x m``), the pieces of
        :meth:`semisup.prototypes.lowrank.NystromLaplacian.project`: ``C = H^T E``
        (unnormalised) or ``H^T D^-1/2 E`` (normalised)."""
        from semisup.prototypes.lowrank import weighted_cross

        m = self.blocks[0].E.shape[1] if self.blocks else 0
        out = np.zeros((3, m, m))
        for b in self.blocks:
            if b.E.shape[0] == 0:
                continue
            gram = weighted_cross(b.H)
            out[0] += gram
            if kind == "unnormalized":
                out[1] += gram if b.H is b.E else weighted_cross(b.H, b.E)
                out[2] += weighted_cross(b.H, weights=b.degree)
            else:
                s = 1.0 / np.sqrt(np.maximum(b.degree, floor))
                out[1] += weighted_cross(b.E, weights=s) if b.H is b.E \
                    else weighted_cross(b.H, b.E, s)
            if b.H is not b.E:
                b.E = None  # only H is needed from here on
        return out

    def pvm_labeled(self) -> list:
        """Per block ``(partition, H_l, labels)`` of its labeled rows."""
        return [(b.index, _dense(b.H[b.lab]), b.y[b.lab]) for b in self.blocks]

    def pvm_transduction(self, F: np.ndarray, intercept: np.ndarray, classes) -> list:
        """Per block ``(partition, class index of every row)``: ``H f_v + b`` on unlabeled
        rows (arg max, or the sign for one column), the given class on labeled ones."""
        return [(b.index, self._pvm_block_index(b, F, intercept, classes))
                for b in self.blocks]

    def pvm_block_labels(self, index: int, F, intercept, classes) -> np.ndarray:
        """Transduced labels of partition ``index``'s rows (see :meth:`pvm_transduction`)."""
        b = next(b for b in self.blocks if b.index == index)
        return classes[self._pvm_block_index(b, F, intercept, classes)]

    @staticmethod
    def _pvm_block_index(b, F, intercept, classes) -> np.ndarray:
        scores = np.asarray(b.H @ F) + intercept
        idx = (scores[:, 0] > 0).astype(np.int64) if scores.shape[1] == 1 \
            else np.argmax(scores, axis=1)
        idx[b.lab] = np.searchsorted(classes, b.y[b.lab])
        return idx

    def pvm_clear(self) -> None:
        for b in self.blocks:
            b.E = b.H = b.degree = None

    # --- linear LapRLS with partition-local graphs ----------------------------------------
    def lap_graph(self, fit_intercept: bool, intercept_scaling: float, power: int,
                  graph_options: dict) -> np.ndarray:
        """Each block's own kNN graph Laplacian (edges only within the block); returns
        ``[rows, sum of the adjacency weights]``."""
        from semisup.linear.laplacian import graph_laplacian
        from semisup.regularizers import GraphRidge
        from semisup.solvers.design import Design

        total = np.zeros(2)
        for b in self.blocks:
            n_b = b.X.shape[0]
            if n_b < 2:  # no pair to connect: no graph term from this block
                b.graph_reg = None
                total[0] += n_b
                continue
            L, W = graph_laplacian(b.X, **graph_options)
            b.graph_reg = GraphRidge(0.0, 1.0, Design(b.X, fit_intercept, intercept_scaling),
                                     L, power=power)
            total += (n_b, float(W.sum()))
        return total

    def lap_matvec(self, p: np.ndarray) -> np.ndarray:
        """``sum_b X_b^T L_b^p X_b p`` (the graph part of ``R p``)."""
        out = np.zeros_like(p)
        for b in self.blocks:
            if b.graph_reg is not None:
                out += b.graph_reg.matvec(p)
        return out

    def lap_dense(self) -> np.ndarray:
        """``sum_b X_b^T L_b^p X_b`` as a dense ``d x d`` matrix (direct solver)."""
        out = None
        for b in self.blocks:
            if b.graph_reg is not None:
                R = b.graph_reg.dense()
                out = R if out is None else out + R
        return out

    def labeled_rows(self) -> list:
        """Per block ``(partition, X_l, labels)`` of its labeled rows."""
        return [(b.index, b.X[b.lab], b.y[b.lab]) for b in self.blocks]

    def lap_clear(self) -> None:
        for b in self.blocks:
            b.graph_reg = None
