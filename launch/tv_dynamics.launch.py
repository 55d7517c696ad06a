"""Bring up robot_tv_dynamics: dynamics, monitor and markers nodes (+ sim_node: use_sim:=true).

    ros2 launch robot_tv_dynamics tv_dynamics.launch.py urdf:=/path/arm.urdf
    ros2 launch robot_tv_dynamics tv_dynamics.launch.py use_sim:=true namespace:=arm1
    ros2 launch robot_tv_dynamics tv_dynamics.launch.py config:=my.yaml
    ros2 launch robot_tv_dynamics tv_dynamics.launch.py urdf:=/path/arm.urdf estimate:=true

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


def node_parameters(config, urdf):
    """The config file, then ``urdf_path`` only when a URDF is given (as the bring-up)."""
    parameters = [config]
    if urdf != NOT_GIVEN:
        parameters.append({"urdf_path": urdf})  # the nodes run in this cwd
    return parameters


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
    parameters = node_parameters(config, urdf)
    env = discovery_env(FindPackageShare(PACKAGE).perform(context))
    nodes = [
        Node(package=PACKAGE, executable=name, name=name, namespace=namespace,
             parameters=parameters, output="screen", additional_env=env)
        for name in NODES
    ]
    nodes.append(
        Node(package=PACKAGE, executable=SIM_NODE, name=SIM_NODE, namespace=namespace,
             parameters=parameters, output="screen", additional_env=env,
             condition=IfCondition(LaunchConfiguration("use_sim"))))
    estimate, use_sim = LaunchConfiguration("estimate"), LaunchConfiguration("use_sim")
    on_arm = PythonExpression(["'", estimate, "' == 'true' and '", use_sim, "' != 'true'"])
    beside_sim = PythonExpression(["'", estimate, "' == 'true' and '", use_sim, "' == 'true'"])
    nodes.append(
        Node(package=PACKAGE, executable=ESTIMATOR_NODE, name=ESTIMATOR_NODE,
             namespace=namespace, parameters=parameters, output="screen",
             additional_env=env, condition=IfCondition(on_arm)))
    nodes.append(
        Node(package=PACKAGE, executable=ESTIMATOR_NODE, name=ESTIMATOR_NODE,
             namespace=namespace, parameters=parameters, output="screen",
             additional_env=env,
             remappings=[(topic, f"estimated/{topic}") for topic in ESTIMATOR_OUTPUTS],
             condition=IfCondition(beside_sim)))
    return nodes


def generate_launch_description() -> LaunchDescription:
    """The launch description: five arguments, three to five nodes."""
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
    ]
    return LaunchDescription(arguments + [OpaqueFunction(function=launch_nodes)])
