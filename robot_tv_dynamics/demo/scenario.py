r"""What the demo runs and records: scenarios, estimators, topics, status names, scenario file."""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from robot_tv_dynamics.exceptions import InvalidInputError, URDFError
from robot_tv_dynamics.inertia import Array, rpy_to_rotation
from robot_tv_dynamics.loading import (
    LoadingProcess,
    collision_as_dict,
    collision_from_dict,
    load_loading_process,
)
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.observer import ExternalWrench
from robot_tv_dynamics.paths import package_config_dir
from robot_tv_dynamics.simulation import DEMO_MARGIN_FRACTION, start_pose

#: Scenarios with a file in config/loading/ (``fill_collision``: the fill, then a push
#: on the arm, its ``collision:`` block).
SCENARIOS = ("fill", "drain", "grasp", "timeline", "fill_collision", "release")
#: The estimators, as named in topics and the summary.
ESTIMATORS = ("classical", "projected", "geometric")
#: The demo's nodes speak only the stamped Θ/Ψ/consistency topics (the deprecated
#: unstamped arrays would double the messages every node decodes and the bag holds).
STAMPED_ONLY = {"legacy_theta_topics": False}

#: The estimate of a control law on sim_node (``demo --controller natural`` etc.):
#: ``estimates/controller/...``, analysed in place of :data:`ESTIMATORS`.
LAW_ESTIMATE = "controller"
#: Topics recorded into run.mcap (relative names resolve to the root namespace).
RECORDED = {
    "/joint_states": "sensor_msgs/msg/JointState",
    "/reference_joint_states": "sensor_msgs/msg/JointState",
    "/joint_accelerations": "trajectory_msgs/msg/JointTrajectory",
    # Θ/Θ̇, Ψ/Ψ̇ and the estimates (JointState-shaped, stamped with the joint sample's stamp)
    "/inertial_parameters_stamped": "sensor_msgs/msg/JointState",
    "/psi_stamped": "sensor_msgs/msg/JointState",
    "/estimates/classical/inertial_parameters_stamped": "sensor_msgs/msg/JointState",
    "/estimates/projected/inertial_parameters_stamped": "sensor_msgs/msg/JointState",
    "/estimates/geometric/inertial_parameters_stamped": "sensor_msgs/msg/JointState",
    # a control law's Θ̂ (demo --controller slotine-li|natural|projected|computed-torque)
    "/estimates/controller/inertial_parameters_stamped": "sensor_msgs/msg/JointState",
    "/generalized_torques": "sensor_msgs/msg/JointState",
    "/external_torques": "sensor_msgs/msg/JointState",
    "/external_torques_classical": "sensor_msgs/msg/JointState",
    "/generalized_terms": "std_msgs/msg/Float64MultiArray",
    "/mass_matrix_bounds": "std_msgs/msg/Float64MultiArray",
    # each monitor's table, stamped with the Θ it judged (JointState-shaped)
    "/consistency_stamped": "sensor_msgs/msg/JointState",
    "/estimates/classical/consistency_stamped": "sensor_msgs/msg/JointState",
    "/estimates/projected/consistency_stamped": "sensor_msgs/msg/JointState",
    "/estimates/geometric/consistency_stamped": "sensor_msgs/msg/JointState",
    "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray",  # every node, every monitor
    "/simulation_info": "std_msgs/msg/String",
    "/robot_description": "std_msgs/msg/String",
    "/inertia_markers": "visualization_msgs/msg/MarkerArray",
}
#: Monitor settings shared by the monitor nodes and the replay (docs/demo.md).
MONITOR_PARAMETERS = {"margin_fraction": DEMO_MARGIN_FRACTION, "publish_rate": 10.0}
#: dynamics_node's momentum observers in the demo (docs/demo.md): both residuals, r of the
#: generalized observer on ``external_torques`` and of the classical one on
#: ``external_torques_classical``; a contact when some |r_i| > 1 N·m (the node's default
#: 5 N·m would hide the classical observer's false collision during a 0.5 kg fill, peak
#: ≈ 3 N·m), released below 0.5 N·m. The analysis replays the same detector on the
#: recorded residuals.
OBSERVER_PARAMETERS: dict[str, str | float] = {"observer_model": "both",
                                               "observer_gain": 50.0,
                                               "contact_threshold": 1.0,
                                               "contact_release": 0.5, "contact_mode": "joint"}
