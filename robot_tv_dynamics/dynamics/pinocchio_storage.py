"""Pinocchio's model, data and external forces of one evaluator, with NumPy views of them.

A Python call per body (``model.inertias[j] = ...``, ``data.v[j]``, ``pin.Force(...)``)
costs about as much as a whole Pinocchio algorithm. :class:`PinocchioStorage` maps the
three ``std::vector`` storages the recursive evaluator exchanges with Pinocchio — the
inertias (m, c, I_xx, I_xy, I_yy, I_xz, I_yz, I_zz per body), the LOCAL twists ``data.v``
and the external wrenches — as strided NumPy views, after checking the layout element by
element (write through the view, read back through Pinocchio's public API). If any check
fails, or when asked, it keeps plain arrays and copies through the public API instead.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence

import numpy as np
import pinocchio as pin

from robot_tv_dynamics.arrays import Array


def _address(array: Array) -> int:
    return int(array.__array_interface__["data"][0])


def _strided_view(
    first: Array, count: int, width: int, stride: int, offset: int = 0
) -> Array:
    """(count, width) float64 view of memory starting ``offset`` bytes before ``first``."""
    start = _address(first) - offset
    span = stride * (count - 1) + 8 * width
    raw = np.frombuffer(memoryview((ctypes.c_char * span).from_address(start)), dtype=np.uint8)
    return np.lib.stride_tricks.as_strided(
        raw.view(np.float64)[:1], shape=(count, width), strides=(stride, 8), writeable=True)


class PinocchioStorage:
    """The Pinocchio model/data/f^ext of one evaluator and NumPy access to their vectors.

    ``inertias`` (N, 10) in Inertia storage order, ``velocities`` (N, 6) and ``forces``
    (N, 6) are views of Pinocchio's memory when ``shared`` is True; otherwise they are
    plain arrays and :meth:`push_inertias`, :meth:`pull_velocities`, :meth:`push_forces`
    copy through the public API.
    """

    def __init__(self, model: pin.Model, n: int, try_shared: bool) -> None:
        """Own ``model`` with a new data and f^ext; map them when ``try_shared`` and possible."""
        self.model = model
        self.data = model.createData()
        self.fext = pin.StdVec_Force()
        for _ in range(n + 1):
            self.fext.append(pin.Force.Zero())
        self.n = n
        self.shared = False
        if try_shared:
            try:
                self.shared = self._share()
            except (ValueError, TypeError, AttributeError, OverflowError):
                self.shared = False
        if not self.shared:
            self.inertias = np.zeros((n, 10))
            self.velocities = np.zeros((n, 6))
            self.forces = np.zeros((n, 6))

    def _share(self) -> bool:
        """Map the three vectors; False unless every element check passes."""
        n, model, data, fext = self.n, self.model, self.data, self.fext

        def uniform(addresses: Sequence[int], stride_min: int) -> int | None:
            stride = addresses[1] - addresses[0] if len(addresses) > 1 else stride_min
            if stride < stride_min or any(
                    a != addresses[0] + k * stride for k, a in enumerate(addresses)):
                return None
            return stride

        levers = [model.inertias[j].lever for j in range(1, n + 1)]
        vel = [data.v[j].vector for j in range(1, n + 1)]
        frc = [fext[j].vector for j in range(1, n + 1)]
        strides = (uniform([_address(a) for a in levers], 80),
                   uniform([_address(a) for a in vel], 48),
                   uniform([_address(a) for a in frc], 48))
        # views of persistent storage: uniformly spaced, typed, and at the same address when
        # fetched again (a temporary copy would fail one of these before anything is written)
        again = (model.inertias[n].lever, data.v[n].vector, fext[n].vector)
        if any(s is None for s in strides) or any(
                not (a.dtype == np.float64 and a.shape == (k,)) for a, k in
                ((levers[0], 3), (vel[0], 6), (frc[0], 6))) or any(
                _address(a) != _address(b) for a, b in zip(
                    again, (levers[-1], vel[-1], frc[-1]), strict=True)):
            return False
        s_i, s_v, s_f = (int(s) for s in strides)  # type: ignore[arg-type]
        inertias = _strided_view(levers[0], n, 10, s_i, offset=8)
        velocities = _strided_view(vel[0], n, 6, s_v)
        forces = _strided_view(frc[0], n, 6, s_f)
        saved = inertias.copy()
        # write a distinct pattern through the views, read it back through the public API
        pattern = np.arange(1.0, 10.0 * n + 1.0).reshape(n, 10)
        inertias[:] = pattern
        forces[:] = pattern[:, :6]
        ok = True
        for j in range(1, n + 1):
            inertia, row = model.inertias[j], pattern[j - 1]
            dense = np.array([[row[4], row[5], row[7]], [row[5], row[6], row[8]],
                              [row[7], row[8], row[9]]])
            ok = ok and inertia.mass == row[0] and np.array_equal(inertia.lever, row[1:4])
            ok = ok and np.array_equal(inertia.inertia, dense)
            ok = ok and np.array_equal(fext[j].vector, row[:6])
        pin.forwardKinematics(model, data, pin.neutral(model), np.arange(1.0, model.nv + 1.0))
        ok = ok and all(np.array_equal(velocities[j - 1], data.v[j].vector)
                        for j in range(1, n + 1))
        inertias[:] = saved
        forces[:] = 0.0
        if ok:
            self.inertias, self.velocities, self.forces = inertias, velocities, forces
        return bool(ok)

    def push_inertias(self) -> None:
        """Copy ``inertias`` into the model (public API; a no-op when shared)."""
        if self.shared:
            return
        for j, row in enumerate(self.inertias, start=1):
            dense = np.array([[row[4], row[5], row[7]], [row[5], row[6], row[8]],
                              [row[7], row[8], row[9]]])
            inertia = pin.Inertia.Zero()  # the constructor refuses an indefinite I_c
            inertia.mass, inertia.lever, inertia.inertia = float(row[0]), row[1:4].copy(), dense
            self.model.inertias[j] = inertia

    def pull_velocities(self) -> None:
        """Copy ``data.v`` into ``velocities`` (public API; a no-op when shared)."""
        if not self.shared:
            v = self.data.v
            for j in range(self.n):
                self.velocities[j] = v[j + 1].vector

    def push_forces(self) -> None:
        """Copy ``forces`` into the f^ext vector (public API; a no-op when shared)."""
        if not self.shared:
            for j in range(self.n):
                self.fext[j + 1] = pin.Force(self.forces[j])

    # ------------------------------------------------------------------ momentum
    def enable_momentum(self) -> None:
        """Add what :meth:`RecursiveDynamics.momentum` reads and writes (once; idempotent).

        ``momentum_fext`` is a second f^ext vector with ``momentum_forces`` (N, 6);
        ``accelerations`` (N, 6) and ``body_forces`` (N, 6) hold ``data.a_gf`` and
        ``data.f`` (the LOCAL accelerations with gravity as base acceleration — RNEA does
        not update ``data.a`` — and the wrenches transmitted by each joint) after an
        RNEA. They are views of Pinocchio's memory when the layout checks pass (write
        through the view, read back through the public API, as :meth:`_share`), else
        plain arrays that :meth:`push_momentum_forces` and :meth:`pull_momentum` copy.
        """
        if hasattr(self, "momentum_fext"):
            return
        n = self.n
        self.momentum_fext = pin.StdVec_Force()
        for _ in range(n + 1):
            self.momentum_fext.append(pin.Force.Zero())
        self.momentum_shared = False
        try:
            self.momentum_shared = self._share_momentum()
        except (ValueError, TypeError, AttributeError, OverflowError):
            self.momentum_shared = False
        if not self.momentum_shared:
            self.momentum_forces = np.zeros((n, 6))
            self.accelerations = np.zeros((n, 6))
            self.body_forces = np.zeros((n, 6))

    def _share_momentum(self) -> bool:
        """Map ``momentum_fext``, ``data.a`` and ``data.f``; False unless every check passes."""
        n, data, fext = self.n, self.data, self.momentum_fext
        views = []
        for vector in (lambda j: fext[j].vector, lambda j: data.a_gf[j].vector,
                       lambda j: data.f[j].vector):
            arrays = [vector(j) for j in range(1, n + 1)]
            addresses = [_address(a) for a in arrays]
            stride = addresses[1] - addresses[0] if n > 1 else 48
            if stride < 48 or any(a != addresses[0] + k * stride for k, a in enumerate(addresses)):
                return False
            if not (arrays[0].dtype == np.float64 and arrays[0].shape == (6,)) or _address(
                    vector(n)) != addresses[-1]:
                return False
            views.append(_strided_view(arrays[0], n, 6, stride))
        forces, accelerations, body_forces = views
        pattern = np.arange(1.0, 6.0 * n + 1.0).reshape(n, 6)
        forces[:] = pattern
        ok = all(np.array_equal(fext[j].vector, pattern[j - 1]) for j in range(1, n + 1))
        q, v = pin.neutral(self.model), np.arange(1.0, self.model.nv + 1.0)
        pin.rnea(self.model, data, q, v, v, fext)
        ok = ok and all(np.array_equal(accelerations[j - 1], data.a_gf[j].vector)
                        and np.array_equal(body_forces[j - 1], data.f[j].vector)
                        for j in range(1, n + 1))
        forces[:] = 0.0
        if ok:
            self.momentum_forces, self.accelerations, self.body_forces = views
        return bool(ok)

    def push_momentum_forces(self) -> None:
        """Copy ``momentum_forces`` into ``momentum_fext`` (a no-op when shared)."""
        if not self.momentum_shared:
            for j in range(self.n):
                self.momentum_fext[j + 1] = pin.Force(self.momentum_forces[j])

    def pull_momentum(self) -> None:
        """Copy ``data.a_gf``, ``data.f`` to ``accelerations``, ``body_forces`` (unless shared)."""
        if not self.momentum_shared:
            a, f = self.data.a_gf, self.data.f
            for j in range(self.n):
                self.accelerations[j] = a[j + 1].vector
                self.body_forces[j] = f[j + 1].vector
