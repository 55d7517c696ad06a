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
- ``generalized_terms`` (Float64MultiArray ``term`` × ``joint``: the addends of (39)
  M q̈, C q̇, M(Θ̇) q̇, H q̇, G, Jᵀ Q₀ Ψ̇, then τ);
- ``mass_matrix_bounds`` (Float64MultiArray, labelled entries): exact λ_min/λ_max of
  M(q, Θ), the Theorem 2/3 bounds at the current q, α₁/α₂ (eq. 45/46) from the running
  inf/sup of the margins and the Jacobian extremes γ, δ computed once at start-up
  (cached on disk by URDF hash; ``sampled`` or ``certified``, said in the layout).

The addends (the Christoffel C, M(q, Θ̇), H(q, Ψ)) are built only for a sample whose
terms or bounds are published, i.e. while someone subscribes to them; otherwise τ comes
from the recursive backend (:class:`robot_tv_dynamics.dynamics.RecursiveDynamics`, RNEA
with the Θ̇, Ψ, Ψ̇ terms as external wrenches) with the loads held until one changes.

Bad input never stops the node: it is rejected with a throttled log line and a
``dynamics_node: input`` status on ``/diagnostics``, and the last good state is kept.
Every topic and parameter: README.md, "ROS 2 interface".
"""

from __future__ import annotations

import copy
import math
import os
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from geometry_msgs.msg import InertiaStamped
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from trajectory_msgs.msg import JointTrajectory

from robot_tv_dynamics import bounds, dynamics, limits
from robot_tv_dynamics.consistency import ConsistencyTracker
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.friction import load_friction_file
from robot_tv_dynamics.inputs import (
    InputRules,
    ModelInputs,
    ModelState,
    PendingSamples,
    TimelineRules,
)
from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader
from robot_tv_dynamics.inputs.timeline import AHEAD, STALE, StampedSeries
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.ros import input_guard, node_base, parameters, qos, robot_description
from robot_tv_dynamics.ros.background import LatestJob
from robot_tv_dynamics.ros.contact_outputs import OBSERVER_MODELS, ContactOutputs
from robot_tv_dynamics.ros.conversions import (
    TERM_LABELS,
    BodyArrayReader,
    JointStateReader,
    inertia_stamped_to_phi,
    joint_trajectory_to_reference,
    labelled_array,
    make_status,
    payload_stamp,
    read_stamp,
)
from robot_tv_dynamics.ros.joint_state_cdr import (
    JointStateOutput,
    JointStateSample,
    subscribe_joint_states,
)
from robot_tv_dynamics.ros.parameters import ParameterSpec
from robot_tv_dynamics.ros.trajectory_conversions import (
    evaluate_planned_trajectory,
    retime_planned_trajectory,
)

NODE_NAME = "dynamics_node"
#: ``method`` label of mass_matrix_bounds when the Jacobian extremes could not be computed.
UNAVAILABLE = "unavailable"

#: Entries of ``mass_matrix_bounds``, in order (see README.md, "ROS 2 interface").
BOUND_LABELS = (
    "lambda_min_M",      # λ_min(M(q, Θ(t))), exact at this sample
    "lambda_max_M",      # λ_max(M(q, Θ(t)))
    "lower_bound_q",     # min_l μ_l(t) · λ_min(J(q)ᵀJ(q)) ≤ λ_min(M)   (Theorem 2 at q)
    "upper_bound_q",     # 2 max_l ν_l(t) · σ_max(J(q))² ≥ λ_max(M)     (Theorem 3 at q)
    "alpha1",            # min_l inf_t μ_l · γ                           (eq. 45)
    "alpha2",            # 2 max_l sup_t ν_l · δ                         (eq. 46)
    "gamma",             # the γ α₁ uses: the lower end of γ's bracket (safe end; sampled:
                         # the structural lower bound, certified: branch and bound)
    "delta",             # the δ α₂ uses: the upper end of δ's bracket (safe end)
    "min_margin",        # min_l μ_l(t)
    "max_size",          # max_l ν_l(t)
    "inf_margin",        # min_l inf_t μ_l since start-up (or the last URDF swap)
    "sup_size",          # max_l sup_t ν_l
    "mass_rate_sigma_max",  # σ_max(M(q, Θ̇)), exact
    "mass_rate_bound",   # σ_max(Z(Θ̇)) σ_max(J(q))² ≥ σ_max(M(q, Θ̇))  (Theorem 4 at q)
    "certified",         # 1 if γ, δ are certified brackets, 0 if sampled estimates
)

PARAMETERS = parameters.COMMON_PARAMETERS + (
    ParameterSpec(
        "acceleration_cutoff", 20.0,
        "corner frequency of the critically damped 2nd-order filter that differentiates "
        "q̇ into q̈ when no reference covers a sample (delay 1/(pi f_c))", "Hz", 0.1, 1000.0),
    ParameterSpec(
        "theta_rate_cutoff", 5.0,
        "corner frequency of the filter that differentiates Θ into Θ̇ when "
        "inertial_parameter_rates is not being published", "Hz", 0.01, 1000.0),
    ParameterSpec(
        "max_gap", 0.5,
        "a gap between samples longer than this restarts the differentiating filters",
        "s", 1e-3, 3600.0),
    ParameterSpec(
        "rate_timeout", 0.5,
        "inertial_parameter_rates / psi / psi_rates older than this are stale: Θ̇ falls back "
        "to filtered differences, Ψ and Ψ̇ to zero; 0 = never stale", "s", 0.0, 3600.0),
    ParameterSpec(
        "theta_window", 0.05,
        "a joint sample waits at most this long (joint-sample time) for a stamped Θ / Ψ at "
        "or after its stamp (inertial_parameters_stamped, psi_stamped), then is answered "
        "with the held value and counted late in the 'theta pairing' status; 0 never waits",
        "s", 0.0, 1.0),
    ParameterSpec(
        "reference_tolerance", 0.0,
        "a sample up to this long before the first or after the last reference point "
        "still takes q̈ from the reference (end value held)", "s", 0.0, 10.0),
    ParameterSpec(
        "joint_states_depth", 100,
        "queue depth of the joint_states subscription, and of inertial_parameters, "
        "inertial_parameter_rates, psi and psi_rates (so that a backlog of samples meets "
        "the Θ that arrived with it)", "", 1, 10000),
    ParameterSpec(
        "joint_states_reliable", False,
        "subscribe joint_states RELIABLE (then best-effort publishers do not match); "
        "default BEST_EFFORT, which matches both"),
    ParameterSpec(
        "ignore_unknown_joints", False,
        "accept joint_states with joints the URDF does not have (ignoring them) instead of "
        "rejecting them"),
    ParameterSpec(
        "publish_terms", True,
        "publish generalized_terms (computed only while it has subscribers)"),
    ParameterSpec(
        "publish_bounds", True,
        "publish mass_matrix_bounds (computed only while it has subscribers)"),
    ParameterSpec(
        "bounds_decimation", 1,
        "publish mass_matrix_bounds on every k-th answered sample", "", 1, 100000),
    ParameterSpec(
        "cache_dir", "~/.cache/robot_tv_dynamics",
        "directory of the on-disk cache of the Jacobian extremes (keyed by the URDF hash and "
        "the search settings); empty disables the cache"),
    ParameterSpec(
        "certified_bounds", False,
        "compute certified brackets of the Jacobian extremes (branch and bound) instead of "
        "sampled estimates"),
    ParameterSpec(
        "bounds_time_limit", 60.0,
        "time limit of the Jacobian-extremes search at start-up", "s", 0.1, 86400.0),
    ParameterSpec(
        "jacobian_samples", 4096,
        "quasi-random configurations of the Jacobian-extremes search", "", 16, 10_000_000),
    ParameterSpec(
        "effort_warn_ratio", 0.9,
        "planned_trajectory: the status is WARN when a joint's peak |tau|/tau_max reaches this",
        "", 0.0, 100.0),
    ParameterSpec(
        "retime_effort_margin", 1.0,
        "retime_request: the retimed trajectory keeps |tau| within this fraction of each "
        "joint's effort limit", "", 0.01, 1.0),
    ParameterSpec(
        "friction_file", "",
        "joint friction YAML (robot-tv-dynamics identify writes friction.yaml): when given, "
        "tau_f = viscous qd + coulomb tanh(qd/coulomb_velocity) + offset is added to "
        "generalized_torques and subtracted from measured efforts for the observer"),
    ParameterSpec(
        "observer_model", "generalized",
        "momentum observer on joint_states efforts: generalized (Theta(t), Psi(t) of eq. 39), "
        "classical (the Theta of the first sample, held), both, or off"),
    ParameterSpec(
        "observer_gain", 50.0,
        "K_O of the momentum observer; the residual follows tau_ext with the time constant "
        "1/K_O (docs/observer.md: choosing it against velocity noise)", "1/s", 0.1, 10000.0),
    ParameterSpec(
        "contact_threshold", 5.0,
        "contact when |r_i| (contact_mode joint) or |r| (norm) exceeds this", "N·m",
        1e-6, 1e6),
    ParameterSpec(
        "contact_release", 0.5,
        "a contact ends when the residual falls below this fraction of the threshold "
        "(hysteresis)", "", 0.01, 1.0),
    ParameterSpec(
        "contact_mode", "joint", "contact test per joint (joint) or on the residual's norm"),
    ParameterSpec(
        "diagnostics_period", 1.0,
        "period of the node's own input status on /diagnostics", "s", 0.01, 3600.0),
)


#: generalized_terms / mass_matrix_bounds subscribers are looked up this often [s].
SUBSCRIBER_CHECK_PERIOD = 0.1
#: The node clock for the stamp check is read at most this often [s].
CLOCK_READ_PERIOD = 0.1


@dataclass(frozen=True)
class DynamicsNodeConfig(parameters.CommonConfig):
    """The dynamics node's parameters (see ``PARAMETERS`` for meaning and units)."""

    acceleration_cutoff: float = 20.0
    theta_rate_cutoff: float = 5.0
    max_gap: float = 0.5
    rate_timeout: float = 0.5
    theta_window: float = 0.05
    reference_tolerance: float = 0.0
    joint_states_depth: int = 100
    joint_states_reliable: bool = False
    ignore_unknown_joints: bool = False
    publish_terms: bool = True
    publish_bounds: bool = True
    bounds_decimation: int = 1
    cache_dir: str = "~/.cache/robot_tv_dynamics"
    certified_bounds: bool = False
    bounds_time_limit: float = 60.0
    jacobian_samples: int = 4096
    effort_warn_ratio: float = 0.9
    retime_effort_margin: float = 1.0
    friction_file: str = ""
    observer_model: str = "generalized"
    observer_gain: float = 50.0
    contact_threshold: float = 5.0
    contact_release: float = 0.5
    contact_mode: str = "joint"
    diagnostics_period: float = 1.0


