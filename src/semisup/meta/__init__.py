"""Estimators over other estimators: the safe automatic classifier, self-/co-/tri-training.

They select with :mod:`semisup.model_selection` only, never a private cross-validation.
"""
