r"""A load at one instant (:class:`LoadState`) and what every loading process provides.

A loading process (:class:`LoadingProcess`) describes the mass-carrying particles of a
load attached to one URDF link and returns, at any time t, Φ(t), Φ̇(t), ψ(t), ψ̇(t) and
ν(t) in the LINK frame (eq. 7 order, about the link origin).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.exceptions import InvalidInputError, PhysicalConsistencyError
from robot_tv_dynamics.inertia import (
    Array,
    pseudo_inertia,
)

#: Standard gravity [m/s²], the default stream acceleration and Torricelli's g.
STANDARD_GRAVITY = 9.81
#: Length of a load's state as one vector [Φ, Φ̇, ψ, ψ̇, ν] (10 + 10 + 12 + 12 + 1).
STATE_SIZE = 45


@dataclass(frozen=True)
class LoadState:
    """A load at one instant, everything in the LINK frame of the process's ``link``.

    Attributes:
        phi: Φ(t) of the load, (10,), eq. (7) order about the link origin
            [kg, kg·m, kg·m²].
        phi_dot: dΦ/dt, (10,) [per s].
        psi: ψ(t) of eq. (27), (12,), of the load's moving particles [kg·m/s, kg·m²/s].
        psi_dot: dψ/dt, (12,) [per s].
        nu: ν(t) = ∫σρ‖𝓋‖² of eq. (25) [kg·m²/s²].
    """

    phi: Array
    phi_dot: Array
    psi: Array
    psi_dot: Array
    nu: float

    def __post_init__(self) -> None:
        """Freeze the arrays handed out."""
        readonly(self.phi), readonly(self.phi_dot), readonly(self.psi), readonly(self.psi_dot)


class LoadingProcess(Protocol):
    """A time-dependent load on one URDF link (see the module docstring)."""

    #: URDF link the load is attached to; :class:`LoadState` is in its frame.
    link: str
    #: Natural duration [s]: the process is constant after it.
    duration: float

    def state(self, t: float) -> LoadState:
        """The load at time ``t`` [s] (link frame)."""
        ...

    def describe(self) -> str:
        """One line for logs and reports (e.g. "fill a 0.5 kg cup on panda_hand ...")."""
        ...


@runtime_checkable
class LinearLoadingProcess(LoadingProcess, Protocol):
    """A loading process whose state is one fixed linear map of a few features of t.

    ``state(t)`` is ``state_map @ features(t)`` split as [Φ, Φ̇, ψ, ψ̇, ν] (link frame),
    and ``features(t)[0]`` is the constant 1 (so an affine term is a column of the map).
    A consumer that maps the load on by another fixed linear map
    (:class:`~robot_tv_dynamics.loading.attach.LoadBodyRows`: into body coordinates,
    plus the arm's own row) composes the two once and then needs the features and one
    product per time. ``fill`` is one (:class:`~robot_tv_dynamics.loading.FillProcess`).
    """

    #: x ↦ [Φ, Φ̇, ψ, ψ̇, ν], (:data:`STATE_SIZE`, k), read-only.
    state_map: Array

    def features(self, t: float) -> Array:
        """x(t), (k,), with x[0] = 1: the state at ``t`` is ``state_map @ x``."""
        ...


def smoothstep(tau: float) -> tuple[float, float, float]:
    """C² ramp w(τ) = 10τ³ − 15τ⁴ + 6τ⁵ on [0, 1] (clamped), with w' and w''."""
    if tau <= 0.0:
        return 0.0, 0.0, 0.0
    if tau >= 1.0:
        return 1.0, 0.0, 0.0
    t2 = tau * tau
    return (
        t2 * tau * (10.0 + tau * (-15.0 + 6.0 * tau)),
        30.0 * t2 * (1.0 - tau) ** 2,
        60.0 * tau * (1.0 - tau) * (1.0 - 2.0 * tau),
    )


def fixed_state(phi: Array) -> LoadState:
    """A load Φ that does not change: zero rates, no moving particles (ψ = 0, ν = 0)."""
    return LoadState(phi.copy(), np.zeros(10), np.zeros(12), np.zeros(12), 0.0)


# ---------------------------------------------------------------------------- loading
def finite_scalar(value: Any, name: str) -> float:
    """``value`` as a finite float, or an :class:`InvalidInputError` naming ``name``."""
    try:
        out = float(value)
    except (TypeError, ValueError):
        raise InvalidInputError(name, f"expected a number, got {value!r}") from None
    if not math.isfinite(out):
        raise InvalidInputError(name, f"must be finite, got {out}")
    return out


def positive_scalar(value: Any, name: str) -> float:
    """``value`` as a finite float > 0, or an :class:`InvalidInputError` naming ``name``."""
    out = finite_scalar(value, name)
    if out <= 0.0:
        raise InvalidInputError(name, f"must be > 0, got {out}")
    return out


def nonnegative_scalar(value: Any, name: str) -> float:
    """``value`` as a finite float ≥ 0, or an :class:`InvalidInputError` naming ``name``."""
    out = finite_scalar(value, name)
    if out < 0.0:
        raise InvalidInputError(name, f"must be >= 0, got {out}")
    return out


def check_density(phi: Array, what: str) -> None:
    """f(Φ) ⪰ 0 up to rounding: Φ is that of a non-negative density (possibly empty)."""
    values = np.linalg.eigvalsh(pseudo_inertia(phi))
    if values[0] < -1e-9 * max(1.0, abs(values[-1])):
        raise PhysicalConsistencyError(
            what, f"f(Phi) has eigenvalue {values[0]:.4g} < 0: not the inertia of a "
            "non-negative mass distribution (Theorem 1)")
