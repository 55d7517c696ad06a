r"""Joint friction read from a YAML file, subtracted from the measured effort.

File format (written by the friction identification): a mapping joint name →
parameters, optionally under a top-level key ``joints``::

    panda_joint1: {viscous: 0.3, coulomb: 0.5, offset: -0.02, coulomb_velocity: 0.01}
    panda_joint2: {viscous: 0.25}

with, per joint,

.. math::
    τ_f = \mathrm{viscous}\,\dot q + \mathrm{coulomb}\,\tanh(\dot q/\mathrm{coulomb\_velocity})
          + \mathrm{offset}

[N·m·s/rad, N·m, N·m, rad/s] (prismatic joints: N, m/s). Missing keys are 0
(``coulomb_velocity`` is required when ``coulomb`` ≠ 0); joints not in the file have no
friction; a joint the model does not have, an unknown key or a non-finite value is an
error. The torque that drives the arm is τ = τ_measured − τ_f.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError, UnknownNameError
from robot_tv_dynamics.inertia import Array

KEYS: tuple[str, ...] = ("viscous", "coulomb", "offset", "coulomb_velocity")


@dataclass(frozen=True)
class JointFriction:
    """Friction parameters of every joint, model order (each (nv,)).

    Attributes:
        viscous: [N·m·s/rad].
        coulomb: [N·m].
        offset: [N·m].
        coulomb_velocity: tanh scale [rad/s] (1 where coulomb = 0).
    """

    viscous: Array
    coulomb: Array
    offset: Array
    coulomb_velocity: Array

    def torque(self, qd: npt.ArrayLike) -> Array:
        """τ_f(q̇), (nv,) or (K, nv) for (K, nv) velocities [N·m, N]."""
        v = np.asarray(qd, dtype=np.float64)
        return np.asarray(self.viscous * v + self.coulomb * np.tanh(v / self.coulomb_velocity)
                          + self.offset)


def friction_from_dict(data: Any, joint_names: Sequence[str], source: str = "friction"
                       ) -> JointFriction:
    """Build :class:`JointFriction` from the parsed YAML (see the module docstring).

    Raises:
        InvalidInputError: not a mapping, an unknown key, a non-finite value, a
            non-positive ``coulomb_velocity`` where ``coulomb`` ≠ 0.
        UnknownNameError: a joint the model does not have.
    """
    if isinstance(data, Mapping) and set(data) == {"joints"}:
        data = data["joints"]
    if not isinstance(data, Mapping):
        raise InvalidInputError(source, "expected a mapping joint name → {viscous, coulomb, "
                                "offset, coulomb_velocity}, got " + type(data).__name__)
    names = list(joint_names)
    values = {key: np.zeros(len(names)) for key in KEYS}
    values["coulomb_velocity"][:] = 1.0
    for joint, params in data.items():
        if joint not in names:
            raise UnknownNameError("joint", str(joint), names)
        if not isinstance(params, Mapping):
            raise InvalidInputError(f"{source}: {joint}", "expected a mapping of "
                                    f"{', '.join(KEYS)}, got {type(params).__name__}")
        unknown = sorted(set(map(str, params)) - set(KEYS))
        if unknown:
            raise InvalidInputError(f"{source}: {joint}", f"unknown keys {unknown}; known: "
                                    f"{list(KEYS)}")
        i = names.index(joint)
        for key, value in params.items():
            try:
                number = float(value)
            except (TypeError, ValueError):
                number = math.nan
            if not math.isfinite(number):
                raise InvalidInputError(f"{source}: {joint}.{key}",
                                        f"must be a finite number, got {value!r}")
            values[str(key)][i] = number
        if values["coulomb"][i] != 0.0 and (
                "coulomb_velocity" not in params or values["coulomb_velocity"][i] <= 0.0):
            raise InvalidInputError(f"{source}: {joint}.coulomb_velocity",
                                    "must be given and > 0 when coulomb is not 0")
    for array in values.values():
        array.setflags(write=False)
    return JointFriction(**values)


def load_friction(path: str | Path, joint_names: Sequence[str]) -> JointFriction:
    """Read a friction YAML file (see the module docstring).

    Raises:
        InvalidInputError: unreadable file, invalid YAML, bad content.
        UnknownNameError: a joint the model does not have.
    """
    import yaml

    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as error:
        raise InvalidInputError("friction", f"cannot read {path}: "
                                f"{error.strerror or error}") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise InvalidInputError("friction", f"{path} is not valid YAML: {error}") from None
    return friction_from_dict(data, joint_names, f"friction file {path}")
