r"""What the demo runs and records: scenarios, estimators, topics, status names, scenario file."""

from __future__ import annotations

from pathlib import Path

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.loading import KINDS, load_loading_process
from robot_tv_dynamics.paths import package_config_dir
from robot_tv_dynamics.simulation import DEMO_MARGIN_FRACTION

#: Scenarios with a file in config/loading/.
SCENARIOS = ("fill", "drain", "grasp")
#: The estimators, as named in topics and the summary.
ESTIMATORS = ("classical", "projected", "geometric")
#: Topics recorded into run.mcap (relative names resolve to the root namespace).
RECORDED = {
    "/joint_states": "sensor_msgs/msg/JointState",
    "/reference_joint_states": "sensor_msgs/msg/JointState",
    "/joint_accelerations": "trajectory_msgs/msg/JointTrajectory",
    "/inertial_parameters": "std_msgs/msg/Float64MultiArray",
    "/inertial_parameter_rates": "std_msgs/msg/Float64MultiArray",
    "/psi": "std_msgs/msg/Float64MultiArray",
    "/psi_rates": "std_msgs/msg/Float64MultiArray",
    "/estimates/classical/inertial_parameters": "std_msgs/msg/Float64MultiArray",
    "/estimates/projected/inertial_parameters": "std_msgs/msg/Float64MultiArray",
    "/estimates/geometric/inertial_parameters": "std_msgs/msg/Float64MultiArray",
    "/generalized_torques": "sensor_msgs/msg/JointState",
    "/generalized_terms": "std_msgs/msg/Float64MultiArray",
    "/mass_matrix_bounds": "std_msgs/msg/Float64MultiArray",
    "/consistency": "std_msgs/msg/Float64MultiArray",
    "/estimates/classical/consistency": "std_msgs/msg/Float64MultiArray",
    "/estimates/projected/consistency": "std_msgs/msg/Float64MultiArray",
    "/estimates/geometric/consistency": "std_msgs/msg/Float64MultiArray",
    "/diagnostics": "diagnostic_msgs/msg/DiagnosticArray",  # every node, every monitor
    "/simulation_info": "std_msgs/msg/String",
    "/robot_description": "std_msgs/msg/String",
    "/inertia_markers": "visualization_msgs/msg/MarkerArray",
}
#: Monitor settings shared by the monitor nodes and the replay (README.md, "The main job").
MONITOR_PARAMETERS = {"margin_fraction": DEMO_MARGIN_FRACTION, "publish_rate": 10.0}
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

    ``"estimates/classical: panda_link7"`` → ``("classical", "panda_link7")``; a name
    without an estimator's prefix (``"panda_link7"``, ``"dynamics_node: input"``) →
    ``(TRUTH, name)``.
    """
    for estimator in ESTIMATORS:
        prefix = f"{status_prefix(estimator)}: "
        if name.startswith(prefix):
            return estimator, name[len(prefix):]
    return TRUTH, name


# ------------------------------------------------------------------------ scenario
def scenario_file(scenario: str, link: str, out: Path) -> Path:
    """The loading-process file of ``--scenario`` (with ``--link``: a copy in ``out``).

    Args:
        scenario: one of :data:`SCENARIOS` (config/loading/) or a YAML file.
        link: attach the load to this URDF link instead ("": the file's link).
        out: output directory, where the copy with ``link`` is written.

    Returns:
        The file to hand to ``sim_node`` (absolute).

    Raises:
        InvalidInputError: neither a scenario name nor a file.
        RobotTvDynamicsError: the file is not a valid loading process.
    """
    path = (package_config_dir() / "loading" / f"{scenario}.yaml" if scenario in KINDS
            else Path(scenario).expanduser())
    if not path.is_file():
        raise InvalidInputError(
            "--scenario", f'"{scenario}" is neither one of {list(SCENARIOS)} nor a file')
    if not link:
        load_loading_process(path)  # fail early with the file's own message
        return path.resolve()
    import yaml

    data = yaml.safe_load(path.read_text())
    data["link"] = link
    if data.get("process") == "timeline" and "file" in data:
        data["file"] = str((path.parent / data["file"]).resolve())
    target = out / "scenario.yaml"
    target.write_text(yaml.safe_dump(data, sort_keys=False))
    load_loading_process(target)
    return target


# ------------------------------------------------------------------------ analysis
