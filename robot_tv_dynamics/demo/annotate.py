r"""The analysis written back into ``run.mcap``: ``/analysis/*`` topics a viewer can plot.

Some quantities of the report exist on no DDS topic: λ_min(M(q, Θ̂)) of the estimates
and their α₁ (the dynamics node works on the true Θ), the replayed monitor's ε, the
norms of the terms of eq. (39). After the run the demo rewrites the bag with them added
as std_msgs/Float64MultiArray, each message at the receive time of the sample it comes
from, so that a Foxglove layout (``config/foxglove/demo_layout.json``) plots them beside
the recorded topics with robot-independent paths:

- ``/analysis/truth``, ``/analysis/<estimator>``: ``quantity`` (4) =
  :data:`SOURCE_FIELDS` — μ and ε of the payload body, λ_min(M(q, Θ)) and α₁ (NaN when
  Theorem 2 gives no bound);
- ``/analysis/terms``: ``term`` (6) = :data:`TERM_FIELDS`, ‖term‖₂ over the joints [N·m].

They are derived, not recorded: the names say so, and the recorded topics are copied
unchanged. With a model, ``/tf`` (tf2_msgs/TFMessage, from rosbags' own message
definitions: tf2_msgs has no wheel to publish it over DDS) is added too: per joint_states
sample the pose of every URDF link in the root link's frame, from the package's forward
kinematics, so that a viewer can place the URDF of ``/robot_description``.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.bags import McapWriter, open_bag
from robot_tv_dynamics.demo.recording import Recording
from robot_tv_dynamics.demo.scenario import ESTIMATORS, LAW_ESTIMATE, TRUTH
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.visualization import base_frame_name

#: Entries of ``/analysis/<source>``.
SOURCE_FIELDS = ("mu_payload", "epsilon_payload", "lambda_min_M", "alpha1")
#: Entries of ``/analysis/terms`` (the addends of eq. (39) of ``generalized_terms``).
TERM_FIELDS = ("inertia", "coriolis", "mass_rate", "gyroscopic", "gravity", "psi_dot")
MSGTYPE = "std_msgs/msg/Float64MultiArray"
TF_TYPE = "tf2_msgs/msg/TFMessage"


def analysis_topics() -> dict[str, str]:
    """Topic → message type of everything :func:`annotate_bag` adds."""
    return {**{f"/analysis/{source}": MSGTYPE
               for source in (TRUTH, *ESTIMATORS, LAW_ESTIMATE, "terms")},
            "/tf": TF_TYPE}


def link_poses(model: RobotModel, q: np.ndarray) -> list[tuple[str, np.ndarray]]:
    """(link, 4×4 pose in the root link's frame) of every URDF link but the root, at q.

    Body poses from ``model.kinematics(q)``, composed with each link's fixed placement in
    its body (links fixed to the base: their placement in the base).
    """
    kin = model.kinematics(q)
    out = []
    root = base_frame_name(model)
    for frame in model.pinocchio_model.frames:
        if not str(frame.type).endswith("BODY") or frame.name == root:
            continue
        placement = np.asarray(frame.placement.homogeneous)
        pose = placement
        if frame.parentJoint > 0:
            body = np.eye(4)
            body[:3, :3] = kin.rotations[frame.parentJoint - 1]
            body[:3, 3] = kin.positions[frame.parentJoint - 1]
            pose = body @ placement
        out.append((str(frame.name), pose))
    return out


def _tf_message(store: Any, root: str, stamp: tuple[int, int],
                poses: list[tuple[str, np.ndarray]]) -> bytes:
    import pinocchio as pin

    types = store.types
    time = types["builtin_interfaces/msg/Time"](sec=stamp[0], nanosec=stamp[1])
    transforms = []
    for name, pose in poses:
        x, y, z, w = (float(v) for v in pin.Quaternion(pose[:3, :3]).normalized().coeffs())
        transforms.append(types["geometry_msgs/msg/TransformStamped"](
            header=types["std_msgs/msg/Header"](stamp=time, frame_id=root),
            child_frame_id=name,
            transform=types["geometry_msgs/msg/Transform"](
                translation=types["geometry_msgs/msg/Vector3"](
                    x=float(pose[0, 3]), y=float(pose[1, 3]), z=float(pose[2, 3])),
                rotation=types["geometry_msgs/msg/Quaternion"](x=x, y=y, z=z, w=w))))
    return bytes(store.serialize_cdr(types[TF_TYPE](transforms=transforms), TF_TYPE))


def _message(store: Any, axis: str, labels: tuple[str, ...], values: np.ndarray) -> bytes:
    types = store.types
    dim = types["std_msgs/msg/MultiArrayDimension"](
        label=f"{axis}:{','.join(labels)}", size=len(labels), stride=len(labels))
    layout = types["std_msgs/msg/MultiArrayLayout"](dim=[dim], data_offset=0)
    msg = types[MSGTYPE](layout=layout, data=np.asarray(values, dtype=np.float64))
    return bytes(store.serialize_cdr(msg, MSGTYPE))


def _series(rec: Recording, result: dict[str, Any], alpha1_truth: float | None
            ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per added topic: (receive times [ns], values (K, width))."""
    body = int(result["body"])
    eps = float(next(iter(result["estimators"].values()))["epsilon"][body])
    out = {}
    nan = math.nan

    def rows(mu: np.ndarray, lam: np.ndarray, alpha1: float | None) -> np.ndarray:
        a1 = nan if alpha1 is None else float(alpha1)
        return np.column_stack([mu, np.full(len(mu), eps), lam, np.full(len(mu), a1)])

    times = rec.log_times.get("/inertial_parameters_stamped", np.zeros(0, dtype=np.int64))
    if len(times) == len(result["t_theta"]):
        out[f"/analysis/{TRUTH}"] = (times, rows(
            result["mu_true"][:, body], result["lam_true"], alpha1_truth))
    for name, est in result["estimators"].items():
        times = rec.log_times.get(f"/estimates/{name}/inertial_parameters_stamped",
                                  np.zeros(0, dtype=np.int64))
        if len(times) == len(est["t"]):
            out[f"/analysis/{name}"] = (times, rows(est["mu"][:, body], est["lam"],
                                                    est["alpha1"]))
    _, terms = rec.terms
    times = rec.log_times.get("/generalized_terms", np.zeros(0, dtype=np.int64))
    if len(terms) and len(times) == len(terms):
        out["/analysis/terms"] = (times, np.linalg.norm(terms[:, :len(TERM_FIELDS), :], axis=2))
    return out


def annotate_bag(path: Path, rec: Recording, result: dict[str, Any],
                 alpha1_truth: float | None = None, model: RobotModel | None = None,
                 ) -> dict[str, int]:
    """Rewrite the MCAP file ``path`` with the ``/analysis/*`` topics added.

    Args:
        path: ``run.mcap`` (replaced in place; on an error it is left as it was).
        rec: the recording read from it.
        result: :func:`robot_tv_dynamics.demo.analyse` of it.
        alpha1_truth: α₁ of the true Θ (None: no bound).
        model: the simulated arm, for ``/tf`` (None: no ``/tf``).

    Returns:
        Messages added per topic.

    Raises:
        RecordingError: ``path`` cannot be read (:func:`~robot_tv_dynamics.bags.open_bag`),
            or the rewritten bag could not be produced
            (:class:`~robot_tv_dynamics.bags.McapWriter`).
    """
    series = _series(rec, result, alpha1_truth)
    with McapWriter(path) as writer:
        store = writer.typestore
        with open_bag(path) as bag:
            # a bag annotated before keeps its recorded topics, not the old analysis
            kept = [topic for topic in bag.topics if topic not in analysis_topics()]
            for topic in kept:
                writer.add_topic(topic, bag.topics[topic])
            for topic, log_time, raw in bag.raw_messages(kept):
                writer.write(topic, log_time, raw)
        for topic, (times, values) in series.items():
            axis, labels = ("term", TERM_FIELDS) if topic.endswith("/terms") else (
                "quantity", SOURCE_FIELDS)
            writer.add_topic(topic, MSGTYPE)
            for log_time, row in zip(times, values, strict=True):
                writer.write(topic, int(log_time), _message(store, axis, labels, row))
        joint_times = rec.log_times.get("/joint_states", np.zeros(0, dtype=np.int64))
        stamps = rec.joint_stamps
        if model is not None and len(joint_times) == len(stamps) == len(rec.q) > 0:
            root = base_frame_name(model)
            writer.add_topic("/tf", TF_TYPE)
            for log_time, stamp_ns, q in zip(joint_times, stamps, rec.q, strict=True):
                stamp = (int(stamp_ns) // 1_000_000_000, int(stamp_ns) % 1_000_000_000)
                writer.write("/tf", int(log_time), _tf_message(store, root, stamp,
                                                               link_poses(model, q)))
            series["/tf"] = (joint_times, np.zeros((len(joint_times), 0)))
    return {topic: len(times) for topic, (times, _) in series.items()}
