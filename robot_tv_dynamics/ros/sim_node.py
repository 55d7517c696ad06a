"""sim_node: a simulated arm integrating eq. (39) under a payload-loading process.

The node is a thin adapter around :mod:`robot_tv_dynamics.simulation`: a stepping
thread advances the plant at ``rate`` (1 kHz, RK4) paced to the wall clock by
``real_time_factor``, and every ``1/publish_rate`` s publishes

- ``joint_states`` (sensor_msgs/JointState; effort = the applied joint torque τ);
- ``inertial_parameters_stamped`` (true Θ and Θ̇ in one sensor_msgs/JointState-shaped
  message, :mod:`~robot_tv_dynamics.inputs.body_vectors`) and ``psi_stamped`` (Ψ, Ψ̇),
  stamped with the sample's time, the same stamp as its ``joint_states``;
- while ``legacy_theta_topics`` (deprecated, default true for this release):
  ``inertial_parameters`` / ``inertial_parameter_rates`` (Θ, Θ̇; Float64MultiArray
  ``body`` × ``phi``), ``psi`` / ``psi_rates`` (Ψ, Ψ̇; ``body`` × ``psi``), unstamped;
- ``joint_accelerations`` (trajectory_msgs/JointTrajectory, one point at the sample's
  stamp with the exact q̈): remap a dynamics_node's ``reference`` to it and the node
  uses the simulator's q̈ instead of differentiating q̇;
- with a law of :mod:`robot_tv_dynamics.control` (``controller: slotine-li``,
  ``natural``, ``projected`` or ``computed-torque``, on the whole arm, the gains of
  ``robot-tv-dynamics adapt``): its Θ̂ on ``estimates/controller/inertial_parameters_stamped``
  (and, with ``legacy_theta_topics``, ``estimates/controller/inertial_parameters``: what
  a monitor_node remapped to it watches), stamped with the sample the law has seen last,
  and ``reference_joint_states`` (the desired q_d, q̇_d);
- with the built-in adaptive controller (``controller: adaptive``):
  ``estimates/classical/inertial_parameters``, ``estimates/projected/inertial_parameters``
  and ``estimates/geometric/inertial_parameters`` (Θ̂ with the payload body's row from
  each estimator; legacy, with ``legacy_theta_topics``) and the same under
  ``estimates/<name>/inertial_parameters_stamped`` (stamped with the joint sample the
  estimate has seen last), ``reference_joint_states``
  (the tracked q_r, q̇_r);
- ``robot_description`` (std_msgs/String, transient local) when the URDF came from a
  file or the built-in Panda, and ``simulation_info`` (std_msgs/String, transient
  local, JSON: stamp epoch, rate, process, payload body, the collisions applied, ε,
  β, ...).

With ``controller: trajectory`` the arm is a ros2_control arm behind a
joint_trajectory_controller: ``~/follow_joint_trajectory`` and ``~/joint_trajectory``
(:mod:`~robot_tv_dynamics.ros.trajectory_server`) take trajectories, which the simulated
controller tracks by computed torque on the true loads
(:mod:`~robot_tv_dynamics.simulation.trajectory_follower`), starting from
``initial_positions``; joint_states effort is the torque applied, unclipped.

It subscribes ``effort_commands`` (std_msgs/Float64MultiArray, one value per joint in
URDF joint order, the ros2_control forward-command convention): with
``controller: none`` that is the applied torque (held until the next command); with
a controller it is added to the controller's torque.

Stamps: a sample at simulated time t is stamped ``epoch + t``; ``epoch`` is the node
clock when stepping starts (published in ``simulation_info``).

The Panda's fingers (two prismatic joints of 15 g) are held by the controller like any
other joint; without a controller they move freely (there are no joint limits in the
simulation).
"""

from __future__ import annotations

import json
import os
import tempfile
import threading
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from builtin_interfaces.msg import Duration
from diagnostic_msgs.msg import DiagnosticArray
from rclpy.node import Node
from rclpy.publisher import Publisher
from rclpy.qos import QoSProfile
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray, String
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint

