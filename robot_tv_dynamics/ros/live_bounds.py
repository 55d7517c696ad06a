"""monitor_node's mass-matrix lower bounds: ``mass_matrix_lower_bounds`` and its status.

With ``mass_bounds`` true the monitor publishes, on every Θ it judged, the certified
lower bounds of :class:`~robot_tv_dynamics.bounds.live.LiveLowerBounds` (the weighted
α₁ʷ(t), the paper's α₁(t), the loading floor and whether it holds) as a
sensor_msgs/JointState (``name`` = :data:`~robot_tv_dynamics.bounds.live.LIVE_LABELS`,
``position`` = the values, the stamp of the Θ judged), and one DiagnosticStatus
``"<prefix>: monitor_node: mass matrix"``. The per-arm searches behind them (the loading
floor inf_q λ_min(M₀) and the weighted reference, :mod:`robot_tv_dynamics.bounds.floor`)
run once in a background thread, read from the bounds cache when it has them; until
then the search-free bounds are published and the floor is NaN.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from sensor_msgs.msg import JointState

from robot_tv_dynamics.bounds.cache import resolve_cache_dir
from robot_tv_dynamics.bounds.floor import (
    LOADING_FLOOR,
    WEIGHTED_REFERENCE,
    CertifiedLowerBound,
    cached_lower_bound,
)
from robot_tv_dynamics.bounds.live import LIVE_LABELS, LiveLowerBounds, LiveSample
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros.background import LatestJob
from robot_tv_dynamics.ros.conversions import make_status, to_float_array

TOPIC = "mass_matrix_lower_bounds"


class LiveBoundsOutput:
    """The live bounds of one monitor: state, background searches, message and status."""

    def __init__(self, node: Any, cache_dir: str, time_limit: float) -> None:
        """Create the publisher and the background thread (no model yet)."""
        self._node = node
        self._cache_dir = resolve_cache_dir(cache_dir)
        self._time_limit = time_limit
        self._pub = node.create_publisher(JointState, TOPIC, 10)
        self._jobs = LatestJob(f"{node.get_name()}-bounds", self._on_error)
        self._msg = JointState(name=list(LIVE_LABELS))
        self._live: LiveLowerBounds | None = None
        self._last: LiveSample | None = None
        self._body_names: list[str] = []
        self._searching = ""

    def set_model(self, model: RobotModel) -> None:
        """Start over for ``model``: search-free bounds now, the searches in the background."""
        live = LiveLowerBounds(model)
        self._live, self._last = live, None
        self._body_names = list(model.body_names)
        self._searching = (f"searching the certified loading floor and weighted reference "
                           f"(up to {self._time_limit:g} s each, once per arm)")
        self._jobs.submit("per-arm bounds", lambda: self._search(model, live))

    def _search(self, model: RobotModel, live: LiveLowerBounds) -> None:
        log = self._node.get_logger()
        found: dict[str, CertifiedLowerBound] = {}
        for kind in (LOADING_FLOOR, WEIGHTED_REFERENCE):
            record = cached_lower_bound(
                model, kind, cache_dir=self._cache_dir, time_limit=self._time_limit,
                on_compute=log.info)
            if record.note:
                log.warning(record.note)
            found[kind] = record
        if live is not self._live:  # the URDF changed meanwhile
            return
        live.reference = found[WEIGHTED_REFERENCE]
        live.floor = found[LOADING_FLOOR]
        self._searching = ""
        floor = found[LOADING_FLOOR]
        log.info(f"loading floor ({floor.origin}): inf_q lambda_min(M0) >= {floor.value:.6g} "
                 f"(bracket [{floor.bracket[0]:.6g}, {floor.bracket[1]:.6g}], certified); "
                 f"weighted reference {found[WEIGHTED_REFERENCE].value:.6g}")

    def _on_error(self, error: BaseException) -> None:
        self._searching = ""
        self._node.get_logger().error(
            f"mass-matrix bounds search failed ({type(error).__name__}: {error}); only the "
            "search-free bounds are published and the loading floor stays NaN")

    def judged(self, theta: np.ndarray, stamp: Any | None) -> None:
        """Publish the bounds at the Θ just judged (``stamp``: its header stamp, or now)."""
        live = self._live
        if live is None:
            return
        sample = live.sample(theta)
        self._last = sample
        if stamp is None:
            stamp = self._node.get_clock().now().to_msg()
        self._msg.header.stamp = Time(sec=int(stamp.sec), nanosec=int(stamp.nanosec))
        self._msg.position = to_float_array(live.values(sample))
        self._pub.publish(self._msg)

    def status(self, name: str, hardware_id: str) -> Any:
        """The ``mass matrix`` DiagnosticStatus for the latest Θ."""
        live, sample = self._live, self._last
        if live is None or sample is None:
            return make_status(name, 0, "no inertial_parameters received yet"
                               + (f"; {self._searching}" if self._searching else ""),
                               hardware_id)
        values = live.values(sample)
        level = 0
        floor = sample.loading_floor
        if not math.isfinite(floor):
            text = "loading floor not known yet" + (
                f" ({self._searching})" if self._searching else "")
        elif sample.floor_holds:
            text = (f"every load is consistent: lambda_min(M(q, Theta)) >= loading floor "
                    f"{floor:.4g} for every q")
        else:
            level = 1
            bodies = ", ".join(
                f"{self._body_names[i]} (lambda_min Z(dPhi) = {sample.load_margins[i]:.3g})"
                for i in sample.inconsistent_loads)
            text = (f"the load on {bodies} is inconsistent: the loading floor {floor:.4g} "
                    "no longer holds (an inconsistent load estimate is exactly what breaks "
                    "it: M = M0 + sum J^T Z(dPhi) J >= M0 needs Z(dPhi) >= 0)")
        weighted = sample.weighted_alpha1
        text += ("; weighted alpha1 = " + (f"{weighted:.4g} (certified)" if
                 math.isfinite(weighted) else "none (a body is inconsistent)"))
        pairs = list(zip(LIVE_LABELS, (float(v) for v in values), strict=True))
        pairs.append(("gamma (certified lower end)", live.gamma))
        return make_status(name, level, text, hardware_id, pairs)

    def stop(self) -> None:
        """Stop the background thread (a running search finishes in its daemon thread)."""
        self._jobs.stop(timeout=0.1)
