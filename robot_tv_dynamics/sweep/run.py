"""The sweep driver: items onto a Dask cluster, rows back, a progress bar meanwhile.

By default a ``dask.distributed.LocalCluster`` of ``workers`` single-threaded worker
processes is started for the sweep and closed after it
(:func:`~robot_tv_dynamics.bounds.parallel.dask_client`, the one every Dask job of the
package uses); with ``scheduler`` (an address
such as ``tcp://10.0.0.5:8786``) the items go to that running cluster instead, whose
workers must have this package installed. Each item is one task
(:func:`~robot_tv_dynamics.sweep.work.run_item`); a task that fails on the cluster
itself (a worker lost) still gives its item a row, with that error.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.sweep.plan import SweepItem, expand_trajectories, plan_items
from robot_tv_dynamics.sweep.work import base_row


@dataclass(frozen=True)
class SweepResult:
    """The rows of a sweep, in the order of its items, and how it ran.

    Attributes:
        rows: one dict per item (:data:`~robot_tv_dynamics.sweep.table.COLUMNS`).
        wall_time: from submitting the first item to the last row [s] (cluster start-up
            not included).
        workers: the number of workers the cluster had.
        scheduler: the scheduler's address.
    """

    rows: list[dict[str, Any]]
    wall_time: float
    workers: int
    scheduler: str

    @property
    def errors(self) -> int:
        """Items whose row carries an error."""
        return sum(1 for row in self.rows if row.get("error"))

    @property
    def feasible(self) -> int:
        """Items within the limits (evaluate: no violation; retime: retimed within them)."""
        return sum(1 for row in self.rows if row.get("feasible"))


class _Bar:
    """Items done out of all, redrawn in place on a stream."""

    def __init__(self, stream: TextIO | None, total: int, width: int = 30) -> None:
        self.stream, self.total, self.width, self.done = stream, total, width, 0
        self.started = time.perf_counter()

    def step(self) -> None:
        self.done += 1
        if self.stream is None:
            return
        filled = int(round(self.width * self.done / max(self.total, 1)))
        self.stream.write(f"\r[{'#' * filled}{'.' * (self.width - filled)}] {self.done}/"
                          f"{self.total} items, {time.perf_counter() - self.started:6.1f} s")
        if self.done == self.total:
            self.stream.write("\n")
        self.stream.flush()


def sweep(
    kind: str, urdfs: Sequence[str], trajectories: Sequence[str],
    payloads: Sequence[str] = (), *, locked: Mapping[str, float | None] | None = None,
    topic: str | None = None, options: Mapping[str, Any] | None = None,
    workers: int | None = None, scheduler: str | None = None,
    progress: TextIO | None = sys.stderr,
) -> SweepResult:
    """Run evaluate or retime over trajectories × payloads on Dask; one row per item.

    Args:
        kind: ``"evaluate"`` or ``"retime"``.
        urdfs: URDF files; each trajectory and payload goes with the URDFs it fits.
        trajectories: files, directories or glob patterns
            (:func:`~robot_tv_dynamics.sweep.plan.expand_trajectories`).
        payloads: payload or loading-process YAMLs; empty = the arm alone.
        locked: joints locked in every model.
        topic: bag topic for bag inputs.
        options: keyword arguments of :func:`~robot_tv_dynamics.evaluation.evaluate` /
            :func:`~robot_tv_dynamics.retiming.retime` for every item.
        workers: local worker processes (None: one per CPU); ignored with ``scheduler``.
        scheduler: address of a running Dask scheduler; None = a local cluster.
        progress: stream for the progress bar (None: no bar).

    Raises:
        InvalidInputError: bad paths or options (see :func:`plan_items`), or Dask missing.
        URDFError: a URDF that cannot be loaded.
    """
    if workers is not None and int(workers) < 1:
        raise InvalidInputError("workers", f"must be >= 1, got {workers}")
    items = plan_items(kind, urdfs, expand_trajectories(trajectories), payloads,
                       locked=locked, topic=topic, options=options)
    try:
        from dask.distributed import as_completed
    except ImportError as error:  # pragma: no cover - dask is an install requirement
        raise InvalidInputError("sweep", f"needs dask.distributed ({error}); "
                                "pip install 'dask[distributed]'") from None
    from robot_tv_dynamics.bounds.parallel import dask_client
    from robot_tv_dynamics.sweep.work import run_item

    count = int(workers) if workers is not None else (os.cpu_count() or 1)
    with dask_client(max(1, min(count, len(items))), scheduler) as client:
        n_workers = len(client.scheduler_info().get("workers", {}))
        bar = _Bar(progress, len(items))
        started = time.perf_counter()
        futures = client.map(run_item, items, pure=False)
        index = {future.key: k for k, future in enumerate(futures)}
        rows: list[dict[str, Any] | None] = [None] * len(items)
        for future in as_completed(futures):
            k = index[future.key]
            rows[k] = _row_of(future, items[k])
            bar.step()
        wall = time.perf_counter() - started
        address = str(client.scheduler.address) if client.scheduler else str(scheduler)
    return SweepResult([row for row in rows if row is not None], wall, n_workers, address)


def _row_of(future: Any, item: SweepItem) -> dict[str, Any]:
    """The item's row from a finished future; a task the cluster lost gives its error."""
    try:
        row = future.result()
    except Exception as error:  # noqa: BLE001 - a lost task is its item's row, not a crash
        row = base_row(item)
        row["error"] = f"{type(error).__name__}: {error}"
    return dict(row)
