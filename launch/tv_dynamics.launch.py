"""Bring up robot_tv_dynamics: dynamics, monitor and markers nodes (+ sim_node: use_sim:=true).

    ros2 launch robot_tv_dynamics tv_dynamics.launch.py urdf:=/path/arm.urdf
    ros2 launch robot_tv_dynamics tv_dynamics.launch.py use_sim:=true namespace:=arm1
    ros2 launch robot_tv_dynamics tv_dynamics.launch.py config:=my.yaml
    ros2 launch robot_tv_dynamics tv_dynamics.launch.py urdf:=/path/arm.urdf estimate:=true
    ros2 launch robot_tv_dynamics tv_dynamics.launch.py namespace:=ur \
        joint_states:=/joint_states robot_description:=/robot_description \
        use_sim_time:=true params_file:=ur_cell.yaml locked_joints:=finger_joint \
        log_level:=warn

The cell arguments, the same for every node (as ``python -m
robot_tv_dynamics.ros.bringup``'s ``--joint-states`` ...,
``robot_tv_dynamics.ros.cell.CellOptions``): ``joint_states`` and
``robot_description`` remap those topics (a driver's, MoveIt's); ``use_sim_time``;
``params_file`` is read after ``config`` (its ``/**/<node>:`` blocks per node);
``locked_joints`` (comma-separated, ``name`` or ``name=position``) fixes joints such as
a gripper's in every node's model; ``log_level`` sets every node's. Two arms are two
inclusions of this file with two namespaces: every node's status on ``/diagnostics`` is
named after its full name (``/ur/monitor_node: wrist_3_link``).

``estimate:=true`` adds estimator_node: on a real arm its Θ̂ on
``inertial_parameters_stamped`` feeds the monitor and dynamics nodes; with
``use_sim:=true`` its outputs are remapped under ``estimated/``
(``estimated/inertial_parameters_stamped``, ...) so that they do not collide with the
simulator's true Θ.

Only wiring: every node gets ``config`` (default: the package's
config/tv_dynamics.yaml), then ``urdf_path`` from ``urdf`` *only when ``urdf`` is
given*: its default "" means "not given", so a ``urdf_path`` set in ``config`` is kept
(and with neither, the nodes read the ``robot_description`` topic, e.g. from
robot_state_publisher). The parameter list is built at launch time (OpaqueFunction), by
the same rule as the bring-up without launch_ros, ``python -m
robot_tv_dynamics.ros.bringup`` (``bringup.node_parameter_sources``).

Like the bring-up, every node gets the package's Fast DDS discovery profile
(config/fastdds_discovery.xml: announcements every second instead of every 3 s) unless
FASTRTPS_DEFAULT_PROFILES_FILE or FASTDDS_DEFAULT_PROFILES_FILE is set where
``ros2 launch`` runs.
"""

import os

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.substitutions import FindPackageShare

PACKAGE = "robot_tv_dynamics"
#: Executables started always; ``sim_node`` (the simulated arm) only with use_sim:=true.
NODES = ("dynamics_node", "monitor_node", "markers_node")
SIM_NODE = "sim_node"
#: Added by estimate:=true (live payload estimation).
ESTIMATOR_NODE = "estimator_node"
#: Its outputs, remapped under ``estimated/`` when use_sim:=true.
ESTIMATOR_OUTPUTS = ("inertial_parameters_stamped", "inertial_parameters",
                     "inertial_parameter_rates", "payload_estimate")
#: The ``urdf`` argument's default: "not given" (the config file's urdf_path stays).
NOT_GIVEN = ""
#: The variables naming a Fast DDS profile file (Fast DDS 2, 3), as ``bringup.PROFILE_ENV``.
PROFILE_ENV = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")
#: The package's discovery profile in its share/config folder.
DISCOVERY_PROFILE = "fastdds_discovery.xml"
#: The topics the ``joint_states`` and ``robot_description`` arguments remap.
REMAPPED_TOPICS = ("joint_states", "robot_description")


def node_parameters(config, urdf, params_file=NOT_GIVEN):
    """The config, the params file, then ``urdf_path`` when given (as the bring-up)."""
    parameters = [config]
    if params_file != NOT_GIVEN:
        parameters.append(os.path.abspath(params_file))
    if urdf != NOT_GIVEN:
        parameters.append({"urdf_path": urdf})  # the nodes run in this cwd
    return parameters


def cell_parameters(use_sim_time, locked_joints):
    """``use_sim_time`` and ``locked_joints`` for every node, only when set."""
    out = {}
    if use_sim_time == "true":
        out["use_sim_time"] = True
    joints = [item.strip() for item in locked_joints.split(",") if item.strip()]
    if joints:
        out["locked_joints"] = joints
    return [out] if out else []


def cell_remappings(context):
    """``joint_states`` / ``robot_description`` → the arguments' topics, when they differ."""
    remaps = []
    for topic in REMAPPED_TOPICS:
        target = LaunchConfiguration(topic).perform(context)
        if target != topic:
            remaps.append((topic, target))
    return remaps


