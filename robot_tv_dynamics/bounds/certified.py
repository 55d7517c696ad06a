r"""The certified Jacobian extremes: branch and bound over boxes with a rigorous enclosure.

It returns brackets [lower, upper] valid whenever it stops (time limit or not); α₁ uses
the lower end of γ, α₂ the upper end of δ (see :func:`certified_jacobian_extremes`).

**Enclosure.** On a box with centre c and half-widths r (searched joints only) write
A(q) = J(q)ᵀJ(q) and expand it to second order at c, exactly: A(c), ∂_kA(c) and
∂²_jk A(c) come from J(c) and Lie brackets of its columns (∂_k J_i = [J_i, J_k] for
i < k). The remainder is bounded over the *whole* box, not at c: A is a
trigonometric polynomial of degree ≤ 2 per revolute angle and a quadratic in each
prismatic coordinate (:class:`_TrigModel`, fitted exactly from a grid and checked), so
each of its terms C_t φ_t(q) has |∂ᵃ φ_t| ≤ |f_t|ᵃ on every box and
|R₃| ≤ Σ_t |C_t| (Σ_k |f_tk| r_k)³/6 entrywise (prismatic factors use their exact
derivative bounds). When the model does not apply (too many joints to fit), an
interval enclosure of ∂²A over the box (midpoint-radius arithmetic on the recursive
kinematics) bounds a second-order remainder instead. In the eigenbasis U of A(c),
these give entrywise bounds Ē on the off-diagonal part of UᵀA(q)U − Λ and signed
bounds e on its diagonal (using the smallest/largest eigenvalue of the projected
Hessian uᵀ∂²A u), and for a unit x, xᵀUᵀA(q)Ux ≥ |x|ᵀ(diag(λ + e) − Ē)|x|: λ_min(A(q))
is at least the smallest eigenvalue of that comparison matrix (symmetrically for
λ_max) — see :func:`.interval.eigenvalue_enclosure`. Bounds are padded by 1e-10·(‖A‖ + 1)
against rounding. Independently, γ ≥ :func:`structural_gamma_lower_bound` holds for
every q, and γ ≥ 1/sup_q λ_max(K(q)K(q)ᵀ) for a local left inverse K(q) of J(q)
(:func:`~robot_tv_dynamics.bounds.ladder.local_inverse_floor` with L_l = I₆,
searched first for up to half of the budget left after sampling, until it is within
``target_gap`` of the sampled γ; on the locked-finger Panda it certifies 0.99 of γ
where the structural bound gave 0.96). The search is best-first; a box whose
enclosure cannot beat the best attained value is dropped, so [max(structural and
local bounds, min over queued lower bounds), best attained value] brackets γ at any
stopping time (symmetrically for δ, whose upper end is also capped by the geometric
bound of :func:`structural_delta`).
"""

from __future__ import annotations

import dataclasses
import heapq
import itertools
import math
import time

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.bounds.bisection import BoxEvaluation, EvaluationFactory, bisect
from robot_tv_dynamics.bounds.evaluator import (
    BoxEvaluator,
    relative_gap,
)
from robot_tv_dynamics.bounds.extremes import (
    CERTIFIED,
    JacobianExtremes,
    ProgressCallback,
    SearchProgress,
)
from robot_tv_dynamics.bounds.ladder import (
    LOCAL_GAP,
    LOCAL_SHARE,
    floor_goal,
    local_inverse_floor,
)
from robot_tv_dynamics.bounds.sampled import SearchStart, start_search
from robot_tv_dynamics.bounds.structural import (
    Incumbent,
    bound_verdicts,
    extremes_record,
    structural_delta,
    validate_search_args,
)
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel


class _BoxHeap:
    """Best-first queue of boxes for one extreme (min of λ_min or max of λ_max)."""

    def __init__(self, sign: float) -> None:
        self.sign = sign  # +1: minimise (key = lower bound); −1: maximise (key = −upper)
        self.heap: list[tuple[float, int, Array, Array, int]] = []
        self.counter = itertools.count()

    def push(self, bound: float, lo: Array, hi: Array, split: int) -> None:
        heapq.heappush(self.heap, (self.sign * bound, next(self.counter), lo, hi, split))

    def best(self) -> float:
        """The current global bound over the boxes still queued (±∞ when empty)."""
        return self.sign * self.heap[0][0] if self.heap else self.sign * math.inf


