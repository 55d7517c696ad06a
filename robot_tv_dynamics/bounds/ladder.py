r"""The certified floor of the local left inverse: a branch and bound up a ladder of windows.

:func:`local_inverse_floor` brackets sup_q λ_max(G(q)) of a
:class:`~robot_tv_dynamics.bounds.local_inverse.LocalInverse` over the joint box, so that
1/(its upper end) is a certified lower bound of inf_q λ_min(Σ J_lᵀL_lJ_l). Every box is
enclosed with one rung of windows (:class:`WindowRung`, the best bound of its windows),
starting with the cheapest; a box that cannot be certified with its rung however small it
gets, or only after many halvings (:data:`ESCALATION_MARGIN`), is enclosed again with the
next one instead of being bisected (:data:`LADDER`).
"""

from __future__ import annotations

import heapq
import itertools
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from robot_tv_dynamics.bounds.bisection import BoxEvaluation, EvaluationFactory, bisect, submit
from robot_tv_dynamics.bounds.evaluator import BoxEvaluator
from robot_tv_dynamics.bounds.extremes import SearchBudget
from robot_tv_dynamics.bounds.local_inverse import PAD, LocalInverse, Window, positive_definite
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array

#: The rungs of windows :func:`local_inverse_floor` encloses boxes with, cheapest first:
#: the neighbours (which certify most of the joint box in few boxes), then two ancestors
#: and a child, then the better of that and two steps each way (neither is the tighter
#: at every point; on the locked Panda's M they reach 0.990 and 0.996 of λ_min near its
#: minimum, the neighbours 0.96).
LADDER: tuple[tuple[Window, ...], ...] = (((1, 1),), ((2, 1),), ((2, 1), (2, 2)))
#: Share of what is left of a certified search's budget after sampling that the
#: local-left-inverse floor may use first (searching λ_min and λ_max; λ_min alone), and
#: the relative gap it stops at (it is a bound of λ_min, not λ_min: closer is not needed).
#: On the arms measured the search proper never raised the local floor of λ_min.
LOCAL_SHARE = 0.5
LOCAL_SHARE_ALONE = 0.95
LOCAL_GAP = 0.01
#: Boxes bisected per step of :func:`local_inverse_floor`, serially and on a cluster.
#: Once the pruning level is the goal the boxes a search evaluates do not depend on the
#: order it takes them in, only its speed does: numpy's cost per call and a cluster's per
#: exchange favour large steps (on the locked Panda's M the floor reached 0.99 of the
#: sampled λ_min with the same 347 700 boxes in 70 s with 64 per step, 49 s with 512).
FLOOR_BATCH = 512
FLOOR_BATCH_PARALLEL = 2048
#: A box is enclosed again with the next rung once its rung's λ_max(G) at its centre
#: is within this relative margin of the pruning level P (not only above it): such a
#: box would need many halvings before its rung certified it, if ever (on the locked
#: Panda's M, 0.99 of λ_min in 347 700 boxes; with no margin 0.984 after 330 000).
ESCALATION_MARGIN = 0.01
#: Points of the joint box at which :func:`local_inverse_floor` evaluates its last rung
#: before searching: the pruning level P starts at the worst of them.
_START_POINTS = 32

#: Progress of a floor search: (certified lower bound so far, boxes evaluated).
FloorProgress = Callable[[float, int], None]


@dataclass(frozen=True)
class LocalInverseFloor:
    """The local-left-inverse lower bound of inf_q λ_min over the joint box.

    Attributes:
        lower: certified: λ_min(Σ J_lᵀL_lJ_l) ≥ ``lower`` at every q of the box.
        best: the largest value the bound could certify (1/λ_max(G) at the worst box
            centre found): the search's own ceiling, not a bound of λ_min.
        boxes: boxes evaluated.
        seconds: wall time [s].
        converged: ``lower`` reached the goal, or, the goal being out of reach, the gap
            between ``lower`` and ``best`` reached the target.
    """

    lower: float
    best: float
    boxes: int
    seconds: float
    converged: bool


