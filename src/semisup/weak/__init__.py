"""Unlabeled data that is only partly relevant (thesis chapters 6-7).

:class:`UniversumSVM` (examples of neither class), :class:`MixtureSSL` (unlabeled rows
that mix relevant and irrelevant points, USSL), :class:`SelfTaughtClassifier` (STL) and
:class:`SupervisedSelfTaught` (SSTL) for weakly related unlabeled data.
"""

from semisup.weak.mixture import MixtureSSL
from semisup.weak.selftaught import SelfTaughtClassifier, SupervisedSelfTaught
from semisup.weak.universum import UniversumSVM

__all__ = ["UniversumSVM", "MixtureSSL", "SelfTaughtClassifier", "SupervisedSelfTaught"]
