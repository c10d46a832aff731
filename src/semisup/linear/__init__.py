"""Linear (semi-)supervised SVMs of the SVMlin family."""

from semisup.linear.cccp import CCCPS3VM
from semisup.linear.da import DeterministicAnnealingSVM
from semisup.linear.laplacian import LinearLapRLS, LinearLapSVM
from semisup.linear.svm import L2SVM, RLSClassifier
from semisup.linear.tsvm import TransductiveSVM

__all__ = ["L2SVM", "RLSClassifier", "TransductiveSVM", "DeterministicAnnealingSVM",
           "LinearLapRLS", "LinearLapSVM", "CCCPS3VM"]
