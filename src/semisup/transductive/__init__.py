"""Transductive SVMs by convex relaxation (thesis chapters 3 and 5).

* :class:`ConvexTSVM` - CTSVM (eqs. 3.8/3.11), exact SDP route and a scalable low-rank route.
* :class:`SDPRelaxedTSVM` - the SDP baseline RTSVM (eq. 3.2), low-rank by default.
* :class:`RhoTSVM` - the rho-TSVM of chapter 5 (rho = 0, small-rho CCCP, large-rho kernel).
"""

from semisup.transductive.ctsvm import ConvexTSVM
from semisup.transductive.rho import RhoTSVM
from semisup.transductive.rtsvm import SDPRelaxedTSVM

__all__ = ["ConvexTSVM", "RhoTSVM", "SDPRelaxedTSVM"]
