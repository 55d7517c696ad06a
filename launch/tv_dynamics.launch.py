"""Bring up robot_tv_dynamics: dynamics, monitor and markers nodes (+ sim_node: use_sim:=true).

    ros2 launch robot_tv_dynamics tv_dynamics.launch.py urdf:=/path/arm.urdf
    ros2 launch robot_tv_dynamics tv_dynamics.launch.py use_sim:=true namespace:=arm1
    ros2 launch robot_tv_dynamics tv_dynamics.launch.py urdf:=/path/arm.urdf estimate:=true

``estimate:=true`` adds estimator_node: on a real arm its Θ̂ on ``inertial_parameters``
feeds the monitor and dynamics nodes; with ``use_sim:=true`` its outputs are remapped
under ``estimated/`` (``estimated/inertial_parameters``, ...) so that they do not collide
with the simulator's true Θ.

Only wiring: every node gets ``config`` (default: the package's
config/tv_dynamics.yaml), then ``urdf_path`` from ``urdf`` (empty: the nodes read the
``robot_description`` topic, e.g. from robot_state_publisher). Without launch_ros, the
same bring-up: ``python -m robot_tv_dynamics.ros.bringup`` (robot_tv_dynamics.ros.bringup).
"""

from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument
from launch.conditions import IfCondition
from launch.substitutions import LaunchConfiguration, PathJoinSubstitution, PythonExpression
from launch_ros.actions import Node
from launch_ros.parameter_descriptions import ParameterValue
from launch_ros.substitutions import FindPackageShare

PACKAGE = "robot_tv_dynamics"
#: Executables started always; ``sim_node`` (issue: simulated arm) only with use_sim:=true.
NODES = ("dynamics_node", "monitor_node", "markers_node")
SIM_NODE = "sim_node"
#: Added by estimate:=true (issue 13: live payload estimation).
ESTIMATOR_NODE = "estimator_node"
#: Its outputs, remapped under ``estimated/`` when use_sim:=true.
ESTIMATOR_OUTPUTS = ("inertial_parameters", "inertial_parameter_rates", "payload_estimate")


def generate_launch_description() -> LaunchDescription:
    """The launch description: five arguments, three to five nodes."""
    urdf = LaunchConfiguration("urdf")
    config = LaunchConfiguration("config")
    namespace = LaunchConfiguration("namespace")
    use_sim = LaunchConfiguration("use_sim")
    estimate = LaunchConfiguration("estimate")
    parameters = [config, {"urdf_path": ParameterValue(urdf, value_type=str)}]
    arguments = [
        DeclareLaunchArgument(
            "urdf", default_value="",
            description="URDF file for every node (urdf_path); empty: the robot_description "
                        "topic"),
        DeclareLaunchArgument(
            "use_sim", default_value="false", choices=["true", "false"],
            description="also start sim_node, the simulated arm integrating eq. (39)"),
        DeclareLaunchArgument(
            "estimate", default_value="false", choices=["true", "false"],
            description="also start estimator_node: the load's Θ̂ from measured efforts (with "
                        "use_sim:=true under estimated/)"),
        DeclareLaunchArgument(
            "config",
            default_value=PathJoinSubstitution(
                [FindPackageShare(PACKAGE), "config", "tv_dynamics.yaml"]),
            description="parameter file of the nodes"),
        DeclareLaunchArgument(
            "namespace", default_value="", description="namespace of every node and topic"),
    ]
    nodes = [
        Node(package=PACKAGE, executable=name, name=name, namespace=namespace,
             parameters=parameters, output="screen")
        for name in NODES
    ]
    nodes.append(
        Node(package=PACKAGE, executable=SIM_NODE, name=SIM_NODE, namespace=namespace,
             parameters=parameters, output="screen", condition=IfCondition(use_sim)))
    on_arm = PythonExpression(["'", estimate, "' == 'true' and '", use_sim, "' != 'true'"])
    beside_sim = PythonExpression(["'", estimate, "' == 'true' and '", use_sim, "' == 'true'"])
    nodes.append(
        Node(package=PACKAGE, executable=ESTIMATOR_NODE, name=ESTIMATOR_NODE,
             namespace=namespace, parameters=parameters, output="screen",
             condition=IfCondition(on_arm)))
    nodes.append(
        Node(package=PACKAGE, executable=ESTIMATOR_NODE, name=ESTIMATOR_NODE,
             namespace=namespace, parameters=parameters, output="screen",
             remappings=[(topic, f"estimated/{topic}") for topic in ESTIMATOR_OUTPUTS],
             condition=IfCondition(beside_sim)))
    return LaunchDescription(arguments + nodes)
