"""Shared cases of the bounds tests: small URDFs, random consistent Θ, a certified fixture."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.inertia import (
    phi_from_pseudo_inertia,
    phi_to_pinocchio,
)

# --------------------------------------------------------------------------- helpers
LINK = ('<link name="{name}"><inertial><mass value="{mass}"/>'
        '<inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial></link>')
LIMIT = '<limit lower="{lo}" upper="{hi}" effort="10" velocity="1"/>'


def joint(name: str, kind: str, parent: str, child: str, axis: str = "0 0 1",
           xyz: str = "0 0 0", limit: str = LIMIT.format(lo=-1, hi=1)) -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>{limit}</joint>')


def urdf_arm(*parts: str) -> RobotModel:
    return RobotModel.from_urdf_string('<robot name="t"><link name="base"/>' + "".join(parts)
                                       + "</robot>")


def random_consistent_theta(n: int, rng: np.random.Generator, spread: float = 1.0) -> np.ndarray:
    """Θ with f(Φ_l) = L Lᵀ + 0.01 I: random, physically consistent (Theorem 1)."""
    factor = spread * rng.normal(size=(n, 4, 4))
    f = factor @ np.swapaxes(factor, 1, 2) + 0.01 * np.eye(4)
    return phi_from_pseudo_inertia(f)


def random_q(model: RobotModel, rng: np.random.Generator, count: int) -> np.ndarray:
    limits = model.joint_limits
    return rng.uniform(limits.lower, limits.upper, size=(count, model.nv))


def extreme_values(model: RobotModel, qs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lam = np.array([np.linalg.eigvalsh(j.T @ j) for j in map(model.body_jacobians_local, qs)])
    return lam[:, 0], lam[:, -1]


def crba_eigenvalues(model: RobotModel, theta: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """Eigenvalues of M(q, Θ) = pinocchio.crba with Θ's inertias, (K, nv) ascending."""
    pm = pin.Model(model.pinocchio_model)
    for l in range(model.n_bodies):
        pm.inertias[l + 1] = phi_to_pinocchio(theta[l])
    data = pm.createData()
    out = []
    for q in qs:
        m = pin.crba(pm, data, model.pinocchio_configuration(q))
        out.append(np.linalg.eigvalsh(np.triu(m) + np.triu(m, 1).T))
    return np.array(out)
