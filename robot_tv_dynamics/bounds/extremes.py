r"""The Jacobian extremes γ and δ as a labelled record, and yes/no verdicts.

.. math::
    γ = \inf_q λ_{\min}(J(q)^\top J(q)), \qquad δ = \sup_q σ_{\max}(J(q))^2

over the joint-limit box, J the stacked LOCAL body Jacobian of eq. (17).
:class:`JacobianExtremes` carries both as brackets, labelled ``"sampled"`` (attained
values: estimates, not bounds) or ``"certified"`` (rigorous brackets), with the
verdicts on Definition 2 and Assumption 2 as :class:`Assessment`-style fields.

This module holds only the record, the method labels, :class:`Assessment` and the
:class:`SearchBudget` of a search, so that
both the search that computes the record (:mod:`robot_tv_dynamics.bounds`) and
the theorems that use it (:mod:`robot_tv_dynamics.bounds`) can import them; both are
re-exported by :mod:`robot_tv_dynamics.bounds`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from robot_tv_dynamics.arrays import frozen_copy
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.numbers import finite_or_none as finite_or_none

#: Label of an estimate from sampling: attained values, not bounds on the extremes.
SAMPLED = "sampled"
#: Label of a rigorous bracket from branch and bound.
CERTIFIED = "certified"
#: Label of a verdict that follows from the kinematic structure alone.
STRUCTURAL = "structural"
METHODS = (SAMPLED, CERTIFIED)




def _none_to_inf(value: float | None, sign: float = 1.0) -> float:
    return sign * math.inf if value is None else float(value)


# ---------------------------------------------------------------------------- results
@dataclass(frozen=True)
class Assessment:
    """A yes/no/undetermined answer, how it was reached, and why.

    Attributes:
        holds: True, False, or None (undetermined).
        method: ``"certified"``, ``"sampled"`` or ``"structural"``.
        reason: one sentence.
    """

    holds: bool | None
    method: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"holds": self.holds, "method": self.method, "reason": self.reason}


@dataclass(frozen=True)
class SearchBudget:
    """What one extremes search may spend, passed whole through the search's layers.

    Attributes:
        samples: Sobol samples (the sampled search, and the incumbents of the certified
            one).
        seed: sampling seed.
        time_limit: wall-time budget [s].
        target_gap: certified: stop at this relative gap of the bracket.
        max_boxes: certified: optional cap on boxes (reproducible runs).
        batch: certified: boxes bisected per step.
        floor_batch: certified: boxes per step of the local-left-inverse floor (None: its
            default, larger on a cluster; the same batch gives the same boxes serially
            and on a cluster).
    """

    samples: int = 2048
    seed: int = 0
    time_limit: float = 60.0
    target_gap: float = 0.01
    max_boxes: int | None = None
    batch: int = 128
    floor_batch: int | None = None


@dataclass(frozen=True)
class JacobianExtremes:
    r"""γ = inf λ_min(JᵀJ) and δ = sup σ_max(J)² over a joint box, labelled by method.

    Attributes:
        method: ``"sampled"`` (estimates: attained values) or ``"certified"`` (brackets).
        inf_lambda_min_JtJ: the γ to use in α₁ (eq. 45): the certified lower end, or the
            sampled estimate (an upper bound on γ only) [m²/rad² mixed units of J].
        sup_sigma_max_J_sq: the δ to use in α₂ (eq. 46): the certified upper end, or the
            sampled estimate (a lower bound on δ only); ∞ when J is unbounded on the box.
        inf_lambda_min_JtJ_bracket: (lower, upper) with γ inside. Sampled: lower is the
            trivial 0.
        sup_sigma_max_J_sq_bracket: (lower, upper) with δ inside. Sampled: upper is the
            structural bound (sum of squared column-norm bounds), valid but loose.
        gap: max over both brackets of (upper − lower)/upper; 0 when exact.
        argmin_q: configuration (nv,) where the smallest λ_min(JᵀJ) was found.
        argmax_q: configuration (nv,) where the largest σ_max(J)² was found.
        normal: Definition 2 on the box: True/False, or None when undetermined.
        bounded: Assumption 2 / Lemma 2 on the box (δ < ∞): True/False, or None.
        normal_reason: one sentence on ``normal`` (what was proved or only sampled).
        bounded_reason: one sentence on ``bounded``.
        normal_method: how ``normal`` was reached: ``"structural"`` (for every q, from the
            kinematic structure), ``"certified"`` or ``"sampled"``.
        bounded_method: how ``bounded`` was reached.
        active_joints: names of the searched joints (see :func:`joint_search_box`).
        notes: remarks on dropped joints and degenerate input.
        evaluations: configurations / boxes evaluated.
        elapsed_s: wall time [s].
        converged: whether the target gap was reached (certified) before the limit.
        settings: the arguments the search ran with (for caches and reports).
    """

    method: str
    inf_lambda_min_JtJ: float
    sup_sigma_max_J_sq: float
    inf_lambda_min_JtJ_bracket: tuple[float, float]
    sup_sigma_max_J_sq_bracket: tuple[float, float]
    gap: float
    argmin_q: Array
    argmax_q: Array
    normal: bool | None
    bounded: bool | None
    normal_reason: str
    bounded_reason: str
    normal_method: str = SAMPLED
    bounded_method: str = SAMPLED
    active_joints: tuple[str, ...] = ()
    notes: tuple[str, ...] = ()
    evaluations: int = 0
    elapsed_s: float = 0.0
    converged: bool = False
    settings: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        """Freeze the configurations handed out."""
        object.__setattr__(self, "argmin_q", frozen_copy(self.argmin_q))
        object.__setattr__(self, "argmax_q", frozen_copy(self.argmax_q))

    @property
    def certified(self) -> bool:
        """Whether the brackets are rigorous (method ``"certified"``)."""
        return self.method == CERTIFIED

    @property
    def reason(self) -> str:
        """Both verdict sentences."""
        return f"{self.normal_reason}; {self.bounded_reason}"

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict; infinities become ``None`` (JSON has no ∞)."""
        return {
            "method": self.method,
            "inf_lambda_min_JtJ": finite_or_none(self.inf_lambda_min_JtJ),
            "sup_sigma_max_J_sq": finite_or_none(self.sup_sigma_max_J_sq),
            "inf_lambda_min_JtJ_bracket": [finite_or_none(x)
                                           for x in self.inf_lambda_min_JtJ_bracket],
            "sup_sigma_max_J_sq_bracket": [finite_or_none(x)
                                           for x in self.sup_sigma_max_J_sq_bracket],
            "gap": finite_or_none(self.gap),
            "argmin_q": self.argmin_q.tolist(),
            "argmax_q": self.argmax_q.tolist(),
            "normal": self.normal,
            "bounded": self.bounded,
            "normal_reason": self.normal_reason,
            "bounded_reason": self.bounded_reason,
            "normal_method": self.normal_method,
            "bounded_method": self.bounded_method,
            "active_joints": list(self.active_joints),
            "notes": list(self.notes),
            "evaluations": self.evaluations,
            "elapsed_s": self.elapsed_s,
            "converged": self.converged,
            "settings": dict(self.settings),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> JacobianExtremes:
        """Inverse of :meth:`to_dict`.

        Raises:
            InvalidInputError: missing keys or an unknown method.
        """
        try:
            method = str(data["method"])
            if method not in METHODS:
                raise InvalidInputError("method", f'"{method}" is not one of {METHODS}')
            g_lo, g_hi = data["inf_lambda_min_JtJ_bracket"]
            d_lo, d_hi = data["sup_sigma_max_J_sq_bracket"]
            return cls(
                method=method,
                inf_lambda_min_JtJ=_none_to_inf(data["inf_lambda_min_JtJ"]),
                sup_sigma_max_J_sq=_none_to_inf(data["sup_sigma_max_J_sq"]),
                inf_lambda_min_JtJ_bracket=(float(g_lo), float(g_hi)),
                sup_sigma_max_J_sq_bracket=(float(d_lo), _none_to_inf(d_hi)),
                gap=_none_to_inf(data["gap"]),
                argmin_q=np.asarray(data["argmin_q"], dtype=np.float64),
                argmax_q=np.asarray(data["argmax_q"], dtype=np.float64),
                normal=data["normal"],
                bounded=data["bounded"],
                normal_reason=str(data["normal_reason"]),
                bounded_reason=str(data["bounded_reason"]),
                normal_method=str(data.get("normal_method", method)),
                bounded_method=str(data.get("bounded_method", method)),
                active_joints=tuple(data.get("active_joints", ())),
                notes=tuple(data.get("notes", ())),
                evaluations=int(data.get("evaluations", 0)),
                elapsed_s=float(data.get("elapsed_s", 0.0)),
                converged=bool(data.get("converged", False)),
                settings=dict(data.get("settings", {})),
            )
        except (KeyError, TypeError, ValueError) as error:
            if isinstance(error, InvalidInputError):
                raise
            raise InvalidInputError("extremes", f"not a JacobianExtremes dict ({error})") from None


ProgressCallback = Callable[["SearchProgress"], None]


@dataclass(frozen=True)
class SearchProgress:
    """State of a running Jacobian-extremes search, handed to a progress callback.

    Attributes:
        elapsed_s: time since the start [s].
        time_limit_s: the time limit [s].
        gap: current relative gap of the brackets (1 = nothing known yet).
        target_gap: the gap at which the search stops.
        boxes: boxes evaluated so far.
        fraction: a progress fraction in [0, 1] for a bar (time or gap, whichever is
            further).
    """

    elapsed_s: float
    time_limit_s: float
    gap: float
    target_gap: float
    boxes: int
    fraction: float