def certified_jacobian_extremes(
    model: RobotModel,
    *,
    time_limit: float = 60.0,
    target_gap: float = 1e-3,
    samples: int = 2048,
    seed: int = 0,
    max_boxes: int | None = None,
    batch: int = 128,
    progress: ProgressCallback | None = None,
    evaluations: EvaluationFactory | None = None,
) -> JacobianExtremes:
    r"""Rigorous brackets for γ and δ by branch and bound over the reduced joint box.

    The enclosure and the search: the module docstring.

    Args:
        model: the arm.
        time_limit: wall-time budget including the initial sampling [s].
        target_gap: stop when both relative gaps (upper − lower)/upper are at most this.
        samples: Sobol points of the initial sampling (incumbents for pruning).
        seed: sampling seed.
        max_boxes: optional cap on evaluated boxes; with it (and a generous time limit)
            the result is bit-for-bit reproducible on any machine.
        batch: boxes bisected per step (evaluated together, vectorised).
        progress: called with a :class:`SearchProgress` about 5 times per second.
        evaluations: optional factory evaluator → parallel box map (e.g.
            :class:`robot_tv_dynamics.bounds.parallel.DaskBoxEvaluation` bound to a
            client); None: serial. The brackets are the same either way.

    Returns:
        A :class:`JacobianExtremes` with ``method="certified"``.
    """
    validate_search_args(samples, time_limit, target_gap)
    if max_boxes is not None and max_boxes < 1:
        raise InvalidInputError("max_boxes", f"must be ≥ 1 or None, got {max_boxes!r}")
    start = time.monotonic()
    found = start_search(model, samples, seed, 4, start + min(0.25 * time_limit, 5.0))
    box, evaluator, incumbent, count = (found.box, found.evaluator, found.incumbent,
                                        found.evaluations)
    settings = {"time_limit": float(time_limit), "target_gap": float(target_gap),
                "samples": int(samples), "seed": int(seed),
                "max_boxes": None if max_boxes is None else int(max_boxes), "batch": int(batch)}
    if box.unbounded:
        # No finite box to cover: report the sampled ends and the verdict, not a bracket.
        gamma, delta = found.sampled_gamma(), (incumbent.delta, math.inf)
        return extremes_record(
            CERTIFIED, box, (gamma[0], math.inf), gamma, delta, math.inf, incumbent,
            bound_verdicts(CERTIFIED, box, gamma, delta, found.growing, found.floor),
            count, start, False, settings)
    ceiling = structural_delta(model, box, evaluator)
    exact_min = box.zero_axis != () or evaluator.d == 0
    floor, local_boxes = found.floor, 0
    if not exact_min:
        floor, local_boxes = _local_inverse_floor(
            found, ceiling, start, time_limit, target_gap, max_boxes, progress, evaluations)
    gamma, delta, boxes = branch_and_bound(
        evaluator, incumbent, floor=floor, ceiling=ceiling, zero_axis=bool(box.zero_axis),
        exact_min=exact_min, start=start, time_limit=time_limit, target_gap=target_gap,
        max_boxes=max_boxes, batch=batch,
        progress=offset_boxes(progress, count + local_boxes),
        evaluate=None if evaluations is None else evaluations(evaluator))
    gap = max(0.0 if exact_min else relative_gap(*gamma), relative_gap(*delta))
    return extremes_record(
        CERTIFIED, box, (gamma[0], delta[1]), gamma, delta, gap, incumbent,
        bound_verdicts(CERTIFIED, box, gamma, delta, found.growing, floor),
        count + local_boxes + boxes, start,
        gap <= target_gap, settings)


def _local_inverse_floor(
    found: SearchStart, ceiling: float, start: float, time_limit: float, target_gap: float,
    max_boxes: int | None, progress: ProgressCallback | None,
    evaluations: EvaluationFactory | None,
) -> tuple[float, int]:
    """The γ floor raised by a local left inverse, and the boxes that search evaluated.

    λ_min(JᵀJ) ≥ 1/λ_max(K(q)K(q)ᵀ) with a local left inverse K(q) of J(q) (the weights
    L_l = I₆): a search of its own, for up to half of what is left of ``time_limit``
    after ``start`` (monotonic [s]); its progress is reported with the whole search's gap.
    """
    evaluator, incumbent, floor = found.evaluator, found.incumbent, found.floor

    def report(lower: float, boxes: int) -> None:
        if progress is not None:
            elapsed = time.monotonic() - start
            gap = max(relative_gap(max(floor, lower), incumbent.gamma),
                      relative_gap(incumbent.delta, max(ceiling, incumbent.delta)))
            progress(SearchProgress(elapsed, time_limit, gap, target_gap,
                                    found.evaluations + boxes, min(1.0, elapsed / time_limit)))

    local = local_inverse_floor(
        evaluator, np.broadcast_to(np.eye(6), (evaluator.n, 6, 6)).copy(),
        time_limit=LOCAL_SHARE * max(time_limit - (time.monotonic() - start), 0.0),
        target_gap=LOCAL_GAP, max_boxes=max_boxes,
        evaluations=evaluations, goal=floor_goal(incumbent.gamma, target_gap),
        progress=report)
    return max(floor, local.lower), local.boxes


def offset_boxes(progress: ProgressCallback | None, before: int) -> ProgressCallback | None:
    """``progress`` with ``before`` boxes added to every report: one count over all phases.

    The branch and bound counts its own boxes from 1; the samples and the local floor
    evaluated before it are added so that a bar's box count never goes back.
    """
    if progress is None:
        return None
    callback = progress
    return lambda report: callback(dataclasses.replace(report, boxes=report.boxes + before))


