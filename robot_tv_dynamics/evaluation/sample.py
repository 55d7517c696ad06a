r"""τ of eq. (39) at one joint sample, and its addends when they are wanted.

.. math::
    τ = M(q,Θ)\ddot q + \big(C(q,\dot q,Θ) + M(q,\dotΘ) + H(q,Ψ)\big)\dot q + G(q,Θ)
        + J(q)^\top Q_0 \dotΨ \; (+ τ_f(\dot q))

:class:`SampleTorques` is the per-sample evaluator of a live node (``dynamics_node``
answers every joint_states sample with it): :meth:`~SampleTorques.torque` takes τ from
the recursive backend (:class:`~robot_tv_dynamics.dynamics.RecursiveDynamics`, RNEA with
the Θ̇, Ψ, Ψ̇ terms as external wrenches) with the loads held between samples (set again
only when one of Θ, Θ̇, γ, γ̇ is a different array: the inputs hand out the same read-only
arrays until they change); :meth:`~SampleTorques.terms` builds every addend by
contraction (:func:`~robot_tv_dynamics.dynamics.generalized_terms`), which costs more and
is done only for a sample whose terms or bounds are published. The joint friction of a
``friction.yaml`` (:mod:`robot_tv_dynamics.friction`) is added to τ in both.
:meth:`~SampleTorques.term_rows` lays the addends out as the rows of
:data:`TERM_ROWS` (``generalized_terms``).
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics.dynamics import TERM_NAMES, GeneralizedTerms, Kinematics, generalized_terms
from robot_tv_dynamics.friction import FrictionParameters
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.inputs import ModelState
from robot_tv_dynamics.model import RobotModel

#: Rows of :meth:`SampleTorques.term_rows`: each addend of eq. (39) as a vector
#: (M q̈, C q̇, M(Θ̇) q̇, H q̇, G, Jᵀ Q₀ Ψ̇), then τ.
TERM_ROWS = (*TERM_NAMES, "tau")


class SampleTorques:
    """τ of eq. (39) per joint sample for one arm (module docstring).

    Not thread-safe (one backend and one row buffer): one per thread.

    Attributes:
        model: the arm.
        friction: joint friction added to τ (None: none).
    """

    def __init__(self, model: RobotModel, friction: FrictionParameters | None = None) -> None:
        """A backend for ``model`` starting from its nominal loads.

        Args:
            model: the arm.
            friction: joint friction τ_f(q̇) added to τ, or None.
        """
        self.model = model
        self.friction = friction
        self._dynamics = model.dynamics()  # the hot path: loads held between samples
        self._held: tuple[Array, ...] | None = None
        self._rows = np.empty((len(TERM_ROWS), model.nv))

    def torque(self, state: ModelState) -> Array:
        """τ (+ friction) by the recursive backend, (nv,) [N·m or N].

        The loads are handed to the backend only when one of ``state.theta``,
        ``theta_dot``, ``gamma``, ``gamma_dot`` is another array than last time.
        """
        loads = (state.theta, state.theta_dot, state.gamma, state.gamma_dot)
        held = self._held
        if held is None or any(a is not b for a, b in zip(loads, held, strict=True)):
            self._dynamics.set_loads(*loads)
            self._held = loads
        tau = self._dynamics.inverse_dynamics(state.q, state.qd, state.qdd)
        if self.friction is not None:
            tau = tau + self.friction.torque(state.qd)
        return tau

    def terms(self, state: ModelState) -> tuple[Kinematics, GeneralizedTerms, Array]:
        """Every addend of eq. (39) at this sample.

        Returns:
            (the kinematics at q (its ``stacked_jacobian`` is what the bounds need),
            the terms, τ (+ friction) (nv,)).
        """
        kin = self.model.kinematics(state.q)
        terms = generalized_terms(kin, state.qd, state.qdd, state.theta, state.theta_dot,
                                  state.gamma, state.gamma_dot)
        tau = terms.tau
        if self.friction is not None:
            tau = tau + self.friction.torque(state.qd)
        return kin, terms, tau

    def term_rows(self, terms: GeneralizedTerms) -> Array:
        """The addends of ``terms`` as the rows of :data:`TERM_ROWS`, (7, nv).

        The τ row is that of eq. (39) alone (no friction). The array is a buffer reused
        by the next call: copy it to keep it.
        """
        rows = self._rows
        np.matmul(terms.mass_matrix, terms.qdd, out=rows[0])
        np.matmul(terms.coriolis_matrix, terms.qd, out=rows[1])
        np.matmul(terms.mass_rate_matrix, terms.qd, out=rows[2])
        np.matmul(terms.gyroscopic_matrix, terms.qd, out=rows[3])
        rows[4] = terms.gravity
        rows[5] = terms.psi_dot_force
        rows[6] = terms.tau
        return rows
