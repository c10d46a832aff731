"""semisup: semi-supervised learning at scale.

Estimators follow scikit-learn: ``fit(X, y)`` with ``y == -1`` marking unlabeled rows.

The public names are imported on first use (PEP 562): ``import semisup`` loads nothing
heavy, and the command line and the linear family never import the manifold or prototype
stacks.  ``from semisup import X``, ``semisup.X`` and unpickling work as with eager imports.
"""

from __future__ import annotations

from semisup._lazy import lazy_exports
from semisup._version import __version__ as __version__

# public name -> module defining it; adding an export is one line here
_EXPORTS = {
    "L2SVM": "semisup.linear.svm",
    "RLSClassifier": "semisup.linear.svm",
    "TransductiveSVM": "semisup.linear.tsvm",
    "DeterministicAnnealingSVM": "semisup.linear.da",
    "LinearLapRLS": "semisup.linear.laplacian",
    "LinearLapSVM": "semisup.linear.laplacian",
    "LapRLS": "semisup.manifold.laprls",
    "LapSVM": "semisup.manifold.lapsvm",
    "RegularizedSpectralClustering": "semisup.manifold.spectral",
    "LaplacianEigenmaps": "semisup.manifold.spectral",
    "deformed_kernel": "semisup.manifold",
    "PrototypeVectorMachine": "semisup.prototypes.pvm",
    "NystromLabelSpreading": "semisup.prototypes.baselines",
    "ClusterLapRLS": "semisup.prototypes.baselines",
    "CCCPS3VM": "semisup.linear.cccp",
    "ConvexTSVM": "semisup.transductive.ctsvm",
    "SDPRelaxedTSVM": "semisup.transductive.rtsvm",
    "RhoTSVM": "semisup.transductive.rho",
    "MultipleKernelSVC": "semisup.mkl.estimator",
    "UniversumSVM": "semisup.weak.universum",
    "MixtureSSL": "semisup.weak.mixture",
    "SelfTaughtClassifier": "semisup.weak.selftaught",
    "SupervisedSelfTaught": "semisup.weak.selftaught",
    "AuxiliarySVM": "semisup.text.auxiliary",
    "ActiveSearchPipeline": "semisup.text.pipeline",
    "ClassPriorEstimator": "semisup.prior",
    "LapRLSRegressor": "semisup.manifold.regression",
    "LinearLapRLSRegressor": "semisup.linear.regression",
    "COREG": "semisup.meta.coreg",
    "LabelPropagation": "semisup.propagation",
    "LabelSpreading": "semisup.propagation",
    "SemiSupervisedNB": "semisup.text.naive_bayes",
    "AutoClassifier": "semisup.meta.auto",
    "SelfTraining": "semisup.meta.self_training",
    "CoTraining": "semisup.meta.cotraining",
    "TriTraining": "semisup.meta.tritraining",
    "S4VM": "semisup.linear.s4vm",
}

__all__ = list(_EXPORTS)

__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS)
