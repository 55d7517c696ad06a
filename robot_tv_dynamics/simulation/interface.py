r"""The one interface every controller of this family implements.

A controller maps the measured state and the desired motion to a joint torque τ and
its current estimate Θ̂ of the inertial parameters; ``reset`` restarts it from an
initial estimate. Anything with these two methods runs in
:func:`robot_tv_dynamics.control.run.run_adaptive` and in ``sim_node`` (``controller:=``).

A user's own law (tested in ``test/control/test_user_law.py``, shown in docs/adaptive.md)::

    class Damped:
        name = "damped"
        def __init__(self, model, kd):
            self.model, self.kd, self.theta_hat = model, kd, model.theta_nominal
        def reset(self, theta_hat):
            self.theta_hat = np.array(theta_hat)
        def step(self, state, dt):
            return ControlOutput(-self.kd * (state.qd - state.qd_d), self.theta_hat)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array, check_finite


@dataclass(frozen=True)
class ControlState:
    """What a controller reads at one control step.

    Attributes:
        t: time [s].
        q: measured joint positions (nv,) [rad, m].
        qd: measured joint velocities (nv,) [rad/s, m/s].
        q_d: desired positions (nv,).
        qd_d: desired velocities (nv,).
        qdd_d: desired accelerations (nv,) [rad/s², m/s²].
    """

    t: float
    q: Array
    qd: Array
    q_d: Array
    qd_d: Array
    qdd_d: Array


@dataclass(frozen=True)
class ControlOutput:
    """What a controller answers.

    Attributes:
        tau: joint torque to hold over the next step (nv,) [N·m, N].
        theta_hat: the estimate Θ̂ (N, 10) eq. (7) order, body frames, after this step.
    """

    tau: Array
    theta_hat: Array


@runtime_checkable
class Controller(Protocol):
    """State in, τ and Θ̂ out; ``reset`` to an initial estimate."""

    name: str

    def reset(self, theta_hat: npt.ArrayLike) -> None:
        """Restart from the estimate Θ̂₀ (N, 10)."""

    def step(self, state: ControlState, dt: float) -> ControlOutput:
        """τ for ``state`` held over ``dt`` [s], and Θ̂ updated over that step."""


def positive_gains(value: npt.ArrayLike, size: int, argument: str) -> Array:
    """A gain vector (``size``,) with every entry finite and > 0; a scalar is broadcast.

    The check every law of this family makes of its gains (Λ, K_D, Γ, ω), so that a
    bad gain is refused the same way whichever law takes it.

    Raises:
        InvalidInputError: a wrong shape, a non-finite entry or an entry ≤ 0, naming
            ``argument``.
    """
    array = np.broadcast_to(np.asarray(value, dtype=np.float64), (size,)).copy()
    check_finite(array, argument, (size,))
    if np.any(array <= 0.0):
        raise InvalidInputError(argument, f"every entry must be > 0, got {array}")
    return array