@dataclass(frozen=True)
class _RetimeSnapshot:
    """What a retime request is computed on, taken together when it arrives."""

    model: RobotModel
    theta: np.ndarray
    last_q: np.ndarray | None
    hardware_id: str
    effort_margin: float


class DynamicsNode(node_base.ModelNode):
    """Generalized torques, terms and mass-matrix bounds per joint-state sample."""

    def __init__(self) -> None:
        """Declare parameters, load the URDF, compute γ/δ, create topics and timers.

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
        self._planner: LatestJob | None = None  # started by the first planned trajectory
        self._inputs = ModelInputs(model, InputRules(
            acceleration_cutoff=cfg.acceleration_cutoff, theta_rate_cutoff=cfg.theta_rate_cutoff,
            max_gap=cfg.max_gap, rate_timeout=cfg.rate_timeout,
            timeline=TimelineRules(window=cfg.theta_window,
                                   history=max(2.0, 2.0 * cfg.theta_window))))
        #: joint samples waiting for the stamped Θ / Ψ that covers their stamp
        self._pending: PendingSamples[tuple[JointState | JointStateSample, float]] = (
            PendingSamples(cfg.theta_window))
        self._pairing = {"on_time": 0, "late": 0, AHEAD: 0, STALE: 0}
        self._pairing_reported = dict(self._pairing)
        self._last_lag = math.nan
        self._extremes: bounds.JacobianExtremes | None = None
        self._answered = 0
        self._subscribers, self._subscribers_checked = (False, False), -math.inf
        self._clock_seconds, self._clock_read = 0.0, -math.inf  # the node clock [s], when
        self._torques_pub = self.create_publisher(
            JointState, "generalized_torques", qos.RELIABLE_QOS)
        self._set_model(model)
        self._extremes = self._jacobian_extremes(model)
        self._update_theta_statistics()

        self._terms_pub = self.create_publisher(
            Float64MultiArray, "generalized_terms", qos.RELIABLE_QOS)
        self._bounds_pub = self.create_publisher(
            Float64MultiArray, "mass_matrix_bounds", qos.RELIABLE_QOS)
        # Θ, Θ̇, Ψ, Ψ̇ keep as deep a queue as joint_states: the executor takes messages in
        # arrival order, so when it falls behind, a backlog of joint samples still meets
        # the Θ that arrived with them (a shallower Θ queue would drop those and pair old
        # samples with newer Θ for as long as the backlog lasts)
        stream = qos.stream_qos(cfg.joint_states_depth)
        self._joint_states_sub = subscribe_joint_states(
            self, "joint_states", self._on_joint_states,
            qos.stream_qos(cfg.joint_states_depth, cfg.joint_states_reliable),
            lambda reason: self._guard.reject("joint_states", reason))
        self.create_subscription(
            Float64MultiArray, "inertial_parameters", self._on_theta, stream)
        self.create_subscription(
            Float64MultiArray, "inertial_parameter_rates", self._on_theta_rates, stream)
        self.create_subscription(Float64MultiArray, "psi", self._on_psi, stream)
        self.create_subscription(Float64MultiArray, "psi_rates", self._on_psi_rates, stream)
        self._stamped_subs = (
            self.create_subscription(
                JointState, "inertial_parameters_stamped", self._on_theta_stamped, stream),
            self.create_subscription(JointState, "psi_stamped", self._on_psi_stamped, stream))
        self._stamped_publishers, self._stamped_publishers_checked = (False, False), -math.inf
        self.create_subscription(
            InertiaStamped, "payload", self._on_payload, qos.RELIABLE_QOS)
        self.create_subscription(
            JointTrajectory, "reference", self._on_reference, qos.RELIABLE_QOS)
        # MoveIt pipeline: a planned trajectory → its efforts + a verdict
        self._planned_pub = self.create_publisher(
            JointTrajectory, "planned_trajectory_efforts", qos.RELIABLE_QOS)
        self.create_subscription(
            JointTrajectory, "planned_trajectory", self._on_planned_trajectory,
            qos.RELIABLE_QOS)
        # payload-aware retiming (TOPP-RA, up to a second): off the hot path, one at a time
        self._retimed_pub = self.create_publisher(
            JointTrajectory, "retimed_trajectory", qos.RELIABLE_QOS)
        self._retimer = LatestJob(
            "retime", lambda error: self._guard.reject(
                "retime_request", f"internal error ({type(error).__name__}: {error})"),
            lambda label: self._guard.reject(
                "retime_request", f"{label} dropped: a newer one arrived first"))
        self.create_subscription(
            JointTrajectory, "retime_request", self._on_retime_request, qos.RELIABLE_QOS)
        self._friction = (load_friction_file(os.path.expanduser(cfg.friction_file),
                                             model.joint_names)
                          if cfg.friction_file.strip() else None)
        if cfg.observer_model not in OBSERVER_MODELS:
            raise InvalidInputError(
                "observer_model", f'"{cfg.observer_model}" is not one of {list(OBSERVER_MODELS)}')
        self._contacts = ContactOutputs(self, model, cfg, self._friction, qos.RELIABLE_QOS)
        self.create_timer(cfg.diagnostics_period, self._publish_diagnostics)
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

    def _log_matching(self) -> None:
        """Log when joint_states publishers match or all go (discovery made visible)."""
        count = self._joint_states_sub.get_publisher_count()
        if (count > 0) != (self._joint_states_publishers > 0):
            self.get_logger().info(
                f"joint_states: {count} publisher(s) matched, answering" if count else
                "joint_states: no publisher matched any more")
        self._joint_states_publishers = count

    def _set_model(self, model: RobotModel) -> None:
        """(Re)build the readers, messages and statistics that depend on the model."""
        cfg = self.config
        self._model = model
        n = model.n_bodies
        self._joints = JointStateReader(
            model.joint_names, cfg.ignore_unknown_joints, ignored=model.locked_joints)
        self._theta_reader = BodyArrayReader("inertial_parameters", model.body_names, "phi", 10)
        self._theta_rate_reader = BodyArrayReader(
            "inertial_parameter_rates", model.body_names, "phi", 10, limits.THETA_RATE)
        self._psi_reader = BodyArrayReader("psi", model.body_names, "psi", 12)
        self._psi_rate_reader = BodyArrayReader("psi_rates", model.body_names, "psi", 12)
        self._theta_stamped_reader = BodyVectorReader(
            "inertial_parameters_stamped", model.body_names, "phi")
        self._psi_stamped_reader = BodyVectorReader("psi_stamped", model.body_names, "psi")
        self._tracker = ConsistencyTracker(n)
        self._torques_out = JointStateOutput(self._torques_pub, model.joint_names)
        self._terms_msg = Float64MultiArray()
        self._terms_axes = [("term", TERM_LABELS), ("joint", model.joint_names)]
        self._terms_buffer = np.empty((len(TERM_LABELS), model.nv))
        self._bounds_msg: Float64MultiArray | None = None
        self._dynamics = model.dynamics()  # the hot path: loads held between samples
        self._held_loads: tuple[np.ndarray, ...] | None = None

    def _jacobian_extremes(self, model: RobotModel) -> bounds.JacobianExtremes | None:
        """γ, δ once per model (disk cache, else computed and stored); None if that fails."""
        try:
            return self._compute_jacobian_extremes(model)
        except Exception as error:  # the torques do not need γ, δ: keep running
            self.get_logger().error(
                f"Jacobian extremes unavailable ({type(error).__name__}: {error}); "
                "mass_matrix_bounds carries NaN for alpha1, alpha2, gamma, delta")
            return None

    def _compute_jacobian_extremes(self, model: RobotModel) -> bounds.JacobianExtremes:
        cfg = self.config
        method = bounds.CERTIFIED if cfg.certified_bounds else bounds.SAMPLED
        settings = {"samples": cfg.jacobian_samples, "time_limit": cfg.bounds_time_limit}
        start = time.monotonic()
        cache = os.path.expanduser(cfg.cache_dir.strip()) if cfg.cache_dir.strip() else ""
        extremes = None
        if cache:
            key = bounds.extremes_cache_key(model, method, settings)
            extremes = bounds.load_cached_extremes(cache, key)
        origin = "cache"
        if extremes is None:
            self.get_logger().info(
                f"computing the Jacobian extremes ({method}, up to {cfg.bounds_time_limit:g} s)")
            extremes = bounds.jacobian_extremes(model, method, **settings)
            origin = "computed"
            if cache:
                try:
                    bounds.store_cached_extremes(cache, key, extremes)
                except RobotTvDynamicsError as error:
                    self.get_logger().warning(f"not cached: {error}")
        self.get_logger().info(
            f"Jacobian extremes ({origin} in {time.monotonic() - start:.2f} s): "
            + extremes_summary(extremes))
        return extremes

    def _on_urdf_swap(self, model: RobotModel) -> None:
        self._release(flush=True)  # waiting samples are answered with the old model
        keep_extremes = robot_description.same_kinematics(self._model, model)
        for _link, reason in self._inputs.swap_model(model):
            self._guard.reject("payload", f"dropped after the URDF swap: {reason}")
        self._set_model(model)
        self._guard.hardware_id = robot_description.robot_name(model)
        if not keep_extremes:
            self.get_logger().warning(
                "the new URDF changes the kinematics: recomputing the Jacobian extremes "
                "(the node does not answer meanwhile)")
            self._extremes = self._jacobian_extremes(model)
        self._update_theta_statistics()

    # ------------------------------------------------------------------ state inputs
    def _change_theta(self, change: Callable[[], None]) -> None:
        """Apply ``change`` to the inputs and update the statistics, or neither.

        Validate before mutate: if the change or the statistics of the new Θ raise, the
        inputs (filters, payloads), the running μ/ν statistics and α₁/α₂ stay as they
        were.
        """
        saved = (copy.copy(self._tracker), self._min_margin, self._max_size, self._uniform)
        with self._inputs.transaction():
            try:
                change()
                self._update_theta_statistics()
            except BaseException:
                self._tracker, self._min_margin, self._max_size, self._uniform = saved
                raise

    def _update_theta_statistics(self, theta: np.ndarray | None = None) -> None:
        """Running μ/ν statistics and α₁/α₂ after Θ changed.

        Args:
            theta: the new Θ with payloads (N, 10); None: the inputs' current Θ.

        Raises:
            InvalidInputError: the margins or sizes of Θ are not finite.
        """
        snapshot = self._tracker.update(self._inputs.theta if theta is None else theta)
        self._min_margin = float(np.min(snapshot.margin))
        self._max_size = float(np.max(snapshot.size))
        if not (math.isfinite(self._min_margin) and math.isfinite(self._max_size)):
            raise InvalidInputError("inertial_parameters", "margins or sizes are not finite")
        if self._extremes is not None:
            self._uniform = bounds.uniform_mass_matrix_bounds(
                self._extremes, snapshot.inf_margin, snapshot.sup_size)
        else:
            self._uniform = bounds.UniformMassMatrixBounds(
                method=UNAVAILABLE, alpha1=math.nan, alpha2=math.nan, gamma=math.nan,
                delta=math.nan, min_margin=float(np.min(snapshot.inf_margin)),
                max_size=float(np.max(snapshot.sup_size)))

    @input_guard.guarded("inertial_parameters")
    def _on_theta(self, msg: Float64MultiArray) -> None:
        if len(self._inputs.theta_series):  # the stamped Θ is used: skip the legacy one's
            self._guard.accept("inertial_parameters")  # reading and statistics
            return
        try:
            theta = self._theta_reader.read(msg)
            self._change_theta(lambda: self._inputs.set_theta(theta, time.monotonic()))
        except RobotTvDynamicsError as error:
            self._guard.reject("inertial_parameters", error)
            return
        self._guard.accept("inertial_parameters")

    @input_guard.guarded("inertial_parameter_rates")
    def _on_theta_rates(self, msg: Float64MultiArray) -> None:
        try:
            rate = self._theta_rate_reader.read(msg)
        except RobotTvDynamicsError as error:
            self._guard.reject("inertial_parameter_rates", error)
            return
        self._inputs.set_theta_rates(rate, time.monotonic())
        self._guard.accept("inertial_parameter_rates")

    @input_guard.guarded("psi")
    def _on_psi(self, msg: Float64MultiArray) -> None:
        try:
            psi = self._psi_reader.read(msg)
        except RobotTvDynamicsError as error:
            self._guard.reject("psi", error)
            return
        self._inputs.set_psi(psi, time.monotonic())
        self._guard.accept("psi")

    @input_guard.guarded("psi_rates")
    def _on_psi_rates(self, msg: Float64MultiArray) -> None:
        try:
            psi_dot = self._psi_rate_reader.read(msg)
        except RobotTvDynamicsError as error:
            self._guard.reject("psi_rates", error)
            return
        self._inputs.set_psi_rates(psi_dot, time.monotonic())
        self._guard.accept("psi_rates")

    @input_guard.guarded("inertial_parameters_stamped")
    def _on_theta_stamped(self, msg: JointState) -> None:
        topic = "inertial_parameters_stamped"
        try:
            _, theta, theta_dot = self._theta_stamped_reader.read(msg)
            if theta is None:
                raise InvalidInputError(f"{topic}.position", "is empty (no Θ)")
            t = read_stamp(msg.header.stamp, f"{topic}.header.stamp")
            saved = (copy.copy(self._tracker), self._min_margin, self._max_size,
                     self._uniform)
            try:  # the statistics see every stamped Θ (validate before mutate)
                self._update_theta_statistics(theta + self._inputs.payload_delta)
                self._inputs.set_theta_stamped(t, theta, theta_dot)
            except BaseException:
                self._tracker, self._min_margin, self._max_size, self._uniform = saved
                raise
        except RobotTvDynamicsError as error:
            self._guard.reject(topic, error)
            return
        self._guard.accept(topic)
        self._release()

    @input_guard.guarded("psi_stamped")
    def _on_psi_stamped(self, msg: JointState) -> None:
        topic = "psi_stamped"
        try:
            _, psi, psi_dot = self._psi_stamped_reader.read(msg)
            if psi is None:
                raise InvalidInputError(f"{topic}.position", "is empty (no Ψ)")
            t = read_stamp(msg.header.stamp, f"{topic}.header.stamp")
            self._inputs.set_psi_stamped(t, psi, psi_dot)
        except RobotTvDynamicsError as error:
            self._guard.reject(topic, error)
            return
        self._guard.accept(topic)
        self._release()

    @input_guard.guarded("payload")
    def _on_payload(self, msg: InertiaStamped) -> None:
        try:
            link, phi = inertia_stamped_to_phi(msg)
            t = payload_stamp(msg)  # applied from its stamp on (zero: from the next sample)
            self._change_theta(lambda: self._inputs.set_payload(link, phi, t))
        except RobotTvDynamicsError as error:
            self._guard.reject("payload", error)
            return
        self._guard.accept("payload")
        self.get_logger().info(
            f'payload on link "{link}": mass {phi[0]:.6g} kg (replaces the URDF inertia of '
            f"that link from {'the next sample' if t is None else f'stamp {t:.9f} s'} on)")

    @input_guard.guarded("reference")
    def _on_reference(self, msg: JointTrajectory) -> None:
        now = self.get_clock().now().nanoseconds * 1e-9
        try:
            reference = joint_trajectory_to_reference(
                msg, self._model.joint_names, now, self.config.reference_tolerance)
        except RobotTvDynamicsError as error:
            self._guard.reject("reference", error)
            return
        self._inputs.set_reference(reference)
        self._guard.accept("reference")

    @input_guard.guarded("planned_trajectory")
    def _on_planned_trajectory(self, msg: JointTrajectory) -> None:
        """Efforts of eq. (39) along a planned trajectory under the current Θ (payload).

        Off the hot path: the current model, Θ and q are taken now, the evaluation runs
        in a background thread (:class:`~robot_tv_dynamics.ros.background.LatestJob`), so
        joint_states keep being answered; a trajectory still waiting when a newer one
        arrives is dropped (said on ``/diagnostics``).
        """
        if len(msg.points) > limits.TRAJECTORY_POINTS:  # refused before any work
            self._guard.reject("planned_trajectory", InvalidInputError(
                "planned_trajectory.points",
                f"has {len(msg.points)} points (at most {limits.TRAJECTORY_POINTS})"))
            return
        model, theta, last_q = self._model, np.array(self._inputs.theta), self._inputs.last_q
        hardware_id, warn_ratio = self._guard.hardware_id, self.config.effort_warn_ratio

        def evaluate() -> None:
            try:
                report = evaluate_planned_trajectory(
                    model, msg, theta, hardware_id, last_q, warn_ratio=warn_ratio)
            except RobotTvDynamicsError as error:
                self._guard.reject("planned_trajectory", error)
                return
            self._planned_pub.publish(report.efforts_msg)
            self._guard.accept("planned_trajectory")
            self._guard.publish(extra=[report.status])

        if self._planner is None:
            self._planner = LatestJob(
                "planned_trajectory", self._planner_error,
                lambda label: self._guard.reject(
                    "planned_trajectory", f"{label} dropped: a newer one arrived first"))
        self._planner.submit(f"a trajectory of {len(msg.points)} points", evaluate)

    def _planner_error(self, error: BaseException) -> None:
        if self.context.ok():
            self._guard.reject(
                "planned_trajectory", f"internal error ({type(error).__name__}: {error})")


    @input_guard.guarded("retime_request")
    def _on_retime_request(self, msg: JointTrajectory) -> None:
        """Queue a retiming of the path under the current Θ (published when done)."""
        if len(msg.points) > limits.TRAJECTORY_POINTS:  # refused before any work
            self._guard.reject("retime_request", InvalidInputError(
                "retime_request.points",
                f"has {len(msg.points)} points (at most {limits.TRAJECTORY_POINTS})"))
            return
        # one snapshot, taken here on the executor thread that also applies URDF swaps:
        # the worker never reads the node's (possibly swapped) model or config
        snapshot = _RetimeSnapshot(
            self._model, np.array(self._inputs.theta),
            None if self._inputs.last_q is None else np.array(self._inputs.last_q),
            self._guard.hardware_id, float(self.config.retime_effort_margin))
        self._retimer.submit(f"a path of {len(msg.points)} points",
                             lambda: self._retime(msg, snapshot))
        self._guard.accept("retime_request")

    def _retime(self, msg: JointTrajectory, snapshot: _RetimeSnapshot) -> None:
        """Worker thread: retime on the request's snapshot, publish the trajectory and status."""
        try:
            out, status = retime_planned_trajectory(
                snapshot.model, msg, snapshot.theta, snapshot.hardware_id, snapshot.last_q,
                effort_margin=snapshot.effort_margin)
        except RobotTvDynamicsError as error:
            self._guard.reject("retime_request", error)
            return
        if out is not None:
            self._retimed_pub.publish(out)
        self._guard.publish(extra=[status])

    def destroy_node(self) -> None:
        """Stop the planned-trajectory and retiming threads (waiting jobs dropped), destroy."""
        for worker in (getattr(self, "_planner", None), getattr(self, "_retimer", None)):
            if worker is not None:
                worker.stop()
        super().destroy_node()

    # ------------------------------------------------------------------ per sample
    @input_guard.guarded("joint_states")
    def _on_joint_states(self, msg: JointState | JointStateSample) -> None:
        # the stamp is checked on arrival; the sample then waits (at most theta_window of
        # joint-sample time) for a stamped Θ / Ψ at or after its stamp
        try:
            t = self._read_stamp(msg.header.stamp, time.monotonic())
            self._inputs.check_stamp(t)
            newest = self._pending.newest
            if t <= newest:
                how = "repeats" if t == newest else "goes backwards from"
                raise InvalidInputError(
                    "joint_states.header.stamp",
                    f"{how} a waiting sample ({t:.9f} s after {newest:.9f} s)")
        except RobotTvDynamicsError as error:
            self._guard.reject("joint_states", error)
            return
        self._pending.push(t, (msg, t))
        self._release()

    def _release(self, flush: bool = False) -> None:
        """Answer every waiting joint sample whose stamped Θ / Ψ is there (or too late)."""
        inputs = self._inputs
        series = (inputs.theta_series, inputs.psi_series)
        for _, (msg, t), on_time in self._pending.release(
                series, flush, self._expected_series(series)):
            self._pairing["on_time" if on_time else "late"] += 1
            self._answer(msg, t)
            for status in (inputs.theta_status, inputs.psi_status):
                if status in (AHEAD, STALE):
                    self._pairing[status] += 1
            if len(inputs.theta_series):
                self._last_lag = inputs.theta_series.lag(t)
        if self._pairing_reported["late"] != self._pairing["late"] or any(
                self._pairing_reported[k] != self._pairing[k] for k in (AHEAD, STALE)):
            self.get_logger().warning(
                f"stamped Θ/Ψ pairing: {self._pairing['late']} sample(s) answered without "
                f"a Θ/Ψ at or after their stamp within theta_window "
                f"({self.config.theta_window:g} s), {self._pairing[AHEAD]} with Θ/Ψ ahead "
                f"of them, {self._pairing[STALE]} with a stale Θ/Ψ (last lag "
                f"{self._last_lag:+.4f} s)", throttle_duration_sec=self.config.log_throttle)

    def _expected_series(self, series: tuple[StampedSeries, ...]) -> list[StampedSeries]:
        """The stamped series still empty whose topic has a publisher.

        Its first sample is on the way: the first joint samples wait for it (within
        ``theta_window``) rather than take the URDF's Θ.

        The publisher counts (a graph query) are read at most every
        :data:`SUBSCRIBER_CHECK_PERIOD`, and only while a series is empty.
        """
        if all(len(s) for s in series):
            return []
        now = time.monotonic()
        if now - self._stamped_publishers_checked >= SUBSCRIBER_CHECK_PERIOD:
            self._stamped_publishers_checked = now
            self._stamped_publishers = tuple(
                sub.get_publisher_count() > 0 for sub in self._stamped_subs)
        return [s for s, has in zip(series, self._stamped_publishers, strict=True)
                if has and not len(s)]

    def _pairing_status(self) -> object:
        """The ``dynamics_node: theta pairing`` DiagnosticStatus (WARN on new late ones)."""
        counts, reported = self._pairing, self._pairing_reported
        fresh = {k: counts[k] - reported[k] for k in counts}
        self._pairing_reported = dict(counts)
        level = 1 if (fresh["late"] or fresh[AHEAD] or fresh[STALE]) else 0
        message = ("stamped Θ/Ψ paired with every joint sample by stamp" if level == 0 else
                   f"since the last status: {fresh['late']} sample(s) late (no Θ/Ψ at or "
                   f"after their stamp within theta_window), {fresh[AHEAD]} with Θ/Ψ ahead, "
                   f"{fresh[STALE]} with a stale Θ/Ψ")
        values = [("samples paired on time", counts["on_time"]),
                  ("samples late", counts["late"]), ("samples with Θ/Ψ ahead", counts[AHEAD]),
                  ("samples with stale Θ/Ψ", counts[STALE]),
                  ("last lag [s]", f"{self._last_lag:.6f}"),
                  ("waiting", len(self._pending))]
        return make_status(f"{NODE_NAME}: theta pairing", level, message,
                           self._guard.hardware_id, values)

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
        terms_wanted, bounds_wanted = self._subscribed(now)
        publish_terms = cfg.publish_terms and terms_wanted
        publish_bounds = (cfg.publish_bounds and answered % cfg.bounds_decimation == 0
                          and bounds_wanted)
        terms = kin = None
        try:
            self._inputs.check_stamp(t)
            q, qd = self._joints.read(msg)
            with self._inputs.transaction():
                state = self._inputs.sample(t, q, qd, now)
                if publish_terms or publish_bounds:
                    kin = self._model.kinematics(q)
                    terms = dynamics.generalized_terms(
                        kin, qd, state.qdd, state.theta, state.theta_dot, state.gamma,
                        state.gamma_dot)
                    tau = terms.tau
                else:
                    tau = self._torque(state)
                if self._friction is not None:
                    tau = tau + self._friction.torque(qd)
                if not np.isfinite(tau).all():
                    raise InvalidInputError(
                        "joint_states", "τ of eq. (39) is not finite for this sample")
        except RobotTvDynamicsError as error:
            self._guard.reject("joint_states", error)
            return
        try:
            effort = self._joints.read_effort(msg)
        except RobotTvDynamicsError as error:  # τ is answered; the observers skip it
            effort, self._contacts.reason = None, str(error)
        self._torques_out.publish(msg.header.stamp, msg.header.frame_id, q, qd, tau)
        self._answered = answered
        if terms is not None:
            if publish_terms:
                self._publish_terms(terms)
            if publish_bounds:
                self._publish_bounds(kin, terms, state.z_rate_norm)
        self._contacts.on_sample(msg, effort, state)
        self._guard.accept("joint_states")

    def _subscribed(self, now: float) -> tuple[bool, bool]:
        """Whether generalized_terms and mass_matrix_bounds have subscribers.

        Looked up at most every :data:`SUBSCRIBER_CHECK_PERIOD` (an rclpy graph query
        per sample costs more than τ itself): a new subscriber gets its first message
        within that time.
        """
        if now - self._subscribers_checked >= SUBSCRIBER_CHECK_PERIOD:
            self._subscribers_checked = now
            self._subscribers = (self._terms_pub.get_subscription_count() > 0,
                                 self._bounds_pub.get_subscription_count() > 0)
        return self._subscribers

    def _read_stamp(self, stamp: object, now: float) -> float:
        """A joint_states stamp [s], checked against the node clock.

        The clock (a ``Time`` object per reading) is read at most every
        :data:`CLOCK_READ_PERIOD` of the monotonic ``now``; a stamp that looks too far
        ahead of the last reading is checked again against the clock read then.
        """
        if now - self._clock_read >= CLOCK_READ_PERIOD:
            self._clock_read = now
            self._clock_seconds = self.get_clock().now().nanoseconds * 1e-9
        try:
            return read_stamp(stamp, "joint_states.header.stamp", self._clock_seconds)
        except InvalidInputError:
            self._clock_seconds = self.get_clock().now().nanoseconds * 1e-9
            return read_stamp(stamp, "joint_states.header.stamp", self._clock_seconds)

    def _publish_diagnostics(self) -> None:
        self._release()  # no joint sample came: Θ/Ψ may have covered the waiting ones
        extra = list(self._contacts.statuses(self._guard.hardware_id))
        if len(self._inputs.theta_series) or len(self._inputs.psi_series):
            extra.append(self._pairing_status())
        self._guard.publish(extra=extra)

    def _torque(self, state: ModelState) -> np.ndarray:
        """τ of eq. (39) by the recursive backend; the loads are set only when they changed."""
        loads = (state.theta, state.theta_dot, state.gamma, state.gamma_dot)
        held = self._held_loads
        if held is None or any(a is not b for a, b in zip(loads, held, strict=True)):
            self._dynamics.set_loads(*loads)
            self._held_loads = loads
        return self._dynamics.inverse_dynamics(state.q, state.qd, state.qdd)

    def _publish_terms(self, terms: dynamics.GeneralizedTerms) -> None:
        buffer = self._terms_buffer
        np.matmul(terms.mass_matrix, terms.qdd, out=buffer[0])
        np.matmul(terms.coriolis_matrix, terms.qd, out=buffer[1])
        np.matmul(terms.mass_rate_matrix, terms.qd, out=buffer[2])
        np.matmul(terms.gyroscopic_matrix, terms.qd, out=buffer[3])
        buffer[4] = terms.gravity
        buffer[5] = terms.psi_dot_force
        buffer[6] = terms.tau
        self._terms_pub.publish(labelled_array(buffer, self._terms_axes, self._terms_msg))

    def _publish_bounds(
        self, kin: object, terms: dynamics.GeneralizedTerms, z_rate_norm: float,
    ) -> None:
        jac = kin.stacked_jacobian  # type: ignore[attr-defined]
        eig_j = np.linalg.eigvalsh(jac.T @ jac)
        eig_m = np.linalg.eigvalsh(terms.mass_matrix)
        uniform = self._uniform
        if z_rate_norm == 0.0:
            rate_exact = rate_bound = 0.0
        else:  # M(q, Θ̇) is symmetric: σ_max = max |λ|
            eig_rate = np.linalg.eigvalsh(terms.mass_rate_matrix)
            rate_exact = float(max(-eig_rate[0], eig_rate[-1]))
            rate_bound = z_rate_norm * float(eig_j[-1])  # Theorem 4 at q
        values = np.array([
            eig_m[0], eig_m[-1],
            *bounds.theorem_bounds(  # Theorems 2, 3 at the current q
                self._min_margin, self._max_size, float(eig_j[0]), float(eig_j[-1])),
            uniform.alpha1, uniform.alpha2, uniform.gamma, uniform.delta,
            self._min_margin, self._max_size, uniform.min_margin, uniform.max_size,
            rate_exact, rate_bound, 1.0 if uniform.method == bounds.CERTIFIED else 0.0,
        ])
        if self._bounds_msg is None or self._bounds_method != uniform.method:
            self._bounds_method = uniform.method
            self._bounds_msg = labelled_array(
                values[:, None], [("bound", BOUND_LABELS), ("method", [uniform.method])])
        else:
            labelled_array(values[:, None], (), self._bounds_msg)
        self._bounds_pub.publish(self._bounds_msg)