def floor_goal(attained: float, target_gap: float) -> float:
    """The goal of a floor search: within ``target_gap`` of an ``attained`` λ_min.

    The gap is at least ``LOCAL_GAP``: a search asked for less leaves the rest to its
    branch and bound proper rather than give the floor its whole share (with a target
    of 0 the floor would never stop before its time). A thousandth of the gap is kept to
    spare, so that the bracket's relative gap, computed from the same numbers, is at
    most the target after rounding.
    """
    return (1.0 - 0.999 * max(target_gap, LOCAL_GAP)) * attained


class WindowRung:
    """Several windows' local left inverses as one box source: the smallest bound of each.

    Each window's 1/λ_max(G) bounds λ_min at a point and over a box, so the best of them
    does too; the split is that of the window giving the bound.
    """

    def __init__(self, locals_: Sequence[LocalInverse]) -> None:
        """Keep the local inverses (at least one)."""
        if not locals_:
            raise InvalidInputError("locals_", "give at least one local inverse")
        self.locals = list(locals_)

    def values(self, q: Array) -> Array:
        """The best bound min_w 1/λ_max(G_w(q)) at configurations q (B, nv)."""
        return np.asarray(np.max([local.values(q) for local in self.locals], axis=0))

    def boxes(self, lo: Array, hi: Array) -> dict[str, Array]:
        """:meth:`LocalInverse.boxes` of every window, the smallest ``upper`` and ``value``."""
        outs = [local.boxes(lo, hi) for local in self.locals]
        if len(outs) == 1:
            return outs[0]
        upper = np.stack([out["upper"] for out in outs])
        pick = np.argmin(upper, axis=0)
        rows = np.arange(lo.shape[0])
        return {"value": np.min([out["value"] for out in outs], axis=0),
                "upper": upper[pick, rows],
                "split": np.stack([out["split"] for out in outs])[pick, rows]}


def local_inverse_floor(
    evaluator: BoxEvaluator, weights: Array, *, time_limit: float, target_gap: float,
    max_boxes: int | None = None, batch: int | None = None,
    ladder: Sequence[Sequence[Window]] = LADDER,
    evaluations: EvaluationFactory | None = None, goal: float = math.inf,
    progress: FloorProgress | None = None,
) -> LocalInverseFloor:
    """Certified lower bound 1/sup_q λ_max(G(q)) of inf_q λ_min(Σ J_lᵀL_lJ_l).

    Best-first branch and bound on the upper bound of λ_max(G) over boxes of the
    evaluator's joint box, until the certified lower bound reaches ``goal``, the time
    limit or the box cap, or, once the goal is out of reach (above the bound at a point
    found), the bracket of sup λ_max(G) is within ``target_gap`` (relative). Every box
    is enclosed with one rung of the ``ladder`` of the rows' windows (the
    smallest bound of the rung's windows, :class:`WindowRung`), starting at the first.
    A box is dropped once its bound is at most the pruning level P (the larger of
    1/``goal`` and the largest λ_max(G) at a box centre with the last rung); a box whose
    own centre value is above P with its rung — no box around that centre can be
    certified with it — or within ``ESCALATION_MARGIN`` of it is enclosed again with the
    next rung instead of being bisected.
    Whatever the windows, 1/max(P, the largest bound of a kept box) is a lower bound
    of λ_min over the whole box.

    Args:
        evaluator: the Gram matrix's box evaluator (its joint box is searched).
        weights: L_l (N, 6, 6), positive definite.
        time_limit: budget [s].
        target_gap: relative gap of the bracket of sup λ_max(G) to stop at when the
            goal is out of reach (the bound's own ceiling is below it).
        max_boxes: optional cap on evaluated boxes.
        batch: boxes bisected per step; None: ``FLOOR_BATCH`` serially,
            ``FLOOR_BATCH_PARALLEL`` with ``evaluations``.
        ladder: rungs of the rows' windows (:class:`LocalInverse`), at least one rung
            of at least one window.
        evaluations: optional parallel box map built on a :class:`WindowRung` (e.g.
            :class:`~robot_tv_dynamics.bounds.parallel.DaskBoxEvaluation`; one per
            rung); the search stays here and the boxes are the serial search's.
        goal: stop once the certified lower bound is at least this (e.g. within the
            caller's gap of a value already attained); ∞: no such stop.
        progress: optional, called with (the certified lower bound so far, boxes
            evaluated) about 5 times per second.

    Returns:
        A :class:`LocalInverseFloor`; ``lower`` 0 at once when a joint's motion axis is
        zero (λ_min is 0 there).

    Raises:
        InvalidInputError: no rung, or a rung without a window.
    """
    start = time.monotonic()
    if not ladder or not all(ladder):
        raise InvalidInputError("ladder", "give at least one rung of at least one window")
    if not np.all(np.any(evaluator.motion != 0.0, axis=1)):
        return LocalInverseFloor(0.0, 0.0, 0, time.monotonic() - start, True)
    rungs = [WindowRung([LocalInverse(evaluator, weights, width) for width in rung])
             for rung in ladder]
    if evaluator.d == 0:
        value = float(rungs[-1].values(evaluator.full(np.zeros((1, 0))))[0]) * (1.0 - PAD)
        return LocalInverseFloor(value, value, 1, time.monotonic() - start, True)
    maps = [rung.boxes if evaluations is None else evaluations(rung) for rung in rungs]
    if batch is None:
        batch = FLOOR_BATCH if evaluations is None else FLOOR_BATCH_PARALLEL
    search = _FloorSearch(maps, _attained(evaluator, rungs[-1]), goal, target_gap)
    search.enclose(evaluator.lower[None], evaluator.upper[None], 0, np.array([math.inf]),
                   maps[0](evaluator.lower[None], evaluator.upper[None]))
    last_report = time.monotonic()
    while search.heap and not search.done():
        if progress is not None and time.monotonic() - last_report > 0.2:
            last_report = time.monotonic()
            progress(1.0 / search.ceiling(), search.boxes)
        if time.monotonic() - start >= time_limit or (max_boxes is not None
                                                       and search.boxes >= max_boxes):
            break
        search.step(batch)
    top = search.ceiling()
    lower = 1.0 / top if math.isfinite(top) and top > 0.0 else 0.0
    return LocalInverseFloor(lower, 1.0 / search.attained, search.boxes,
                             time.monotonic() - start, search.done())


