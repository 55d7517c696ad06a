r"""Uniform bounds of M(q, Θ) sharper than Theorems 2–3: weighted, and the exact extremes.

Two levels above the paper's α₁ = min μ · γ, α₂ = 2 max ν · δ (proofs in
docs/concepts.md, "Sharper bounds"):

- **weighted**: α₁ʷ = inf_q λ_min(Σ_l J_lᵀ L_l J_l), α₂ʷ = sup_q λ_max(Σ_l J_lᵀ U_l J_l)
  with constant per-body weights L_l ⪯ Z(Φ_l(t)) ⪯ U_l over a loading band
  (:mod:`robot_tv_dynamics.bounds.weights`: the 2×2 block about each body's centre of
  mass, scalar, or joint-frame 2×2 blocks);
- **exact**: inf_q λ_min(M(q, Θ)) and sup_q λ_max(M(q, Θ)) for a constant Θ, with
  L_l = U_l = Z(Φ_l).

Each weighted sum is the Gram matrix of the row-weighted stacked Jacobian, so the
sampled search and the certified branch and bound of the Jacobian extremes apply as
they are (:class:`~robot_tv_dynamics.bounds.evaluator.BoxEvaluator` with ``weights``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.bounds.bisection import BoxEvaluation, EvaluationFactory
from robot_tv_dynamics.bounds.box import joint_search_box
from robot_tv_dynamics.bounds.certified import branch_and_bound
from robot_tv_dynamics.bounds.evaluator import BoxEvaluator, relative_gap
from robot_tv_dynamics.bounds.extremes import (
    CERTIFIED,
    METHODS,
    SAMPLED,
    SearchBudget,
    finite_or_none,
)
from robot_tv_dynamics.bounds.ladder import (
    gram_local_floor,
)
from robot_tv_dynamics.bounds.sampled import sample_extremes, search_bounds
from robot_tv_dynamics.bounds.structural import (
    Incumbent,
    structural_left_inverse,
    structural_weighted_lower_bound,
)
from robot_tv_dynamics.bounds.weights import (
    BLOCK_RHO,
    BLOCK_S,
    axis_symmetric_bound,
    block_weights,
    com_block_lower,
    com_block_upper,
    exact_weights,
    lower_block,
    lower_block_keep,
    scalar_weights,
    spatial_inertia_extremes,
    square_root,
    upper_block,
)
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel

#: Sobol points used to choose among the candidate weights.
_CHOICE_SAMPLES = 256
#: Share of a certified search's budget its axis-symmetric bounds may use (split between
#: the searched sides; :func:`_axis_symmetric_searches`).
_SYMMETRIC_SHARE = 0.5


@dataclass(frozen=True)
class GramExtremes:
    """inf_q λ_min and sup_q λ_max of one weighted Gram matrix, labelled by method.

    Attributes:
        method: ``"sampled"`` (attained values: the lower end of the λ_min bracket is 0
            and the upper end of the λ_max bracket ∞) or ``"certified"`` (rigorous).
        weights: which weights: ``"exact"``, ``"scalar"``, ``"scalar-margin"`` or
            ``"block t=…"`` / ``"block s=…"``.
        lambda_min_bracket: (lower, upper) with inf_q λ_min inside [kg·m², mixed units].
        lambda_max_bracket: (lower, upper) with sup_q λ_max inside.
        argmin_q: where the smallest λ_min was attained, (nv,).
        argmax_q: where the largest λ_max was attained, (nv,).
        boxes: boxes (certified) or configurations (sampled) evaluated.
        elapsed_s: wall time [s].
        converged: certified: the target gap was reached on the searched sides.
        local_inverse: certified: the lower bound 1/sup_q λ_max(K𝓛⁻¹Kᵀ) of the local left
            inverse (:mod:`~robot_tv_dynamics.bounds.local_inverse`), a floor of the λ_min
            bracket's lower end; 0 when not searched (sampled method, max side only, or
            a weight that is not positive definite).
    """

    method: str
    weights: str
    lambda_min_bracket: tuple[float, float]
    lambda_max_bracket: tuple[float, float]
    argmin_q: Array = field(default_factory=lambda: np.zeros(0))
    argmax_q: Array = field(default_factory=lambda: np.zeros(0))
    boxes: int = 0
    elapsed_s: float = 0.0
    converged: bool = False
    local_inverse: float = 0.0

    @property
    def gap_min(self) -> float:
        """Relative gap of the λ_min bracket."""
        return relative_gap(*self.lambda_min_bracket)

    @property
    def gap_max(self) -> float:
        """Relative gap of the λ_max bracket."""
        return relative_gap(*self.lambda_max_bracket)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (∞ → None)."""
        return {"method": self.method, "weights": self.weights,
                "lambda_min_bracket": [finite_or_none(x) for x in self.lambda_min_bracket],
                "lambda_max_bracket": [finite_or_none(x) for x in self.lambda_max_bracket],
                "gap_min": finite_or_none(self.gap_min),
                "gap_max": finite_or_none(self.gap_max),
                "argmin_q": np.asarray(self.argmin_q).tolist(),
                "argmax_q": np.asarray(self.argmax_q).tolist(),
                "boxes": self.boxes, "elapsed_s": self.elapsed_s, "converged": self.converged,
                "local_inverse_lower_bound": self.local_inverse}


