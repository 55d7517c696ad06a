r"""Adding a link-frame load to the arm's Θ, Θ̇, Ψ, Ψ̇: the one way the package does it.

The maps Φ_link ↦ Φ_body and ψ_link ↦ ψ_body are linear (a fixed rigid transform, as
:meth:`RobotModel.link_load_in_body <robot_tv_dynamics.model.RobotModel.link_load_in_body>`
applies them); :class:`BodyLoadMap` evaluates them once, so a simulator can call it at
every integrator stage, and the functions below use it. :class:`LoadBodyRows` gives the
load body's rows over time as one vector, composing the map with a
:class:`~robot_tv_dynamics.loading.state.LinearLoadingProcess`'s own.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.arrays import readonly
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    Array,
)
from robot_tv_dynamics.loading.geometry import (
    Placement,
)
from robot_tv_dynamics.loading.state import (
    STATE_SIZE,
    LinearLoadingProcess,
    LoadingProcess,
    LoadState,
)

if TYPE_CHECKING:  # pragma: no cover
    from robot_tv_dynamics.model import RobotModel


def body_loads(
    model: RobotModel, process: LoadingProcess, t: float, theta_base: npt.ArrayLike
) -> tuple[Array, Array, Array, Array]:
    """Θ, Θ̇, Ψ, Ψ̇ of the whole arm at time t: ``theta_base`` plus the load.

    Args:
        model: the arm.
        process: the loading process (its link must be in the URDF).
        t: time [s].
        theta_base: Θ without the load, (N, 10) [kg, kg·m, kg·m²].

    Returns:
        (Θ (N, 10), Θ̇ (N, 10), Ψ (N, 12), Ψ̇ (N, 12)), body coordinates; only the row of
        the body owning ``process.link`` differs from ``theta_base`` / zero.
    """
    state = process.state(t)
    return loads_from_state(model, process.link, state, theta_base)


class BodyLoadMap:
    """Adds a link-frame :class:`LoadState` to Θ, Θ̇, Ψ, Ψ̇ of the arm (precomputed, fast).

    The maps Φ_link ↦ Φ_body and ψ_link ↦ ψ_body are linear (a fixed rigid transform,
    as :meth:`RobotModel.link_load_in_body
    <robot_tv_dynamics.model.RobotModel.link_load_in_body>` applies them); they are
    evaluated once here, so a simulator can call this at every integrator stage.
    """

    def __init__(self, model: RobotModel, link: str) -> None:
        """Build the map for ``link``.

        Raises:
            UnknownNameError: the link is not in the URDF.
            InvalidInputError: the link is fixed to the world.
        """
        attachment = model.link_attachment(link)
        placement = Placement(np.asarray(attachment.rotation), np.asarray(attachment.translation))
        self.link = link
        self.body = attachment.body
        self.n_bodies = model.n_bodies
        self.phi_matrix = placement.phi_matrix()
        self.psi_matrix = placement.psi_matrix()

    def in_body(
        self, phi: Array, phi_dot: Array, psi: Array, psi_dot: Array
    ) -> tuple[Array, Array, Array, Array]:
        """Link-frame Φ, Φ̇ (10,) and ψ, ψ̇ (12,) of the load in body coordinates."""
        return (self.phi_matrix @ phi, self.phi_matrix @ phi_dot,
                self.psi_matrix @ psi, self.psi_matrix @ psi_dot)

    def __call__(
        self, state: LoadState, theta_base: Array
    ) -> tuple[Array, Array, Array, Array]:
        """(Θ, Θ̇, Ψ, Ψ̇) of the arm: ``theta_base`` (N, 10) plus the load, body coordinates."""
        rows = self.in_body(state.phi, state.phi_dot, state.psi, state.psi_dot)
        return add_body_rows(theta_base, self.body, *rows)


class LoadBodyRows:
    """The load body's rows over time as one vector: t ↦ [Φ_body, Φ̇, ψ, ψ̇, ν], (45,).

    Body coordinates; Φ_body is the arm's own row ``phi_base`` plus the load, Φ̇, ψ, ψ̇
    are the load's alone (the rows of Θ̇, Ψ, Ψ̇), ν is the process's. For a
    :class:`~robot_tv_dynamics.loading.state.LinearLoadingProcess` the body map, the
    process's ``state_map`` and ``phi_base`` (in the column of the constant feature) are
    composed once, so a call is the process's ``features(t)`` and one product; for any
    other process, ``state(t)`` and one (45, 45) product. The composition changes only
    the rounding: the same values to ~1e-16 of the largest term.
    """

    def __init__(self, mapping: BodyLoadMap, process: LoadingProcess, phi_base: Array) -> None:
        """Compose ``mapping`` (the process's link into its body) with ``process``.

        Args:
            mapping: the body map of ``process.link``.
            process: the loading process.
            phi_base: Φ of the body without the load, (10,) [kg, kg·m, kg·m²].

        Raises:
            InvalidInputError: a linear process whose map has the wrong shape or whose
                first feature is not the constant 1.
        """
        self.body = mapping.body
        self.process = process
        body_map = np.zeros((STATE_SIZE, STATE_SIZE))
        body_map[0:10, 0:10] = body_map[10:20, 10:20] = mapping.phi_matrix
        body_map[20:32, 20:32] = body_map[32:44, 32:44] = mapping.psi_matrix
        body_map[44, 44] = 1.0
        self._base = np.asarray(phi_base, dtype=np.float64).copy()
        self._features: Callable[[float], Array] | None = None
        if isinstance(process, LinearLoadingProcess):
            state_map = np.asarray(process.state_map, dtype=np.float64)
            x0 = np.asarray(process.features(float(process.duration)))
            if state_map.ndim != 2 or state_map.shape[0] != STATE_SIZE or x0.shape != (
                    state_map.shape[1],) or x0[0] != 1.0:
                raise InvalidInputError(
                    "process", f"a linear loading process needs state_map ({STATE_SIZE}, k) "
                    f"and features (k,) starting with 1; got {state_map.shape}, {x0.shape}")
            composed = body_map @ state_map
            composed[0:10, 0] += self._base
            self._map = np.ascontiguousarray(composed)
            self._features = process.features
        else:
            self._map = body_map

    def __call__(self, t: float) -> Array:
        """[Φ_body, Φ̇, ψ, ψ̇, ν] at time ``t`` [s], (45,), body coordinates, read-only."""
        if self._features is not None:
            out = self._map @ self._features(t)
        else:
            state = self.process.state(t)
            out = self._map @ np.concatenate(
                (state.phi, state.phi_dot, state.psi, state.psi_dot, (state.nu,)))
            out[0:10] += self._base
        return readonly(out)


def add_body_rows(
    theta_base: Array, body: int, phi: Array, phi_dot: Array, psi: Array, psi_dot: Array
) -> tuple[Array, Array, Array, Array]:
    """(Θ, Θ̇, Ψ, Ψ̇) of the arm with one body's load rows added (body coordinates).

    Args:
        theta_base: Θ without the load, (N, 10); not changed.
        body: row of the load's body.
        phi: Φ of the load (10,), added to row ``body`` of Θ.
        phi_dot: Φ̇ (10,), the only non-zero row of Θ̇.
        psi: ψ (12,) — or γ = Q₀ψ (6,) — the only non-zero row of Ψ (or γ).
        psi_dot: ψ̇ in the layout of ``psi``.

    Returns:
        New arrays (N, 10), (N, 10), (N, width of psi), (N, width of psi).
    """
    n = theta_base.shape[0]
    theta = np.array(theta_base, dtype=np.float64)
    theta_dot, psi_out, psi_dot_out = (
        np.zeros((n, 10)), np.zeros((n, psi.shape[-1])), np.zeros((n, psi.shape[-1])))
    theta[body] += phi
    theta_dot[body] = phi_dot
    psi_out[body] = psi
    psi_dot_out[body] = psi_dot
    return theta, theta_dot, psi_out, psi_dot_out


def loads_from_state(
    model: RobotModel, link: str, state: LoadState, theta_base: npt.ArrayLike
) -> tuple[Array, Array, Array, Array]:
    """As :func:`body_loads`, from a :class:`LoadState` already evaluated."""
    return BodyLoadMap(model, link)(state, model.check_theta(theta_base))
