"""Plumbing shared by the semi-supervised linear SVMs (one definition, one check)."""

from __future__ import annotations

from semisup.linear._base import LinearSemiSupervisedClassifier
from semisup.linear._core import SemiSupervisedLinearSVMCore


class SemiSupervisedLinearSVM(SemiSupervisedLinearSVMCore, LinearSemiSupervisedClassifier):
    """Base of TSVM and DA: parameters ``lam``, ``lam_u``, ``positive_fraction``.

    The parameter checks, ``r`` and the binary fit are
    :class:`semisup.linear._core.SemiSupervisedLinearSVMCore` (shared with the command
    line's scikit-learn-free route); this class joins them to the estimators' API.
    Subclasses name their algorithm (a function of the design with labeled rows first,
    the number of labeled rows, their +1/-1 labels, ``lam``, ``lam_u`` and ``r``) and the
    keyword arguments it takes from the estimator's parameters.
    """