#: Residual topic of each observer (ros/contact_outputs.py ``TOPICS``, root namespace).
OBSERVER_TOPICS = {"generalized": "/external_torques",
                   "classical": "/external_torques_classical"}
#: markers_node in the demo: the true Θ and both estimates side by side, 10 Hz.
MARKERS_PARAMETERS = {"publish_rate": 10.0, "estimate_spacing": 1.0}
#: Source of the unprefixed statuses on /diagnostics (the monitor of the true Θ, the
#: dynamics node's own).
TRUTH = "truth"


def layout_file() -> Path:
    """The Foxglove layout of the demo's run.mcap (config/foxglove/demo_layout.json)."""
    return package_config_dir() / "foxglove" / "demo_layout.json"


def status_prefix(estimator: str) -> str:
    """``status_prefix`` of the monitor node of an estimate: ``estimates/<name>``."""
    return f"estimates/{estimator}"


def status_source(name: str) -> tuple[str, str]:
    """(source, name without prefix) of a DiagnosticStatus name on the demo's /diagnostics.

    The node's full name in front (``"/monitor_classical: "``, as every node names its
    statuses) is dropped first. ``"/monitor_classical: estimates/classical: panda_link7"``
    → ``("classical", "panda_link7")``; a name without an estimator's prefix
    (``"/monitor_truth: panda_link7"``, ``"/dynamics_node: input"``) → ``(TRUTH, the name
    after the node's)``.
    """
    if name.startswith("/") and ": " in name:
        name = name.split(": ", 1)[1]
    for estimator in ESTIMATORS:
        prefix = f"{status_prefix(estimator)}: "
        if name.startswith(prefix):
            return estimator, name[len(prefix):]
    return TRUTH, name


# ------------------------------------------------------------------------ scenario
#: Processes whose fluid model assumes the container upright (the stream falls along
#: its axis, the surface stays flat): their container is placed vertical at the start.
UPRIGHT_PROCESSES = ("fill", "drain")
#: Link names preferred where fixed links branch below the last joint (REP-199 flange).
TOOL_NAMES = ("tool0", "flange", "tool_flange")
#: A container axis within this angle of vertical counts as upright [rad] (0.1°).
UPRIGHT_TOLERANCE = math.radians(0.1)


