"""scikit-learn's estimator checks."""

from sklearn.utils.estimator_checks import parametrize_with_checks

from semisup import (
    L2SVM,
    DeterministicAnnealingSVM,
    LinearLapRLS,
    LinearLapSVM,
    RLSClassifier,
    TransductiveSVM,
)

_MINUS_ONE = ("y == -1 marks unlabeled rows (the sklearn.semi_supervised convention), so the "
              "check's class label -1 cannot be a class")
_TOL = ("iterative solvers: CGLS stops at relative residual tol=1e-6 and dual CD at a 1e-6 "
        "relative duality gap; the check asks for 1e-7 agreement of the coefficients")
EXPECTED = {
    "check_classifiers_classes": _MINUS_ONE,
    "check_sample_weight_equivalence_on_dense_data": _TOL,
    "check_sample_weight_equivalence_on_sparse_data": _TOL,
}


@parametrize_with_checks(
    [L2SVM(), RLSClassifier(), TransductiveSVM(), DeterministicAnnealingSVM(), LinearLapRLS(),
     LinearLapSVM()],
    expected_failed_checks=lambda est: {
        k: v for k, v in EXPECTED.items() if "sample_weight" not in k
        or isinstance(est, (L2SVM, RLSClassifier, TransductiveSVM, DeterministicAnnealingSVM))},
)
def test_sklearn_compatible(estimator, check):
    check(estimator)
