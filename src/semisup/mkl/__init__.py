"""Multiple kernel learning (Xu's thesis, ch. 4): the extended level method, SILP and
SimpleMKL on one problem, supervised and semi-supervised (deformed kernels)."""

from semisup.mkl.bank import (
    KernelBank,
    StreamingKernelBank,
    check_kernel_specs,
    evaluate_kernel,
    simplemkl_kernels,
)
from semisup.mkl.estimator import MultipleKernelSVC, deformed_bank
from semisup.mkl.level import level_mkl
from semisup.mkl.problem import MKLProblem, MKLResult, SVMPoint
from semisup.mkl.silp import silp_mkl
from semisup.mkl.simple import descent_direction, simple_mkl

__all__ = ["KernelBank", "MKLProblem", "MKLResult", "MultipleKernelSVC", "SVMPoint",
           "StreamingKernelBank",
           "check_kernel_specs", "deformed_bank", "descent_direction", "evaluate_kernel",
           "level_mkl",
           "silp_mkl", "simple_mkl", "simplemkl_kernels"]