@dataclass(frozen=True)
class ScenarioSetup:
    """The loading process the demo (and the bring-up's sim_node) runs, and why.

    Attributes:
        path: the file handed to ``sim_node`` (absolute; a copy when changed).
        link: the URDF link the load is on.
        link_source: ``"--link"``, ``"scenario"`` (the file's link is in the URDF) or
            ``"tool flange"`` (the chain's last link, :func:`tool_link`).
        tilt_file_deg: angle of the file's container axis from vertical at the start
            pose [deg] (None: no container).
        tilt_deg: the same for the placement run [deg] (None: no container).
        container_rpy: the container's ``origin.rpy`` run (None: no container).
        loading_start: first time the load changes (Θ̇ ≠ 0) [s]; None if it never does
            within the sampled time.
        collision: the file's ``collision:`` block on the arm's link (None: none).
        collision_link_source: ``"scenario"`` (the file's link is in the URDF) or
            ``"tool flange"`` (it is not: :func:`tool_link`); None without a collision.
    """

    path: Path
    link: str
    link_source: str
    tilt_file_deg: float | None
    tilt_deg: float | None
    container_rpy: tuple[float, float, float] | None
    loading_start: float | None
    collision: ExternalWrench | None = None
    collision_link_source: str | None = None

    def as_dict(self) -> dict[str, object]:
        """For summary.json (``load``)."""
        return {"link": self.link, "link_source": self.link_source,
                "container_tilt_deg": self.tilt_deg, "file_container_tilt_deg":
                self.tilt_file_deg, "container_rpy": list(self.container_rpy or []) or None,
                "loading_start_s": self.loading_start, "file": str(self.path),
                "collision": None if self.collision is None else {
                    **collision_as_dict(self.collision),
                    "link_source": self.collision_link_source}}

    def describe(self) -> str:
        """One line for the console."""
        text = f"load on {self.link} ({self.link_source})"
        if self.tilt_deg is not None and self.tilt_file_deg is not None:
            if abs(self.tilt_file_deg - self.tilt_deg) > 1e-6:
                text += (f"; container axis {self.tilt_deg:.2g}° from vertical at the start "
                         f"pose (the file's placement was {self.tilt_file_deg:.3g}° off: "
                         f"rpy derived = {[round(a, 4) for a in self.container_rpy or ()]})")
            else:
                text += f"; container axis {self.tilt_deg:.2g}° from vertical at the start pose"
        if self.loading_start is not None:
            text += f"; loading starts at {self.loading_start:g} s"
        c = self.collision
        if c is not None:
            text += (f"; collision: {np.linalg.norm(c.force):.3g} N on {c.link} "
                     f"({self.collision_link_source}) from {c.t_start:g} s for "
                     f"{c.t_end - c.t_start:g} s")
        return text


def tool_link(urdf_xml: str) -> str:
    """The chain's last link, the tool flange: where a load goes by default.

    From the child link of the deepest revolute or continuous joint, down fixed joints
    while they lead to exactly one link; where fixed links branch, a link named as in
    :data:`TOOL_NAMES` (REP-199's ``tool0``) if there is one, else the branch point.
    Panda: ``panda_hand_tcp`` (fixed below ``panda_hand``; the fingers are prismatic);
    UR5: ``tool0``.

    Raises:
        URDFError: the URDF has no revolute or continuous joint.
    """
    import xml.etree.ElementTree as ElementTree

    try:
        root = ElementTree.fromstring(urdf_xml)
    except ElementTree.ParseError as error:
        raise URDFError("<urdf>", f"cannot parse: {error}") from None
    children: dict[str, list[tuple[str, str]]] = {}
    child_links = set()
    for joint in root.iter("joint"):
        parent_tag, child_tag = joint.find("parent"), joint.find("child")
        if parent_tag is None or child_tag is None:
            continue
        children.setdefault(parent_tag.get("link", ""), []).append(
            (joint.get("type", ""), child_tag.get("link", "")))
        child_links.add(child_tag.get("link", ""))
    roots = [link.get("name", "") for link in root.iter("link")
             if link.get("name", "") not in child_links]
    best: tuple[int, str] | None = None
    stack = [(name, 0) for name in roots]
    while stack:
        link, depth = stack.pop()
        for kind, child in children.get(link, []):
            rotary = kind in ("revolute", "continuous")
            if rotary and (best is None or depth + 1 > best[0]):
                best = (depth + 1, child)
            stack.append((child, depth + int(rotary)))
    if best is None:
        raise URDFError("<urdf>", "has no revolute or continuous joint to put a load after")
    link = best[1]
    while True:
        fixed = [child for kind, child in children.get(link, []) if kind == "fixed"]
        if len(fixed) == 1:
            link = fixed[0]
            continue
        named = [child for name in TOOL_NAMES for child in fixed if child == name]
        if named:
            link = named[0]
            continue
        return link


def link_rotation(model: RobotModel, link: str, q: Array) -> Array:
    """Orientation of a URDF link's frame in the base frame at q, (3, 3)."""
    attachment = model.link_attachment(link)
    kin = model.kinematics(q)
    return np.asarray(kin.rotations[attachment.body] @ attachment.rotation)


