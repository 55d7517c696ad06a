r"""The physical bounds every input is held to: finite but absurd values are rejected.

A value of 1e308 is finite, yet one such entry overflows eq. (39) to ±inf or NaN and,
once it has entered a filter or a running statistic, poisons every later sample. Every
reader (the nodes' message readers, :class:`~robot_tv_dynamics.inputs.ModelInputs`,
:class:`~robot_tv_dynamics.consistency.ConsistencyMonitor`) checks its input against the
bounds below *before* it changes any state, and rejects a value beyond them exactly like
NaN. The bounds are generous (orders of magnitude beyond any arm) so that no real
input is refused; they exist to keep the arithmetic finite. README.md, "Bad input",
lists them.

Pure Python + NumPy; no ROS.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import Array
from robot_tv_dynamics.exceptions import InvalidInputError

#: |q| [rad or m]: joint positions (about 1600 turns of a continuous joint).
POSITION = 1e4
#: |q̇| [rad/s or m/s]: joint velocities.
VELOCITY = 1e4
#: |q̈| [rad/s² or m/s²]: reference and planned accelerations.
ACCELERATION = 1e6
#: |τ| [N·m or N]: effort commands and planned efforts.
EFFORT = 1e7
#: |entry| of Θ (N, 10) [kg, kg·m, kg·m²]: masses, first moments, inertias.
THETA = 1e6
#: |entry| of Θ̇ (N, 10) [per s].
THETA_RATE = 1e8
#: |entry| of Ψ and Ψ̇ (N, 12) [kg·m/s, kg·m²/s and per s].
PSI = 1e8
#: payload mass m [kg], 0 ≤ m ≤ PAYLOAD_MASS.
PAYLOAD_MASS = 1e5
#: |centre of mass| of a payload in its link frame [m].
PAYLOAD_COM = 100.0
#: |inertia entry| of a payload about its centre of mass [kg·m²].
PAYLOAD_INERTIA = 1e6
#: a message stamp may be at most this far ahead of the receiving node's clock [s]: one
#: day, so clock offsets between hosts and a simulator running faster than real time
#: (sim_node ``real_time_factor`` > 1) pass, while a stamp years ahead (2³¹ − 1 s is
#: 2038) cannot make every later sample "go backwards".
STAMP_FUTURE = 86400.0
#: header.stamp.sec must be below this (2³¹ − 1 is the int32 maximum: "no stamp").
STAMP_SEC_MAX = 2**31 - 1
#: |time_from_start| of a trajectory point [s] (about 11.6 days).
TIME_FROM_START = 1e6
#: points of a reference or planned trajectory.
TRAJECTORY_POINTS = 10_000
#: characters of a robot_description URDF (a URDF with inline meshes is still far below).
ROBOT_DESCRIPTION = 4 * 1024 * 1024


def check_bounded(values: npt.ArrayLike, bound: float, argument: str,
                  names: list[str] | None = None) -> Array:
    """``values`` as a float64 array if every entry is finite with |entry| ≤ ``bound``.

    Args:
        values: any shape.
        bound: the largest magnitude accepted (a constant of this module).
        argument: the field, for the error message (e.g. ``"joint_states.velocity"``).
        names: names of the entries along the first axis, for the error message.

    Raises:
        InvalidInputError: an entry is NaN, ±Inf or beyond ``bound``.
    """
    array = np.asarray(values, dtype=np.float64)
    # one comparison covers NaN (False), ±Inf and finite-but-absurd values alike
    good = np.abs(array) <= bound
    if good.all():
        return array
    index = np.argwhere(~good)[0]
    value = float(array[tuple(index)])
    where = (f'"{names[int(index[0])]}"' if names is not None and array.ndim >= 1
             else str(tuple(int(i) for i in index)) if array.ndim else "")
    what = "non-finite value" if not np.isfinite(value) else (
        f"value {value:.6g} beyond the bound {bound:g}")
    raise InvalidInputError(argument, f"{what}" + (f" for {where}" if where else ""))


def check_stamp(sec: int, nanosec: int, argument: str, now: float = 0.0) -> float:
    """A builtin_interfaces/Time as seconds, if it is a plausible stamp.

    Args:
        sec: ``stamp.sec``.
        nanosec: ``stamp.nanosec``.
        argument: the field, for the error message.
        now: the receiving node's clock [s]; 0 (a simulated clock not yet running)
            skips the check against it.

    Raises:
        InvalidInputError: negative seconds, nanosec ≥ 10⁹, sec ≥ 2³¹ − 1, or a stamp
            more than :data:`STAMP_FUTURE` s ahead of ``now``.
    """
    if sec < 0:
        raise InvalidInputError(argument, f"is negative ({sec} s)")
    if not 0 <= nanosec < 1_000_000_000:
        raise InvalidInputError(argument, f"nanosec {nanosec} is not in [0, 1e9)")
    if sec >= STAMP_SEC_MAX:
        raise InvalidInputError(argument, f"sec {sec} is the int32 maximum (not a time)")
    t = sec + 1e-9 * nanosec
    if now > 0.0 and t > now + STAMP_FUTURE:
        raise InvalidInputError(
            argument, f"is {t - now:.3g} s ahead of this node's clock (more than "
            f"{STAMP_FUTURE:g} s)")
    return t
