r"""Joint friction: the model, its regressor, and the friction YAML file.

Per joint i the friction torque, added to τ of eq. (39) on the measured-effort side, is

.. math::
    τ_{f,i} = b_{v,i}\,\dot q_i + b_{c,i} \tanh(\dot q_i / v_{c,i}) + b_{o,i}

with the viscous coefficient b_v [N·m·s/rad], the Coulomb level b_c [N·m], a constant
offset b_o [N·m] (e.g. a torque-sensor bias) and the smoothing velocity v_c [rad/s] of
the Coulomb term (tanh is a smooth sign; v_c is fixed, not identified, so the model stays
linear in (b_v, b_c, b_o)). Units are N, m/s for prismatic joints.

:data:`FRICTION_TERMS` names what ``identify --friction`` fits: ``none``; ``viscous``
(b_v); ``coulomb`` (b_v, b_c); ``full`` (b_v, b_c, b_o).

The file (``friction.yaml``, read by the dynamics node through
:func:`load_friction_file`) maps joint name → ``{viscous, coulomb, offset,
coulomb_velocity}``::

    panda_joint1: {viscous: 0.21, coulomb: 0.35, offset: -0.02, coulomb_velocity: 0.01}
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.exceptions import FrictionFileError, InvalidInputError
from robot_tv_dynamics.inertia import Array, check_finite

#: ``--friction`` choice → the coefficients it fits, in column order of the regressor.
FRICTION_TERMS: dict[str, tuple[str, ...]] = {
    "none": (),
    "viscous": ("viscous",),
    "coulomb": ("viscous", "coulomb"),
    "full": ("viscous", "coulomb", "offset"),
}

#: Keys of one joint's entry in the friction file.
FRICTION_KEYS = ("viscous", "coulomb", "offset", "coulomb_velocity")

#: Default smoothing velocity v_c of the Coulomb term [rad/s or m/s].
DEFAULT_COULOMB_VELOCITY = 0.01


@dataclass(frozen=True)
class FrictionParameters:
    """Friction coefficients of a set of joints (one entry per joint, ``joint_names`` order).

    Attributes:
        joint_names: the joints.
        viscous: b_v (n,) [N·m·s/rad or N·s/m].
        coulomb: b_c (n,) [N·m or N].
        offset: b_o (n,) [N·m or N].
        coulomb_velocity: v_c (n,) [rad/s or m/s], > 0.
    """

    joint_names: tuple[str, ...]
    viscous: Array
    coulomb: Array
    offset: Array
    coulomb_velocity: Array

    def __post_init__(self) -> None:
        """Validate shapes and values; freeze the arrays.

        Raises:
            InvalidInputError: wrong lengths, non-finite values, v_c ≤ 0.
        """
        names = tuple(str(name) for name in self.joint_names)
        object.__setattr__(self, "joint_names", names)
        n = len(names)
        for key in FRICTION_KEYS:
            value = check_finite(getattr(self, key), f"friction.{key}", (n,)).copy()
            object.__setattr__(self, key, readonly(value))
        if np.any(self.coulomb_velocity <= 0.0):
            k = int(np.argmax(self.coulomb_velocity <= 0.0))
            raise InvalidInputError(
                "friction.coulomb_velocity",
                f'joint "{names[k]}": must be > 0, got {self.coulomb_velocity[k]:g}')

    @classmethod
    def zeros(
        cls, joint_names: Sequence[str], coulomb_velocity: float = DEFAULT_COULOMB_VELOCITY
    ) -> FrictionParameters:
        """No friction on any joint (v_c set to ``coulomb_velocity``)."""
        n = len(joint_names)
        return cls(tuple(joint_names), np.zeros(n), np.zeros(n), np.zeros(n),
                   np.full(n, float(coulomb_velocity)))

    def torque(self, qd: npt.ArrayLike) -> Array:
        """τ_f(q̇) for velocities (n,) or (K, n): :func:`friction_torque`."""
        return friction_torque(self, qd)

    def as_dict(self) -> dict[str, dict[str, float]]:
        """The file's mapping: joint → {viscous, coulomb, offset, coulomb_velocity}."""
        return {name: {key: float(getattr(self, key)[i]) for key in FRICTION_KEYS}
                for i, name in enumerate(self.joint_names)}


def friction_torque(params: FrictionParameters, qd: npt.ArrayLike) -> Array:
    """τ_f = b_v q̇ + b_c tanh(q̇ / v_c) + b_o per joint (module docstring).

    Args:
        params: the coefficients, for the joints of ``qd`` in the same order.
        qd: joint velocities, (n,) or (K, n) [rad/s or m/s].

    Returns:
        Friction torques, same shape as ``qd`` [N·m or N].

    Raises:
        InvalidInputError: ``qd`` has the wrong last dimension or non-finite entries.
    """
    n = len(params.joint_names)
    qd = np.asarray(qd, dtype=np.float64)
    if qd.ndim not in (1, 2) or qd.shape[-1] != n:
        raise InvalidInputError("qd", f"expected shape ({n},) or (K, {n}), got {qd.shape}")
    qd = check_finite(qd, "qd", qd.shape)
    return np.asarray(params.viscous * qd + params.coulomb * np.tanh(qd / params.coulomb_velocity)
                      + params.offset)


