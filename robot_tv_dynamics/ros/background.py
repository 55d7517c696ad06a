"""One background thread that runs the latest submitted job (older pending ones dropped).

The dynamics node evaluates a planned trajectory (up to 10⁴ points, ~3 s) here instead of
in its executor, so joint_states keep being answered meanwhile (they share the GIL with
the job, so they are slowed, not stopped).
"""

from __future__ import annotations

import threading
from collections.abc import Callable


class LatestJob:
    """Runs submitted callables one at a time in a daemon thread; the latest wins.

    A job submitted while another waits replaces it (``on_dropped`` is called with the
    replaced one's label). Exceptions of a job go to ``on_error``; the thread survives.
    """

    def __init__(self, name: str, on_error: Callable[[BaseException], None],
                 on_dropped: Callable[[str], None] | None = None) -> None:
        """Start the thread.

        Args:
            name: thread name.
            on_error: called (in the thread) with an exception a job raised.
            on_dropped: called (in the submitting thread) with the label of a pending job
                that a newer one replaced.
        """
        self._on_error = on_error
        self._on_dropped = on_dropped
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._pending: tuple[str, Callable[[], None]] | None = None
        self._stopped = False
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, label: str, job: Callable[[], None]) -> None:
        """Run ``job`` after the current one (replacing any job still waiting)."""
        with self._lock:
            dropped = self._pending[0] if self._pending is not None else None
            self._pending = (label, job)
            self._wake.notify()
        if dropped is not None and self._on_dropped is not None:
            self._on_dropped(dropped)

    def stop(self, timeout: float = 5.0) -> None:
        """Drop the waiting job and join the thread (a running job finishes first)."""
        with self._lock:
            self._stopped = True
            self._pending = None
            self._wake.notify()
        self._thread.join(timeout)

    def _run(self) -> None:
        while True:
            with self._lock:
                while self._pending is None and not self._stopped:
                    self._wake.wait()
                if self._stopped:
                    return
                assert self._pending is not None
                _, job = self._pending
                self._pending = None
            try:
                job()
            except Exception as error:  # reported; the thread keeps serving
                self._on_error(error)