def extremes_summary(extremes: bounds.JacobianExtremes) -> str:
    """γ, δ for the start-up log: the sampled estimate and the safe end α₁/α₂ use.

    ``mass_matrix_bounds`` publishes the safe ends (``gamma`` = lower end of γ's bracket,
    ``delta`` = upper end of δ's); a sampled estimate is not a bound (it lies on the
    unsafe side), which is why the two numbers differ.
    """
    g_low, g_high = extremes.inf_lambda_min_JtJ_bracket
    d_low, d_high = extremes.sup_sigma_max_J_sq_bracket
    kind = "estimate" if extremes.method == bounds.SAMPLED else "value"
    return (f"gamma {kind} {extremes.inf_lambda_min_JtJ:.6g} in [{g_low:.6g}, {g_high:.6g}], "
            f"delta {kind} {extremes.sup_sigma_max_J_sq:.6g} in [{d_low:.6g}, {d_high:.6g}] "
            f"({extremes.method}); alpha1/alpha2 and mass_matrix_bounds use the safe ends "
            f"gamma = {g_low:.6g}, delta = {d_high:.6g}")


def main(args: list[str] | None = None) -> int:
    """Run the node until Ctrl-C / SIGTERM; exit code 1 if it cannot start."""
    return node_base.run_node(DynamicsNode, NODE_NAME, args)


if __name__ == "__main__":
    raise SystemExit(main())
