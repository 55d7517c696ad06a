"""The momentum observers of a live node, advanced one joint sample at a time.

:class:`LiveObservers` runs what ``dynamics_node``'s ``observer_model`` names: the
generalized observer (Θ(t), Ψ(t) of each sample), the classical one (the Θ of the first
sample, held: the arm as it was when observing started, e.g. with an empty container),
both, or none. For a sample with measured efforts it subtracts the joint friction
(:mod:`robot_tv_dynamics.friction`), advances each observer
(:class:`~robot_tv_dynamics.observer.MomentumObserver`) to r ≈ τ̂_ext and its
:class:`~robot_tv_dynamics.observer.ContactDetector` (hysteresis); a sample without
usable efforts, or one an observer rejects, is counted with its reason.
:meth:`LiveObservers.statuses` turns that into the ``dynamics_node: contact`` and
``dynamics_node: observer`` entries (:class:`ObserverStatus`, a
:class:`~robot_tv_dynamics.status.Level`) that the ROS layer publishes on ``/diagnostics``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np

from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.friction import FrictionParameters
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.observer.contact import ContactDetector
from robot_tv_dynamics.observer.observer import (
    LoadsLike,
    MomentumObserver,
    ObserverConfig,
    ObserverKind,
)
from robot_tv_dynamics.status import Level

if TYPE_CHECKING:
    from robot_tv_dynamics.inputs import ModelState

#: ``observer_model`` values → the observers that run.
OBSERVER_MODELS: dict[str, tuple[ObserverKind, ...]] = {
    "generalized": ("generalized",), "classical": ("classical",),
    "both": ("generalized", "classical"), "off": ()}


@dataclass(frozen=True)
class ObserverStatus:
    """One diagnostics entry of the observers.

    Attributes:
        name: the status name (``dynamics_node: contact``, ``... (classical)``,
            ``dynamics_node: observer``).
        level: OK, WARN (a sample gave no residual) or ERROR (contact).
        message: one line.
        values: (key, value) pairs.
    """

    name: str
    level: Level
    message: str
    values: tuple[tuple[str, object], ...]

#: The observer status's reason for a joint sample without efforts.
NO_EFFORT = "joint_states carries no effort (measured torque): no residual"


class LiveObservers:
    """The observers and contact detectors of one node (module docstring).

    Attributes:
        kinds: the observers that run, in order (``generalized``, ``classical``).
        samples: samples every observer was offered (with efforts).
        dropped: samples or observer steps that gave no residual.
        reason: why the last one gave none ("" after :meth:`statuses`).
        last: the latest residual r of each observer (nv,) [N·m, N].
    """

    def __init__(
        self, model: RobotModel, observer_model: str = "generalized", *,
        gain: float = 50.0, threshold: float = 5.0, release: float = 0.5,
        mode: str = "joint", friction: FrictionParameters | None = None,
    ) -> None:
        """Build the detectors; each observer is built at its first sample.

        Args:
            model: the arm.
            observer_model: one of :data:`OBSERVER_MODELS`.
            gain: K_O [1/s].
            threshold: contact when |r_i| (``joint``) or |r| (``norm``) exceeds it [N·m].
            release: a contact ends below this fraction of the threshold.
            mode: ``joint`` or ``norm``.
            friction: subtracted from the measured efforts; None = none.

        Raises:
            InvalidInputError: an unknown observer model, or bad detector settings.
        """
        if observer_model not in OBSERVER_MODELS:
            raise InvalidInputError(
                "observer_model", f'"{observer_model}" is not one of {list(OBSERVER_MODELS)}')
        self.model = model
        self.friction = friction
        self.kinds = OBSERVER_MODELS[observer_model]
        self._configs = {kind: ObserverConfig(gain=gain, kind=kind) for kind in self.kinds}
        self.observers: dict[str, MomentumObserver | None] = dict.fromkeys(self.kinds)
        self.detectors = {kind: ContactDetector(
            model.joint_names, threshold, release=release, mode=mode) for kind in self.kinds}
        self.samples = 0
        self.dropped = 0
        self.reason = ""
        self.last: dict[str, Array] = {}

    def update(self, effort: Array | None, state: ModelState,
               no_effort: str = NO_EFFORT) -> dict[str, Array]:
        """Advance every observer with one sample's measured efforts.

        Args:
            effort: the measured joint efforts (nv,) in model order [N·m, N]; None: the
                sample has none usable (counted as dropped).
            state: the sample (t, q, q̇, Θ, γ of eq. 39); the classical observer takes the
                Θ of the first sample it sees.
            no_effort: why ``effort`` is None, for the observer status (default: the
                sample carries none; a malformed one's reading error says what is wrong).

        Returns:
            r ≈ τ̂_ext of each observer that advanced, by kind (nv,) [N·m, N].
        """
        if not self.kinds:
            return {}
        if effort is None:
            self.skip(no_effort)
            return {}
        tau = effort if self.friction is None else effort - self.friction.torque(state.qd)
        out: dict[str, Array] = {}
        for kind in self.kinds:
            observer = self.observers[kind]
            if observer is None:  # built at the first sample: the classical Θ is its Θ
                observer = self.observers[kind] = MomentumObserver(
                    self.model, self._configs[kind], theta_nominal=state.theta)
            try:
                # the state carries γ = Q₀Ψ, which the observer reads in place of Ψ
                residual = observer.update(
                    state.t, state.q, state.qd, tau, cast(LoadsLike, state))
                self.detectors[kind].update(state.t, residual)
            except RobotTvDynamicsError as error:
                self.skip(f"{kind} observer: {error}")
                continue
            self.detectors[kind].forget_closed()
            self.last[kind] = out[kind] = residual
        self.samples += 1
        return out

    def skip(self, reason: str) -> None:
        """Count a sample (or an observer's step) that gave no residual, and why."""
        self.dropped += 1
        self.reason = reason

    def statuses(self) -> list[ObserverStatus]:
        """The contact status per observer and the observer status now (none when off).

        The observer status is WARN with the latest reason when a sample gave no
        residual since the last call; the reason is then cleared.
        """
        if not self.kinds:
            return []
        out = []
        for kind, detector in self.detectors.items():
            name = "dynamics_node: contact" + ("" if kind == "generalized" else f" ({kind})")
            residual = self.last.get(kind)
            peak = float(np.max(np.abs(residual))) if residual is not None else 0.0
            values: Sequence[tuple[str, object]] = (("observer", kind), ("max |r|", peak))
            if detector.in_contact:
                joints = detector.active_joints
                value = ({j: float(residual[self.model.joint_names.index(j)]) for j in joints}
                         if residual is not None else {})
                text = ", ".join(f"{j} {v:+.3g} N·m" for j, v in value.items())
                out.append(ObserverStatus(name, Level.ERROR, f"contact: {text}",
                                          tuple(values)))
            else:
                out.append(ObserverStatus(name, Level.OK, "no contact", tuple(values)))
        level = Level.WARN if self.dropped and self.reason else Level.OK
        message = self.reason if level else "residuals published"
        out.append(ObserverStatus("dynamics_node: observer", level, message, (
            ("samples", self.samples), ("dropped", self.dropped),
            ("friction", "friction_file" if self.friction is not None else "none"))))
        self.reason = ""
        return out
