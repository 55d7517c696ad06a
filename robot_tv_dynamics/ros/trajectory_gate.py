"""trajectory_gate: a payload-aware FollowJointTrajectory action in front of the arm's controller.

MoveIt (moveit_simple_controller_manager) executes a trajectory by sending it to a
controller's ``control_msgs/action/FollowJointTrajectory``. Point its controller's
``action_ns`` at this node's action (``action_name``, default
``~/follow_joint_trajectory``) and the node forwards every goal to the real controller's
action (``controller_action``), after :func:`robot_tv_dynamics.retiming.gate.gate_trajectory`
has checked it against the payload the arm carries now:

- within the limits: forwarded unchanged (the goal message as it came);
- over an effort, velocity or acceleration limit: retimed along the same path (``retiming``:
  uniform, the exact smallest slowdown, or time-optimal), the goal's tolerances kept;
- no timing keeps the limits (a payload the arm cannot hold on this path): aborted with
  ``error_code = INVALID_GOAL`` and the reason in ``error_string``; nothing is sent.

Feedback and the result come back from the controller as they are; a cancel is passed
on to the controller's goal; a new goal preempts the running one wherever the controller
does (joint_trajectory_controller: the newest goal replaces the running one, which then
ends with the controller's result). Each decision is a log line and the
``trajectory_gate: goals`` status on ``/diagnostics`` (OK forwarded, WARN retimed, ERROR
refused).

The payload: the ``payload_*`` parameters at start-up; a ``payload`` message
(geometry_msgs/InertiaStamped, latched, frame_id = the link) replaces it, as on
dynamics_node (that link's URDF inertia is replaced); setting the parameters at run
time replaces it again. Every other parameter is read at start-up only (a change at run
time is refused with the reason).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from control_msgs.action import FollowJointTrajectory
from diagnostic_msgs.msg import DiagnosticArray
from geometry_msgs.msg import InertiaStamped
from rclpy.action import ActionClient, ActionServer, CancelResponse, GoalResponse
from rclpy.action.server import ServerGoalHandle

from robot_tv_dynamics.evaluation import Trajectory
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.inertia import phi_from_mass_com_inertia
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.retiming.gate import FORWARD, REFUSE, GateDecision, GateOptions
from robot_tv_dynamics.retiming.gate import gate_trajectory as decide
from robot_tv_dynamics.ros import input_guard, node_base, parameters, qos
from robot_tv_dynamics.ros.conversions import inertia_stamped_to_phi, make_status
from robot_tv_dynamics.ros.parameters import LIVE, START_UP, ParameterSpec
from robot_tv_dynamics.ros.trajectory_conversions import trajectory_from_msg, trajectory_to_msg

NODE_NAME = "trajectory_gate"
STATUS_NAME = "trajectory_gate: goals"
#: The link the payload parameters refer to when ``payload_link`` is empty, by preference.
FLANGE_LINKS = ("tool0", "flange", "panda_link8", "fr3_link8")
#: Status level of each decision (OK, WARN, ERROR).
LEVELS = {"forward": 0, "retime": 1, "refuse": 2}
Result = FollowJointTrajectory.Result

PARAMETERS = parameters.URDF_PARAMETERS + (
    ParameterSpec("action_name", "~/follow_joint_trajectory",
                  "the FollowJointTrajectory action this node serves (MoveIt's controller "
                  "action_ns points here)",
                  runtime=START_UP),
    ParameterSpec("controller_action", "joint_trajectory_controller/follow_joint_trajectory",
                  "the arm controller's FollowJointTrajectory action goals are forwarded to",
                  runtime=START_UP),
    ParameterSpec("controller_timeout", 5.0,
                  "how long a goal waits for the controller's action server", "s", 0.0, 3600.0,
                  runtime=START_UP),
    ParameterSpec("payload_link", "",
                  "URDF link of the payload parameters; empty: the flange (tool0, flange, "
                  "panda_link8 or fr3_link8, the first the URDF has)",
                  runtime=LIVE),
    ParameterSpec("payload_mass", 0.0, "payload mass (0: none until a payload message)", "kg",
                  0.0, 1000.0,
                  runtime=LIVE),
    ParameterSpec("payload_com_x", 0.0, "payload centre of mass, x in the link frame", "m",
                  -10.0, 10.0,
                  runtime=LIVE),
    ParameterSpec("payload_com_y", 0.0, "payload centre of mass, y in the link frame", "m",
                  -10.0, 10.0,
                  runtime=LIVE),
    ParameterSpec("payload_com_z", 0.0, "payload centre of mass, z in the link frame", "m",
                  -10.0, 10.0,
                  runtime=LIVE),
    ParameterSpec("effort_margin", 1.0,
                  "a goal is forwarded or retimed so that every joint's effort stays within this x "
                  "its URDF effort limit",
                  "", 0.01, 1.0,
                  runtime=LIVE),
    ParameterSpec("velocity_scale", 1.0,
                  "joint speeds stay within this x the URDF velocity limits (MoveIt's "
                  "max_velocity_scaling_factor keeps a retimed motion no faster than MoveIt "
                  "would move it)", "", 0.001, 1.0,
                  runtime=LIVE),
    ParameterSpec("acceleration_limit", 0.0, "acceleration limit of every joint; 0: none",
                  "rad/s^2", 0.0, 1e4,
                  runtime=LIVE),
    ParameterSpec("retiming", "uniform",
                  "how a goal over the limits is retimed: uniform (slowed down by the exact "
                  "smallest factor: the same motion, never faster than planned) or "
                  "time-optimal (TOPP-RA along the path: as fast as the limits allow)",
                  runtime=LIVE),
    ParameterSpec("gridpoints", 60, "TOPP-RA grid intervals of a time-optimal retiming "
                  "(fewer: faster)", "", 10, 2000,
                  runtime=LIVE),
    ParameterSpec("verify_playback", True,
                  "hold what the controller plays between a retimed goal's points to the "
                  "limits, not only the points (the quintic overshoots a time-optimal law's "
                  "acceleration jumps by up to ~10 %); false: faster",
                  runtime=LIVE),
)


@dataclass(frozen=True)
class GateConfig(parameters.UrdfConfig):
    """The gate's parameters (see ``PARAMETERS`` for meaning and units)."""

    action_name: str = "~/follow_joint_trajectory"
    controller_action: str = "joint_trajectory_controller/follow_joint_trajectory"
    controller_timeout: float = 5.0
    payload_link: str = ""
    payload_mass: float = 0.0
    payload_com_x: float = 0.0
    payload_com_y: float = 0.0
    payload_com_z: float = 0.0
    effort_margin: float = 1.0
    velocity_scale: float = 1.0
    acceleration_limit: float = 0.0
    retiming: str = "uniform"
    gridpoints: int = 60
    verify_playback: bool = True
    #: not a parameter: goals are coroutines awaiting the controller's futures
    executor: str = "single_threaded"

    def options(self) -> GateOptions:
        """The limits and retiming budget the gate decides with."""
        return GateOptions(self.effort_margin, self.velocity_scale,
                           self.acceleration_limit or None, int(self.gridpoints),
                           verify_playback=bool(self.verify_playback), method=self.retiming)