def branch_and_bound(
    evaluator: BoxEvaluator, incumbent: Incumbent, *, floor: float, ceiling: float,
    zero_axis: bool, exact_min: bool, start: float, time_limit: float, target_gap: float,
    max_boxes: int | None, batch: int, progress: ProgressCallback | None,
    evaluate: BoxEvaluation | None = None, sides: tuple[str, ...] = ("min", "max"),
) -> tuple[tuple[float, float], tuple[float, float], int]:
    """Best-first branch and bound of λ_min / λ_max of the evaluator's Gram matrix.

    Args:
        evaluator: the Gram matrix and its box enclosures.
        incumbent: attained values so far (updated in place).
        floor: a known lower bound of inf λ_min (0 when none).
        ceiling: a known upper bound of sup λ_max (∞ when none).
        zero_axis: inf λ_min is exactly 0 (a joint with a zero axis).
        exact_min: the min side needs no search.
        start: the monotonic start time of the whole search [s].
        time_limit: the budget from ``start`` [s].
        target_gap: stop at this relative gap on every searched side.
        max_boxes: optional cap on evaluated boxes.
        batch: boxes bisected per step.
        progress: optional progress callback.
        evaluate: maps (lo, hi) boxes to :meth:`BoxEvaluator.boxes` results; None: the
            evaluator itself (serial). A parallel map gives identical results.
        sides: which extremes to search: ``"min"`` (inf λ_min), ``"max"`` (sup λ_max).

    Returns:
        (bracket of inf λ_min, bracket of sup λ_max, boxes evaluated).
    """
    evaluate = evaluator.boxes if evaluate is None else evaluate
    deadline = start + time_limit
    heaps = {"min": _BoxHeap(1.0), "max": _BoxHeap(-1.0)}
    if evaluator.d > 0:
        root = evaluator.boxes(evaluator.lower[None, :], evaluator.upper[None, :])
        incumbent.update(root["q"], root["lam_min"], root["lam_max"])
        heaps["min"].push(float(root["gamma_lo"][0]), evaluator.lower, evaluator.upper,
                          int(root["split_min"][0]))
        heaps["max"].push(float(root["delta_hi"][0]), evaluator.lower, evaluator.upper,
                          int(root["split_max"][0]))
    boxes = 1

    def brackets() -> tuple[tuple[float, float], tuple[float, float]]:
        if zero_axis:
            gamma = (0.0, 0.0)
        else:
            lower = max(floor, min(heaps["min"].best(), incumbent.gamma))
            gamma = (min(lower, incumbent.gamma), incumbent.gamma)
        upper = min(ceiling, max(heaps["max"].best(), incumbent.delta))
        delta = (incumbent.delta, max(upper, incumbent.delta))
        return gamma, delta

    last_report = 0.0
    turn = 0
    while True:
        gamma, delta = brackets()
        gaps = {"min": 0.0 if exact_min or "min" not in sides else relative_gap(*gamma),
                "max": relative_gap(*delta) if "max" in sides else 0.0}
        gap = max(gaps.values())
        now = time.monotonic()
        if progress is not None and (now - last_report > 0.2 or gap <= target_gap):
            last_report = now
            elapsed = now - start
            fraction = min(1.0, max(elapsed / time_limit,
                                    target_gap / gap if gap > 0 else 1.0))
            progress(SearchProgress(elapsed, time_limit, gap, target_gap, boxes, fraction))
        if gap <= target_gap or now >= deadline or (max_boxes is not None and
                                                    boxes >= max_boxes):
            break
        open_sides = [s for s in sides if gaps[s] > target_gap and heaps[s].heap]
        if not open_sides:
            break
        turn += 1
        side = open_sides[turn % len(open_sides)]
        heap = heaps[side]
        lo, hi = bisect([heapq.heappop(heap.heap) for _ in range(min(batch, len(heap.heap)))])
        result = evaluate(lo, hi)
        boxes += lo.shape[0]
        incumbent.update(result["q"], result["lam_min"], result["lam_max"])
        _requeue(heap, side, result, lo, hi, incumbent)
    return (*brackets(), boxes)


def _requeue(heap: _BoxHeap, side: str, result: dict[str, Array], lo: Array, hi: Array,
             incumbent: Incumbent) -> None:
    """Queue the boxes (lo, hi) whose bound can still beat the best attained value."""
    for c in range(lo.shape[0]):
        if side == "min":
            bound = float(result["gamma_lo"][c])
            if bound < incumbent.gamma:
                heap.push(bound, lo[c], hi[c], int(result["split_min"][c]))
        else:
            bound = float(result["delta_hi"][c])
            if bound > incumbent.delta:
                heap.push(bound, lo[c], hi[c], int(result["split_max"][c]))


def jacobian_extremes_at(model: RobotModel, q: npt.ArrayLike) -> tuple[float, float]:
    """λ_min(J(q)ᵀJ(q)) and σ_max(J(q))² at one configuration q (nv,)."""
    jac = model.body_jacobians_local(q)
    eig = np.linalg.eigvalsh(jac.T @ jac)
    return float(eig[0]), float(eig[-1])