from robot_tv_dynamics import limits
from robot_tv_dynamics.control.setups import (
    CONTROLLERS,
    adaptation_gains,
    initial_estimate,
    make_controller,
)
from robot_tv_dynamics.demo.scenario import SCENARIOS, scenario_file
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.loading import LoadingProcess, collision_as_dict, load_loading_process
from robot_tv_dynamics.model import RobotModel, parse_locked_joints
from robot_tv_dynamics.observer.wrench import ExternalWrench
from robot_tv_dynamics.paths import package_config_dir
from robot_tv_dynamics.ros import input_guard, node_base, parameters, qos, robot_description
from robot_tv_dynamics.ros.conversions import body_array, seconds_to_stamp, to_float_array
from robot_tv_dynamics.ros.joint_state_cdr import JointStateOutput
from robot_tv_dynamics.ros.parameters import LIVE, START_UP, ParameterSpec
from robot_tv_dynamics.ros.stamped_topics import BodyVectorOutput
from robot_tv_dynamics.ros.trajectory_server import TrajectoryServer
from robot_tv_dynamics.simulation import (
    ArmSimulator,
    ClosedLoop,
    ClosedLoopConfig,
    Loads,
    LoopSample,
    SimulationDivergedError,
    default_reference,
    demo_loop,
    example_robot_urdf,
)
from robot_tv_dynamics.simulation.loop import ControlLoop, ControlSample
from robot_tv_dynamics.simulation.trajectory_follower import TrajectoryFollower, start_pose

NODE_NAME = "sim_node"
#: the adaptive controller's estimators, each published under estimates/<name>/
ESTIMATE_NAMES = ("classical", "projected", "geometric")
#: the estimate name of a control law's Θ̂ (estimates/controller/...)
LAW_ESTIMATE = "controller"
#: the controller that plays FollowJointTrajectory goals (a joint_trajectory_controller)
TRAJECTORY = "trajectory"
#: the values of the controller parameter
CONTROLLER_CHOICES = ("adaptive", "none", TRAJECTORY, *CONTROLLERS)
#: a control law's initial estimate
INITIAL_ESTIMATES = ("known", "wrong")
#: pause after joint_states has its subscribers, for their other readers to match [s]
SETTLE = 0.5
#: the log lines that open and close the stepping (benchmarks time the run between them)
STEPPING, FINISHED = "stepping", "finished"
#: Why the wait before stepping is read-only.
WAIT_NOTE = "only used before stepping starts"

