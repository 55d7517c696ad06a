"""dynamics_node: τ of the generalized robotics equation (39) per joint-state sample.

.. code-block:: text

    M(q,Θ) q̈ + (C(q,q̇,Θ) + M(q,Θ̇) + H(q,Ψ)) q̇ + G(q,Θ) = τ + w − Jᵀ Q₀ Ψ̇       (39)

On every ``joint_states`` sample (matched by joint name) the node takes q, q̇ from it,
q̈ from the ``reference`` trajectory when one covers the sample's stamp and otherwise
by filtered differentiation of q̇, Θ, Θ̇, Ψ, Ψ̇ at the sample's stamp from the stamped
``inertial_parameters_stamped`` / ``psi_stamped`` topics (a sample waits at most
``theta_window`` of joint-sample time for a Θ/Ψ at or after its stamp), else the latest
from the legacy unstamped topics (defaults: the URDF's Θ, zero rates, zero Ψ; the rules
are :mod:`robot_tv_dynamics.inputs`, shared with the other nodes), and publishes

- ``generalized_torques`` (sensor_msgs/JointState, effort = τ with w = 0, the input's
  stamp, q and q̇ echoed in model joint order);
- ``generalized_terms_stamped`` (sensor_msgs/JointState-shaped, ``<term>/<joint>``, the
  input's stamp: the addends of (39) M q̈, C q̇, M(Θ̇) q̇, H q̇, G, Jᵀ Q₀ Ψ̇, then τ);
- ``mass_matrix_bounds_stamped`` (the same shape, ``<bound>/<method>``, the input's
  stamp): exact λ_min/λ_max of
  M(q, Θ), the Theorem 2/3 bounds at the current q, α₁/α₂ (eq. 45/46) from the running
  inf/sup of the margins and the Jacobian extremes γ, δ computed once per URDF
  (cached on disk by URDF hash; ``sampled`` or ``certified``, said in the layout).
  From the cache they are there at start-up; otherwise the node starts without them
  and computes them in a background thread, answering joint_states meanwhile:
  the bounds are published once they are known, and the
  ``dynamics_node: bounds`` status on ``/diagnostics`` says ``pending`` until then;
- while ``legacy_theta_topics`` (deprecated): the same terms and bounds unstamped, as
  the Float64MultiArray ``generalized_terms`` (``term`` × ``joint``) and
  ``mass_matrix_bounds`` (``bound`` × ``method``).

The addends (the Christoffel C, M(q, Θ̇), H(q, Ψ)) are built only while someone
subscribes to them; otherwise τ comes from the recursive backend with the loads held.

This module only wires the parts (topics, timers, the per-sample path, URDF swaps); each
has its own module, tested without a node. Core (no rclpy):
:class:`~robot_tv_dynamics.evaluation.SampleTorques` (τ and the addends per sample),
:class:`~robot_tv_dynamics.bounds.RunningBounds` (μ/ν statistics, α₁/α₂, the bound
entries; γ, δ by :func:`~robot_tv_dynamics.bounds.startup_jacobian_extremes`),
:class:`~robot_tv_dynamics.observer.LiveObservers`,
:class:`~robot_tv_dynamics.inputs.ModelInputs`. ROS glue:
:mod:`~robot_tv_dynamics.ros.dynamics_parameters`,
:mod:`~robot_tv_dynamics.ros.inertial_inputs` (Θ/Ψ/payload/reference messages),
:mod:`~robot_tv_dynamics.ros.stamped_pairing` (samples waiting for their Θ/Ψ),
:mod:`~robot_tv_dynamics.ros.dynamics_outputs` (the per-sample topics),
:mod:`~robot_tv_dynamics.ros.contact_outputs` (the observers' topics),
:mod:`~robot_tv_dynamics.ros.trajectory_jobs` (planned trajectories, retiming).

Bad input never stops the node: it is rejected with a throttled log line and a
``dynamics_node: input`` status on ``/diagnostics``, and the last good state is kept.
Every topic and parameter: docs/ros_interface.md, "Parameters".
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import numpy as np
from sensor_msgs.msg import JointState
from trajectory_msgs.msg import JointTrajectory

from robot_tv_dynamics import bounds
from robot_tv_dynamics.bounds import BOUND_LABELS, UNAVAILABLE, extremes_summary
from robot_tv_dynamics.bounds.floor import WEIGHTED_REFERENCE, read_cached_lower_bound
from robot_tv_dynamics.bounds.live import LiveLowerBounds
from robot_tv_dynamics.evaluation import SampleTorques
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.friction import FrictionParameters, load_friction_file
from robot_tv_dynamics.inputs import InputRules, ModelInputs, TimelineRules
from robot_tv_dynamics.inputs.efforts import EffortMap
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.model.frames import input_frame
from robot_tv_dynamics.observer.live import NO_EFFORT
from robot_tv_dynamics.ros import input_guard, node_base, qos, robot_description
from robot_tv_dynamics.ros.cell_parameters import (
    EFFORT_NAMES,
    apply_groups,
    effort_map_of,
    unknown_joints_logger,
)
from robot_tv_dynamics.ros.contact_outputs import ContactOutputs
from robot_tv_dynamics.ros.conversions import JointStateReader, make_status
from robot_tv_dynamics.ros.dynamics_outputs import SUBSCRIBER_CHECK_PERIOD, SampleOutputs
from robot_tv_dynamics.ros.dynamics_parameters import PARAMETERS, DynamicsNodeConfig
from robot_tv_dynamics.ros.inertial_inputs import InertialInputs
from robot_tv_dynamics.ros.joint_state_cdr import JointStateSample, subscribe_joint_states
from robot_tv_dynamics.ros.stamped_pairing import CLOCK_READ_PERIOD, StampedPairing, StampReader
from robot_tv_dynamics.ros.trajectory_conversions import (
    evaluate_planned_trajectory,
    retime_planned_trajectory,
)
from robot_tv_dynamics.ros.trajectory_jobs import TrajectoryJobs, TrajectorySnapshot

__all__ = ["BOUND_LABELS", "CLOCK_READ_PERIOD", "NODE_NAME", "PARAMETERS",
           "SUBSCRIBER_CHECK_PERIOD", "UNAVAILABLE", "DynamicsNode", "DynamicsNodeConfig",
           "extremes_summary", "main"]

NODE_NAME = "dynamics_node"
#: How often the executor looks for Jacobian extremes computed in the background [s].
EXTREMES_POLL_PERIOD = 0.1


class DynamicsNode(node_base.ModelNode):
    """Generalized torques, terms and mass-matrix bounds per joint-state sample."""

    def __init__(self) -> None:
        """Parameters, the URDF, γ/δ (cache, else computed in the background), topics, timers.

        Raises:
            URDFError: no usable URDF (the node cannot start).
            rclpy.exceptions.ParameterException: a parameter of the wrong type or range.
        """
        super().__init__(NODE_NAME, PARAMETERS, DynamicsNodeConfig)

    # ------------------------------------------------------------------ start-up
    def _input_status_period(self) -> float:
        return self.config.diagnostics_period

    def _start(self, model: RobotModel) -> None:
        cfg = self.config
        self._inputs = ModelInputs(model, InputRules(
            acceleration_cutoff=cfg.acceleration_cutoff, theta_rate_cutoff=cfg.theta_rate_cutoff,
            max_gap=cfg.max_gap, rate_timeout=cfg.rate_timeout,
            timeline=TimelineRules(window=cfg.theta_window,
                                   history=max(2.0, 2.0 * cfg.theta_window))))
        #: joint samples waiting for the stamped Θ / Ψ that covers their stamp
        self._pairing = StampedPairing(
            cfg.theta_window, self.get_logger(), cfg.log_throttle, NODE_NAME)
        self._stamps = StampReader(lambda: self.get_clock().now().nanoseconds * 1e-9)
        self._answered = 0
        self._friction: FrictionParameters | None = None  # read after the Jacobian extremes
        # per-sample outputs as deep as the joint_states queue: a reader that lags behind
        # a burst still gets every answer
        sample_qos = qos.stream_qos(cfg.joint_states_depth, reliable=True)
        self._outputs = SampleOutputs(self, model.joint_names, sample_qos,
                                      legacy=cfg.legacy_theta_topics)
        #: γ, δ computed in the background (a cache miss): the model's generation they
        #: are for, the result (StartupExtremes or the exception), "" when none is pending
        self._extremes_generation = 0
        self._extremes_result: tuple[int, Any] | None = None
        self._extremes_pending = ""
        self._extremes_status = (0, "", "")  # level, message, origin
        self._extremes_timer: Any = None
        extremes = self._cached_extremes(model)
        self._set_model(model, extremes)
        if extremes is None:
            self._compute_extremes_later(model)
        self._inertial = InertialInputs(
            self._guard, self._inputs, model, self._bounds, self.get_logger(),
            release=self._release, clock=lambda: self.get_clock().now().nanoseconds * 1e-9,
            reference_tolerance=cfg.reference_tolerance)
        self._inertial.payload_frame = input_frame(model, cfg.payload_frame)
        self._bounds.update(self._inputs.theta)
        # Θ, Θ̇, Ψ, Ψ̇ keep as deep a queue as joint_states: the executor takes messages in
        # arrival order, so when it falls behind, a backlog of joint samples still meets
        # the Θ that arrived with them (a shallower Θ queue would drop those and pair old
        # samples with newer Θ for as long as the backlog lasts)
        stream = qos.stream_qos(cfg.joint_states_depth)
        self._joint_states_sub = subscribe_joint_states(
            self, "joint_states", self._on_joint_states,
            qos.stream_qos(cfg.joint_states_depth, cfg.joint_states_reliable),
            lambda reason: self._guard.reject("joint_states", reason))
        self._pairing.subscriptions = self._inertial.subscribe(self, stream, qos.RELIABLE_QOS)
        # MoveIt pipeline: a planned trajectory → its efforts + a verdict; payload-aware
        # retiming (TOPP-RA, up to a second): both off the hot path, one at a time
        jobs = self._trajectories = TrajectoryJobs(
            self._guard,
            self.create_publisher(JointTrajectory, "planned_trajectory_efforts",
                                  qos.RELIABLE_QOS),
            self.create_publisher(JointTrajectory, "retimed_trajectory", qos.RELIABLE_QOS),
            lambda: TrajectorySnapshot.take(self._model, self._inputs, self._guard.hardware_id),
            warn_ratio=cfg.effort_warn_ratio, effort_margin=cfg.retime_effort_margin,
            evaluate=evaluate_planned_trajectory, retime=retime_planned_trajectory,
            context_ok=self.context.ok)
        self._retimer, self._on_retime_request = jobs.retimer, jobs.on_retime_request
        self.create_subscription(JointTrajectory, "planned_trajectory",
                                 jobs.on_planned_trajectory, qos.RELIABLE_QOS)
        self.create_subscription(JointTrajectory, "retime_request", jobs.on_retime_request,
                                 qos.RELIABLE_QOS)
        self._friction = (load_friction_file(os.path.expanduser(cfg.friction_file),
                                             model.joint_names)
                          if cfg.friction_file.strip() else None)
        self._torques.friction = self._friction
        self._contacts = ContactOutputs(self, model, cfg, self._friction, sample_qos)
        self._diagnostics_timer = self.create_timer(cfg.diagnostics_period,
                                                    self._publish_diagnostics)
        filter_note = (
            f"q̈ by a critically damped 2nd-order filter, f_c = {cfg.acceleration_cutoff:g} Hz, "
            f"delay {1e3 * self._inputs.qdd_filter_delay:.1f} ms")
        self.get_logger().info(
            f"ready: {self._model.nv} joints, {self._model.n_bodies} bodies from "
            f"{self._description.source}; {filter_note}. Answering joint_states from now "
            "on; samples sent before a publisher has matched (DDS discovery, up to ~2 s) "
            "are lost, so publishers should wait for matching")
        self._joint_states_publishers = 0
        self.create_timer(0.5, self._log_matching)

    def _apply(self, config: DynamicsNodeConfig, names: frozenset[str]) -> str:
        """Take over the LIVE parameters (``publish_*``, ``bounds_decimation``: per sample)."""
        notes = []
        apply_groups(config, names, (
            (EFFORT_NAMES, self._set_efforts), (("payload_frame",), self._set_payload_frame),
            (("strict_joints",), self._set_strict_joints)))  # may refuse
        if "acceleration_cutoff" in names:
            self._inputs.set_acceleration_cutoff(config.acceleration_cutoff)  # may refuse
            notes.append(f"q̈ filter restarted, f_c = {config.acceleration_cutoff:g} Hz, "
                         f"delay {1e3 * self._inputs.qdd_filter_delay:.1f} ms")
        if "diagnostics_period" in names:
            self._diagnostics_timer = self._replace_timer(
                self._diagnostics_timer, config.diagnostics_period, self._publish_diagnostics)
            self._guard.period = config.diagnostics_period
        self._pairing.throttle = config.log_throttle
        return "; ".join(notes)

    def _log_matching(self) -> None:
        """Log when joint_states publishers match or all go (discovery made visible)."""
        count = self._joint_states_sub.get_publisher_count()
        if (count > 0) != (self._joint_states_publishers > 0):
            self.get_logger().info(
                f"joint_states: {count} publisher(s) matched, answering" if count else
                "joint_states: no publisher matched any more")
        self._joint_states_publishers = count

    def _set_model(self, model: RobotModel, extremes: bounds.JacobianExtremes | None) -> None:
        """(Re)build what depends on the model; the μ/ν statistics start again (empty)."""
        self._model = model
        self._joints = JointStateReader(
            model.joint_names, bool(self.get_parameter("strict_joints").value),
            ignored=model.locked_joints, on_unknown=unknown_joints_logger(self.get_logger()))
        self._outputs.set_joints(model.joint_names)
        self._torques = SampleTorques(model, self._friction)
        values = {name: str(self.get_parameter(name).value) for name in EFFORT_NAMES}
        #: τ from the published efforts; None: the effort parameters do not fit the model
        self._efforts: EffortMap | None = None
        try:
            self._efforts = effort_map_of(values, model.joint_names)
        except RobotTvDynamicsError as error:
            if not hasattr(self, "_contacts"):
                raise  # start-up: the node cannot read efforts as configured
            self._guard.reject("effort parameters", f"{error}: efforts are not used until "
                               "they are set for this model")
        self._bounds = bounds.RunningBounds(model.n_bodies, extremes, self._live_bounds(
            model, extremes))

    def _set_efforts(self, values: dict[str, Any]) -> None:
        """New effort parameters, from the next sample on (raises to refuse them)."""
        self._efforts = effort_map_of(values, self._model.joint_names)
        self.get_logger().info(f"efforts now {self._efforts.describe()}")

    def _set_strict_joints(self, values: dict[str, Any]) -> None:
        self._joints.strict = bool(values["strict_joints"])

    def _set_payload_frame(self, values: dict[str, Any]) -> None:
        """The link of payloads without frame_id from now on (raises to refuse it)."""
        self._inertial.payload_frame = input_frame(self._model, str(values["payload_frame"]))
        self.get_logger().info(
            f"payload messages without frame_id now apply to {self._inertial.payload_frame}")

    def _live_bounds(self, model: RobotModel,
                     extremes: bounds.JacobianExtremes | None) -> LiveLowerBounds:
        """The weighted α₁ʷ per Θ: γ's lower end, and the cached weighted reference if any."""
        gamma = None if extremes is None else extremes.inf_lambda_min_JtJ_bracket[0]
        reference = None
        directory = bounds.resolve_cache_dir(self.config.cache_dir)
        if directory is not None:
            reference, problem = read_cached_lower_bound(model, directory, WEIGHTED_REFERENCE)
            if problem:
                self.get_logger().warning(problem)
        return LiveLowerBounds(model, gamma=gamma, reference=reference)

    def _extremes_settings(self) -> dict[str, Any]:
        cfg = self.config
        return {"samples": cfg.jacobian_samples, "time_limit": cfg.bounds_time_limit}

    def _cached_extremes(self, model: RobotModel) -> bounds.JacobianExtremes | None:
        """γ, δ from the disk cache (milliseconds), or None when they are not cached."""
        cfg, log = self.config, self.get_logger()
        directory = bounds.resolve_cache_dir(cfg.cache_dir)
        found, note = bounds.cached_startup_extremes(
            model, certified=cfg.certified_bounds, settings=self._extremes_settings(),
            cache_dir="" if directory is None else str(directory))
        if note:
            log.warning(note)
        if found is None:
            return None
        self._extremes_status = (0, f"Jacobian extremes from the cache ({found.extremes.method})",
                                 found.origin)
        log.info(f"Jacobian extremes ({found.origin} in {found.seconds:.2f} s): "
                 + extremes_summary(found.extremes))
        return found.extremes

    def _compute_extremes_later(self, model: RobotModel) -> None:
        """Compute γ, δ in a background thread; :meth:`_take_extremes` takes them over.

        Until then ``mass_matrix_bounds`` is not published and the bounds status says
        pending. The thread is a daemon: a stop does not wait for it (the search has no
        cancel; it ends within ``bounds_time_limit`` anyway).
        """
        cfg = self.config
        method = bounds.CERTIFIED if cfg.certified_bounds else bounds.SAMPLED
        directory = bounds.resolve_cache_dir(cfg.cache_dir)
        cache = "" if directory is None else str(directory)
        generation, settings = self._extremes_generation, self._extremes_settings()
        self._extremes_pending = method
        self._extremes_status = (
            0, f"pending: computing the Jacobian extremes ({method}, up to "
            f"{cfg.bounds_time_limit:g} s); mass_matrix_bounds is published once they are "
            "known", "")
        self.get_logger().info(
            f"computing the Jacobian extremes ({method}, up to {cfg.bounds_time_limit:g} s) "
            "in the background: mass_matrix_bounds is published once they are known")

        def compute() -> None:
            result: Any
            try:
                result = bounds.startup_jacobian_extremes(
                    model, certified=cfg.certified_bounds, cache_dir=cache, settings=settings)
            except Exception as error:  # the torques do not need γ, δ: keep running
                result = error
            self._extremes_result = (generation, result)  # one assignment: atomic

        # the executor's thread takes the result over (a timer: the node's own callbacks
        # never run concurrently with it); cancelled once it has
        if self._extremes_timer is None:
            self._extremes_timer = self.create_timer(EXTREMES_POLL_PERIOD, self._take_extremes)
        else:
            self._extremes_timer.reset()
        threading.Thread(target=compute, name="dynamics_node Jacobian extremes",
                         daemon=True).start()

    def _take_extremes(self) -> None:
        """The executor's side of :meth:`_compute_extremes_later`: use γ, δ from now on."""
        result = self._extremes_result
        if result is None:
            return  # still computing
        self._extremes_result = None
        if result[0] != self._extremes_generation:
            return  # a URDF swap with other kinematics came first: computed for the old one
        self._extremes_timer.cancel()
        self._extremes_pending = ""
        log = self.get_logger()
        found = result[1]
        if isinstance(found, BaseException):
            self._extremes_status = (2, f"Jacobian extremes unavailable ({type(found).__name__}: "
                                     f"{found}); alpha1, alpha2, gamma, delta are NaN", "")
            log.error(f"Jacobian extremes unavailable ({type(found).__name__}: {found}); "
                      "mass_matrix_bounds carries NaN for alpha1, alpha2, gamma, delta")
        else:
            self._log_extremes(found)
            self._extremes_status = (
                0, f"Jacobian extremes computed in {found.seconds:.2f} s "
                f"({found.extremes.method})", found.origin)
            self._bounds.set_extremes(found.extremes,
                                      self._live_bounds(self._model, found.extremes))
        self._publish_diagnostics()

    def _log_extremes(self, found: Any) -> None:
        """Log where γ, δ came from (cache or search), how long it took and their values."""
        log = self.get_logger()
        if found.cache_note:
            log.warning(found.cache_note)
        if found.cache_error:
            log.warning(f"not cached: {found.cache_error}")
        log.info(f"Jacobian extremes ({found.origin} in {found.seconds:.2f} s): "
                 + extremes_summary(found.extremes))

    def _bounds_status(self) -> Any:
        """The ``dynamics_node: bounds`` DiagnosticStatus: γ, δ known, pending or unavailable."""
        level, message, origin = self._extremes_status
        extremes = self._bounds.extremes
        values: list[tuple[str, object]] = [("method", self._extremes_pending
                                             or self._bounds.method)]
        if origin:
            values.append(("origin", origin))
        if extremes is not None:
            values += [("gamma", extremes.inf_lambda_min_JtJ_bracket[0]),
                       ("delta", extremes.sup_sigma_max_J_sq_bracket[1])]
        return make_status(f"{NODE_NAME}: bounds", level, message, self._guard.hardware_id,
                           values)

    def _jacobian_extremes(self, model: RobotModel) -> bounds.JacobianExtremes | None:
        """γ, δ once per model (disk cache, else computed and stored); None if that fails."""
        cfg, log = self.config, self.get_logger()
        directory = bounds.resolve_cache_dir(cfg.cache_dir)
        cache = "" if directory is None else str(directory)
        try:
            found = bounds.startup_jacobian_extremes(
                model, certified=cfg.certified_bounds, cache_dir=cache,
                settings={"samples": cfg.jacobian_samples, "time_limit": cfg.bounds_time_limit},
                on_compute=lambda method: log.info(
                    f"computing the Jacobian extremes ({method}, up to "
                    f"{cfg.bounds_time_limit:g} s)"))
            self._log_extremes(found)
            return found.extremes
        except Exception as error:  # the torques do not need γ, δ: keep running
            log.error(f"Jacobian extremes unavailable ({type(error).__name__}: {error}); "
                      "mass_matrix_bounds carries NaN for alpha1, alpha2, gamma, delta")
            return None

    def _on_urdf_swap(self, model: RobotModel) -> None:
        self._release(flush=True)  # waiting samples are answered with the old model
        keep_extremes = robot_description.same_kinematics(self._model, model)
        for _link, reason in self._inputs.swap_model(model):
            self._guard.reject("payload", f"dropped after the URDF swap: {reason}")
        extremes = self._bounds.extremes
        if not keep_extremes:
            self.get_logger().warning(
                "the new URDF changes the kinematics: recomputing the Jacobian extremes "
                "(the node does not answer meanwhile)")
            self._extremes_generation += 1  # a pending background result is for the old one
            self._extremes_pending = ""
            if self._extremes_timer is not None:
                self._extremes_timer.cancel()
            extremes = self._jacobian_extremes(model)
            self._extremes_status = (
                (0, f"Jacobian extremes recomputed for the new URDF ({extremes.method})",
                 "computed") if extremes is not None else
                (2, "Jacobian extremes unavailable for the new URDF; alpha1, alpha2, gamma, "
                 "delta are NaN", ""))
        self._guard.hardware_id = robot_description.robot_name(model)
        self._set_model(model, extremes)
        self._inertial.set_model(model, self._bounds)
        try:
            self._inertial.payload_frame = input_frame(
                model, str(self.get_parameter("payload_frame").value))
        except RobotTvDynamicsError as error:
            self._inertial.payload_frame = None
            self._guard.reject("payload_frame", f"{error}: payloads need a frame_id")
        self._bounds.update(self._inputs.theta)

    def destroy_node(self) -> None:
        """Stop the planned-trajectory and retiming threads (waiting jobs dropped), destroy."""
        jobs = getattr(self, "_trajectories", None)
        if jobs is not None:
            jobs.stop()
        super().destroy_node()

    # ------------------------------------------------------------------ per sample
    @input_guard.guarded("joint_states")
    def _on_joint_states(self, msg: JointState | JointStateSample) -> None:
        # the stamp is checked on arrival; the sample then waits (at most theta_window of
        # joint-sample time) for a stamped Θ / Ψ at or after its stamp
        try:
            t = self._stamps.read(msg.header.stamp, time.monotonic())
            self._inputs.check_stamp(t)
            self._pairing.push(t, msg)
        except RobotTvDynamicsError as error:
            self._guard.reject("joint_states", error)
            return
        self._pairing.release(self._inputs, self._answer)

    def _release(self, flush: bool = False) -> None:
        """Answer every waiting joint sample whose stamped Θ / Ψ is there (or too late)."""
        self._pairing.release(self._inputs, self._answer, flush)

    def _answer(self, msg: JointState | JointStateSample, t: float) -> None:
        """τ, terms, bounds and the observers for one joint sample whose stamp passed.

        Validate before mutate: the sample is checked and τ computed inside one
        transaction; a rejected sample leaves the filters and stamps as they were.
        """
        cfg = self.config
        answered = self._answered + 1
        # terms and bounds are computed only for a sample they are published for (someone
        # subscribes); τ alone comes from the recursive backend with the loads held
        now = time.monotonic()
        terms_wanted, bounds_wanted = self._outputs.wanted(now)
        publish_terms = cfg.publish_terms and terms_wanted
        publish_bounds = (cfg.publish_bounds and answered % cfg.bounds_decimation == 0
                          and bounds_wanted and not self._extremes_pending)
        terms = kin = None
        try:
            self._inputs.check_stamp(t)
            q, qd = self._joints.read(msg)
            with self._inputs.transaction():
                state = self._inputs.sample(t, q, qd, now)
                if publish_terms or publish_bounds:
                    kin, terms, tau = self._torques.terms(state)
                else:
                    tau = self._torques.torque(state)
                if not np.isfinite(tau).all():
                    raise InvalidInputError(
                        "joint_states", "τ of eq. (39) is not finite for this sample")
        except RobotTvDynamicsError as error:
            self._guard.reject("joint_states", error)
            return
        no_effort = NO_EFFORT
        try:
            effort = self._joints.read_effort(msg)
            if effort is not None:
                if self._efforts is None:
                    raise InvalidInputError("effort parameters", "do not fit the model")
                effort = self._efforts.torque(effort)
        except RobotTvDynamicsError as error:  # τ is answered; the observers skip it
            effort, no_effort = None, f"joint_states effort not used: {error}"
        outputs = self._outputs
        outputs.publish_torques(msg.header.stamp, msg.header.frame_id, q, qd, tau)
        self._answered = answered
        if terms is not None:
            stamp, frame = msg.header.stamp, msg.header.frame_id
            if publish_terms:
                outputs.publish_terms(stamp, frame, self._torques.term_rows(terms))
            if publish_bounds:
                outputs.publish_bounds(stamp, frame, self._bounds.values(
                    kin.stacked_jacobian, terms.mass_matrix, terms.mass_rate_matrix,
                    state.z_rate_norm), self._bounds.method)
        self._contacts.on_sample(msg, effort, state, no_effort)
        self._guard.accept("joint_states")

    def _publish_diagnostics(self) -> None:
        self._release()  # no joint sample came: Θ/Ψ may have covered the waiting ones
        extra = [self._bounds_status(), *self._contacts.statuses(self._guard.hardware_id)]
        if len(self._inputs.theta_series) or len(self._inputs.psi_series):
            extra.append(self._pairing.status(self._guard.hardware_id))
        self._guard.publish(extra=extra)


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C / SIGTERM; exit code 1 if it cannot start."""
    return node_base.run_node(DynamicsNode, NODE_NAME, args)


if __name__ == "__main__":
    raise SystemExit(main())