def log_arguments(level):
    """Every node's log level (none for the default ``info``, as the bring-up)."""
    return [] if level == "info" else ["--ros-args", "--log-level", level]


def discovery_env(share):
    """The profile for every node, unless ``ros2 launch``'s environment names one."""
    if any(os.environ.get(name) for name in PROFILE_ENV):
        return {}
    profile = os.path.join(share, "config", DISCOVERY_PROFILE)
    return dict.fromkeys(PROFILE_ENV, profile)


def launch_nodes(context):
    """The node actions, with the arguments resolved (an OpaqueFunction)."""
    config = LaunchConfiguration("config").perform(context)
    urdf = LaunchConfiguration("urdf").perform(context)
    namespace = LaunchConfiguration("namespace").perform(context)
    parameters = node_parameters(
        config, urdf, LaunchConfiguration("params_file").perform(context)) + cell_parameters(
        LaunchConfiguration("use_sim_time").perform(context),
        LaunchConfiguration("locked_joints").perform(context))
    remaps = cell_remappings(context)
    arguments = log_arguments(LaunchConfiguration("log_level").perform(context))
    env = discovery_env(FindPackageShare(PACKAGE).perform(context))
    nodes = [
        Node(package=PACKAGE, executable=name, name=name, namespace=namespace,
             parameters=parameters, remappings=remaps, arguments=arguments, output="screen",
             additional_env=env)
        for name in NODES
    ]
    nodes.append(
        Node(package=PACKAGE, executable=SIM_NODE, name=SIM_NODE, namespace=namespace,
             parameters=parameters, remappings=remaps, arguments=arguments, output="screen",
             additional_env=env, condition=IfCondition(LaunchConfiguration("use_sim"))))
    estimate, use_sim = LaunchConfiguration("estimate"), LaunchConfiguration("use_sim")
    on_arm = PythonExpression(["'", estimate, "' == 'true' and '", use_sim, "' != 'true'"])
    beside_sim = PythonExpression(["'", estimate, "' == 'true' and '", use_sim, "' == 'true'"])
    nodes.append(
        Node(package=PACKAGE, executable=ESTIMATOR_NODE, name=ESTIMATOR_NODE,
             namespace=namespace, parameters=parameters, remappings=remaps,
             arguments=arguments, output="screen", additional_env=env,
             condition=IfCondition(on_arm)))
    nodes.append(
        Node(package=PACKAGE, executable=ESTIMATOR_NODE, name=ESTIMATOR_NODE,
             namespace=namespace, parameters=parameters, arguments=arguments,
             output="screen", additional_env=env,
             remappings=remaps + [(topic, f"estimated/{topic}") for topic in ESTIMATOR_OUTPUTS],
             condition=IfCondition(beside_sim)))
    return nodes


def generate_launch_description() -> LaunchDescription:
    """The launch description: eleven arguments, three to five nodes."""
    arguments = [
        DeclareLaunchArgument(
            "urdf", default_value=NOT_GIVEN,
            description="URDF file for every node (urdf_path); not given: the config "
                        "file's urdf_path, else the robot_description topic"),
        DeclareLaunchArgument(
            "use_sim", default_value="false", choices=["true", "false"],
            description="also start sim_node, the simulated arm integrating eq. (39)"),
        DeclareLaunchArgument(
            "config",
            default_value=PathJoinSubstitution(
                [FindPackageShare(PACKAGE), "config", "tv_dynamics.yaml"]),
            description="parameter file of the nodes"),
        DeclareLaunchArgument(
            "namespace", default_value="", description="namespace of every node and topic"),
        DeclareLaunchArgument(
            "estimate", default_value="false", choices=["true", "false"],
            description="also start estimator_node (Θ̂ of a link's load from measured "
                        "efforts; beside use_sim:=true its outputs go under estimated/)"),
        DeclareLaunchArgument(
            "joint_states", default_value="joint_states",
            description="the arm's joint_states topic (remapped for every node)"),
        DeclareLaunchArgument(
            "robot_description", default_value="robot_description",
            description="the URDF topic, when no URDF parameter is given (remapped)"),
        DeclareLaunchArgument(
            "use_sim_time", default_value="false", choices=["true", "false"],
            description="every node's clock is /clock (e.g. ros2 bag play --clock)"),
        DeclareLaunchArgument(
            "params_file", default_value=NOT_GIVEN,
            description="a parameter file read after config, e.g. with /**/dynamics_node: "
                        "and /**/estimator_node: blocks"),
        DeclareLaunchArgument(
            "locked_joints", default_value="",
            description="joints made fixed in every node, comma-separated, name or "
                        "name=position (e.g. a gripper's fingers in MoveIt's URDF)"),
        DeclareLaunchArgument(
            "log_level", default_value="info",
            choices=["debug", "info", "warn", "error", "fatal"],
            description="every node's log level"),
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=launch_nodes)])
