"""bench_defaults: a positive-only classifier is not applicable to data with negative values."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import scipy.sparse as sp

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_defaults import DataSet, applicable  # noqa: E402


def test_positive_only_classifier_is_not_applicable_to_negative_features():
    y = np.array([0, 1, 0, 1])
    counts = DataSet("c", "extra", sp.csr_matrix(np.array([[1.0, 0], [0, 2], [3, 1], [0, 1]])), y)
    centred = DataSet("r", "extra", np.array([[-1.0, 0], [0, 2], [3, 1], [0, 1]]), y)
    assert applicable("SemiSupervisedNB", counts)
    assert not applicable("SemiSupervisedNB", centred)
    # any other classifier, and the supervised counterparts, run everywhere
    assert applicable("TriTraining", centred)
    assert applicable("LogisticRegression", centred)
