r"""The generalized momentum p = ∂L/∂q̇ and β = ∂L/∂q of the held loads, by two RNEA calls.

With the body momenta h_l = Z(Φ_l) V_l + γ_l (γ_l = Q₀ψ_l) and ∂V_l/∂q_k =
X_{l←k}(V_k × S_k) for every ancestor joint k of body l (LOCAL twist V_k and joint axis
S_k of link k),

.. math::
    p_k = S_k^\top H_k,\qquad β_k = -S_k^\top (V_k ×^* H_k) - G_k,

where H_k = Σ_{l ⪰ k} X*_{k←l} h_l is the momentum of the subtree at joint k in its frame.
RNEA at (q, v = 0, a = q̇) with f^ext_l = −γ_l and gravity makes exactly these: its
accelerations are the twists V_k and its joint wrenches H_k, each plus what an RNEA at
(q, 0, 0) gives (−g in each frame, the gravity wrenches), which also gives G.
:class:`JointAxes` holds the map of S_kᵀ(V_k ×* H_k); the evaluator's
:meth:`~robot_tv_dynamics.dynamics.RecursiveDynamics.momentum` is the public call.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from robot_tv_dynamics.arrays import Array, skew
from robot_tv_dynamics.dynamics.pinocchio_storage import PinocchioStorage

_rnea = pin.rnea


class JointAxes:
    """The joint axes S_k (LOCAL) of an arm, as the block-diagonal map of S_kᵀ(V_k ×* H_k).

    Only for joints with one degree of freedom and a constant axis in their frame
    (revolute, prismatic, continuous: every example-robot-data arm).
    """

    def __init__(self, model: pin.Model, n: int) -> None:
        """Read the axes of ``model``'s joints 1…n.

        Raises:
            NotImplementedError: a joint with more than one degree of freedom.
        """
        joints = [model.joints[j] for j in range(1, model.njoints)]
        if len(joints) != n or any(joint.nv != 1 for joint in joints) or model.nv != n:
            raise NotImplementedError(
                "momentum() needs one degree of freedom per joint; "
                f"joints: {[joint.shortname() for joint in joints]}")
        data = model.createData()
        pin.computeJointJacobians(model, data, pin.neutral(model))
        cross_map = np.zeros((6 * n, 6 * n))
        for j, joint in enumerate(joints, start=1):
            s = pin.getJointJacobian(model, data, j, pin.LOCAL)[:, joint.idx_v]
            lin, ang = skew(s[:3]), skew(s[3:])
            block = np.zeros((6, 6))
            # S·(V ×* H) = Vᵀ A H with V = (v, ω), H = (f, n), V ×* H = (ω×f, ω×n + v×f)
            block[0:3, 0:3] = -ang  # v·(f × S_ang)
            block[3:6, 0:3] = -lin  # ω·(f × S_lin)
            block[3:6, 3:6] = -ang  # ω·(n × S_ang)
            k = 6 * (j - 1)
            cross_map[k:k + 6, k:k + 6] = block
        self._n = n
        self._cross_map = cross_map
        dof_order = np.array([joint.idx_v for joint in joints])
        self._dof_rows = (None if np.array_equal(dof_order, np.arange(n))
                          else np.argsort(dof_order))
        self._zero = np.zeros(n)

    def momentum(
        self, storage: PinocchioStorage, qp: Array, qd: Array, fext: pin.StdVec_Force | None
    ) -> tuple[Array, Array]:
        """(p, β) of the inertias ``storage`` holds, with f^ext = −γ (or none).

        Args:
            storage: a storage whose momentum buffers are enabled.
            qp: Pinocchio's configuration (nq,).
            qd: joint velocities (nv,) [rad/s, m/s].
            fext: −γ_l as Pinocchio's f^ext vector, or None (no Ψ).

        Returns:
            (p, β), each (nv,) [N·m·s, N·s] and [N·m, N], new writeable arrays.
        """
        model, data, zero = storage.model, storage.data, self._zero
        gravity = _rnea(model, data, qp, zero, zero)
        storage.pull_momentum()
        # the subtrees' gravity wrenches, and −g in each frame (RNEA's base acceleration)
        weights, down = storage.body_forces.copy(), storage.accelerations.copy()
        if fext is None:
            p = _rnea(model, data, qp, zero, qd)
        else:
            p = _rnea(model, data, qp, zero, qd, fext)
        storage.pull_momentum()
        p -= gravity
        twists = (storage.accelerations - down).reshape(-1)
        subtree = (storage.body_forces - weights).reshape(-1)
        per_body = (twists * (self._cross_map @ subtree)).reshape(self._n, 6).sum(axis=1)
        if self._dof_rows is not None:
            per_body = per_body[self._dof_rows]
        beta = -per_body - gravity
        return p, beta


__all__ = ["JointAxes"]
