"""Linear (semi-)supervised SVMs of the SVMlin family.

Names are imported on first use (as in :mod:`semisup`): the TSVM does not load the graph
stack of the Laplacian models.
"""

from __future__ import annotations

from semisup._lazy import lazy_exports

_EXPORTS = {
    "L2SVM": "semisup.linear.svm",
    "RLSClassifier": "semisup.linear.svm",
    "TransductiveSVM": "semisup.linear.tsvm",
    "DeterministicAnnealingSVM": "semisup.linear.da",
    "LinearLapRLS": "semisup.linear.laplacian",
    "LinearLapSVM": "semisup.linear.laplacian",
    "CCCPS3VM": "semisup.linear.cccp",
    "S4VM": "semisup.linear.s4vm",
}

__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
