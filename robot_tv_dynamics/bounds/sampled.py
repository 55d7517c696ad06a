r"""The sampled estimate of the Jacobian extremes γ and δ (an estimate, not a bound).

Quasi-random sampling plus local refinement: every value is *attained* at a
configuration, so a sampled inf is only an **upper** bound on γ and a sampled sup only a
**lower** bound on δ. The other ends of its brackets are the cheap structural bounds of
:mod:`robot_tv_dynamics.bounds.structural`.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.bounds.box import (
    JointSearchBox,
    joint_search_box,
)
from robot_tv_dynamics.bounds.evaluator import (
    BoxEvaluator,
    relative_gap,
)
from robot_tv_dynamics.bounds.extremes import (
    SAMPLED,
    JacobianExtremes,
)
from robot_tv_dynamics.bounds.structural import (
    Incumbent,
    bound_verdicts,
    extremes_record,
    structural_delta,
    structural_gamma_lower_bound,
    unbounded_dependence,
    validate_search_args,
)
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel


# ---------------------------------------------------------------------------- sampling
def search_bounds(box: JointSearchBox) -> tuple[Array, Array]:
    """Active-coordinate box (finite: unbounded prismatic joints cut to ±1 m around 0)."""
    active = np.flatnonzero(box.active)
    lower = np.array(box.lower[active])
    upper = np.array(box.upper[active])
    for kk, k in enumerate(active):
        if box.joint_names[k] in box.unbounded:
            lower[kk] = max(lower[kk], -1.0) if np.isfinite(lower[kk]) else -1.0
            upper[kk] = min(upper[kk], 1.0) if np.isfinite(upper[kk]) else 1.0
            upper[kk] = max(upper[kk], lower[kk])
    return lower, upper


def sample_extremes(
    evaluator: BoxEvaluator, incumbent: Incumbent, samples: int, seed: int,
    refine: int, deadline: float,
) -> int:
    """Sobol sampling of the active box, then L-BFGS-B from the best points. Returns #evals."""
    lower, upper = evaluator.lower, evaluator.upper
    d = evaluator.d
    count = 0
    if d == 0:
        q = evaluator.full(np.zeros((1, 0)))
        incumbent.update(q, *evaluator.values(q))
        return 1
    # here, not at the top: scipy.stats and scipy.optimize cost ~0.5 s of every node's
    # start-up, and a node with a cached γ never samples
    import scipy.optimize
    from scipy.stats import qmc

    m = max(1, int(math.ceil(math.log2(max(samples, 1)))))
    points = qmc.Sobol(d, scramble=True, seed=seed).random_base2(m)[:samples]
    x = lower + points * (upper - lower)
    lam_min = np.empty(x.shape[0])
    lam_max = np.empty(x.shape[0])
    for start in range(0, x.shape[0], 512):
        chunk = slice(start, start + 512)
        lam_min[chunk], lam_max[chunk] = evaluator.values(evaluator.full(x[chunk]))
        count += x[chunk].shape[0]
        if time.monotonic() > deadline:
            x, lam_min, lam_max = x[:start + 512], lam_min[:start + 512], lam_max[:start + 512]
            break
    incumbent.update(evaluator.full(x), lam_min, lam_max)
    bounds = list(zip(lower, upper, strict=True))
    for sign, order in ((1.0, np.argsort(lam_min)), (-1.0, np.argsort(-lam_max))):
        for start in order[:refine]:
            if time.monotonic() > deadline:
                break

            def objective(y: Array, sign: float = sign) -> tuple[float, Array]:
                lo, g_lo, hi, g_hi = evaluator.gradient(evaluator.full(y[None, :])[0])
                return (lo, g_lo) if sign > 0 else (-hi, -g_hi)

            result = scipy.optimize.minimize(
                objective, x[start], jac=True, method="L-BFGS-B", bounds=bounds,
                options={"maxiter": 60})
            y = np.clip(result.x, lower, upper)
            q = evaluator.full(y[None, :])
            incumbent.update(q, *evaluator.values(q))
            count += int(result.nfev) + 1
    return count


