r"""Is the motion exciting the load's parameters? Hold the estimate when it is not.

Each block adds information Rᵀ S⁻¹ R to the estimate of Φ_b. In prior-normalized
coordinates (D = diag of the prior standard deviations of (m, h, I)) the running
average over a window of about ``window`` updates,

.. math::
    W_k = (1 - a) W_{k-1} + a\, D R_k^\top S_k^{-1} R_k D,\qquad a = 1/\text{window},

says how much one block reduces the prior variance. ``excitation`` is λ_min of the
Schur complement of its inertia block, W_mh − W_mh,I W_II⁺ W_I,mh: the information on
the mass and first moment (COM) of the load once the inertia is estimated too, what a
``set_load``/``set_payload`` needs first, dimensionless (1 = a block halves the prior
variance along the least excited (m, h) direction). The rotational inertia is excited
only by rich motion and is not required (its directions are what forgetting lets wind
up; the projected and geometric methods bound them). Below ``threshold`` the block is
*poorly excited*: the estimator skips it (no update, no forgetting, so no covariance
wind-up and no drift) and the diagnostics say so. An arm at rest informs m and the two
components of h across gravity only: the excitation is ≈ 0.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array


@dataclass(frozen=True)
class ExcitationConfig:
    """Settings of the excitation check.

    Attributes:
        window: updates averaged (time constant of the running average) [1].
        threshold: λ_min(W) below which a block is poorly excited [1]; 0 = never hold.
        warmup: blocks averaged before any is called well excited (one block has rank
            ≤ 6, so λ_min of a few blocks is 0 whatever the motion); held until then.
    """

    window: int = 200
    threshold: float = 1e-3
    warmup: int = 20

    def __post_init__(self) -> None:
        """Check the ranges.

        Raises:
            InvalidInputError: a value out of range.
        """
        if self.window < 1:
            raise InvalidInputError("window", f"must be >= 1, got {self.window}")
        if not (math.isfinite(self.threshold) and self.threshold >= 0):
            raise InvalidInputError("threshold", f"must be >= 0, got {self.threshold}")
        if self.warmup < 0:
            raise InvalidInputError("warmup", f"must be >= 0, got {self.warmup}")


def schur_excitation(information: Array) -> float:
    """λ_min of the Schur complement of the inertia block in W (10, 10) [1].

    W_mh − W_mh,I W_II⁺ W_I,mh is the information on (m, h) once the rotational inertia
    is estimated too: a direction of (m, h) the motion confounds with the inertia has
    none, however large the (m, h) sub-block alone is. W_II may be singular (an
    unexcited inertia): it is regularized by δ = 10⁻¹⁰ of W's trace, which can only raise
    the value, by an amount that vanishes with δ (one 6×6 solve instead of a
    pseudo-inverse).
    """
    w = 0.5 * (information + information.T)
    coupling = w[:4, 4:]
    inertia = w[4:, 4:] + (1e-10 * float(np.trace(w)) + 1e-300) * np.eye(6)
    schur = w[:4, :4] - coupling @ np.linalg.solve(inertia, coupling.T)
    return float(np.linalg.eigvalsh(0.5 * (schur + schur.T))[0])


class ExcitationCheck:
    """Running prior-normalized information of the blocks (module docstring)."""

    def __init__(self, prior_std: tuple[float, float, float], config: ExcitationConfig,
                 noise_std: float = 1.0) -> None:
        """Start empty (λ_min = 0)."""
        self.config = config
        m, h, i = prior_std
        self._scale = np.array([m] + [h] * 3 + [i] * 6)
        self._noise_std = noise_std
        self.information: Array = np.zeros((10, 10))
        self.excitation = 0.0
        self.blocks = 0

    def add(self, regressor: Array, weights: npt.ArrayLike | None = None) -> bool:
        """Add one block; True when it is well excited (the estimator should take it)."""
        scaled = regressor * self._scale
        if weights is None:
            info = scaled.T @ scaled / self._noise_std**2
        else:
            w = np.asarray(weights, dtype=np.float64)
            info = (scaled.T * w) @ scaled
        a = 1.0 / min(self.config.window, self.blocks + 1)
        self.information = (1.0 - a) * self.information + a * info
        self.blocks += 1
        self.excitation = schur_excitation(self.information)
        if self.blocks < self.config.warmup:
            return False
        return self.excitation >= self.config.threshold

    def reset(self) -> None:
        """Forget the accumulated information."""
        self.information = np.zeros((10, 10))
        self.excitation = 0.0
        self.blocks = 0