PARAMETERS = parameters.URDF_PARAMETERS + (
    ParameterSpec(
        "loading", "fill",
        "loading process: a YAML file (config/loading/*.yaml format), one of the built-in "
        "examples fill, drain, grasp, timeline, fill_collision, release, or none; a "
        "collision: block in the file is applied like the collision_* parameters (giving "
        "both is an error)",
        runtime=START_UP),
    ParameterSpec(
        "load_link", "",
        "URDF link the load is attached to (as robot-tv-dynamics demo --link); empty: the "
        "file's link when the URDF has it, else the chain's tool flange. A fill/drain "
        "container is turned so that its axis is vertical at the start pose",
        runtime=START_UP),
    ParameterSpec("rate", 1000.0, "integration (and controller) rate", "Hz", 100.0, 100000.0,
        runtime=START_UP),
    ParameterSpec("publish_rate", 100.0, "rate of every published topic", "Hz", 1.0, 1000.0,
        runtime=LIVE),
    ParameterSpec(
        "real_time_factor", 1.0,
        "simulated seconds per wall-clock second; 0 runs as fast as possible", "", 0.0, 1000.0,
        runtime=LIVE),
    ParameterSpec(
        "duration", 0.0,
        "stop (and exit) after this much simulated time; 0 runs until shut down", "s",
        0.0, 1e9,
        runtime=LIVE),
    ParameterSpec(
        "controller", "adaptive",
        "adaptive: computed torque on the projected payload estimate, with the classical, "
        "projected and geometric estimators; slotine-li, natural, projected or "
        "computed-torque: that law of robot_tv_dynamics.control on the whole arm (gains of "
        "robot-tv-dynamics adapt, torque clipped to the URDF effort limits), its estimate "
        "on estimates/controller/inertial_parameters(_stamped); none: the applied torque "
        "is effort_commands; trajectory: a joint_trajectory_controller (FollowJointTrajectory "
        "action ~/follow_joint_trajectory, topic ~/joint_trajectory) tracking by computed "
        "torque on the true loads",
        runtime=START_UP),
    ParameterSpec(
        "initial_positions", [],
        'with controller trajectory: the start pose, entries "joint=position" [rad or m]; '
        "joints left out start in the middle of their limits",
        runtime=START_UP, note="the start pose: read at start-up"),
    ParameterSpec(
        "initial_estimate", "known",
        "with a control law: its initial estimate, known (the URDF's Theta with the load "
        "at t = 0) or wrong (that Theta perturbed: masses and second moments +-50 %, COM "
        "+-5 cm, drawn with seed)",
        runtime=START_UP),
    ParameterSpec("seed", 0, "seed of the simulated torque-sensor noise", "", 0, 2**31 - 1,
        runtime=START_UP),
    ParameterSpec(
        "joint_states_delay", 0.002,
        "pause between publishing a tick's Θ, Θ̇, Ψ, Ψ̇, q̈ and its joint_states, so that a "
        "subscriber of the legacy unstamped topics has the tick's loads when the joint "
        "state arrives; only while legacy_theta_topics is true (the stamped topics are "
        "paired by stamp and need no pause)", "s", 0.0, 0.1,
        runtime=START_UP),
    ParameterSpec(
        "legacy_theta_topics", True,
        "also publish the unstamped Float64MultiArray inertial_parameters, "
        "inertial_parameter_rates, psi, psi_rates and estimates/<name>/inertial_parameters "
        "next to the stamped *_stamped topics. Deprecated: the legacy topics will be "
        "removed in the next release",
        runtime=START_UP, note=parameters.TOPICS_NOTE),
    ParameterSpec(
        "effort_output", "applied",
        "joint_states effort: applied (the torque applied to the plant) or measured (with "
        "the adaptive controller: the applied torque plus the simulated torque-sensor noise, "
        "what the estimators see; feed estimator_node with it)",
        runtime=START_UP),
    ParameterSpec(
        "wait_for_subscribers", 0,
        "before stepping, wait until joint_states has this many subscribers (then 0.5 s more, "
        "for their readers of the other topics to match)", "", 0, 1000,
        runtime=START_UP, note=WAIT_NOTE),
    ParameterSpec(
        "wait_timeout", 20.0, "longest wait for those subscribers", "s", 0.0, 3600.0,
        runtime=START_UP, note=WAIT_NOTE),
    ParameterSpec(
        "collision_link", "",
        "a simulated collision: an external force on this URDF link (empty: none); its "
        "joint torque acts on the arm but is not in the published efforts. A loading file "
        "with a collision: block and this set too is a start-up error",
        runtime=START_UP),
    ParameterSpec("collision_force_x", 0.0, "collision force, x in the base frame", "N",
                  -1e4, 1e4,
        runtime=START_UP),
    ParameterSpec("collision_force_y", 0.0, "collision force, y in the base frame", "N",
                  -1e4, 1e4,
        runtime=START_UP),
    ParameterSpec("collision_force_z", 0.0, "collision force, z in the base frame", "N",
                  -1e4, 1e4,
        runtime=START_UP),
    ParameterSpec("collision_start", 0.0, "simulated time the collision starts", "s",
                  0.0, 1e9,
        runtime=START_UP),
    ParameterSpec("collision_duration", 0.0, "how long the force acts (0: no collision)", "s",
                  0.0, 1e9,
        runtime=START_UP),
)


@dataclass(frozen=True)
class SimNodeConfig(parameters.UrdfConfig):
    """The sim node's parameters (see ``PARAMETERS`` for meaning and units)."""

    loading: str = "fill"
    load_link: str = ""
    rate: float = 1000.0
    publish_rate: float = 100.0
    real_time_factor: float = 1.0
    duration: float = 0.0
    controller: str = "adaptive"
    initial_positions: tuple[str, ...] = ()
    initial_estimate: str = "known"
    seed: int = 0
    joint_states_delay: float = 0.002
    legacy_theta_topics: bool = True
    effort_output: str = "applied"
    wait_for_subscribers: int = 0
    wait_timeout: float = 20.0
    collision_link: str = ""
    collision_force_x: float = 0.0
    collision_force_y: float = 0.0
    collision_force_z: float = 0.0
    collision_start: float = 0.0
    collision_duration: float = 0.0


