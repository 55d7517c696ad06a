r"""The discrete generalized-momentum observer (De Luca's residual) for eq. (39).

Continuous form, with p and β of :mod:`~robot_tv_dynamics.observer.momentum`:

.. math::
    r(t) = K_O\Big(p(t) - p(0) - \int_0^t \big(τ + β(q,\dot q,Θ,Ψ) + r\big)\,ds\Big),
    \qquad \dot r = K_O(τ_{ext} - r),

a first-order lag (time constant 1/K_O per joint) of the external joint torque, with
no q̈. (Sign convention: β = ∂L/∂q = Cᵀq̇ + Dᵀq̇ − G, so the integrand is τ + β; De Luca's
β is its negative.)

**Discretisation.** Over a sample [t_k, t_{k+1}], h = t_{k+1} − t_k, the observer takes
the external torque as constant (held), e_k = (1/h)∫(ṗ − τ − β) ds, which is
exactly known from the samples up to the quadrature of τ + β:

.. math::
    e_k = \frac{p_{k+1} - p_k}{h} - \overline{(τ + β)}_k,\qquad
    r_{k+1} = e^{-K_O h} r_k + (1 - e^{-K_O h})\, e_k .

The r-feedback of the integral is integrated exactly (the solution of ṙ = K_O(e_k − r)
over the sample), so the update is unconditionally stable for any K_O·h and exact
whenever τ_ext is constant over each sample and the quadrature of τ + β is exact. The
quadrature: β (a smooth function of the state) by the trapezoid rule,
(β_k + β_{k+1})/2; τ by the trapezoid rule (``torque_rule="trapezoidal"``, a
measured torque sampled from a continuous signal) or held, τ_k over the sample
(``torque_rule="hold"``, a commanded torque under zero-order hold as the simulator
and ros2_control apply it). The trapezoid error per sample is −h²/12·ü(ξ), u = τ + β,
and the lag has unit DC gain and a positive impulse response, so with τ_ext = 0
|r| ≤ h²/12 · max|ü| (plus the quadrature error of τ under the chosen rule).

**Generalized vs classical.** The generalized observer evaluates p and β with Θ(t) and
Ψ(t) of the sample; Θ̇, Ψ̇ are not needed (they cancel out of the balance, see
:mod:`~robot_tv_dynamics.observer.momentum`). The classical observer uses one constant
nominal Θ and Ψ = 0: a load that changes shows up in its residual as an external torque.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array, check_finite
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.observer.momentum import MomentumEvaluator, as_gamma

#: Observer kinds: Θ(t), Ψ(t) per sample, or a constant nominal Θ and Ψ = 0.
ObserverKind = Literal["generalized", "classical"]
#: Quadrature of the joint torque over a sample (see the module docstring).
TorqueRule = Literal["trapezoidal", "hold"]
KINDS: tuple[str, ...] = ("generalized", "classical")
TORQUE_RULES: tuple[str, ...] = ("trapezoidal", "hold")


class LoadsLike(Protocol):
    """What :meth:`MomentumObserver.update` reads of a sample's loads.

    :class:`ObserverLoads` and :class:`robot_tv_dynamics.simulation.Loads` satisfy it;
    so does any record with
    ``theta`` (N, 10) and ``psi`` (N, 12) (or ``gamma`` (N, 6)). Θ̇ and Ψ̇ may be present;
    they are not used.
    """

    @property
    def theta(self) -> Array:
        """Θ (N, 10), eq. (7) order [kg, kg·m, kg·m²]."""
        ...  # pragma: no cover

    @property
    def psi(self) -> Array:
        """Ψ (N, 12), eq. (27) layout, body coordinates [kg·m/s, kg·m²/s]."""
        ...  # pragma: no cover


@dataclass(frozen=True)
class ObserverLoads:
    """Θ(t) and Ψ(t) of one sample, as the node or a replay hands them to the observer.

    Attributes:
        theta: Θ (N, 10), eq. (7) order about each body-frame origin [kg, kg·m, kg·m²].
        psi: Ψ (N, 12), eq. (27) layout, body coordinates [kg·m/s, kg·m²/s].
    """

    theta: Array
    psi: Array


@dataclass(frozen=True)
class ObserverConfig:
    """Settings of one :class:`MomentumObserver`.

    Attributes:
        gain: K_O per joint (nv,) or one value for all [1/s]; 1/K_O is the time
            constant of the residual's lag (docs/observer.md: choosing it).
        kind: ``"generalized"`` (Θ(t), Ψ(t) of each sample) or ``"classical"``
            (``theta_nominal`` throughout, Ψ = 0).
        torque_rule: quadrature of τ over a sample, ``"trapezoidal"`` or ``"hold"``.
        max_gap: a sample interval longer than this restarts the observer (r = 0,
            p(0) = the new sample) instead of bridging it [s].
    """

    gain: float | tuple[float, ...] = 50.0
    kind: ObserverKind = "generalized"
    torque_rule: TorqueRule = "trapezoidal"
    max_gap: float = 0.1

    def __post_init__(self) -> None:
        """Check the ranges.

        Raises:
            InvalidInputError: a value out of range.
        """
        gains = np.atleast_1d(np.asarray(self.gain, dtype=np.float64))
        if gains.size == 0 or not np.all(np.isfinite(gains)) or np.any(gains <= 0):
            raise InvalidInputError("gain", f"K_O must be finite and > 0, got {self.gain}")
        if self.kind not in KINDS:
            raise InvalidInputError("kind", f'must be one of {KINDS}, got "{self.kind}"')
        if self.torque_rule not in TORQUE_RULES:
            raise InvalidInputError(
                "torque_rule", f'must be one of {TORQUE_RULES}, got "{self.torque_rule}"')
        if not (math.isfinite(self.max_gap) and self.max_gap > 0):
            raise InvalidInputError("max_gap", f"must be > 0, got {self.max_gap}")


class MomentumObserver:
    """First-order generalized-momentum observer: τ̂_ext per joint from (t, q, q̇, τ).

    Call :meth:`update` once per sample, in time order. The first sample (and the first
    after :meth:`reset` or a gap longer than ``max_gap``) initializes p(0) and returns
    r = 0.
    """

    def __init__(
        self, model: RobotModel, config: ObserverConfig | None = None, *,
        theta_nominal: npt.ArrayLike | None = None,
    ) -> None:
        """Build the observer.

        Args:
            model: the arm.
            config: settings; defaults when None.
            theta_nominal: Θ used by the classical observer, and by the generalized one
                when a sample comes without loads (N, 10); default ``model.theta_nominal``.

        Raises:
            InvalidInputError: a gain vector of the wrong length, a bad Θ.
        """
        self.model = model
        self.config = config if config is not None else ObserverConfig()
        gains = np.atleast_1d(np.asarray(self.config.gain, dtype=np.float64))
        if gains.size == 1:
            gains = np.full(model.nv, float(gains[0]))
        if gains.shape != (model.nv,):
            raise InvalidInputError(
                "gain", f"expected one value or {model.nv} (one per joint), got {gains.size}")
        gains.setflags(write=False)
        #: K_O per joint (nv,) [1/s].
        self.gain: Array = gains
        theta = model.theta_nominal if theta_nominal is None else theta_nominal
        self.theta_nominal: Array = model.check_theta(theta).copy()
        self.theta_nominal.setflags(write=False)
        self._zero_gamma = np.zeros((model.n_bodies, 6))
        self._momentum = MomentumEvaluator(model)
        self._hold = self.config.torque_rule == "hold"
        self._classical = self.config.kind == "classical"
        self.restarts = 0
        self.reset()

    @property
    def residual(self) -> Array:
        """The last r = τ̂_ext (nv,) [N·m, N] (a copy)."""
        return self._r.copy()

    @property
    def time(self) -> float | None:
        """Time of the last sample [s], None before the first."""
        return self._t

    def reset(self) -> None:
        """Forget the history: the next sample restarts the observer (r = 0)."""
        self._t: float | None = None
        self._p = np.zeros(self.model.nv)
        self._u = np.zeros(self.model.nv)  # τ + β of the last sample (trapezoidal)
        self._tau = np.zeros(self.model.nv)
        self._beta = np.zeros(self.model.nv)
        self._r = np.zeros(self.model.nv)

    def _inputs(self, loads: LoadsLike | None) -> tuple[Array, Array]:
        """(Θ, γ) the observer uses for a sample."""
        if self._classical or loads is None:
            return self.theta_nominal, self._zero_gamma
        gamma = getattr(loads, "gamma", None)
        if gamma is None:
            gamma = as_gamma(self.model, loads.psi)
        return self.model.check_theta(loads.theta), np.asarray(gamma, dtype=np.float64)

    def update(
        self, t: float, q: npt.ArrayLike, qd: npt.ArrayLike, tau_measured: npt.ArrayLike,
        loads: LoadsLike | None = None,
    ) -> Array:
        """Advance to the sample at ``t``; returns r(t) = τ̂_ext (nv,) [N·m, N].

        Args:
            t: sample time [s], strictly increasing between calls.
            q: joint positions (nv,) [rad, m].
            qd: joint velocities (nv,) [rad/s, m/s].
            tau_measured: joint torque acting besides τ_ext (measured effort minus
                friction, or the command) (nv,) [N·m, N].
            loads: Θ(t), Ψ(t) of the sample (e.g. :class:`~.simulation.Loads`); ignored
                by the classical observer; None = ``theta_nominal``, Ψ = 0.

        Returns:
            A new array r (nv,).

        Raises:
            InvalidInputError: non-finite or mis-shaped input, or t not after the last
                sample; the observer's state is unchanged then.
        """
        model = self.model
        t = float(t)
        if not math.isfinite(t):
            raise InvalidInputError("t", f"must be finite, got {t}")
        if self._t is not None and not t > self._t:
            raise InvalidInputError(
                "t", f"must increase: {t!r} s after the last sample at {self._t!r} s")
        tau = model.check_joint_vector(tau_measured, "tau_measured")
        theta, gamma = self._inputs(loads)
        gamma = check_finite(gamma, "psi", (model.n_bodies, 6))
        terms = self._momentum.terms(q, qd, theta, gamma)
        if self._t is None or t - self._t > self.config.max_gap:
            if self._t is not None:
                self.restarts += 1
            self._r = np.zeros(model.nv)
        else:
            h = t - self._t
            if self._hold:
                mean = self._tau + 0.5 * (self._beta + terms.beta)
            else:
                mean = 0.5 * (self._u + tau + terms.beta)
            e = (terms.p - self._p) / h - mean
            decay = np.exp(-self.gain * h)
            self._r = decay * self._r + (1.0 - decay) * e
        self._t = t
        self._p = terms.p
        self._tau = tau.copy()
        self._beta = terms.beta
        self._u = tau + terms.beta
        return self._r.copy()
