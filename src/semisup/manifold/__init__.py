"""Manifold regularization (Belkin, Niyogi & Sindhwani): kernel methods with a graph
Laplacian penalty and an out-of-sample extension.

* :class:`LapRLS` -- Laplacian Regularized Least Squares (eq. 8);
* :class:`LapSVM` -- Laplacian SVM, dual (eqs. 9-11) or primal (Melacci & Belkin 2011);
* :class:`RegularizedSpectralClustering`, :class:`LaplacianEigenmaps` -- the unsupervised
  case (section 5.4, eq. 13);
* :func:`deformed_kernel` -- the data-dependent kernel that turns any supervised kernel
  method into its manifold-regularised version.
"""

from semisup.manifold._rkhs import deformed_kernel
from semisup.manifold.laprls import LapRLS
from semisup.manifold.lapsvm import LapSVM
from semisup.manifold.spectral import LaplacianEigenmaps, RegularizedSpectralClustering

__all__ = ["LapRLS", "LapSVM", "LaplacianEigenmaps", "RegularizedSpectralClustering",
           "deformed_kernel"]