def resolve_loading(name: str) -> LoadingProcess | None:
    """A loading process from a built-in name, a YAML path, or None for ``none``.

    Raises:
        InvalidInputError: an unknown name or a bad file.
    """
    name = name.strip()
    if name in ("", "none"):
        return None
    if name in SCENARIOS:
        return load_loading_process(package_config_dir() / "loading" / f"{name}.yaml")
    path = Path(name).expanduser()
    if not path.is_file():
        raise InvalidInputError(
            "loading", f'"{name}" is neither a file nor one of {list(SCENARIOS)} or "none"')
    return load_loading_process(path)


def _check_choices(cfg: SimNodeConfig) -> None:
    """The parameters that name a choice name a known one.

    Raises:
        InvalidInputError: an unknown controller, initial_estimate or effort_output.
    """
    if cfg.controller not in CONTROLLER_CHOICES:
        raise InvalidInputError(
            "controller", f'"{cfg.controller}" is not one of {", ".join(CONTROLLER_CHOICES)}')
    if cfg.initial_estimate not in INITIAL_ESTIMATES:
        raise InvalidInputError(
            "initial_estimate", f'"{cfg.initial_estimate}" is not known or wrong')
    if cfg.effort_output not in ("applied", "measured"):
        raise InvalidInputError(
            "effort_output", f'"{cfg.effort_output}" is not applied or measured')