def _rpy(rotation: Array) -> tuple[float, float, float]:
    import pinocchio as pin

    roll, pitch, yaw = (float(a) for a in pin.rpy.matrixToRpy(np.asarray(rotation)))
    return roll, pitch, yaw


def _tilt(axis: Array) -> float:
    return float(np.arccos(np.clip(axis[2] / np.linalg.norm(axis), -1.0, 1.0)))


def upright_rotation(link_in_base: Array, placement: Array) -> tuple[Array, float]:
    """The container rotation in the link frame closest to ``placement`` with its axis up.

    Args:
        link_in_base: the link's orientation in the base frame at the start pose (3, 3).
        placement: the container's orientation in the link frame from the file (3, 3).

    Returns:
        (rotation in the link frame, the file's tilt from vertical [rad]): the file's
        placement turned by the smallest rotation (about a horizontal axis) that brings
        the container's z axis onto the base frame's +z (against gravity).
    """
    axis = link_in_base @ placement[:, 2]
    tilt = _tilt(axis)
    up = np.array([0.0, 0.0, 1.0])
    cross = np.cross(axis, up)
    sine = float(np.linalg.norm(cross))
    if sine < 1e-12:
        align = np.eye(3) if axis[2] > 0 else np.diag([1.0, -1.0, -1.0])
    else:
        k = cross / sine
        K = np.array([[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]])
        align = np.eye(3) + math.sin(tilt) * K + (1 - math.cos(tilt)) * K @ K
    return link_in_base.T @ align @ link_in_base @ placement, tilt


def loading_start(process: LoadingProcess, until: float, step: float = 1e-3) -> float | None:
    """First sampled time at which the load changes (Φ̇ ≠ 0) [s], None if never."""
    for k in range(int(math.ceil(until / step)) + 1):
        t = k * step
        if np.any(np.asarray(process.state(t).phi_dot) != 0.0):
            return round(t, 6)
    return None


def scenario_file(scenario: str, link: str, out: Path, model: RobotModel | None = None,
                  urdf_xml: str | None = None, duration: float = 8.0) -> ScenarioSetup:
    """The loading-process file of ``--scenario``, placed on the arm (a copy in ``out``).

    Args:
        scenario: one of :data:`SCENARIOS` (config/loading/) or a YAML file.
        link: attach the load to this URDF link ("": the file's link when the URDF has
            it, else the chain's tool flange, :func:`tool_link`).
        out: output directory, where a changed copy is written (``scenario.yaml``).
        model: the arm (None: the file is only checked, nothing is placed).
        urdf_xml: the arm's URDF text (for the tool flange; needed with ``model``).
        duration: how long the run lasts [s] (to find when loading starts).

    Returns:
        The :class:`ScenarioSetup`: the file to hand to ``sim_node`` and what was done.
        A fluid process (:data:`UPRIGHT_PROCESSES`) gets its container placement
        turned so that its axis is vertical at the start pose (:func:`start_pose`):
        the fluid model assumes the cup upright.

    Raises:
        InvalidInputError: neither a scenario name nor a file.
        UnknownNameError: ``link`` is not a link of the URDF.
        RobotTvDynamicsError: the file is not a valid loading process.
    """
    path = (package_config_dir() / "loading" / f"{scenario}.yaml" if scenario in SCENARIOS
            else Path(scenario).expanduser())
    if not path.is_file():
        raise InvalidInputError(
            "--scenario", f'"{scenario}" is neither one of {list(SCENARIOS)} nor a file')
    load_loading_process(path)  # fail early with the file's own message
    data = yaml.safe_load(path.read_text())
    try:
        collision = collision_from_dict(data)
    except InvalidInputError as error:
        raise InvalidInputError(f"{path}: {error.argument}", error.problem) from None
    changed = False
    source = "--link" if link else "scenario"
    if model is not None and not link:
        if str(data.get("link")) in model.link_names or urdf_xml is None:
            link = str(data.get("link"))
        else:
            link, source = tool_link(urdf_xml), "tool flange"
    if link and link != data.get("link"):
        data["link"], changed = link, True
    tilt_file = tilt = None
    rpy = None
    container = data.get("container")
    if model is not None and data.get("process") in UPRIGHT_PROCESSES and isinstance(
            container, dict):
        tilt_file, tilt, rpy, turned = _upright(model, str(data["link"]), container)
        changed = changed or turned
    collision_source = None
    if collision is not None:
        collision, collision_source, moved = _place_collision(collision, model, urdf_xml, path)
        if moved:
            data["collision"] = {**data["collision"], "link": collision.link}
            changed = True
    if changed:
        if data.get("process") == "timeline" and "file" in data:
            data["file"] = str((path.parent / data["file"]).resolve())
        out.mkdir(parents=True, exist_ok=True)
        target = out / "scenario.yaml"
        target.write_text(yaml.safe_dump(data, sort_keys=False))
        path = target
    process = load_loading_process(path)
    if model is not None:
        model.link_attachment(process.link)  # UnknownNameError naming the links
    return ScenarioSetup(
        path=path.resolve(), link=process.link, link_source=source, tilt_file_deg=tilt_file,
        tilt_deg=tilt, container_rpy=rpy,  # type: ignore[arg-type]
        loading_start=loading_start(process, duration), collision=collision,
        collision_link_source=collision_source)