@dataclass
class SearchStart:
    """Where the sampled and the certified search both begin: the box, sampled.

    Attributes:
        box: the reduced joint box (:func:`joint_search_box`).
        evaluator: λ_min / λ_max of JᵀJ over that box.
        incumbent: the best values attained by the sampling.
        evaluations: evaluations spent by the sampling.
        floor: the structural lower bound of γ (:func:`structural_gamma_lower_bound`).
        growing: joints along which σ_max(J)² grows without bound (unbounded boxes).
    """

    box: JointSearchBox
    evaluator: BoxEvaluator
    incumbent: Incumbent
    evaluations: int
    floor: float
    growing: list[str]

    def sampled_gamma(self) -> tuple[float, float]:
        """The bracket of γ the sampling alone gives: [min(floor, best), best]."""
        if self.box.zero_axis:
            return (0.0, 0.0)
        return (min(self.floor, self.incumbent.gamma), self.incumbent.gamma)


def start_search(
    model: RobotModel, samples: int, seed: int, refine: int, deadline: float,
) -> SearchStart:
    """Build the box and its evaluator, sample it until ``deadline`` (monotonic [s]).

    Args:
        model: the arm.
        samples: Sobol points.
        seed: scrambling seed.
        refine: local refinements per extreme.
        deadline: :func:`time.monotonic` time the sampling stops at [s].
    """
    box = joint_search_box(model)
    evaluator = BoxEvaluator(model, box, search_bounds(box))
    incumbent = Incumbent()
    count = sample_extremes(evaluator, incumbent, samples, seed, refine, deadline)
    floor = structural_gamma_lower_bound(model)
    growing = unbounded_dependence(evaluator, box) if box.unbounded else []
    return SearchStart(box, evaluator, incumbent, count, floor, growing)


def sampled_jacobian_extremes(
    model: RobotModel,
    *,
    samples: int = 4096,
    seed: int = 0,
    refine: int = 6,
    time_limit: float = 30.0,
) -> JacobianExtremes:
    """Estimate γ and δ by quasi-random sampling plus local refinement (an estimate).

    Scrambled Sobol points fill the reduced joint box (:func:`joint_search_box`); the
    ``refine`` best points for each extreme start L-BFGS-B with the analytic gradient
    ∂λ/∂q_k = 2 (J u)ᵀ (∂J/∂q_k) u. Every value returned is attained at a configuration,
    so the estimate of γ is an **upper** bound on γ and the estimate of δ a **lower**
    bound on δ; neither bounds the mass matrix. The brackets are [0, γ̂] and
    [δ̂, structural bound].

    Args:
        model: the arm.
        samples: number of Sobol points (rounded up to a power of two internally).
        seed: scrambling seed (fixed seed → identical result).
        refine: local refinements per extreme.
        time_limit: stop sampling/refining after this many seconds [s].

    Returns:
        A :class:`JacobianExtremes` with ``method="sampled"``.
    """
    validate_search_args(samples, time_limit, 0.0)
    start = time.monotonic()
    found = start_search(model, samples, seed, refine, start + time_limit)
    box, evaluator, incumbent = found.box, found.evaluator, found.incumbent
    structural = structural_delta(model, box, evaluator)
    gamma = found.sampled_gamma()
    delta_hi = math.inf if found.growing or box.unbounded else max(structural, incumbent.delta)
    delta = (incumbent.delta, delta_hi)
    return extremes_record(
        SAMPLED, box, (gamma[1], math.inf if found.growing else incumbent.delta), gamma, delta,
        max(relative_gap(*gamma), relative_gap(*delta)), incumbent,
        bound_verdicts(SAMPLED, box, gamma, delta, found.growing, found.floor),
        found.evaluations, start, False,
        {"samples": int(samples), "seed": int(seed), "refine": int(refine),
         "time_limit": float(time_limit)})
