"""semisup: semi-supervised learning at scale.

Estimators follow scikit-learn: ``fit(X, y)`` with ``y == -1`` marking unlabeled rows.
"""

from semisup._version import __version__ as __version__
from semisup.linear import (
    L2SVM,
    DeterministicAnnealingSVM,
    LinearLapRLS,
    LinearLapSVM,
    RLSClassifier,
    TransductiveSVM,
)
from semisup.manifold import (
    LaplacianEigenmaps,
    LapRLS,
    LapSVM,
    RegularizedSpectralClustering,
    deformed_kernel,
)
from semisup.prototypes import ClusterLapRLS, NystromLabelSpreading, PrototypeVectorMachine

__all__ = ["L2SVM", "RLSClassifier", "TransductiveSVM", "DeterministicAnnealingSVM",
           "LinearLapRLS", "LinearLapSVM", "LapRLS", "LapSVM", "RegularizedSpectralClustering",
           "LaplacianEigenmaps", "deformed_kernel", "PrototypeVectorMachine",
           "NystromLabelSpreading", "ClusterLapRLS"]