def _upright(model: RobotModel, link: str, container: dict[str, Any]
             ) -> tuple[float, float, tuple[float, ...], bool]:
    """Turn a fluid container's placement (in place) so its axis is vertical at the start pose.

    Returns:
        (the file's tilt [deg], the tilt after [deg], the container's rpy [rad], whether
        the placement was turned: only beyond ``UPRIGHT_TOLERANCE``).
    """
    origin = dict(container.get("origin") or {})
    placement = rpy_to_rotation(list(origin.get("rpy", (0.0, 0.0, 0.0))))
    link_in_base = link_rotation(model, link, start_pose(model))
    rotation, tilt_rad = upright_rotation(link_in_base, placement)
    turned = tilt_rad > UPRIGHT_TOLERANCE
    if turned:
        origin["rpy"] = [round(a, 12) for a in _rpy(rotation)]
        container["origin"] = origin
    rpy = tuple(float(a) for a in origin.get("rpy", (0.0, 0.0, 0.0)))
    final = rpy_to_rotation(list(rpy))
    return math.degrees(tilt_rad), math.degrees(_tilt(link_in_base @ final[:, 2])), rpy, turned


def _place_collision(collision: ExternalWrench, model: RobotModel | None,
                     urdf_xml: str | None, path: Path) -> tuple[ExternalWrench, str, bool]:
    """(collision on the arm, where its link came from, whether the link changed).

    The file's link when the URDF has it; else the chain's tool flange
    (:func:`tool_link`, the same rule as the load's): every serial arm has one, and a
    push there reaches every joint. Without a model nothing is checked.

    Raises:
        InvalidInputError: the link is fixed to the base (no joint feels the push), or
            not in the URDF while no URDF text is given to find the flange (the message
            names ``collision.link``).
    """
    if model is None:
        return collision, "scenario", False
    where = f"{path}: collision.link"
    if collision.link in model.link_names:
        try:
            model.link_attachment(collision.link)
        except InvalidInputError as error:
            raise InvalidInputError(where, error.problem) from None
        return collision, "scenario", False
    if urdf_xml is None:
        raise InvalidInputError(where, f'"{collision.link}" is not a link of the URDF; links: '
                                f"{model.link_names}")
    return replace(collision, link=tool_link(urdf_xml)), "tool flange", True


# ------------------------------------------------------------------------ analysis
