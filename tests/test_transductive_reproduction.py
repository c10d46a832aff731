"""CTSVM on a real set of the thesis's Table 3.2 (Breast, linear kernel, l = 20)."""

import numpy as np
import pytest

pytest.importorskip("cvxpy")


@pytest.mark.reproduction
def test_ctsvm_breast_table_3_2(data_dir):
    from sklearn.datasets import load_svmlight_file

    from semisup.solvers.svm import fit_precomputed_svm
    from semisup.transductive import ConvexTSVM

    path = data_dir / "uci_small" / "breast-cancer_scale.bz2"
    if not path.exists():
        pytest.skip(f"{path} not found")
    X, y = load_svmlight_file(str(path), n_features=10)
    X, y = X.toarray()[:, 1:], (y > 0).astype(int)     # drop the sample-code column
    idx = np.random.default_rng(0).choice(y.size, 200, replace=False)
    X, y = X[idx], y[idx]
    lab = np.r_[np.flatnonzero(y == 0)[:13], np.flatnonzero(y == 1)[:7]]   # l = 20
    ys = np.full(y.size, -1)
    ys[lab] = y[lab]
    unl = ys == -1
    est = ConvexTSVM(fallback="none", C_l=1.0, kernel="linear", solver="lowrank").fit(X, ys)
    acc = np.mean(est.transduction_[unl] == y[unl])
    K = X @ X.T
    svm = fit_precomputed_svm(K[np.ix_(lab, lab)], np.where(y[lab] == 1, 1.0, -1.0), 1.0)
    acc_svm = np.mean((svm.decision_function(K[np.ix_(unl, lab)]) > 0) == (y[unl] == 1))
    # thesis Table 3.2: CTSVM 97.79 +- 0.23, SVM 96.46 +- 1.18 on Breast (n = 300, l = 20)
    assert acc >= 0.95, acc
    assert acc >= acc_svm - 0.02, (acc, acc_svm)
    assert est.lmi_min_eig_ >= -1e-4