def _attained(evaluator: BoxEvaluator, rung: WindowRung) -> float:
    """The largest λ_max(G) with ``rung`` at the joint box's centre and random points.

    The centre and ``_START_POINTS`` points drawn with a fixed seed: a value attained,
    so a floor never certifies above its inverse.
    """
    points = evaluator.lower + np.random.default_rng(0).random((_START_POINTS, evaluator.d)) * (
        evaluator.upper - evaluator.lower)
    points = np.vstack([0.5 * (evaluator.lower + evaluator.upper), points])
    return 1.0 / float(np.min(rung.values(evaluator.full(points))))


class _FloorSearch:
    """The state of :func:`local_inverse_floor`'s best-first search over boxes.

    Attributes:
        heap: queued boxes (−upper, count, lo, hi, split, rung, λ_max(G) at the centre).
        attained: the largest λ_max(G) at a point with the last rung.
        prune: the pruning level P (the larger of 1/goal and ``attained``).
        boxes: boxes evaluated so far.
    """

    def __init__(self, maps: list[BoxEvaluation],
                 attained: float, goal: float, target_gap: float) -> None:
        """Start with no box queued; ``maps`` encloses boxes with each rung."""
        self.maps, self.last = maps, len(maps) - 1
        self.goal, self.target_gap = goal, target_gap
        self.attained = attained
        self.prune = max(1.0 / goal if goal > 0.0 else math.inf, attained)
        self.counter = itertools.count()
        self.heap: list[tuple[float, int, Array, Array, int, int, float]] = []
        self.boxes = 0

    def enclose(self, lo: Array, hi: Array, level: int, known: Array,
                out: dict[str, Array]) -> None:
        """Queue boxes enclosed (``out``) with rung ``level``; ``known``: a bound each had."""
        self.boxes += lo.shape[0]
        if level == self.last:
            self.attained = max(self.attained, float(np.max(out["value"])))
            self.prune = max(self.prune, self.attained)
        upper = np.minimum(out["upper"], known)
        for c in range(lo.shape[0]):
            if upper[c] > self.prune:
                heapq.heappush(self.heap, (-float(upper[c]), next(self.counter), lo[c], hi[c],
                                           int(out["split"][c]), level, float(out["value"][c])))

    def ceiling(self) -> float:
        """The bound of sup λ_max(G) so far: max(P, the largest bound of a queued box)."""
        return max(-self.heap[0][0], self.prune) if self.heap else self.prune

    def done(self) -> bool:
        """The goal reached, or out of reach and the bracket within the target gap."""
        ceiling = self.ceiling()
        return ceiling * self.goal <= 1.0 or (
            self.attained * self.goal > 1.0
            and ceiling - self.attained <= self.target_gap * ceiling)

    def step(self, batch: int) -> None:
        """Pop up to ``batch`` boxes; enclose each again with the next rung or bisect it."""
        popped = [heapq.heappop(self.heap) for _ in range(min(batch, len(self.heap)))]
        # a box whose rung's value at its centre is near P or above: the next rung
        again = [e[5] < self.last and e[6] > self.prune * (1.0 - ESCALATION_MARGIN)
                 for e in popped]
        # every group of the step is sent before any is waited for (one exchange with a
        # cluster per step), then queued in the same order as one after the other
        groups = []
        for level in range(len(self.maps)):
            moved = [e for e, up in zip(popped, again, strict=True) if up and e[5] == level - 1]
            split = [e[:5] for e, up in zip(popped, again, strict=True)
                     if not up and e[5] == level]
            # a box keeps the bound it had: every rung's bound holds over it and its halves
            if moved:
                lo, hi = np.array([e[2] for e in moved]), np.array([e[3] for e in moved])
                groups.append((lo, hi, level, np.array([-e[0] for e in moved]),
                               submit(self.maps[level], lo, hi)))
            if split:
                lo, hi = bisect(split)
                groups.append((lo, hi, level, np.repeat([-e[0] for e in split], 2),
                               submit(self.maps[level], lo, hi)))
        for lo, hi, level, known, pending in groups:
            self.enclose(lo, hi, level, known, pending())


