r"""The certified branch and bound on a Dask cluster: boxes as tasks.

The search itself (:func:`robot_tv_dynamics.bounds.certified.branch_and_bound`) stays
on the calling process: it holds the incumbent (the best attained values) and the
best-first queues whose head is the best certified bound, and decides what to bisect.
Each step's batch of boxes is cut into one chunk per worker and the chunks are
evaluated there (the box enclosures are the expensive part); the results come back in
chunk order. Every box is enclosed by the same arithmetic as in the serial search,
so the brackets are identical to the serial ones for the same boxes (with
``max_boxes``, bit for bit; with a time limit the parallel search just gets further).

``dask.distributed`` is imported only when a cluster is asked for.

The local cluster's workers are started without Dask's default
``MALLOC_TRIM_THRESHOLD_=65536``: with it glibc hands every large numpy temporary
back to the system and maps it again on the next box, and a worker evaluated the same
boxes 2.2 times slower than the calling process (two workers on two cores were slower
than one process). Workers of an existing cluster keep whatever they were started
with; start them with that variable unset (or large) for the same speed.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator
from typing import Any

import numpy as np

from robot_tv_dynamics.bounds.bisection import BoxSource, PendingBoxes
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import Array

#: The Dask setting that starts worker processes with ``MALLOC_TRIM_THRESHOLD_``
#: (None unsets it; a value in the environment still wins).
_TRIM_KEY = "distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_"


def _evaluate_chunk(source: BoxSource, lo: Array, hi: Array) -> dict[str, Array]:
    """One chunk of boxes on a worker."""
    return source.boxes(lo, hi)


class DaskBoxEvaluation:
    """Box evaluation on a Dask client: callable (lo, hi) → the dict of ``boxes``.

    Attributes:
        client: the ``dask.distributed.Client``.
        workers: number of workers the chunks are cut for.
    """

    def __init__(self, client: Any, source: BoxSource) -> None:
        """Scatter the box source to every worker once.

        An evaluator goes with its fitted trig model; a local left inverse with its
        evaluator. Scattered under a key of its own (``hash=False``): with a key from
        its content, a second evaluation of an equal source shared the first one's
        key, and the first one's release dropped the data the second was using.
        """
        self.client = client
        self.workers = max(1, len(client.scheduler_info().get("workers", {})))
        self._remote = client.scatter(source, broadcast=True, hash=False)

    def __call__(self, lo: Array, hi: Array) -> dict[str, Array]:
        """Evaluate the boxes [lo, hi] (B, d each), one chunk per worker, in order."""
        return self.submit(lo, hi)()

    def submit(self, lo: Array, hi: Array) -> PendingBoxes:
        """Send the boxes' chunks to the workers; the returned call waits and joins them."""
        count = lo.shape[0]
        pieces = min(self.workers, count)
        edges = np.linspace(0, count, pieces + 1).astype(int)
        futures = [self.client.submit(_evaluate_chunk, self._remote, lo[a:b], hi[a:b],
                                      pure=False)
                   for a, b in zip(edges[:-1], edges[1:], strict=True)]

        def gather() -> dict[str, Array]:
            parts = self.client.gather(futures)
            return {key: np.concatenate([part[key] for part in parts]) for key in parts[0]}

        return gather


@contextlib.contextmanager
def dask_client(workers: int | None = None, scheduler: str | None = None) -> Iterator[Any]:
    """A ``dask.distributed.Client``: to ``scheduler`` if given, else on a LocalCluster.

    The local workers start without ``MALLOC_TRIM_THRESHOLD_`` unless this process's
    environment sets it (see the module's docstring), and log errors only.

    Args:
        workers: local worker processes (one thread each); ignored with ``scheduler``.
        scheduler: address of a running scheduler, e.g. ``"tcp://10.0.0.5:8786"``.

    Yields:
        The client; the local cluster is closed on exit.

    Raises:
        InvalidInputError: a worker count below 1, or dask.distributed missing.
    """
    if workers is not None and workers < 1:
        raise InvalidInputError("workers", f"must be ≥ 1, got {workers!r}")
    try:
        from distributed import Client, LocalCluster
    except ImportError:  # pragma: no cover - a dependency of the package
        raise InvalidInputError("workers", "the parallel search needs dask.distributed "
                                "(pip install 'dask[distributed]')") from None
    import dask

    if scheduler is not None:
        with Client(scheduler) as client:
            yield client
        return
    with dask.config.set({_TRIM_KEY: None}), LocalCluster(
            n_workers=workers or 1, threads_per_worker=1, processes=True,
            dashboard_address=None, silence_logs=logging.ERROR) as cluster, Client(
                cluster) as client:
        yield client