def friction_regressor(qd: npt.ArrayLike, terms: str, coulomb_velocity: npt.ArrayLike) -> Array:
    """Columns of the friction model for the coefficients ``terms`` fits.

    Args:
        qd: joint velocities (K, n).
        terms: a key of :data:`FRICTION_TERMS`.
        coulomb_velocity: v_c per joint (n,) or one value.

    Returns:
        Y_f, (K, n, n·T) with T coefficients per joint, column ``T·i + t`` = coefficient
        ``FRICTION_TERMS[terms][t]`` of joint i; τ_f[k] = Y_f[k] @ coefficients.
    """
    if terms not in FRICTION_TERMS:
        raise InvalidInputError("friction", f'"{terms}" is not one of {list(FRICTION_TERMS)}')
    qd = np.asarray(qd, dtype=np.float64)
    k, n = qd.shape
    names = FRICTION_TERMS[terms]
    vc = np.broadcast_to(np.asarray(coulomb_velocity, dtype=np.float64), (n,))
    columns = {"viscous": qd, "coulomb": np.tanh(qd / vc), "offset": np.ones_like(qd)}
    out = np.zeros((k, n, n * len(names)))
    for t, name in enumerate(names):
        out[:, np.arange(n), np.arange(n) * len(names) + t] = columns[name]
    return out


def parameters_from_coefficients(
    joint_names: Sequence[str], terms: str, coefficients: npt.ArrayLike,
    coulomb_velocity: npt.ArrayLike,
) -> FrictionParameters:
    """Unpack the coefficient vector of :func:`friction_regressor` (absent terms are 0)."""
    n = len(joint_names)
    names = FRICTION_TERMS[terms]
    values = np.asarray(coefficients, dtype=np.float64).reshape(n, len(names)) if names \
        else np.zeros((n, 0))
    fields = {key: np.zeros(n) for key in ("viscous", "coulomb", "offset")}
    for t, name in enumerate(names):
        fields[name] = values[:, t]
    return FrictionParameters(tuple(joint_names), fields["viscous"], fields["coulomb"],
                              fields["offset"],
                              np.broadcast_to(np.asarray(coulomb_velocity, float), (n,)).copy())


def write_friction_file(path: str | Path, params: FrictionParameters) -> None:
    """Write ``friction.yaml`` (joint → {viscous, coulomb, offset, coulomb_velocity})."""
    import yaml

    header = ("# Joint friction identified by robot-tv-dynamics identify:\n"
              "# tau_f = viscous*qd + coulomb*tanh(qd/coulomb_velocity) + offset "
              "[N·m or N; qd in rad/s or m/s]\n")
    Path(path).write_text(header + yaml.safe_dump(params.as_dict(), sort_keys=False),
                          encoding="utf-8")


def _entry(path: str, joint: str, value: Any) -> dict[str, float]:
    if not isinstance(value, Mapping):
        raise FrictionFileError(path, f'joint "{joint}": expected a mapping with keys '
                                f"{list(FRICTION_KEYS)}, got {value!r}")
    unknown = sorted(set(map(str, value)) - set(FRICTION_KEYS))
    if unknown:
        raise FrictionFileError(path, f'joint "{joint}": unknown keys {unknown}; '
                                f"allowed: {list(FRICTION_KEYS)}")
    out: dict[str, float] = {}
    for key in FRICTION_KEYS:
        raw = value.get(key, DEFAULT_COULOMB_VELOCITY if key == "coulomb_velocity" else 0.0)
        try:
            number = float(raw)
        except (TypeError, ValueError):
            number = math.nan
        if isinstance(raw, bool) or not math.isfinite(number):
            raise FrictionFileError(path, f'joint "{joint}": {key} = {raw!r} is not a '
                                    "finite number")
        out[key] = number
    if out["coulomb_velocity"] <= 0.0:
        raise FrictionFileError(path, f'joint "{joint}": coulomb_velocity = '
                                f"{out['coulomb_velocity']:g} must be > 0")
    return out


def load_friction_file(path: str | Path, joint_names: Sequence[str]) -> FrictionParameters:
    """Read a friction YAML for the model's joints (the dynamics node's ``friction_file``).

    Every joint of ``joint_names`` must have an entry (missing keys default to 0, and
    ``coulomb_velocity`` to :data:`DEFAULT_COULOMB_VELOCITY`); an entry for a joint
    that is not in ``joint_names`` is an error (a file for another arm, or a typo).

    Args:
        path: the YAML file.
        joint_names: the model's joints; the result is in this order.

    Returns:
        The coefficients, in ``joint_names`` order.

    Raises:
        FrictionFileError: unreadable file, invalid YAML, not a mapping, missing or
            unknown joints, non-numeric or non-finite values, coulomb_velocity ≤ 0.
    """
    import yaml

    source = str(path)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise FrictionFileError(source, f"cannot be read ({error.strerror or error})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise FrictionFileError(source, f"is not valid YAML ({error})") from None
    if not isinstance(data, Mapping):
        raise FrictionFileError(source, "expected a mapping joint → {viscous, coulomb, "
                                f"offset, coulomb_velocity}}, got {type(data).__name__}")
    names = [str(name) for name in joint_names]
    entries = {str(key): value for key, value in data.items()}
    unknown = sorted(set(entries) - set(names))
    if unknown:
        raise FrictionFileError(source, f"joints {unknown} are not joints of the model; "
                                f"joints: {names}")
    given = {name: _entry(source, name, entries[name]) for name in names if name in entries}
    missing = [name for name in names if name not in given]
    if missing:
        raise FrictionFileError(source, f"no entry for joints {missing} (list every joint; "
                                "{} means no friction)")
    rows = [given[name] for name in names]
    return FrictionParameters(
        tuple(names), *(np.array([row[key] for row in rows]) for key in FRICTION_KEYS))
