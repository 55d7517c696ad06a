r"""From raw inputs to the state eq. (39) is evaluated at: the rules every node shares.

A node receives joint samples (q, q̇ with a stamp), Θ(t), Θ̇(t), Ψ(t), Ψ̇(t) on their own
topics at their own rates, payloads for single links, and sometimes the reference
trajectory a controller tracks. :class:`ModelInputs` holds the latest of each and turns
one joint sample into a :class:`ModelState`:

- **q̈**: from the reference where it covers the sample's stamp (joint by joint), else
  by filtered differentiation of q̇ (:class:`~robot_tv_dynamics.filters.DerivativeFilter`,
  delay 1/(π f_c));
- **Θ** = stamped Θ at the sample's own stamp once any arrived
  (:meth:`ModelInputs.set_theta_stamped`, the rule of :mod:`~.timeline`; Θ̇ with it),
  else the latest Θ (topic, else the URDF's), plus the payload deltas: a payload
  replaces one link's URDF share of its body's Φ (exact: Φ is linear in the mass
  distribution), from its stamp on (:meth:`ModelInputs.set_payload`: a sample stamped
  before it keeps the payload it had; an unstamped one, or one stamped at or before the
  newest sample, applies from the next sample);
- **Θ̇**: the rates topic while it is fresh (``rate_timeout``), else filtered differences
  of Θ while Θ keeps arriving (within ``max_gap``), else zero;
- **Ψ, Ψ̇** (as γ = Q₀ψ): stamped Ψ at the sample's stamp once any arrived
  (:meth:`ModelInputs.set_psi_stamped`, same rule as Θ), else the latest while fresh,
  else zero;
- **stamps**: strictly increasing, non-zero.

Every ``set_*`` validates first, against the bounds of
:mod:`robot_tv_dynamics.limits` as well as for NaN/Inf, and changes nothing when
it raises (:meth:`ModelInputs.transaction` rolls back the filters, payloads and stamps);
a caller that derives more state from an input (the dynamics node's running μ/ν
statistics) wraps both in one transaction. Pure Python + NumPy: nodes call it, and it is
tested without ROS.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics import limits
from robot_tv_dynamics.arrays import Array, check_finite
from robot_tv_dynamics.bounds.theorems import rate_spatial_inertia_norm
from robot_tv_dynamics.dynamics import psi_momentum
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.filters import DerivativeFilter
from robot_tv_dynamics.inputs.payloads import PayloadSchedule
from robot_tv_dynamics.inputs.reference import (
    ReferenceAccelerations,
    ReferenceHistory,
)
from robot_tv_dynamics.inputs.timeline import EMPTY, StampedSeries, TimelineRules
from robot_tv_dynamics.model import RobotModel


@dataclass(frozen=True)
class InputRules:
    """How raw inputs become a state (the dynamics node's parameters of the same names).

    Attributes:
        acceleration_cutoff: corner frequency of the filter that differentiates q̇ into q̈
            when no reference covers a sample [Hz].
        theta_rate_cutoff: corner frequency of the filter that differentiates Θ into Θ̇
            when no rates are published [Hz].
        max_gap: a gap between samples longer than this restarts the filters [s].
        rate_timeout: Θ̇ / Ψ / Ψ̇ older than this are stale; 0 = never stale [s].
        timeline: ages and windows of stamped Θ (:class:`~.timeline.TimelineRules`).
    """

    acceleration_cutoff: float = 20.0
    theta_rate_cutoff: float = 5.0
    max_gap: float = 0.5
    rate_timeout: float = 0.5
    timeline: TimelineRules = TimelineRules()


@dataclass(frozen=True)
class ModelState:
    """Everything eq. (39) needs at one joint sample (arrays owned by the caller).

    Attributes:
        t: the sample's stamp [s].
        q: joint positions (nv,) [rad, m].
        qd: joint velocities (nv,).
        qdd: joint accelerations (nv,), from the reference or the filter.
        theta: Θ (N, 10), payloads included.
        theta_dot: Θ̇ (N, 10).
        gamma: γ = Q₀Ψ (N, 6).
        gamma_dot: Q₀Ψ̇ (N, 6).
        z_rate_norm: σ_max(Z(Θ̇)) of Theorem 4 for this Θ̇ (computed when first read:
            only the bounds need it).
    """

    t: float
    q: Array
    qd: Array
    qdd: Array
    theta: Array
    theta_dot: Array
    gamma: Array
    gamma_dot: Array
    _rate_norm: Callable[[Array], float] = dataclasses.field(
        default=rate_spatial_inertia_norm, repr=False, compare=False)

    @functools.cached_property
    def z_rate_norm(self) -> float:
        """σ_max(Z(Θ̇)) of Theorem 4 for this Θ̇ [per s]."""
        return self._rate_norm(self.theta_dot)


class ModelInputs:
    """The latest inputs of one arm and the rules that combine them (module docstring).

    Times: ``now`` arguments are a monotonic receive clock [s] (staleness); sample stamps
    are the messages' own [s] (filters, the reference).
    """

    def __init__(self, model: RobotModel, rules: InputRules | None = None) -> None:
        """Start from the URDF's Θ, no rates, no Ψ, no payload, no reference.

        Args:
            model: the arm.
            rules: filter corners, gaps and timeouts; defaults when None.
        """
        self.rules = rules if rules is not None else InputRules()
        self._qdd_filter = DerivativeFilter(self.rules.acceleration_cutoff, self.rules.max_gap)
        self._theta_filter = DerivativeFilter(self.rules.theta_rate_cutoff, self.rules.max_gap)
        self.model = model
        n = model.n_bodies
        self._theta_base: Array = np.array(model.theta_nominal)
        self.theta_from_topic = False
        self._theta_time = -math.inf
        self._payloads = PayloadSchedule.empty(n)
        self._theta_rate_topic: Array | None = None
        self._theta_rate_filtered: Array = np.zeros((n, 10))
        self._rate_norm_cache: tuple[Array, float] | None = None
        self._theta_rate_time = -math.inf
        self._gamma: Array | None = None
        self._gamma_dot: Array | None = None
        self._gamma_time = self._gamma_dot_time = -math.inf
        self.reference: ReferenceAccelerations | None = None
        self._references = ReferenceHistory()
        self.last_stamp = -math.inf
        self.last_q: Array | None = None
        self._zero_theta: Array = np.zeros((n, 10))
        self._zero_gamma: Array = np.zeros((n, 6))
        self._theta: Array = self._theta_base + self._payloads.delta
        #: stamped Θ (Θ̇ with it or from stamps): used at a sample's stamp once it has data
        self.theta_series = StampedSeries((n, 10), self.rules.timeline, "inertial_parameters")
        self.theta_status = EMPTY
        #: stamped Ψ (Ψ̇ with it or from stamps): used at a sample's stamp once it has data
        self.psi_series = StampedSeries((n, 12), self.rules.timeline, "psi")
        self.psi_status = EMPTY

    @property
    def qdd_filter_delay(self) -> float:
        """Low-frequency delay of the q̈ filter [s]."""
        return self._qdd_filter.delay

    def set_acceleration_cutoff(self, cutoff: float) -> None:
        """A new corner frequency of the q̈ filter [Hz]; the filter restarts (from rest).

        Raises:
            InvalidInputError: a cutoff that is not finite and > 0 (nothing changes).
        """
        new = DerivativeFilter(cutoff, self.rules.max_gap)  # raises before anything changes
        self.rules = dataclasses.replace(self.rules, acceleration_cutoff=cutoff)
        self._qdd_filter = new

    @property
    def theta(self) -> Array:
        """Θ (N, 10): the latest Θ plus every payload received (read-only view).

        A payload stamped after the newest sample is in it already (what the arm carries
        from that stamp on); the samples before its stamp do not take it.
        """
        view = self._theta.view()
        view.setflags(write=False)
        return view

    @property
    def payload_delta(self) -> Array:
        """Σ of the payloads' changes to Θ (N, 10), every payload received (read-only view)."""
        view = self._payloads.delta.view()
        view.setflags(write=False)
        return view

    @property
    def payloads(self) -> dict[str, Array]:
        """Link → Φ of its payload about the link frame, every payload received (a copy)."""
        return dict(self._payloads.phi)

    @property
    def pending_payloads(self) -> list[tuple[float, str]]:
        """(stamp [s], link) of the payloads stamped after the newest sample, in order."""
        return [(stamp, link) for stamp, link, _, _ in self._payloads.pending]

    # ------------------------------------------------------------------ model swap
    def swap_model(self, model: RobotModel) -> list[tuple[str, str]]:
        """Carry the state over to a new URDF (same joints); payloads are re-applied.

        Θ from the topic is kept; with Θ from the URDF, the new URDF's Θ is taken.

        Returns:
            (link, reason) for each payload that could not be re-applied (dropped).
        """
        old = self._payloads
        self.model = model
        n = model.n_bodies
        if not self.theta_from_topic:
            self._theta_base = np.array(model.theta_nominal)
            self._theta_filter.reset()
            self._theta_time = -math.inf
        self._payloads = PayloadSchedule.empty(n)
        dropped: list[tuple[str, str]] = []
        for link, phi, stamp in [*((link, phi, None) for link, (phi, _) in old.settled.items()),
                                 *((link, phi, stamp) for stamp, link, phi, _ in old.pending)]:
            try:
                self.set_payload(link, phi, stamp)
            except InvalidInputError as error:
                dropped.append((link, str(error)))
            except Exception as error:  # an unknown link in the new URDF, ...
                dropped.append((link, str(error)))
        self._zero_theta, self._zero_gamma = np.zeros((n, 10)), np.zeros((n, 6))
        self._theta = self._theta_base + self._payloads.delta
        if self.theta_series.shape != (n, 10):  # other bodies: the stamped Θ is void
            self.theta_series = StampedSeries((n, 10), self.rules.timeline,
                                              "inertial_parameters")
        if self.psi_series.shape != (n, 12):
            self.psi_series = StampedSeries((n, 12), self.rules.timeline, "psi")
        return dropped

    # ------------------------------------------------------------------ transactions
    @contextmanager
    def transaction(self) -> Iterator[None]:
        """Undo every change made inside the ``with`` block if it raises.

        Filters, payload dictionaries, stamps, held arrays and the stamped Θ/Ψ series are
        restored to what they were on entry: attributes (held arrays and dictionaries are
        replaced, never mutated in place), the two filters' states and the two series'
        samples (an added sample journals its undo; the per-sample cost is a few µs: the
        dynamics node opens one per joint sample).
        """
        saved = dict(vars(self))
        filters = (self._qdd_filter, self._theta_filter)
        states = [f.snapshot() for f in filters]
        series = (self.theta_series, self.psi_series)
        marks = [s.snapshot() for s in series]
        try:
            yield
        except BaseException:
            vars(self).clear()
            vars(self).update(saved)
            for f, state in zip(filters, states, strict=True):
                f.restore(state)
            for s, mark in zip(series, marks, strict=True):
                s.restore(mark)
            raise
        for s, mark in zip(series, marks, strict=True):
            s.release(mark)

    def _checked(self, values: Array, bound: float, argument: str, width: int) -> Array:
        values = check_finite(values, argument, (self.model.n_bodies, width))
        return limits.check_bounded(values, bound, argument, list(self.model.body_names))

    # ------------------------------------------------------------------ inputs
    def set_theta(self, theta: Array, now: float) -> None:
        """A new Θ (N, 10); the Θ̇ filter is updated.

        Raises:
            InvalidInputError: wrong shape, NaN/Inf or beyond :data:`limits.THETA`; a
                Θ̇ estimate that is not finite (nothing changes).
        """
        theta = self._checked(theta, limits.THETA, "theta", 10)
        with self.transaction():
            rate = self._theta_filter.update(now, theta, checked=True)
            if not np.isfinite(rate).all():
                raise InvalidInputError("theta", "its filtered rate Θ̇ is not finite")
            self._theta_rate_filtered = rate
            self._theta_time = now
            self._theta_base = theta
            self.theta_from_topic = True
            self._theta = theta + self._payloads.delta

    def set_theta_stamped(self, stamp: float, theta: Array,
                          theta_dot: Array | None = None) -> None:
        """A stamped Θ (N, 10), with its Θ̇ or None, at the time it refers to.

        From then on a sample takes Θ and Θ̇ at its own stamp
        (:class:`~.timeline.StampedSeries`), payloads added; arrival order does not
        matter.

        Args:
            stamp: the time Θ refers to, on the samples' time axis [s].
            theta: Θ (N, 10).
            theta_dot: Θ̇ (N, 10), or None (then from the stamps).

        Raises:
            InvalidInputError: wrong shape, NaN/Inf, beyond :data:`limits.THETA` /
                :data:`limits.THETA_RATE`, or a stamp older than the history kept.
        """
        theta = self._checked(theta, limits.THETA, "theta", 10)
        if theta_dot is not None:
            theta_dot = self._checked(theta_dot, limits.THETA_RATE, "theta_dot", 10)
        self.theta_series.add(stamp, theta, theta_dot)
        self.theta_from_topic = True

    def set_theta_rates(self, theta_dot: Array, now: float) -> None:
        """A published Θ̇ (N, 10).

        Raises:
            InvalidInputError: wrong shape, NaN/Inf or beyond :data:`limits.THETA_RATE`.
        """
        theta_dot = self._checked(theta_dot, limits.THETA_RATE, "theta_dot", 10)
        self._theta_rate_topic = theta_dot
        self._theta_rate_time = now

    def set_psi(self, psi: Array, now: float) -> None:
        """A published Ψ (N, 12).

        Raises:
            InvalidInputError: wrong shape, NaN/Inf or beyond :data:`limits.PSI`.
        """
        self._gamma = psi_momentum(self._checked(psi, limits.PSI, "psi", 12))
        self._gamma_time = now

    def set_psi_rates(self, psi_dot: Array, now: float) -> None:
        """A published Ψ̇ (N, 12).

        Raises:
            InvalidInputError: wrong shape, NaN/Inf or beyond :data:`limits.PSI`.
        """
        self._gamma_dot = psi_momentum(self._checked(psi_dot, limits.PSI, "psi_dot", 12))
        self._gamma_dot_time = now

    def set_psi_stamped(self, stamp: float, psi: Array, psi_dot: Array | None = None) -> None:
        """A stamped Ψ (N, 12), with its Ψ̇ or None, at the time it refers to.

        From then on a sample takes Ψ and Ψ̇ at its own stamp, by the rule of
        :class:`~.timeline.StampedSeries` (as :meth:`set_theta_stamped`).

        Raises:
            InvalidInputError: wrong shape, NaN/Inf, beyond :data:`limits.PSI`, or a
                stamp older than the history kept.
        """
        psi = self._checked(psi, limits.PSI, "psi", 12)
        if psi_dot is not None:
            psi_dot = self._checked(psi_dot, limits.PSI, "psi_dot", 12)
        self.psi_series.add(stamp, psi, psi_dot)

    def set_payload(self, link: str, phi: Array, stamp: float | None = None) -> None:
        """Replace a link's URDF share of its body's Φ by ``phi`` (about the link frame).

        Args:
            link: the URDF link.
            phi: its Φ about the link frame (10,), eq. (7) order.
            stamp: the time the payload applies from, on the samples' time axis [s]:
                samples stamped before it keep the payload they had (a later-stamped one
                replaces an earlier one at its stamp, whatever the arrival order). None
                (an unstamped message), or a stamp at or before the newest sample: from
                the next sample on (an answered sample is never changed).

        Raises:
            UnknownNameError: the link is not in the URDF.
            InvalidInputError: the link is fixed to the world, ``phi`` is not finite or
                beyond :data:`limits.THETA`, or the stamp is not finite.
        """
        phi = limits.check_bounded(check_finite(phi, "phi", (10,)), limits.THETA, "phi")
        if stamp is not None and not math.isfinite(stamp):
            raise InvalidInputError("payload.header.stamp", f"is not finite ({stamp})")
        delta = self.model.theta_with_link_inertia(self._payloads.zero, link, phi)
        self._payloads = self._payloads.with_payload(
            link, np.array(phi, dtype=np.float64), delta, stamp, self.last_stamp)
        self._theta = self._theta_base + self._payloads.delta

    def _payload_delta_at(self, t: float) -> Array:
        """The payloads' change to Θ at a sample stamped t (settles the pending ones ≤ t)."""
        payloads = self._payloads
        if not payloads.pending:
            return payloads.delta
        settled = payloads.settled_at(t)
        if settled is not payloads:
            self._payloads = settled
            if not settled.pending:  # all settled: the one array every sample takes
                self._theta = self._theta_base + settled.delta
        return settled.settled_delta  # type: ignore[return-value]

    def set_reference(self, reference: ReferenceAccelerations | None) -> None:
        """The reference trajectory q̈ is taken from where it covers a sample (None: none).

        The last :data:`~robot_tv_dynamics.inputs.reference.REFERENCE_HISTORY` references
        are kept: a sample takes q̈ from the newest one that covers its stamp. None forgets
        them all.
        """
        self.reference = reference
        self._references.set(reference)

    # ------------------------------------------------------------------ per sample
    def check_stamp(self, t: float, argument: str = "joint_states.header.stamp") -> None:
        """Refuse a zero stamp and one that does not increase (nothing changes).

        Raises:
            InvalidInputError: the stamp is zero, not finite, repeats or goes backwards.
        """
        if not math.isfinite(t):
            raise InvalidInputError(argument, f"is not finite ({t})")
        if t == 0.0:
            raise InvalidInputError(
                argument, "is zero (unstamped): q̈ by differentiation and the reference need "
                "stamps")
        if t <= self.last_stamp:
            raise InvalidInputError(
                argument, f"{'repeats' if t == self.last_stamp else 'goes backwards from'} the "
                f"previous sample ({t:.9f} s after {self.last_stamp:.9f} s)")

    def sample(self, t: float, q: Array, qd: Array, now: float) -> ModelState:
        """The state at one joint sample whose stamp ``t`` passed :meth:`check_stamp`.

        Args:
            t: the sample's stamp [s].
            q: joint positions (nv,), finite and within :data:`limits.POSITION`
                (checked by the reader).
            qd: joint velocities (nv,), finite and within :data:`limits.VELOCITY`.
            now: receive time on a monotonic clock [s] (staleness of Θ̇, Ψ, Ψ̇).
        """
        self.last_stamp = t
        self.last_q = q
        qdd = self._acceleration(t, qd)
        delta = self._payload_delta_at(t)
        theta, theta_dot = self._theta, self._theta_dot(now)
        if delta is not self._payloads.delta:  # a payload stamped after t is pending
            theta = self._theta_base + delta
        if len(self.theta_series):
            lookup = self.theta_series.at(t)
            self.theta_status = lookup.status
            assert lookup.value is not None and lookup.rate is not None
            theta, theta_dot = lookup.value + delta, lookup.rate
            if delta is self._payloads.delta:
                self._theta = theta
        if len(self.psi_series):
            found = self.psi_series.at(t)
            self.psi_status = found.status
            assert found.value is not None and found.rate is not None
            gamma, gamma_dot = psi_momentum(found.value), psi_momentum(found.rate)
        else:
            gamma = self._fresh(self._gamma, self._gamma_time, now)
            gamma_dot = self._fresh(self._gamma_dot, self._gamma_dot_time, now)
        return ModelState(
            t=t, q=q, qd=qd, qdd=qdd, theta=theta, theta_dot=theta_dot,
            gamma=gamma, gamma_dot=gamma_dot, _rate_norm=self._rate_norm)

    def reference_awaited(self, t: float, window: float) -> bool:
        """Whether a sample stamped ``t`` should wait for the reference covering it.

        See :meth:`~robot_tv_dynamics.inputs.reference.ReferenceHistory.awaited`.
        """
        return self._references.awaited(t, window)

    def _acceleration(self, t: float, qd: Array) -> Array:
        """q̈ at stamp t: the reference where it covers t, else the filtered derivative."""
        return self._references.acceleration(t, self._qdd_filter.update(t, qd, checked=True))

    def _rate_norm(self, theta_dot: Array) -> float:
        """σ_max(Z(Θ̇)), computed once per Θ̇ array (they are replaced, never mutated)."""
        cached = self._rate_norm_cache
        if cached is not None and cached[0] is theta_dot:
            return cached[1]
        norm = rate_spatial_inertia_norm(theta_dot)
        self._rate_norm_cache = (theta_dot, norm)
        return norm

    def _theta_dot(self, now: float) -> Array:
        """Θ̇: the topic's, else the filtered differences of Θ, else 0."""
        timeout = self.rules.rate_timeout
        if self._theta_rate_topic is not None and (
                timeout == 0.0 or now - self._theta_rate_time <= timeout):
            return self._theta_rate_topic
        if now - self._theta_time > self.rules.max_gap:
            return self._zero_theta
        return self._theta_rate_filtered

    def _fresh(self, value: Array | None, stamp: float, now: float) -> Array:
        timeout = self.rules.rate_timeout
        if value is None or (timeout > 0.0 and now - stamp > timeout):
            return self._zero_gamma
        return value