class SimNode(Node):
    """The simulated arm (see the module docstring)."""

    def __init__(self) -> None:
        """Declare parameters, build the model and the loop, start the stepping thread.

        Raises:
            RobotTvDynamicsError: bad URDF, loading file or parameter.
        """
        super().__init__(NODE_NAME)
        values = parameters.declare_parameters(self, PARAMETERS)
        self.config: SimNodeConfig = parameters.config_from_parameters(SimNodeConfig, values)
        cfg = self.config
        _check_choices(cfg)
        latched = qos.ROBOT_DESCRIPTION_QOS  # reliable, transient local, depth 1
        xml = self._load_model(cfg, self.create_publisher(String, "robot_description", latched))
        self.process, scenario_collision = self._place_loading(cfg, xml)
        model = self.model
        self._build_plant(cfg, xml)
        self.follower: TrajectoryFollower | None = None
        wrench = self._collision(cfg, scenario_collision)
        if wrench is not None:
            self.plant.wrenches = (wrench,)
            model.link_attachment(wrench.link)  # unknown link: start-up error
        self._command = np.zeros(model.nv)
        effort = np.asarray(model.joint_limits.effort, dtype=np.float64)
        #: |command| accepted per joint: the URDF effort limit, else limits.EFFORT
        self._effort_bound = np.where(effort > 0.0, effort, limits.EFFORT)
        self._guard = input_guard.InputGuard(
            self, self.create_publisher(DiagnosticArray, "/diagnostics", qos.RELIABLE_QOS),
            robot_description.robot_name(model), cfg.log_throttle, 1.0, executable=NODE_NAME)
        self._lock = threading.Lock()
        self._latest = (self.plant.t, self.plant.q.copy(), self.plant.qd.copy())
        if cfg.controller == TRAJECTORY:
            self.follower = TrajectoryFollower(model, self.plant.q)
            TrajectoryServer(self, self.follower, self._lock, lambda: self._latest)
        self._make_outputs(cfg, latched)
        self.epoch = 0.0
        self.finished = threading.Event()
        self.error: BaseException | None = None
        self._stop = threading.Event()
        #: the set-parameters callback: publish_rate, real_time_factor and duration are read
        #: by the stepping loop at every step; the others are read-only
        self.runtime_parameters = parameters.RuntimeParameters(
            self, PARAMETERS, self._apply_parameters)
        self._thread = threading.Thread(target=self._run, name="sim_node stepping", daemon=True)
        self._thread.start()
        self.get_logger().info(
            f"ready: simulating {model.nv} joints at {1.0 / self.plant.dt:g} Hz, controller "
            f"{cfg.controller}, loading {cfg.loading or 'none'}; effort_commands accepted "
            "from now on")

    def _load_model(self, cfg: SimNodeConfig, description_pub: Publisher) -> str:
        """Build ``self.model`` from the parameters; return the URDF text.

        From ``robot_description``, else ``urdf_path`` (or the embedded Panda), whose
        text is then published on robot_description (latched).
        """
        locked = parse_locked_joints(cfg.locked_joints)
        if cfg.robot_description.strip():
            xml = cfg.robot_description
            self.model = RobotModel.from_urdf_string(xml, "parameter robot_description", locked)
            return xml
        path = cfg.urdf_path.strip() or str(example_robot_urdf())
        self.model = RobotModel.from_urdf(Path(path).expanduser(), locked)
        xml = Path(path).expanduser().read_text()
        description_pub.publish(String(data=xml))
        return xml

    def _build_plant(self, cfg: SimNodeConfig, xml: str) -> None:
        """``self.plant`` and what steps it: a control law, the demo's loop, or commands."""
        model = self.model
        self.loop: ClosedLoop | None = None
        self.law: ControlLoop | None = None
        if cfg.controller in CONTROLLERS:
            limits_ = model.joint_limits
            reference = default_reference(
                model.joint_names, np.asarray(limits_.lower), np.asarray(limits_.upper),
                np.asarray(limits_.prismatic))  # the demo's motion, as with adaptive
            theta_hat0 = initial_estimate(model, self.process,
                                          wrong=cfg.initial_estimate == "wrong", seed=cfg.seed)
            from robot_tv_dynamics.demo.scenario import tool_link

            gains = adaptation_gains(model, theta_hat0, reference, self.process,
                                     model.link_attachment(tool_link(xml)).body, rate=cfg.rate)
            self.law = ControlLoop(model, make_controller(cfg.controller, model, theta_hat0,
                                                          gains=gains),
                                   reference, self.process, rate=cfg.rate)
            self.plant: ArmSimulator = self.law.plant
            if cfg.effort_output == "measured":
                self.get_logger().warning(
                    f"effort_output measured: the {cfg.controller} law simulates no torque "
                    "sensor, joint_states carry the applied torque")
        elif cfg.controller == "adaptive":
            if self.process is None:
                raise InvalidInputError(
                    "controller", "adaptive needs a loading process (its link is the payload)")
            self.loop = demo_loop(model, self.process, seed=cfg.seed)
            if cfg.rate != self.loop.config.rate:
                self.loop = ClosedLoop(
                    model, self.process, self.loop.reference,
                    _with_rate(self.loop, cfg.rate))
            self.plant = self.loop.plant
        else:
            self.plant = ArmSimulator(model, self.process, rate=cfg.rate,
                                      q0=start_pose(model, cfg.initial_positions))

    def _make_outputs(self, cfg: SimNodeConfig, latched: QoSProfile) -> None:
        """The publishers, the effort_commands subscription and the serialized outputs."""
        model = self.model
        reliable = qos.RELIABLE_QOS
        topics: list[tuple[str, type]] = [
            ("joint_states", JointState), ("joint_accelerations", JointTrajectory),
            ("reference_joint_states", JointState),
            ("inertial_parameters_stamped", JointState), ("psi_stamped", JointState),
            *((f"estimates/{name}/inertial_parameters_stamped", JointState)
              for name in self._estimate_names())]
        if cfg.legacy_theta_topics:
            topics += [
                ("inertial_parameters", Float64MultiArray),
                ("inertial_parameter_rates", Float64MultiArray),
                ("psi", Float64MultiArray), ("psi_rates", Float64MultiArray),
                *((f"estimates/{name}/inertial_parameters", Float64MultiArray)
                  for name in self._estimate_names())]
        self._pubs = {name: self.create_publisher(kind, name, reliable)
                      for name, kind in topics}
        self._info_pub = self.create_publisher(String, "simulation_info", latched)
        self.create_subscription(
            Float64MultiArray, "effort_commands", self._on_effort, qos.stream_qos(10))
        # every JointState-shaped output with its names serialized once (a stamped Θ
        # has 10 N of them): the 50 Hz publishing stays a small share of the step budget
        pubs, bodies, joints = self._pubs, model.body_names, model.joint_names
        self._joint_out = JointStateOutput(pubs["joint_states"], joints)
        self._reference_out = JointStateOutput(pubs["reference_joint_states"], joints,
                                               filled=("position", "velocity"))
        self._theta_out = BodyVectorOutput(pubs["inertial_parameters_stamped"], bodies, "phi")
        self._psi_out = BodyVectorOutput(pubs["psi_stamped"], bodies, "psi")
        self._estimate_outs = {
            name: BodyVectorOutput(pubs[f"estimates/{name}/inertial_parameters_stamped"],
                                   bodies, "phi", rates=False)
            for name in self._estimate_names()}

    def _apply_parameters(self, config: SimNodeConfig, names: frozenset[str]) -> str:
        """Take over LIVE parameters (the stepping loop reads them from ``self.config``)."""
        if "log_throttle" in names:
            self._guard.throttle = config.log_throttle
        if "duration" in names and 0.0 < config.duration <= self.plant.t:
            return f"{self.plant.t:.3f} s are simulated already: stopping"
        return ""

    def _estimate_names(self) -> tuple[str, ...]:
        """The estimates published under estimates/<name>/."""
        return (LAW_ESTIMATE,) if self.law is not None else ESTIMATE_NAMES

    # ------------------------------------------------------------------ input
    def _place_loading(self, cfg: SimNodeConfig, xml: str
                       ) -> tuple[LoadingProcess | None, ExternalWrench | None]:
        """The loading process and the file's collision on the arm.

        The load on ``load_link`` (or its default), upright at the start; the collision
        on its link, or the tool flange when the URDF lacks it.
        """
        name = cfg.loading.strip()
        if name in ("", "none"):
            return None, None
        if name not in SCENARIOS and not Path(name).expanduser().is_file():
            return resolve_loading(name), None  # the error naming the choices
        out = Path(tempfile.gettempdir()) / f"robot_tv_dynamics_sim_{os.getpid()}"
        setup = scenario_file(name, cfg.load_link.strip(), out, self.model, xml,
                              max(cfg.duration, 10.0))
        self.get_logger().info(setup.describe())
        return load_loading_process(setup.path), setup.collision

    @staticmethod
    def _collision(cfg: SimNodeConfig, scenario: ExternalWrench | None
                   ) -> ExternalWrench | None:
        """The wrench of the ``collision_*`` parameters or of the loading file's block.

        Raises:
            InvalidInputError: both give one (which one was meant is not guessed).
        """
        link = cfg.collision_link.strip()
        from_parameters = bool(link) and cfg.collision_duration > 0.0
        if from_parameters and scenario is not None:
            raise InvalidInputError(
                "collision_link", f'"{link}" is set, but the loading file has a collision: '
                f"block too ({scenario.link}, from {scenario.t_start:g} s): remove one of them")
        if from_parameters:
            return ExternalWrench(
                link, (cfg.collision_force_x, cfg.collision_force_y, cfg.collision_force_z),
                cfg.collision_start, cfg.collision_start + cfg.collision_duration)
        return scenario

    @input_guard.guarded("effort_commands")
    def _on_effort(self, msg: Float64MultiArray) -> None:
        """One torque per joint (model order), added to the controller's (clipped) torque.

        Rejected (the last good command is kept, reason on ``/diagnostics``): the wrong
        size, NaN/Inf, or an entry beyond the joint's URDF effort limit (where the URDF
        gives none, beyond :data:`robot_tv_dynamics.limits.EFFORT`); a command the drive
        could not apply would only make the simulation diverge.
        """
        try:
            values = np.array(msg.data, dtype=np.float64)
            if values.shape != (self.model.nv,) or not np.all(np.isfinite(values)):
                raise InvalidInputError(
                    "effort_commands.data", f"need {self.model.nv} finite values in joint "
                    f"order {self.model.joint_names}, got {values.size}")
            beyond = np.flatnonzero(np.abs(values) > self._effort_bound)
            if beyond.size:
                j = int(beyond[0])
                raise InvalidInputError(
                    "effort_commands.data", f'{values[j]:.6g} for "{self.model.joint_names[j]}" '
                    f"is beyond its effort limit {self._effort_bound[j]:g}")
        except RobotTvDynamicsError as error:
            self._guard.reject("effort_commands", error)
            return
        self._guard.accept("effort_commands")
        with self._lock:
            self._command = values

    # ------------------------------------------------------------------ stepping
    def _wait_for_subscribers(self) -> None:
        cfg = self.config
        if cfg.wait_for_subscribers <= 0:
            return
        deadline = time.monotonic() + cfg.wait_timeout
        publisher = self._pubs["joint_states"]
        while (publisher.get_subscription_count() < cfg.wait_for_subscribers
               and time.monotonic() < deadline and not self._stop.is_set()):
            time.sleep(0.02)
        # the same subscribers' readers of the other topics (Θ, Ψ, q̈) are discovered
        # around the same time, not necessarily before: give them a moment to match
        self._stop.wait(min(SETTLE, max(0.0, deadline - time.monotonic())))

    def _info(self) -> dict[str, object]:
        process = self.process
        info: dict[str, object] = {
            "epoch": self.epoch, "rate": 1.0 / self.plant.dt,
            "publish_rate": self.config.publish_rate, "controller": self.config.controller,
            "joint_names": self.model.joint_names, "body_names": self.model.body_names,
            "urdf": self.model.source,
            "process": None if process is None else {
                "link": process.link, "duration": process.duration,
                "description": getattr(process, "describe", lambda: type(process).__name__)()},
            "payload_body": self.plant.load_body,
            "collisions": [collision_as_dict(w) | {"end": w.t_end} for w in self.plant.wrenches],
        }
        if self.law is not None:
            ctrl = self.law.controller
            info.update({"initial_estimate": self.config.initial_estimate,
                         "estimate_topic": f"estimates/{LAW_ESTIMATE}/inertial_parameters_stamped",
                         "gains": {k: np.asarray(getattr(ctrl, k)).tolist()
                                   for k in ("gamma", "lam", "kd", "kp")
                                   if hasattr(ctrl, k)}})
        if self.loop is not None:
            est = self.loop.config.estimator
            info.update({"epsilon_projection": est.epsilon, "beta_projection": est.beta,
                         "memory": est.memory,
                         "torque_noise_std": self.loop.config.torque_noise_std,
                         "estimator_rate": self.loop.config.rate
                         / self.loop.config.estimator_decimation})
        return info

    def _run(self) -> None:
        try:
            self._wait_for_subscribers()
            self.epoch = self.get_clock().now().nanoseconds * 1e-9
            self._info_pub.publish(String(data=json.dumps(self._info())))
            self.get_logger().info(f"{STEPPING}: simulated time 0 is {self.epoch:.6f} s")
            self._loop()
        except SimulationDivergedError as error:
            self.error = error
            self.get_logger().fatal(f"simulation stopped: {error}")
        except Exception as error:  # reported, then the node exits
            if self._stop.is_set() or not self.context.ok():
                return  # shutting down: a publish raced with the context going away
            self.error = error
            self.get_logger().fatal(f"simulation stopped: {type(error).__name__}: {error}")
        finally:
            self.finished.set()

    def _loop(self) -> None:
        start_wall = time.monotonic()
        step = 0
        last_log = start_wall
        # the pacing's anchor: simulated t0 at wall time wall0 (moved when the factor is set)
        t0, wall0, factor = 0.0, start_wall, self.config.real_time_factor
        while not self._stop.is_set():
            cfg = self.config  # publish_rate, real_time_factor, duration: set at runtime
            per_publish = max(1, int(round((1.0 / cfg.publish_rate) / self.plant.dt)))
            t = self.plant.t
            if cfg.duration > 0 and t >= cfg.duration - 0.5 * self.plant.dt:
                break
            if cfg.real_time_factor != factor:
                t0, wall0, factor = t, time.monotonic(), cfg.real_time_factor
            if factor > 0:
                ahead = (t - t0) / factor - (time.monotonic() - wall0)
                if ahead > 0.002:
                    time.sleep(ahead)
            with self._lock:
                command = self._command.copy()
            if self.law is not None:
                self.law.set_extra_torque(command)
                law_sample = self.law.step()
                q, qd, qdd, tau, loads = (law_sample.q, law_sample.qd, law_sample.qdd,
                                          law_sample.tau, law_sample.loads)
                sample: LoopSample | ControlSample | None = law_sample
            elif self.loop is not None:
                self.loop.set_extra_torque(command)
                sample = self.loop.step()
                q, qd, qdd, tau, loads = sample.q, sample.qd, sample.qdd, sample.tau, sample.loads
                if cfg.effort_output == "measured":
                    tau = sample.tau_measured
            else:
                q, qd = self.plant.q.copy(), self.plant.qd.copy()
                loads = self.plant.loads(t)
                if self.follower is not None:
                    with self._lock:
                        command = command + self.follower.torque(t, q, qd, loads)
                qdd = self.plant.step(command)
                tau, sample = command, None
                if self.follower is not None:
                    self._latest = (self.plant.t, self.plant.q.copy(), self.plant.qd.copy())
            if step % per_publish == 0:
                self._publish(t, q, qd, qdd, tau, loads, sample)
            step += 1
            now = time.monotonic()
            if now - last_log > 5.0:
                last_log = now
                self.get_logger().info(
                    f"t = {t:.1f} s simulated, real-time factor {t / (now - start_wall):.2f}")
        wall = time.monotonic() - start_wall
        self.get_logger().info(
            f"{FINISHED}: {self.plant.t:.3f} s simulated in {wall:.3f} s, "
            f"real-time factor {self.plant.t / wall if wall > 0 else float('nan'):.3f}")

    def _publish(self, t: float, q: Array, qd: Array, qdd: Array, tau: Array, loads: Loads,
                 sample: LoopSample | ControlSample | None) -> None:
        stamp = seconds_to_stamp(self.epoch + t)
        names = self.model.body_names
        pubs = self._pubs
        # Θ, Θ̇ and Ψ, Ψ̇ stamped with the sample's time: a subscriber pairs them with
        # this joint_states sample by stamp, whatever the delivery order
        self._theta_out.publish(stamp, loads.theta, loads.theta_dot)
        self._psi_out.publish(stamp, loads.psi, loads.psi_dot)
        legacy = self.config.legacy_theta_topics
        if legacy:
            pubs["inertial_parameters"].publish(body_array(loads.theta, names, "phi"))
            pubs["inertial_parameter_rates"].publish(
                body_array(loads.theta_dot, names, "phi"))
            pubs["psi"].publish(body_array(loads.psi, names, "psi"))
            pubs["psi_rates"].publish(body_array(loads.psi_dot, names, "psi"))
        trajectory = JointTrajectory(joint_names=list(self.model.joint_names))
        trajectory.header.stamp = stamp
        trajectory.points = [JointTrajectoryPoint(
            accelerations=to_float_array(qdd), time_from_start=Duration(sec=0, nanosec=0))]
        pubs["joint_accelerations"].publish(trajectory)
        if legacy and self.config.joint_states_delay > 0:  # stamped: paired, no pause
            time.sleep(self.config.joint_states_delay)
        self._joint_out.publish(stamp, "", q, qd, tau)
        if isinstance(sample, ControlSample):
            # the law's Θ̂ after this sample's step: it has seen this sample, its stamp
            self._estimate_outs[LAW_ESTIMATE].publish(stamp, sample.theta_hat)
            if legacy:
                pubs[f"estimates/{LAW_ESTIMATE}/inertial_parameters"].publish(
                    body_array(sample.theta_hat, names, "phi"))
            q_d, qd_d, _ = sample.reference
            self._reference_out.publish(stamp, "", q_d, qd_d)
        elif sample is not None and self.loop is not None:
            loop = self.loop
            for name, phi in zip(ESTIMATE_NAMES, (
                    sample.phi_classical, sample.phi_projected, sample.phi_geometric),
                    strict=True):
                theta_hat = loop.theta_hat(phi)
                # the estimate has seen the measurements up to this sample: its stamp
                self._estimate_outs[name].publish(stamp, theta_hat)
                if legacy:
                    pubs[f"estimates/{name}/inertial_parameters"].publish(
                        body_array(theta_hat, names, "phi"))
            q_r, qd_r, _ = sample.reference
            self._reference_out.publish(stamp, "", q_r, qd_r)

    def stop(self) -> None:
        """Stop the stepping thread (joined)."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5.0)

    def destroy_node(self) -> None:
        """Stop stepping, then destroy."""
        self.stop()
        super().destroy_node()


def _with_rate(loop: ClosedLoop, rate: float) -> ClosedLoopConfig:
    from dataclasses import replace

    return replace(loop.config, rate=rate)


def main(args: list[str] | None = None) -> int:
    """Run the node; with ``duration`` > 0 it exits once that much time is simulated."""
    return node_base.run_node(SimNode, NODE_NAME, args)


if __name__ == "__main__":
    raise SystemExit(main())
