r"""The addends of eq. (39) as one record, and their labels (shared by every output).

.. math::
    M(q,Θ)\ddot q + \big(C(q,\dot q,Θ) + M(q,\dotΘ) + H(q,Ψ)\big)\dot q + G(q,Θ)
    = τ + w - J(q)^\top Q_0 \dot Ψ
"""

from __future__ import annotations

from dataclasses import dataclass

from robot_tv_dynamics.arrays import Array

#: The addends of τ in eq. (39), in the order of :meth:`GeneralizedTerms.breakdown`, the
#: ``generalized_terms`` topic, ``evaluate``'s CSV and JSON: M(q,Θ)q̈, C(q,q̇,Θ)q̇,
#: M(q,Θ̇)q̇, H(q,Ψ)q̇, G(q,Θ), JᵀQ₀Ψ̇.
TERM_NAMES = ("inertia", "coriolis", "mass_rate", "gyroscopic", "gravity", "psi_dot")


@dataclass(frozen=True)
class GeneralizedTerms:
    """Every addend of eq. (39) at one state, and τ (with w = 0).

    Attributes:
        tau: τ, (nv,) [N·m, N].
        mass_matrix: M(q, Θ), (nv, nv).
        coriolis_matrix: C(q, q̇, Θ) from the Christoffel symbols of eq. (40)–(41).
        gravity: G(q, Θ), (nv,), eq. (42).
        mass_rate_matrix: M(q, Θ̇), (nv, nv), eq. (58)–(62).
        gyroscopic_matrix: H(q, Ψ), (nv, nv), eq. (43), skew-symmetric.
        psi_dot_force: Jᵀ Q₀ Ψ̇, (nv,).
        qd: the q̇ the matrices multiply, (nv,).
        qdd: the q̈ used, (nv,).
    """

    tau: Array
    mass_matrix: Array
    coriolis_matrix: Array
    gravity: Array
    mass_rate_matrix: Array
    gyroscopic_matrix: Array
    psi_dot_force: Array
    qd: Array
    qdd: Array

    def __post_init__(self) -> None:
        """Freeze the arrays handed out."""
        for value in vars(self).values():
            value.setflags(write=False)

    def breakdown(self) -> dict[str, Array]:
        """Each addend of τ as a vector, labelled; they sum to ``tau``."""
        return {
            "inertia": self.mass_matrix @ self.qdd,
            "coriolis": self.coriolis_matrix @ self.qd,
            "mass_rate": self.mass_rate_matrix @ self.qd,
            "gyroscopic": self.gyroscopic_matrix @ self.qd,
            "gravity": self.gravity,
            "psi_dot": self.psi_dot_force,
        }
