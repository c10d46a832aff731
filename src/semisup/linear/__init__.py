"""Linear (semi-)supervised SVMs of the SVMlin family.

Names are imported on first use (as in :mod:`semisup`): the TSVM does not load the graph
stack of the Laplacian models.
"""

from __future__ import annotations

import importlib

_EXPORTS = {
    "L2SVM": "semisup.linear.svm",
    "RLSClassifier": "semisup.linear.svm",
    "TransductiveSVM": "semisup.linear.tsvm",
    "DeterministicAnnealingSVM": "semisup.linear.da",
    "LinearLapRLS": "semisup.linear.laplacian",
    "LinearLapSVM": "semisup.linear.laplacian",
    "CCCPS3VM": "semisup.linear.cccp",
}

__all__ = list(_EXPORTS)


def __getattr__(name: str):
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'semisup.linear' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