def parameter_payload(model: RobotModel, cfg: GateConfig) -> tuple[str, np.ndarray]:
    """(link, Φ about the link frame) of the ``payload_*`` parameters.

    Raises:
        UnknownNameError: ``payload_link`` is not in the URDF.
        InvalidInputError: it is empty and the URDF has none of :data:`FLANGE_LINKS`.
    """
    link = cfg.payload_link.strip()
    if not link:
        found = [name for name in FLANGE_LINKS if name in model.link_names]
        if not found:
            raise InvalidInputError("payload_link", f"is empty and the URDF has none of "
                                    f"{list(FLANGE_LINKS)}: name the payload's link")
        link = found[0]
    model.link_attachment(link)
    com = np.array([cfg.payload_com_x, cfg.payload_com_y, cfg.payload_com_z])
    return link, phi_from_mass_com_inertia(cfg.payload_mass, com, np.zeros((3, 3)))


class TrajectoryGate(node_base.ModelNode):
    """The gate (see the module docstring)."""

    def __init__(self) -> None:
        """Declare parameters, load the URDF, serve the action, connect to the controller.

        Raises:
            RobotTvDynamicsError: a bad URDF or payload parameter.
        """
        super().__init__(NODE_NAME, PARAMETERS, GateConfig)

    def _input_status_period(self) -> float:
        return 5.0

    def _start(self, model: RobotModel) -> None:
        cfg: GateConfig = self.config
        self.model = model
        self._payload = parameter_payload(model, cfg)
        self._options = cfg.options()
        self._last: GateDecision | None = None
        self._counts = {"forward": 0, "retime": 0, "refuse": 0}
        self._downstream: dict[bytes, Any] = {}  # our goal id → the controller's goal handle
        self._status_pub = self._diagnostics_pub
        self.create_subscription(InertiaStamped, "payload", self._on_payload,
                                 qos.ROBOT_DESCRIPTION_QOS)
        self._client = ActionClient(self, FollowJointTrajectory, cfg.controller_action)
        self._server = ActionServer(
            self, FollowJointTrajectory, cfg.action_name, self._execute,
            goal_callback=lambda goal: GoalResponse.ACCEPT,
            cancel_callback=self._on_cancel)
        self.create_timer(1.0, self._publish_diagnostics)
        self._warm_up()
        link, phi = self._payload
        self.get_logger().info(
            f"ready: serving {cfg.action_name} in front of {cfg.controller_action}; payload "
            f"{phi[0]:g} kg on {link}")

    def _on_urdf_swap(self, model: RobotModel) -> None:
        self.model = model

    def _warm_up(self) -> None:
        """One retiming at start-up: TOPP-RA's first solve imports and compiles for seconds."""
        q = np.zeros((3, self.model.nv))
        q[1:, 0] = [0.05, 0.1]
        trajectory = Trajectory(tuple(self.model.joint_names), np.array([0.0, 0.01, 0.02]), q)
        try:
            decide(self.model, trajectory, self._theta(), self._options)
        except RobotTvDynamicsError:
            pass  # only the imports matter

    # ------------------------------------------------------------------ payload, parameters
    def _theta(self) -> np.ndarray:
        link, phi = self._payload
        return self.model.theta_with_link_inertia(self.model.theta_nominal, link, phi)

    @input_guard.guarded("payload")
    def _on_payload(self, msg: InertiaStamped) -> None:
        """A link's inertia (about its COM) replacing that link's URDF inertia from now on."""
        try:
            link, phi = inertia_stamped_to_phi(msg)
            self.model.link_attachment(link)
        except RobotTvDynamicsError as error:
            self._guard.reject("payload", error)
            return
        self._payload = (link, phi)
        self._guard.accept("payload")
        self.get_logger().info(f'payload on "{link}": {phi[0]:g} kg (from the payload topic)')

    def _apply(self, config: GateConfig, names: frozenset[str]) -> str:
        """Take over payload and limit changes (validated before anything changes)."""
        options = config.options()
        payload = parameter_payload(self.model, config)
        self._options = options
        if any(name.startswith("payload_") for name in names):
            self._payload = payload
            return f'payload on "{payload[0]}": {payload[1][0]:g} kg (from the parameters)'
        return ""

    # ------------------------------------------------------------------ goals
    def _on_cancel(self, goal_handle: ServerGoalHandle) -> CancelResponse:
        """Pass a cancel on to the controller's goal (accepted; the result says how it ended)."""
        downstream = self._downstream.get(bytes(goal_handle.goal_id.uuid))
        if downstream is not None:
            downstream.cancel_goal_async()
        return CancelResponse.ACCEPT

    async def _execute(self, goal_handle: ServerGoalHandle) -> Any:
        """Decide, then relay to the controller and back (a coroutine: it awaits the controller)."""
        goal = goal_handle.request
        try:
            trajectory = trajectory_from_msg(goal.trajectory, "goal.trajectory")
            decision = decide(self.model, trajectory, self._theta(), self._options)
        except RobotTvDynamicsError as error:
            decision = GateDecision(REFUSE, f"invalid goal: {error}", None, float("nan"),
                                    float("nan"), float("nan"), float("nan"), 0.0)
        self._report(decision)
        if decision.action == REFUSE:
            goal_handle.abort()
            return Result(error_code=Result.INVALID_GOAL, error_string=decision.reason)
        if decision.action != FORWARD and decision.trajectory is not None:
            goal.trajectory = trajectory_to_msg(decision.trajectory,
                                                frame_id=goal.trajectory.header.frame_id)
        if not self._client.wait_for_server(timeout_sec=self.config.controller_timeout):
            goal_handle.abort()
            return Result(error_code=Result.INVALID_GOAL, error_string=(
                f"the controller action {self.config.controller_action} is not available"))
        downstream = await self._client.send_goal_async(
            goal, feedback_callback=lambda msg: goal_handle.publish_feedback(msg.feedback))
        if not downstream.accepted:
            goal_handle.abort()
            return Result(error_code=Result.INVALID_GOAL,
                          error_string="the controller rejected the goal")
        key = bytes(goal_handle.goal_id.uuid)
        self._downstream[key] = downstream
        if goal_handle.is_cancel_requested:  # a cancel that came before the controller's goal
            downstream.cancel_goal_async()
        try:
            response = await downstream.get_result_async()
        finally:
            self._downstream.pop(key, None)
        _finish(goal_handle, response.status)
        return response.result

    def _report(self, decision: GateDecision) -> None:
        self._last = decision
        self._counts[decision.action] += 1
        if decision.action == REFUSE:  # rclpy: one severity per call site
            self.get_logger().error(decision.describe())
        else:
            self.get_logger().info(decision.describe())
        self._publish_diagnostics()

    def _publish_diagnostics(self) -> None:
        d = self._last
        values: list[tuple[str, object]] = [
            (name, self._counts[action]) for name, action in (
                ("forwarded", "forward"), ("retimed", "retime"), ("refused", "refuse"))]
        if d is None:
            status = make_status(STATUS_NAME, 0, "no goal yet", self._guard.hardware_id, values)
        else:
            values += [("action", d.action), ("peak_effort_ratio_before", d.peak_ratio_before),
                       ("peak_effort_ratio_after", d.peak_ratio_after),
                       ("duration_before", d.duration_before),
                       ("duration_after", d.duration_after), ("decision_time", d.elapsed)]
            status = make_status(STATUS_NAME, LEVELS[d.action], d.describe(),
                                 self._guard.hardware_id, values)
        array = DiagnosticArray(status=[status])
        array.header.stamp = self.get_clock().now().to_msg()
        self._status_pub.publish(array)


def _finish(goal_handle: ServerGoalHandle, status: int) -> None:
    """End our goal the way the controller's ended (succeeded, canceled or aborted)."""
    from action_msgs.msg import GoalStatus

    if status == GoalStatus.STATUS_SUCCEEDED:
        goal_handle.succeed()
    elif status == GoalStatus.STATUS_CANCELED and goal_handle.is_cancel_requested:
        goal_handle.canceled()
    else:
        goal_handle.abort()


def main(args: list[str] | None = None) -> int:
    """Run the gate until shut down."""
    return node_base.run_node(TrajectoryGate, NODE_NAME, args)


if __name__ == "__main__":
    raise SystemExit(main())
