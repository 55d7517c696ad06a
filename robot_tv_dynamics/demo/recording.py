r"""Reading the demo's ``run.mcap`` back (:mod:`robot_tv_dynamics.bags`, no rclpy) into arrays.

Every topic lands on simulated time (the recording's ``/simulation_info`` epoch).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.bags import open_bag
from robot_tv_dynamics.demo.scenario import (
    ESTIMATORS,
    LAW_ESTIMATE,
    OBSERVER_TOPICS,
    TRUTH,
    status_source,
)
from robot_tv_dynamics.exceptions import DemoError
from robot_tv_dynamics.inertia import Array


@dataclass
class Recording:
    """The recorded run, as arrays in simulated time (read back from run.mcap)."""

    info: dict[str, Any]
    t: Array                      # joint_states sample times [s]
    q: Array
    qd: Array
    tau: Array
    t_ref: Array
    q_ref: Array
    theta: tuple[Array, Array]    # (times, (K, N, 10)) of the true Θ
    estimates: dict[str, tuple[Array, Array]]
    terms: tuple[Array, Array]    # (times, (K, 7, nv)) generalized_terms
    bounds: tuple[Array, Array, list[str]]
    diagnostics: dict[str, list[tuple[float, str, int, str]]]
    wall_span: float
    log_times: dict[str, Array] = field(default_factory=dict)  # per topic, receive times [ns]
    joint_stamps: Array = field(default_factory=lambda: np.zeros(0, dtype=np.int64))  # [ns]
    #: observer → (times [s], (K, nv) residual r [N·m, N]) from dynamics_node's
    #: external_torques topics (OBSERVER_TOPICS; stamped with the input joint state)
    residuals: dict[str, tuple[Array, Array]] = field(default_factory=dict)


def loading_span(rec: Recording, body: int) -> tuple[float, float] | None:
    """(first, last) time the payload body's mass changes in the recorded Θ [s], or None.

    From the sample before the first change to the sample after the last one: the
    loading window the report shades and the summary's "during loading" refers to.
    """
    t_theta, theta = rec.theta
    mass = theta[:, body, 0] if len(theta) else np.zeros(0)
    changing = (np.flatnonzero(np.abs(np.diff(mass)) > 1e-9) if mass.size > 1
                else np.zeros(0, dtype=np.intp))
    if not len(changing):
        return None
    return float(t_theta[changing[0]]), float(t_theta[changing[-1] + 1])


#: Recorded topics the analysis does not read (for viewers only).
NOT_READ = frozenset({"/inertia_markers"})


def _stamp(msg: Any) -> float:
    return float(msg.header.stamp.sec + 1e-9 * msg.header.stamp.nanosec)


def read_recording(path: Path) -> Recording:
    """Read run.mcap (:func:`~robot_tv_dynamics.bags.open_bag`) on simulated time.

    Messages with a header use their stamp; the Θ of the truth and of the estimates come
    from their stamped ``*_stamped`` topics when the bag has them (names in model order,
    as sim_node publishes them). Legacy Float64MultiArray messages (no header) take
    the simulated time of the joint_states sample whose receive time is closest (the
    simulator publishes both in the same tick, 10 ms apart from the next).

    Raises:
        RecordingError: the bag is missing or unreadable.
        DemoError: it has no ``/simulation_info`` or ``/joint_states`` message.
    """
    rows: dict[str, list[tuple[int, Any]]] = {}
    with open_bag(path) as bag:
        for topic, log_time, msg in bag.messages(
                [topic for topic in bag.topics if topic not in NOT_READ]):
            rows.setdefault(topic, []).append((log_time, msg))
    if not rows.get("/simulation_info") or not rows.get("/joint_states"):
        raise DemoError(f"{path} has no simulation_info or joint_states")
    info = json.loads(rows["/simulation_info"][-1][1].data)
    epoch = float(info["epoch"])
    joint = rows["/joint_states"]
    t = np.array([_stamp(m) - epoch for _, m in joint])
    log = np.array([lt for lt, _ in joint], dtype=np.float64)

    def sim_time(log_time: int) -> float:
        k = int(np.clip(np.searchsorted(log, log_time), 1, len(log) - 1))
        k = k - 1 if abs(log[k - 1] - log_time) <= abs(log[k] - log_time) else k
        return float(t[k])

    def arrays(topic: str) -> tuple[Array, Array]:
        stamped = rows.get(f"{topic}_stamped", [])
        if stamped and topic.endswith("inertial_parameters"):
            # the stamped Θ: each message at its own stamp, Θ in ``position`` (body-major)
            return (np.array([_stamp(m) - epoch for _, m in stamped]),
                    np.array([m.position for _, m in stamped]).reshape(len(stamped), -1, 10))
        items = rows.get(topic, [])
        times = np.array([sim_time(lt) for lt, _ in items])
        values = [np.asarray(m.data) for _, m in items]
        shape = [d.size for d in items[0][1].layout.dim] if items else [0]
        return times, np.array(values).reshape([len(values), *shape])

    ref = rows.get("/reference_joint_states", [])
    diagnostics: dict[str, list[tuple[float, str, int, str]]] = {
        source: [] for source in (TRUTH, *ESTIMATORS)}
    for lt, m in rows.get("/diagnostics", []):
        for s in m.status:
            source, name = status_source(s.name)
            level = int(s.level[0] if isinstance(s.level, (bytes, bytearray)) else s.level)
            diagnostics[source].append((sim_time(lt), name, level, s.message))
    bounds_rows = rows.get("/mass_matrix_bounds", [])
    labels = ([lab for d in bounds_rows[0][1].layout.dim for lab in d.label.split(":", 1)[-1]
               .split(",")] if bounds_rows else [])
    return Recording(
        info=info, t=t, q=np.array([m.position for _, m in joint]),
        qd=np.array([m.velocity for _, m in joint]),
        tau=np.array([m.effort for _, m in joint]),
        t_ref=np.array([_stamp(m) - epoch for _, m in ref]),
        q_ref=(np.array([m.position for _, m in ref]).reshape(len(ref), -1) if ref
               else np.zeros((0, len(joint[0][1].position)))),
        theta=arrays("/inertial_parameters"),
        estimates=_estimates(arrays),
        terms=arrays("/generalized_terms"),
        bounds=(*arrays("/mass_matrix_bounds"), labels),
        diagnostics=diagnostics,
        wall_span=(log[-1] - log[0]) * 1e-9 if len(log) > 1 else 0.0,
        log_times={topic: np.array([lt for lt, _ in items], dtype=np.int64)
                   for topic, items in rows.items()},
        joint_stamps=np.array([m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec
                               for _, m in joint], dtype=np.int64),
        residuals={kind: (np.array([_stamp(m) - epoch for _, m in rows[topic]]),
                          np.array([m.effort for _, m in rows[topic]]))
                   for kind, topic in OBSERVER_TOPICS.items() if rows.get(topic)},
    )


def _estimates(arrays: Any) -> dict[str, tuple[Array, Array]]:
    """The recorded estimates: the three estimators, or a control law's when only it ran.

    ``demo --controller natural`` (any law) has sim_node publish the law's Θ̂ on
    ``estimates/controller/...`` and no estimator's; the analysis then covers that one.
    """
    law = arrays(f"/estimates/{LAW_ESTIMATE}/inertial_parameters")
    estimators = {name: arrays(f"/estimates/{name}/inertial_parameters") for name in ESTIMATORS}
    if len(law[0]) and not any(len(t) for t, _ in estimators.values()):
        return {LAW_ESTIMATE: law}
    return estimators