@dataclass(frozen=True)
class WeightedBounds:
    """The weighted α₁ʷ, α₂ʷ and the searches behind them.

    Attributes:
        method: ``"sampled"`` (estimates) or ``"certified"`` (bounds).
        alpha1: the weighted lower bound of λ_min(M(q, Θ(t))) [kg·m², mixed units]:
            certified: the lower end of the bracket; sampled: the attained estimate.
        alpha2: the weighted upper bound of λ_max (certified: the upper end).
        lower: the search of Σ J_lᵀ L_l J_l (its λ_min side).
        upper: the search of Σ J_lᵀ U_l J_l (its λ_max side).
        lower_candidates: each candidate lower weight's smallest λ_min over the 256 Sobol
            points of the choice, by label (``"com block"``, ``"scalar"``, …).
        upper_candidates: each candidate upper weight's largest λ_max there.
    """

    method: str
    alpha1: float
    alpha2: float
    lower: GramExtremes
    upper: GramExtremes
    lower_candidates: dict[str, float] = field(default_factory=dict)
    upper_candidates: dict[str, float] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict."""
        return {"method": self.method, "alpha1": finite_or_none(self.alpha1),
                "alpha2": finite_or_none(self.alpha2), "lower": self.lower.to_dict(),
                "upper": self.upper.to_dict(),
                "candidates": {"lower": dict(self.lower_candidates),
                               "upper": dict(self.upper_candidates)}}


def gram_evaluator(model: RobotModel, weights: Array) -> BoxEvaluator:
    """The box evaluator of Σ_l J_lᵀ W_lᵀW_l J_l over the joint box (row weights W_l).

    The box is reduced for these weights: a childless revolute joint whose body's
    W_lᵀW_l is not symmetric about its axis stays searched.

    Raises:
        InvalidInputError: a joint without finite limits.
    """
    box = joint_search_box(model, np.swapaxes(weights, 1, 2) @ weights)
    if box.unbounded:
        raise InvalidInputError("model", f"unbounded joints {list(box.unbounded)}: the "
                                "weighted and exact searches need a finite joint box")
    return BoxEvaluator(model, box, search_bounds(box), weights)


def _sobol_values(evaluator: BoxEvaluator, samples: int, seed: int) -> tuple[Array, Array]:
    if evaluator.d == 0:
        return evaluator.values(evaluator.full(np.zeros((1, 0))))
    from scipy.stats import qmc  # here: scipy.stats costs ~0.4 s of every node's start-up

    m = max(1, int(math.ceil(math.log2(samples))))
    points = qmc.Sobol(evaluator.d, scramble=True, seed=seed).random_base2(m)
    x = evaluator.lower + points[:samples] * (evaluator.upper - evaluator.lower)
    return evaluator.values(evaluator.full(x))


def gram_extremes(
    model: RobotModel, weights: Array, label: str, method: str = SAMPLED,
    budget: SearchBudget | None = None, *, sides: tuple[str, ...] = ("min", "max"),
    evaluate: BoxEvaluation | None = None, evaluator: BoxEvaluator | None = None,
    floor: float = 0.0, ceiling: float = math.inf,
    evaluations: EvaluationFactory | None = None, **settings: Any,
) -> GramExtremes:
    """Search inf λ_min / sup λ_max of Σ_l J_lᵀ W_lᵀW_l J_l over the joint box.

    Args:
        model: the arm.
        weights: row weights W_l, (N, 6, 6).
        label: the ``weights`` label of the record.
        method: ``"sampled"`` or ``"certified"``.
        budget: what the search may spend
            (:class:`~robot_tv_dynamics.bounds.extremes.SearchBudget`); None: its defaults.
        sides: certified: which extremes to search (the other keeps its sampled ends).
        evaluate: certified: optional parallel box map built on ``evaluator``.
        evaluations: certified: optional factory of parallel box maps (e.g. on Dask):
            builds ``evaluate`` when that is not given, and the local-left-inverse
            floor's.
        evaluator: an evaluator already built for these weights (None: built here).
        floor: a lower bound of inf λ_min already known (e.g. a weighted α₁ for the
            exact M): the certified lower end is never below it, nor below the
            search-free 1/λ_max(K 𝓛⁻¹ Kᵀ) of
            :func:`~robot_tv_dynamics.bounds.structural.structural_weighted_lower_bound`.
        ceiling: an upper bound of sup λ_max already known (e.g. a certified α₂ʷ for the
            exact M): the certified upper end is never above it.
        **settings: fields of :class:`~robot_tv_dynamics.bounds.extremes.SearchBudget`
            (``time_limit``, ``target_gap``, …) that replace those of ``budget``.

    Returns:
        A :class:`GramExtremes`.

    Raises:
        InvalidInputError: an unknown method.
        TypeError: a setting that ``SearchBudget`` does not have.
    """
    if method not in METHODS:
        raise InvalidInputError("method", f'"{method}" is not one of {METHODS}')
    budget = replace(budget or SearchBudget(), **settings)
    time_limit, target_gap = budget.time_limit, budget.target_gap
    start = time.monotonic()
    evaluator = gram_evaluator(model, weights) if evaluator is None else evaluator
    if evaluate is None and evaluations is not None and method == CERTIFIED:
        evaluate = evaluations(evaluator)
    incumbent = Incumbent()
    refine = 4 if method == SAMPLED else 2
    sampling = time_limit if method == SAMPLED else min(0.25 * time_limit, 5.0)
    count = sample_extremes(evaluator, incumbent, budget.samples, budget.seed, refine,
                            start + sampling)
    if method == SAMPLED:
        return GramExtremes(SAMPLED, label, (0.0, incumbent.gamma), (incumbent.delta, math.inf),
                            incumbent.gamma_q, incumbent.delta_q, count,
                            time.monotonic() - start, False)
    # Search-free: λ_min(Σ J_lᵀ L_l J_l) ≥ 1/λ_max(K 𝓛⁻¹ Kᵀ) for every q (K J(q) = I).
    gram_weights = np.swapaxes(weights, 1, 2) @ weights
    floor = max(floor, structural_weighted_lower_bound(structural_left_inverse(model),
                                                       gram_weights))
    local, local_boxes = gram_local_floor(evaluator, gram_weights, sides, incumbent.gamma,
                                          budget, start, evaluations)
    floor = max(floor, local)
    relaxed_floor, relaxed_ceiling, relaxed_boxes = _axis_symmetric_searches(
        model, evaluator, gram_weights, sides, floor, ceiling, budget)
    floor, ceiling = max(floor, relaxed_floor), min(ceiling, relaxed_ceiling)
    lam, lmax, boxes = _brackets(evaluator, incumbent, sides, floor, ceiling, start, budget,
                                 evaluate)
    gaps = [relative_gap(*lam) if "min" in sides else 0.0,
            relative_gap(*lmax) if "max" in sides else 0.0]
    return GramExtremes(CERTIFIED, label, lam, lmax, incumbent.gamma_q, incumbent.delta_q,
                        count + local_boxes + boxes + relaxed_boxes, time.monotonic() - start,
                        max(gaps) <= target_gap, local)


def _brackets(
    evaluator: BoxEvaluator, incumbent: Incumbent, sides: tuple[str, ...], floor: float,
    ceiling: float, start: float, budget: SearchBudget, evaluate: BoxEvaluation | None,
) -> tuple[tuple[float, float], tuple[float, float], int]:
    """Brackets of inf λ_min and sup λ_max by branch and bound, and its boxes.

    A side not in ``sides`` keeps its sampled ends; with no joint to search, the value.
    """
    if evaluator.d == 0:
        lam = (incumbent.gamma, incumbent.gamma)
        lmax = (incumbent.delta, incumbent.delta)
        boxes = 0
    else:
        lam, lmax, boxes = branch_and_bound(
            evaluator, incumbent, floor=floor, ceiling=ceiling, zero_axis=False,
            exact_min=False, start=start, time_limit=budget.time_limit,
            target_gap=budget.target_gap, max_boxes=budget.max_boxes, batch=budget.batch,
            progress=None, evaluate=evaluate, sides=sides)
    if "min" not in sides:
        lam = (0.0, incumbent.gamma)
    if "max" not in sides:
        lmax = (incumbent.delta, math.inf)
    return lam, lmax, boxes


def _axis_symmetric_searches(
    model: RobotModel, evaluator: BoxEvaluator, gram: Array, sides: tuple[str, ...],
    floor: float, ceiling: float, budget: SearchBudget,
) -> tuple[float, float, int]:
    """A floor and a ceiling from the childless joints' bodies made symmetric about their axes.

    A childless revolute joint stays in the box when its body's weight is not symmetric
    about its axis (:func:`~robot_tv_dynamics.bounds.box.joint_search_box`); a full-range
    joint more multiplies the boxes the lower side needs about twentyfold. With that
    body's L_l replaced by an axis-symmetric L'_l ⪯ L_l (U'_l ⪰ U_l above,
    :func:`~robot_tv_dynamics.bounds.weights.axis_symmetric_bound`) the joint drops out
    again, and the certified inf λ_min (sup λ_max) of that Gram matrix bounds this one's.
    Searched, serially, for half the budget, where the 256 Sobol points say it can beat
    the floor (ceiling) already known: on the UR5's exact M it loses nothing (its wrist 3
    only has unequal moments about two perpendicular axes); on the locked Panda's, whose
    joint 7 carries its centre of mass off the axis, it would, and is skipped.

    Returns:
        (floor, ceiling, boxes): 0 and ∞ where not searched.
    """
    plain = joint_search_box(model).active
    kept = [int(k) for k in evaluator.active if not plain[k]]
    found_floor, found_ceiling, boxes = 0.0, math.inf, 0
    if not kept:
        return found_floor, found_ceiling, boxes
    for side in sides:
        upper = side == "max"
        relaxed = np.array(gram)
        for k in kept:
            relaxed[k] = axis_symmetric_bound(relaxed[k], evaluator.motion[k], upper)
        rows = square_root(relaxed)
        ev = gram_evaluator(model, rows)
        if ev.d >= evaluator.d:
            continue  # still not symmetric to rounding: nothing gained
        lam_min, lam_max = _sobol_values(ev, _CHOICE_SAMPLES, budget.seed)
        if (float(np.max(lam_max)) >= (1.0 - budget.target_gap) * ceiling if upper
                else float(np.min(lam_min)) <= (1.0 + budget.target_gap) * floor):
            continue  # cannot beat what is known
        share = replace(budget, samples=min(budget.samples, _CHOICE_SAMPLES),
                        time_limit=_SYMMETRIC_SHARE * budget.time_limit / len(sides),
                        floor_batch=None)
        found = gram_extremes(
            model, rows, "axis-symmetric", CERTIFIED, share, sides=(side,), evaluator=ev,
            floor=0.0 if upper else floor, ceiling=ceiling if upper else math.inf)
        boxes += found.boxes
        if upper:
            found_ceiling = found.lambda_max_bracket[1]
        else:
            found_floor = found.lambda_min_bracket[0]
    return found_floor, found_ceiling, boxes


#: Label of the COM block weights (:func:`~robot_tv_dynamics.bounds.weights.com_block_lower`).
COM_BLOCK = "com block"
#: Label of the scalar weights z_l I₆ (lower) and Z̄_l I₆ (upper).
SCALAR = "scalar"


def _com_candidate(build: Any, theta: npt.ArrayLike) -> list[tuple[str, Array]]:
    """[(COM_BLOCK, weights)], or [] when a body of Θ is inconsistent (no COM block)."""
    try:
        return [(COM_BLOCK, build(theta))]
    except InvalidInputError:
        return []


def lower_weight_candidates(theta: npt.ArrayLike) -> list[tuple[str, Array]]:
    """Candidate lower weights L_l ⪯ Z(Φ_l) over the band: COM block, scalar, others.

    The COM block first (left out when a body is inconsistent: it has no COM block), then
    the scalar z_l I₆, then the joint-frame blocks.
    """
    zmin, _ = spatial_inertia_extremes(theta)
    out = _com_candidate(com_block_lower, theta)
    out += [(SCALAR, scalar_weights(np.maximum(zmin, 0.0) * (1.0 - 1e-9)))]
    out += [(f"block t={t:g}", block_weights(*lower_block(theta, t))) for t in (0.5, 0.9)]
    out += [(f"block rho={rho:g}", block_weights(*lower_block_keep(theta, rho)))
            for rho in BLOCK_RHO]
    return out


def upper_weight_candidates(theta: npt.ArrayLike) -> list[tuple[str, Array]]:
    """Candidate upper weights U_l ⪰ Z(Φ_l) over the band: COM block, scalar, others.

    The COM block first (left out when a body is inconsistent), then the scalar Z̄_l I₆,
    then the joint-frame blocks.
    """
    _, zmax = spatial_inertia_extremes(theta)
    out = _com_candidate(com_block_upper, theta)
    out += [(SCALAR, scalar_weights(zmax * (1.0 + 1e-9)))]
    out += [(f"block s={s:g}", block_weights(*upper_block(theta, s))) for s in BLOCK_S]
    return out


def _choose(model: RobotModel, candidates: list[tuple[str, Array]], lower: bool,
            seed: int) -> tuple[str, Array, BoxEvaluator, dict[str, float]]:
    """The candidate with the best sampled extreme, and every candidate's extreme.

    Only the tightness depends on the choice: every candidate is a valid bound.
    """
    best: tuple[float, str, Array, BoxEvaluator] | None = None
    scores: dict[str, float] = {}
    for label, weights in candidates:
        evaluator = gram_evaluator(model, weights)
        lam_min, lam_max = _sobol_values(evaluator, _CHOICE_SAMPLES, seed)
        scores[label] = float(np.min(lam_min)) if lower else float(np.max(lam_max))
        score = scores[label] if lower else -scores[label]
        if best is None or score > best[0]:
            best = (score, label, weights, evaluator)
    assert best is not None
    return best[1], best[2], best[3], scores


def weighted_bounds(
    model: RobotModel, theta: npt.ArrayLike | None = None, method: str = SAMPLED, *,
    paper_alpha1: float = 0.0, paper_alpha2: float = math.inf, **search: Any,
) -> WeightedBounds:
    r"""The weighted α₁ʷ ≥ α₁ and α₂ʷ ≤ α₂ for Θ or a band of Θ(t) samples.

    The lower and the upper weight are each chosen among the candidates (the COM block
    of :func:`~robot_tv_dynamics.bounds.weights.com_block_lower` /
    :func:`~robot_tv_dynamics.bounds.weights.com_block_upper`, the scalar z_l / Z̄_l and
    the joint-frame blocks) by the best sampled extreme over 256 Sobol points, then
    searched by ``method``. Both α₁ʷ and the paper's α₁ bound λ_min(M) from below, so
    the larger is reported (likewise the smaller α₂): α₁ʷ ≥ α₁ by construction, and by
    the proof of docs/concepts.md it is the weighted value whenever the search is tight.

    Args:
        model: the arm.
        theta: Θ (N, 10), a band (K, N, 10) of samples of Θ(t), or None (nominal).
        method: ``"sampled"`` or ``"certified"``.
        paper_alpha1: the paper's α₁ of the same method (0 when unknown).
        paper_alpha2: the paper's α₂ (∞ when unknown).
        **search: passed to :func:`gram_extremes` (samples, time_limit, target_gap,
            max_boxes, batch, seed, evaluations).

    Returns:
        A :class:`WeightedBounds`.
    """
    theta = model.theta_nominal if theta is None else np.asarray(theta, dtype=np.float64)
    seed = int(search.get("seed", 0))
    label, weights, ev, lower_scores = _choose(model, lower_weight_candidates(theta), True,
                                               seed)
    lower = gram_extremes(model, weights, label, method, sides=("min",), evaluator=ev, **search)
    label, weights, ev, upper_scores = _choose(model, upper_weight_candidates(theta), False,
                                               seed)
    upper = gram_extremes(model, weights, label, method, sides=("max",), evaluator=ev, **search)
    a1 = lower.lambda_min_bracket[0] if method == CERTIFIED else lower.lambda_min_bracket[1]
    a2 = upper.lambda_max_bracket[1] if method == CERTIFIED else upper.lambda_max_bracket[0]
    if math.isfinite(paper_alpha1):
        a1 = max(a1, paper_alpha1)
    if not math.isnan(paper_alpha2):
        a2 = min(a2, paper_alpha2)
    return WeightedBounds(method, a1, a2, lower, upper, lower_scores, upper_scores)


def margin_weighted_alpha1_factor(margins: npt.ArrayLike) -> Array:
    """Scalar row weights √μ_l I₆ from consistency margins alone (valid as z_l ≥ μ_l).

    Raises:
        InvalidInputError: a margin ≤ 0 (an inconsistent body: no bound follows).
    """
    mu = np.asarray(margins, dtype=np.float64)
    if np.any(mu <= 0.0):
        raise InvalidInputError("margins", "a body with μ ≤ 0 is inconsistent: the weighted "
                                "bound (like Theorem 2) does not hold for that loading")
    return scalar_weights(mu)


def exact_mass_extremes(
    model: RobotModel, theta: npt.ArrayLike | None = None, method: str = CERTIFIED,
    **search: Any,
) -> GramExtremes:
    """Bracket inf_q λ_min(M(q, Θ)) and sup_q λ_max(M(q, Θ)) for a constant consistent Θ.

    Args:
        model: the arm.
        theta: Θ (N, 10); None: nominal.
        method: ``"certified"`` (brackets) or ``"sampled"``.
        **search: passed to :func:`gram_extremes`; ``evaluations`` (a factory
            box source → box map, e.g. on Dask) makes the certified search parallel.

    Raises:
        InvalidInputError: Θ inconsistent (Z(Φ_l) not positive semidefinite).
    """
    theta = model.theta_nominal if theta is None else model.check_theta(theta)
    weights = exact_weights(theta)
    ev = gram_evaluator(model, weights)
    return gram_extremes(model, weights, "exact", method, evaluator=ev, **search)
