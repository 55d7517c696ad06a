r"""What every branch and bound of the package shares: box sources, box maps, bisection.

A search keeps its best-first queue of boxes of the joint box; a *box source*
(:class:`BoxSource`: the Gram matrix's :class:`~robot_tv_dynamics.bounds.evaluator.BoxEvaluator`,
the :class:`~robot_tv_dynamics.bounds.local_inverse.LocalInverse`) encloses its quantity
over a batch of boxes, a *box map* (:data:`BoxEvaluation`) runs a source's ``boxes`` here
or on a cluster (:class:`~robot_tv_dynamics.bounds.parallel.DaskBoxEvaluation`), and
:func:`bisect` halves each popped box along the dimension its source named.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

import numpy as np

from robot_tv_dynamics.inertia import Array

#: Evaluates boxes (lo, hi), each (B, d), to the dict of a source's ``boxes``.
BoxEvaluation = Callable[[Array, Array], dict[str, Array]]


class BoxSource(Protocol):
    """Anything whose ``boxes(lo, hi)`` encloses its search's quantity over boxes.

    :class:`~robot_tv_dynamics.bounds.evaluator.BoxEvaluator` and
    :class:`~robot_tv_dynamics.bounds.local_inverse.LocalInverse`.
    """

    def boxes(self, lo: Array, hi: Array) -> dict[str, Array]:
        """The enclosures of boxes (lo, hi), each (B, d)."""
        ...


#: Builds a :data:`BoxEvaluation` for a box source (e.g. scattering it to Dask workers).
EvaluationFactory = Callable[[BoxSource], BoxEvaluation]
#: A box evaluation under way: called, it waits for the enclosures and returns them.
PendingBoxes = Callable[[], dict[str, Array]]


def submit(evaluate: BoxEvaluation, lo: Array, hi: Array) -> PendingBoxes:
    """Start evaluating boxes (lo, hi) with ``evaluate``; call the result to wait for them.

    A box map with a ``submit`` method of its own (a cluster's) starts the work and
    returns at once, so that a search can send several groups of boxes before it waits
    for any; any other map evaluates here and now.
    """
    start = getattr(evaluate, "submit", None)
    if start is not None:
        pending: PendingBoxes = start(lo, hi)
        return pending
    out = evaluate(lo, hi)
    return lambda: out


def bisect(entries: list[tuple[float, int, Array, Array, int]]) -> tuple[Array, Array]:
    """Both halves of each queued box (bound, count, lo, hi, split): (lo, hi), each (2B, d)."""
    lo = np.repeat(np.array([e[2] for e in entries]), 2, axis=0)
    hi = np.repeat(np.array([e[3] for e in entries]), 2, axis=0)
    for p, (_, _, plo, phi, split) in enumerate(entries):
        mid = 0.5 * (plo[split] + phi[split])
        hi[2 * p, split] = mid
        lo[2 * p + 1, split] = mid
    return lo, hi
