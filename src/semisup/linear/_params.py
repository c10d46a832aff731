"""Hyper-parameters shared by the semi-supervised linear SVMs (one definition, one check)."""

from __future__ import annotations

from semisup._validation import check_fraction, check_positive


class SemiSupervisedParams:
    """Mixin: validation of ``lam``, ``lam_u`` and ``positive_fraction``."""

    def _validate_params(self) -> None:
        check_positive(self.lam, "lam")
        check_positive(self.lam_u, "lam_u", allow_zero=True)
        if self.positive_fraction is not None:
            check_fraction(self.positive_fraction, "positive_fraction")

    def _positive_fraction(self, prior: float) -> float:
        """``r``: the given fraction, else the class prior among labeled rows (clipped)."""
        if self.positive_fraction is not None:
            return float(self.positive_fraction)
        return min(max(prior, 1e-3), 1 - 1e-3)
