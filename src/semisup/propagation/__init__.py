"""Graph label propagation: the harmonic function and label spreading, solved by CG.

* :class:`LabelPropagation` -- the harmonic function of Zhu, Ghahramani & Lafferty (2003),
  with optional class mass normalisation;
* :class:`LabelSpreading` -- learning with local and global consistency (Zhou et al. 2004).

Both build the library's kNN graph (:mod:`semisup.graph`), solve one sparse SPD system per
class by block conjugate gradients, and extend to new rows harmonically.  The Nyström
approximation of label spreading is :class:`semisup.prototypes.NystromLabelSpreading`.
"""

from semisup.propagation.harmonic import LabelPropagation
from semisup.propagation.spreading import LabelSpreading

__all__ = ["LabelPropagation", "LabelSpreading"]