def gram_local_floor(
    evaluator: BoxEvaluator, gram_weights: Array, sides: tuple[str, ...], attained: float,
    budget: SearchBudget, start: float, evaluations: EvaluationFactory | None,
) -> tuple[float, int]:
    """The floor of inf λ_min(Σ J_lᵀ L_l J_l) by :func:`local_inverse_floor`, and its boxes.

    The weighted search's step (:func:`~robot_tv_dynamics.bounds.mass.gram_extremes`): a
    search of its own for a share of what is left of ``budget`` after ``start``
    (monotonic [s]), ``LOCAL_SHARE_ALONE`` when only the min side is searched; rows of two
    bodies first (they converge in few boxes), then rows reading the neighbours too.

    Args:
        evaluator: the Gram matrix's box evaluator.
        gram_weights: L_l = W_lᵀW_l, (N, 6, 6).
        sides: the extremes searched (``"min"``, ``"max"``).
        attained: the smallest λ_min attained so far (the floor's goal follows it).
        budget: the search's budget.
        start: when the whole search started (:func:`time.monotonic`) [s].
        evaluations: optional factory of parallel box maps.

    Returns:
        (the floor, boxes evaluated); (0, 0) without the min side or with a singular L_l.
    """
    if "min" not in sides or not positive_definite(gram_weights):
        return 0.0, 0
    share = LOCAL_SHARE_ALONE if tuple(sides) == ("min",) else LOCAL_SHARE
    found = local_inverse_floor(
        evaluator, gram_weights,
        time_limit=share * max(budget.time_limit - (time.monotonic() - start), 0.0),
        target_gap=LOCAL_GAP, max_boxes=budget.max_boxes, batch=budget.floor_batch,
        evaluations=evaluations, goal=floor_goal(attained, budget.target_gap))
    return found.lower, found.boxes
