r"""γ and δ by method name: the sampled or the certified search."""

from __future__ import annotations

from robot_tv_dynamics.bounds.bisection import EvaluationFactory
from robot_tv_dynamics.bounds.certified import certified_jacobian_extremes
from robot_tv_dynamics.bounds.extremes import (
    CERTIFIED,
    METHODS,
    SAMPLED,
    JacobianExtremes,
    ProgressCallback,
)
from robot_tv_dynamics.bounds.sampled import (
    sampled_jacobian_extremes,
)
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.model import RobotModel


# ---------------------------------------------------------------------------- extremes
def jacobian_extremes(
    model: RobotModel,
    method: str = SAMPLED,
    *,
    samples: int = 4096,
    seed: int = 0,
    time_limit: float = 60.0,
    target_gap: float = 1e-3,
    max_boxes: int | None = None,
    progress: ProgressCallback | None = None,
    evaluations: EvaluationFactory | None = None,
) -> JacobianExtremes:
    """γ and δ over the joint-limit box, by ``method`` ``"sampled"`` or ``"certified"``.

    See :func:`sampled_jacobian_extremes` and :func:`certified_jacobian_extremes`
    (``evaluations``: its optional parallel box map, certified only).

    Raises:
        InvalidInputError: unknown method or bad settings.
    """
    if method == SAMPLED:
        return sampled_jacobian_extremes(model, samples=samples, seed=seed,
                                         time_limit=time_limit)
    if method == CERTIFIED:
        return certified_jacobian_extremes(
            model, time_limit=time_limit, target_gap=target_gap, samples=min(samples, 2048),
            seed=seed, max_boxes=max_boxes, progress=progress,
            evaluations=evaluations)
    raise InvalidInputError("method", f'"{method}" is not one of {METHODS}')
