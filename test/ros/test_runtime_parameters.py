"""Every declared parameter of every node, set at runtime over DDS: applied or refused.

Each node runs as its own process on the UR5; a client node calls its
``rcl_interfaces`` ListParameters / SetParameters / GetParameters services. For every
parameter the node lists:

- START_UP (read-only): the set is refused with a non-empty reason and GetParameters
  still returns the old value;
- LIVE: the set succeeds, GetParameters returns the new value, and a probe sees the
  node's behaviour change (its outputs, its diagnostics, its log); then the default
  is set back;
- rclpy's own: ``use_sim_time`` (the diagnostics' stamp follows ``/clock``) and
  ``start_type_description_service`` (read-only).

Every LIVE parameter must have a probe here: a LIVE parameter without one fails.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.srv import GetParameters, ListParameters, SetParameters
from rclpy.parameter import Parameter, parameter_value_to_python
from rosgraph_msgs.msg import Clock
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from support.ros_harness import NodeProcess, unique_namespace
from visualization_msgs.msg import MarkerArray

from robot_tv_dynamics.ros import (
    conversions,
    dynamics_parameters,
    estimator_node,
    markers_node,
    monitor_node,
    sim_node,
)
from robot_tv_dynamics.ros.parameters import LIVE, START_UP, ParameterSpec

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: rclpy's own parameters, declared by every node.
RCLPY_OWN = {"use_sim_time", "start_type_description_service"}
#: The /clock time of the use_sim_time probe [s].
SIM_TIME = 4242
_stamps = itertools.count()


def next_stamp(step: float = 0.005) -> float:
    """Sample stamps: 1000 s on, ``step`` apart, increasing over the whole module."""
    return 1000.0 + step * next(_stamps)


def refused_value(spec: ParameterSpec) -> Any:
    """A value of the parameter's type that differs from its default."""
    default = spec.default
    if isinstance(default, bool):
        return not default
    if isinstance(default, int):
        return default + 1
    if isinstance(default, float):
        return default + 1.0
    if isinstance(default, list):
        return ["other"]
    return default + "_other"


def status_named(array: DiagnosticArray, suffix: str) -> Any:
    """The status whose name is ``suffix`` or ends with ``": " + suffix``."""
    for status in array.status:
        if status.name == suffix or status.name.endswith(f": {suffix}"):
            return status
    return None


def values(status: Any) -> dict[str, str]:
    return {kv.key: kv.value for kv in status.values}


@dataclass
class NodeUnderTest:
    """One node process, the client's services on it, its inputs and outputs."""

    tester: Any
    process: NodeProcess
    ns: str
    name: str
    specs: tuple[ParameterSpec, ...]
    diagnostics: list = field(default_factory=list)
    outputs: dict[str, list] = field(default_factory=dict)
    publishers: dict[str, Any] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        node, path = self.tester.node, f"{self.ns}/{self.name}"
        self._list = node.create_client(ListParameters, f"{path}/list_parameters")
        self._get = node.create_client(GetParameters, f"{path}/get_parameters")
        self._set = node.create_client(SetParameters, f"{path}/set_parameters")
        self.diagnostics = self.tester.collect(DiagnosticArray, f"{self.ns}/diagnostics")

    # ---------------------------------------------------------------- services
    def call(self, client: Any, request: Any, idempotent: bool = False) -> Any:
        """The service's answer within 20 s (an idempotent request sent again every 3 s
        until it comes: :meth:`RosClient.call_idempotent`)."""
        self.tester.spin_until(lambda: client.wait_for_service(timeout_sec=0.0), 60.0,
                               f"{client.srv_name}", self.process)
        if idempotent:
            return self.tester.call_idempotent(client, request, 20.0, self.process)
        future = client.call_async(request)
        self.tester.spin_until(future.done, 20.0, f"{client.srv_name} answer", self.process)
        return future.result()

    def list(self) -> set[str]:
        return set(self.call(self._list, ListParameters.Request(), idempotent=True).result.names)

    def get(self, name: str) -> Any:
        answer = self.call(self._get, GetParameters.Request(names=[name]), idempotent=True)
        if not answer.values:  # a string array declared by its type, never set
            return None
        value = parameter_value_to_python(answer.values[0])
        return list(value) if isinstance(value, (list, tuple)) else value

    def try_set(self, name: str, value: Any) -> Any:
        request = SetParameters.Request(
            parameters=[Parameter(name, value=value).to_parameter_msg()])
        return self.call(self._set, request).results[0]

    def set(self, name: str, value: Any) -> None:
        """Set ``name`` (must succeed; GetParameters then returns it) and drain in-flight."""
        result = self.try_set(name, value)
        assert result.successful, f"{name} := {value!r} refused: {result.reason}"
        assert self.get(name) == value, name
        self.tester.spin_for(0.3)

    # ---------------------------------------------------------------- helpers
    def log_count(self, text: str) -> int:
        return self.process.output().count(text)

    def publish(self, topic: str, msg: Any) -> None:
        self.publishers[topic].publish(msg)

    def newest_diagnostics(self, after: int, predicate: Callable[[DiagnosticArray], Any],
                           what: str, timeout: float = 10.0) -> Any:
        """Spin until an array received after index ``after`` satisfies ``predicate``."""
        def found() -> Any:
            for array in self.diagnostics[after:]:
                result = predicate(array)
                if result:
                    return result
            return None
        return self.tester.spin_until(found, timeout, what, self.process)

    def count_over(self, received: list, seconds: float) -> int:
        start = len(received)
        self.tester.spin_for(seconds)
        return len(received) - start


def check_every_parameter(unit: NodeUnderTest, probes: dict[str, Callable[[NodeUnderTest], None]],
                          bad_input: Callable[[NodeUnderTest], None],
                          final: tuple[str, ...] = ()) -> dict[str, str]:
    """Set every listed parameter: refused with a reason, or applied and probed."""
    specs = {spec.name: spec for spec in unit.specs}
    assert unit.list() == set(specs) | RCLPY_OWN
    live = {name for name, spec in specs.items() if spec.runtime == LIVE}
    assert set(probes) == live, "every LIVE parameter needs a probe, and only those"
    for spec in unit.specs:
        if spec.runtime == LIVE:
            continue
        assert spec.runtime == START_UP, spec.name
        before = unit.get(spec.name)
        result = unit.try_set(spec.name, refused_value(spec))
        assert not result.successful and result.reason.strip(), spec.name
        assert unit.get(spec.name) == before, spec.name
        unit.results[spec.name] = f"refused: {result.reason}"
    for spec in unit.specs:
        if spec.runtime == LIVE and spec.name not in final:
            probes[spec.name](unit)
            unit.set(spec.name, spec.default)  # back to the default for the next probe
            unit.results[spec.name] = "applied"
    check_rclpy_own(unit, bad_input)
    for name in final:
        probes[name](unit)
        unit.results[name] = "applied"
    assert set(unit.results) == set(specs) | RCLPY_OWN
    return unit.results


def check_rclpy_own(unit: NodeUnderTest, bad_input: Callable[[NodeUnderTest], None]) -> None:
    """use_sim_time: a rejection's diagnostics carry /clock's time; the other is read-only."""
    result = unit.try_set("start_type_description_service", False)
    assert not result.successful and result.reason.strip()
    unit.results["start_type_description_service"] = f"refused: {result.reason}"
    clock = unit.tester.publisher(Clock, "/clock")
    unit.set("use_sim_time", True)
    after = len(unit.diagnostics)

    def stamped_sim_time(array: DiagnosticArray) -> bool:
        return array.header.stamp.sec == SIM_TIME

    def tick() -> None:
        msg = Clock()
        msg.clock.sec = SIM_TIME
        clock.publish(msg)
        bad_input(unit)

    unit.tester.publish_until(tick, lambda: any(
        stamped_sim_time(a) for a in unit.diagnostics[after:]), 20.0,
        "diagnostics stamped with /clock", unit.process, period=0.3)
    unit.set("use_sim_time", False)
    after = len(unit.diagnostics)
    unit.tester.publish_until(lambda: bad_input(unit), lambda: any(
        a.header.stamp.sec > 1_000_000 for a in unit.diagnostics[after:]), 20.0,
        "diagnostics stamped with the system time again", unit.process, period=0.3)
    unit.results["use_sim_time"] = "applied"


def check_log_throttle(unit: NodeUnderTest, topic: str,
                       bad_input: Callable[[NodeUnderTest], None]) -> None:
    """With the default 1 s throttle six rejections 50 ms apart log ≤ 2 lines; with 0, six."""
    line = f"rejected a message on {topic}"

    def burst() -> int:
        before = unit.log_count(line)
        for _ in range(6):
            bad_input(unit)
            unit.tester.spin_for(0.05)
        unit.tester.spin_for(0.5)
        return unit.log_count(line) - before

    unit.tester.spin_for(1.1)  # past the throttle of any earlier rejection
    assert burst() <= 2
    unit.set("log_throttle", 0.0)
    logged = burst()
    assert logged >= 5, logged


def check_period(unit: NodeUnderTest, name: str, fast: float, received: list,
                 slow_at_most: int, fast_at_least: int) -> None:
    """Messages counted over 2 s at the default, then with ``name`` = ``fast``."""
    unit.tester.spin_for(0.5)
    slow = unit.count_over(received, 2.0)
    assert slow <= slow_at_most, (name, slow)
    unit.set(name, fast)
    quick = unit.count_over(received, 2.0)
    assert quick >= fast_at_least, (name, quick)


# =========================================================================== dynamics
class Arm:
    """UR5 joint samples: q fixed at a pose, q̇ as given, stamps 5 ms apart."""

    def __init__(self, joint_names: list[str]) -> None:
        self.names = list(joint_names)
        self.q = np.array([0.3, -1.0, 1.2, -0.5, 0.4, 0.1])[: len(self.names)]

    def sample(self, qd: np.ndarray | None = None, effort: np.ndarray | None = None,
               extra: bool = False, bad: bool = False, t: float | None = None) -> JointState:
        t = next_stamp() if t is None else t
        msg = JointState(name=self.names + (["gripper_finger_joint"] if extra else []))
        msg.header.stamp = conversions.seconds_to_stamp(t)
        q = np.append(self.q, 0.0) if extra else self.q.copy()
        if bad:
            q[0] = math.nan
        qd = np.zeros(len(self.names)) if qd is None else qd
        msg.position = q.tolist()
        msg.velocity = (np.append(qd, 0.0) if extra else qd).tolist()
        if effort is not None:
            msg.effort = (np.append(effort, 0.0) if extra else effort).tolist()
        return msg


def feed_until(unit: NodeUnderTest, make: Callable[[], JointState],
               predicate: Callable[[], Any], what: str, timeout: float = 20.0) -> Any:
    return unit.tester.publish_until(lambda: unit.publish("joint_states", make()), predicate,
                                     timeout, what, unit.process, period=0.01)


def feed(unit: NodeUnderTest, messages: list[JointState], pause: float = 0.004) -> None:
    for msg in messages:
        unit.publish("joint_states", msg)
        unit.tester.spin_for(pause)


REJECTED = "rejected a message on joint_states"


def strict_joints_probe(make_extra: Callable[[], JointState]) -> Callable[[NodeUnderTest], None]:
    """A gripper joint is skipped (one log line), then, once strict, rejected."""
    def probe(unit):
        feed_until(unit, make_extra, lambda: unit.log_count(
            "skipping joints the model does not have") >= 1, "the gripper joint skipped")
        rejected = unit.log_count(REJECTED)
        feed(unit, [make_extra() for _ in range(5)])
        unit.tester.spin_for(0.3)
        assert unit.log_count(REJECTED) == rejected  # skipped, not rejected
        unit.set("strict_joints", True)
        feed_until(unit, make_extra, lambda: unit.log_count(REJECTED) > rejected,
                   "the gripper joint rejected once strict")
    return probe


#: Effort parameters set at runtime, and what the node's "efforts now" line then says.
EFFORT_VALUES = {"effort_preset": ("ur_e_series_current", "gain 12.625"),
                 "effort_gain": ("2.5", "gain 2.5"), "effort_offset": ("0.25", "offset 0.25"),
                 "effort_sign": ("-1", "sign -1")}


def effort_probe(name: str) -> Callable[[NodeUnderTest], None]:
    """The node logs the effort map it now reads efforts with, holding the new value."""
    value, said = EFFORT_VALUES[name]

    def probe(unit):
        before = unit.log_count("efforts now")
        unit.set(name, value)
        unit.tester.spin_until(lambda: unit.log_count("efforts now") > before, 10.0,
                               f"{name} applied", unit.process)
        line = unit.process.output().rsplit("efforts now", 1)[1].splitlines()[0]
        assert said in line, (name, line)
    return probe


def dynamics_probes(arm: Arm) -> dict[str, Callable[[NodeUnderTest], None]]:
    def torques(unit):
        return unit.outputs["generalized_torques"]

    def switch_off(name: str, topic: str):
        def probe(unit):
            out = unit.outputs[topic]
            feed_until(unit, arm.sample, lambda: len(out) > 0, f"{topic} flowing", 60.0)
            unit.set(name, False)
            before, answered = len(out), len(torques(unit))
            feed_until(unit, arm.sample, lambda: len(torques(unit)) >= answered + 20,
                       "20 more torques")
            unit.tester.spin_for(0.3)
            assert len(out) - before <= 1, (name, len(out) - before)
            unit.set(name, True)
            feed_until(unit, arm.sample, lambda: len(out) > before + 5, f"{topic} again")
        return probe

    def bounds_decimation(unit):
        bounds = unit.outputs["mass_matrix_bounds"]
        feed_until(unit, arm.sample, lambda: len(bounds) > 0, "bounds flowing", 60.0)
        unit.set("bounds_decimation", 5)
        before, answered = len(bounds), len(torques(unit))
        feed_until(unit, arm.sample, lambda: len(torques(unit)) >= answered + 50,
                   "50 more torques")
        unit.tester.spin_for(0.3)
        answered = len(torques(unit)) - answered
        published = len(bounds) - before
        assert abs(published - answered / 5) <= 1.5, (published, answered)

    def payload_frame(unit):
        unit.set("payload_frame", "wrist_3_link")
        unit.tester.spin_until(lambda: unit.log_count(
            "payload messages without frame_id now apply to wrist_3_link") >= 1, 10.0,
            "payload_frame applied", unit.process)

    def acceleration_cutoff(unit):
        def swing() -> float:
            """Peak-to-peak τ of the shoulder under q̇ = 0.2 sin(2π 5 t), last 0.5 s."""
            start = next_stamp()
            stamps = [start + 0.005 * k for k in range(200)]
            for _ in range(200):
                next_stamp()
            wanted = {round(t, 6) for t in stamps[100:]}
            out = torques(unit)
            first = len(out)
            feed(unit, [arm.sample(qd=np.full(len(arm.names), 0.2 * math.sin(
                2 * math.pi * 5.0 * (t - start))), t=t) for t in stamps])
            unit.tester.spin_until(lambda: len(out) >= first + 190, 20.0, "the swing's torques",
                                   unit.process)
            tau = [m.effort[1] for m in out[first:]
                   if round(m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec, 6) in wanted]
            assert len(tau) >= 90
            return max(tau) - min(tau)

        default = swing()
        unit.set("acceleration_cutoff", 0.5)
        slow = swing()
        assert default > 2.0 and slow < 0.2 * default, (default, slow)

    def diagnostics_period(unit):
        check_period(unit, "diagnostics_period", 0.1, unit.diagnostics, 4, 12)

    def log_throttle(unit):
        check_log_throttle(unit, "joint_states", lambda u: u.publish(
            "joint_states", arm.sample(bad=True)))

    return {"publish_terms": switch_off("publish_terms", "generalized_terms"),
            "publish_bounds": switch_off("publish_bounds", "mass_matrix_bounds"),
            "bounds_decimation": bounds_decimation,
            "strict_joints": strict_joints_probe(lambda: arm.sample(extra=True)),
            "payload_frame": payload_frame,
            **{name: effort_probe(name) for name in EFFORT_VALUES},
            "acceleration_cutoff": acceleration_cutoff,
            "diagnostics_period": diagnostics_period, "log_throttle": log_throttle}


def start(tester, tmp_path, executable: str, specs, parameters: dict[str, Any],
          extra: list[str] | None = None) -> NodeUnderTest:
    ns = unique_namespace("rp")
    process = NodeProcess(executable, ns, tmp_path, {"executor": "single_threaded",
                                                     **parameters}, extra)
    unit = NodeUnderTest(tester, process, ns, executable, specs)
    tester.spin_until(lambda: "ready" in process.output(), 120.0, f"{executable} ready",
                      process)
    return unit


def test_every_dynamics_node_parameter_is_applied_or_refused(tester, tmp_path, urdf_paths,
                                                             ur5):
    unit = start(tester, tmp_path, "dynamics_node", dynamics_parameters.PARAMETERS, {
        "urdf_path": urdf_paths["ur5"], "jacobian_samples": 64, "bounds_time_limit": 10.0,
        "observer_model": "off"})
    try:
        arm = Arm(ur5.joint_names)
        unit.publishers["joint_states"] = tester.publisher(JointState, f"{unit.ns}/joint_states")
        unit.outputs["generalized_torques"] = tester.collect(
            JointState, f"{unit.ns}/generalized_torques")
        for topic in ("generalized_terms", "mass_matrix_bounds"):
            unit.outputs[topic] = tester.collect(JointState, f"{unit.ns}/{topic}_stamped")
        tester.wait_matched([unit.publishers["joint_states"]], 30.0, unit.process)
        results = check_every_parameter(unit, dynamics_probes(arm), lambda u: u.publish(
            "joint_states", arm.sample(bad=True)))
    finally:
        unit.process.stop()
    print(results)


# =========================================================================== monitor
def monitor_probes(ur5) -> dict[str, Callable[[NodeUnderTest], None]]:
    bodies = list(ur5.body_names)
    theta0 = np.array(ur5.theta_nominal)

    def each_body(unit, check: Callable[[dict[str, str]], bool], what: str) -> None:
        after = len(unit.diagnostics)
        unit.newest_diagnostics(after, lambda a: all(
            status_named(a, b) is not None and check(values(status_named(a, b)))
            for b in bodies), what)

    def close(text: str, value: float) -> bool:
        return math.isclose(float(text), value, rel_tol=2e-5, abs_tol=1e-12)

    def margin_fraction(unit):
        unit.set("margin_fraction", 0.5)
        each_body(unit, lambda v: close(v["epsilon"], max(0.5 * float(v["margin"]), 0.0)),
                  "epsilon = 0.5 margin")

    def uniform_margin(unit):
        unit.set("uniform_margin", 0.01)
        each_body(unit, lambda v: close(v["epsilon"], 0.01), "epsilon = 0.01")

    def upper_bound(unit):
        unit.set("upper_bound", 100.0)
        each_body(unit, lambda v: close(v["upper bound"], 100.0), "upper bound = 100")

    def upper_factor(unit):
        unit.set("upper_factor", 3.0)
        each_body(unit, lambda v: close(v["upper bound"], 3.0 * max(float(v["size"]), 0.0)),
                  "upper bound = 3 size")

    def rate_bound(unit):
        unit.set("rate_bound", 7.0)
        each_body(unit, lambda v: close(v["rate bound"], 7.0), "rate bound = 7")

    scaled = theta0.copy()
    scaled[1] *= 6.5  # ν of body 1 at 6.5 × its URDF value: past bound/(1+b) for b = 1

    def theta_msg() -> JointState:
        return conversions.body_joint_state(next_stamp(0.05), bodies, "phi", scaled)

    def level_of(unit, body: str, level: int, what: str) -> None:
        after = len(unit.diagnostics)
        unit.tester.publish_until(
            lambda: unit.publish("inertial_parameters_stamped", theta_msg()),
            lambda: any((s := status_named(a, body)) is not None
                        and conversions.status_level(s) == level and "samples" in values(s)
                        and values(s)["samples"] != "0"
                        for a in unit.diagnostics[after:]), 20.0, what, unit.process, 0.05)

    def warn_band(unit):
        level_of(unit, bodies[1], 1, "WARN at 6.5 x the URDF size with warn_band 1")
        unit.set("warn_band", 0.2)
        level_of(unit, bodies[1], 0, "OK at 6.5 x the URDF size with warn_band 0.2")

    def publish_rate(unit):
        check_period(unit, "publish_rate", 10.0, unit.diagnostics, 4, 12)

    def stale_timeout(unit):
        level_of(unit, bodies[1], 1, "Θ arriving")
        unit.set("stale_timeout", 0.5)
        after = len(unit.diagnostics)
        unit.newest_diagnostics(after, lambda a: (s := status_named(a, bodies[1])) is not None
                                and conversions.status_level(s) == 3, "STALE after 0.5 s")

    def status_prefix(unit):
        unit.set("status_prefix", "left")
        after = len(unit.diagnostics)
        full = f"{unit.ns}/monitor_node"
        unit.newest_diagnostics(after, lambda a: {s.name for s in a.status} >= {
            f"{full}: left: {b}" for b in bodies} | {f"{full}: left: input"},
            "statuses named <node>: left: *")

    def log_throttle(unit):
        check_log_throttle(unit, "inertial_parameters_stamped", bad_theta)

    def rated(name: str, value: Any, said: str) -> Callable[[NodeUnderTest], None]:
        """With a rated payload, the node logs the bound it now holds the flange body to."""
        def probe(unit):
            before = unit.log_count(said)
            if name != "rated_payload":
                unit.set("rated_payload", 5.0)
            unit.set(name, value)
            unit.tester.spin_until(lambda: unit.log_count(said) > before, 10.0,
                                   f"{name} applied", unit.process)
            unit.set("rated_payload", 0.0)
        return probe

    return {"margin_fraction": margin_fraction, "uniform_margin": uniform_margin,
            "upper_bound": upper_bound, "upper_factor": upper_factor, "rate_bound": rate_bound,
            "warn_band": warn_band, "publish_rate": publish_rate,
            "stale_timeout": stale_timeout, "status_prefix": status_prefix,
            "log_throttle": log_throttle,
            "rated_payload": rated("rated_payload", 4.0, "rated payload 4 kg"),
            "rated_payload_distance": rated("rated_payload_distance", 0.25, "within 0.25 m"),
            "payload_frame": rated("payload_frame", "wrist_3_link", "m of wrist_3_link")}


def bad_theta(unit: NodeUnderTest) -> None:
    msg = JointState(name=["nobody/m"], position=[1.0])
    msg.header.stamp = conversions.seconds_to_stamp(next_stamp(0.05))
    unit.publish("inertial_parameters_stamped", msg)


def test_every_monitor_node_parameter_is_applied_or_refused(tester, tmp_path, urdf_paths, ur5):
    unit = start(tester, tmp_path, "monitor_node", monitor_node.PARAMETERS, {
        "urdf_path": urdf_paths["ur5"]})
    try:
        unit.publishers["inertial_parameters_stamped"] = tester.publisher(
            JointState, f"{unit.ns}/inertial_parameters_stamped")
        tester.wait_matched([unit.publishers["inertial_parameters_stamped"]], 30.0,
                            unit.process)
        results = check_every_parameter(unit, monitor_probes(ur5), bad_theta)
    finally:
        unit.process.stop()
    print(results)


# =========================================================================== estimator
#: A new value of each estimator setting and how the running estimator reports it.
ESTIMATOR_VALUES = {
    "method": ("classical", "classical"), "noise_std": ("0.3", "0.3"),
    "prior_mass_std": (2.0, "2"), "prior_moment_std": (0.2, "0.2"),
    "prior_inertia_std": (0.02, "0.02"), "memory": (30.0, "30"), "huber": (1.5, "1.5"),
    "false_alarm_rate": (0.01, "0.01"), "change_confirm": (0.5, "0.5"),
    "margin_fraction": (0.3, "0.3"),
    "upper_factor": (6.0, "6"), "theta_walk": (0.01, "0.01"), "offset_memory": (5.0, "5"),
    "acceleration_cutoff": (15.0, "15"), "max_gap": (0.25, "0.25"), "decimation": (2, "2"),
    "excitation_window": (100, "100"), "excitation_threshold": (0.002, "0.002"),
    "converged_mass_std": (0.05, "0.05"), "publish_period": (0.02, "0.02"),
}


def estimator_probes(arm: Arm) -> dict[str, Callable[[NodeUnderTest], None]]:
    def estimator_status(array: DiagnosticArray) -> Any:
        for status in array.status:
            if "estimator_node: " in status.name and not status.name.endswith(": input"):
                return status
        return None

    def reported(name: str, value: Any, text: str) -> Callable[[NodeUnderTest], None]:
        def probe(unit):
            unit.set(name, value)
            after = len(unit.diagnostics)
            unit.newest_diagnostics(after, lambda a: (s := estimator_status(a)) is not None
                                    and values(s).get(name) == text,
                                    f"the estimator running with {name} = {text}")
        return probe

    def link(unit):
        unit.set("link", "wrist_2_link")
        after = len(unit.diagnostics)
        unit.newest_diagnostics(after, lambda a: (s := estimator_status(a)) is not None
                                and s.name.endswith("estimator_node: wrist_2_link")
                                and values(s)["link"] == "wrist_2_link", "the load on wrist_2")
        assert unit.log_count("the estimate restarts from the base model") >= 1

    def diagnostics_period(unit):
        check_period(unit, "diagnostics_period", 0.1, unit.diagnostics, 4, 12)

    def log_throttle(unit):
        check_log_throttle(unit, "joint_states", lambda u: u.publish(
            "joint_states", arm.sample(effort=np.ones(len(arm.names)), bad=True)))

    probes = {name: reported(name, *value) for name, value in ESTIMATOR_VALUES.items()}
    effort = np.ones(len(arm.names))
    probes.update({name: effort_probe(name) for name in EFFORT_VALUES})
    probes.update({"link": link,
                   "strict_joints": strict_joints_probe(
                       lambda: arm.sample(effort=effort, extra=True)),
                   "payload_frame": reported("payload_frame", "wrist_3_link", "wrist_3_link"),
                   "diagnostics_period": diagnostics_period, "log_throttle": log_throttle})
    return probes


def test_every_estimator_node_parameter_is_applied_or_refused(tester, tmp_path, urdf_paths,
                                                              ur5):
    unit = start(tester, tmp_path, "estimator_node", estimator_node.PARAMETERS, {
        "urdf_path": urdf_paths["ur5"]})
    arm = Arm(ur5.joint_names)
    try:
        unit.publishers["joint_states"] = tester.publisher(JointState, f"{unit.ns}/joint_states")
        tester.wait_matched([unit.publishers["joint_states"]], 30.0, unit.process)
        results = check_every_parameter(unit, estimator_probes(arm), lambda u: u.publish(
            "joint_states", arm.sample(effort=np.ones(len(arm.names)), bad=True)))
    finally:
        unit.process.stop()
    assert unit.log_count("parameters applied: memory = 30.0; the estimate restarts") == 1
    print(results)


# =========================================================================== markers
def markers_probes(arm: Arm, ur5) -> dict[str, Callable[[NodeUnderTest], None]]:
    bodies = list(ur5.body_names)

    def markers(unit) -> list:
        return unit.outputs["inertia_markers"]

    def newest(unit, predicate: Callable[[MarkerArray], Any], what: str) -> Any:
        after = len(markers(unit))

        def found():
            for array in markers(unit)[after:]:
                if predicate(array):
                    return array
            return None
        return unit.tester.publish_until(lambda: feed_sources(unit), found, 20.0, what,
                                         unit.process, period=0.1)

    def feed_sources(unit) -> None:
        t = next_stamp()
        unit.publish("joint_states", arm.sample(t=t))
        for topic in ("inertial_parameters_stamped", "estimates/est/inertial_parameters_stamped"):
            unit.publish(topic, conversions.body_joint_state(
                t, bodies, "phi", np.array(ur5.theta_nominal)))

    def frames(array: MarkerArray) -> set[str]:
        return {m.header.frame_id for m in array.markers if m.action == 0}

    def publish_rate(unit):
        newest(unit, lambda a: len(a.markers) > 0, "markers")
        check_period(unit, "publish_rate", 2.0, markers(unit), 100, 0)  # count below
        slow = unit.count_over(markers(unit), 2.0)
        assert slow <= 6, slow

    def frame_mode(unit):
        unit.set("frame_mode", "links")
        newest(unit, lambda a: frames(a) & set(bodies), "markers in link frames")

    def base_frame(unit):
        unit.set("base_frame", "cell_base")
        newest(unit, lambda a: frames(a) == {"cell_base"}, "markers in cell_base")

    def offset(array: MarkerArray) -> float | None:
        truth = {(m.ns.split("/", 1)[1], m.id): m.pose.position.y for m in array.markers
                 if m.ns.startswith("truth/") and m.action == 0}
        estimate = {(m.ns.split("/", 2)[2], m.id): m.pose.position.y for m in array.markers
                    if m.ns.startswith("estimates/est/") and m.action == 0}
        common = set(truth) & set(estimate)
        if not common:
            return None
        key = sorted(common)[0]
        return estimate[key] - truth[key]

    def estimate_spacing(unit):
        newest(unit, lambda a: (d := offset(a)) is not None and math.isclose(d, 1.0, abs_tol=1e-6),
               "the estimate 1 m beside the truth")
        unit.set("estimate_spacing", 2.5)
        newest(unit, lambda a: (d := offset(a)) is not None and math.isclose(d, 2.5, abs_tol=1e-6),
               "the estimate 2.5 m beside the truth")

    def log_throttle(unit):
        check_log_throttle(unit, "joint_states", lambda u: u.publish(
            "joint_states", arm.sample(bad=True)))

    return {"publish_rate": publish_rate, "frame_mode": frame_mode, "base_frame": base_frame,
            "estimate_spacing": estimate_spacing, "log_throttle": log_throttle,
            "strict_joints": strict_joints_probe(lambda: arm.sample(extra=True))}


def test_every_markers_node_parameter_is_applied_or_refused(tester, tmp_path, urdf_paths, ur5):
    unit = start(tester, tmp_path, "markers_node", markers_node.PARAMETERS, {
        "urdf_path": urdf_paths["ur5"]}, ["-p", "estimates:=[est]"])
    arm = Arm(ur5.joint_names)
    try:
        for topic in ("joint_states", "inertial_parameters_stamped",
                      "estimates/est/inertial_parameters_stamped"):
            unit.publishers[topic] = tester.publisher(JointState, f"{unit.ns}/{topic}")
        unit.outputs["inertia_markers"] = tester.collect(MarkerArray,
                                                         f"{unit.ns}/inertia_markers")
        tester.wait_matched(list(unit.publishers.values()), 30.0, unit.process)
        results = check_every_parameter(unit, markers_probes(arm, ur5), lambda u: u.publish(
            "joint_states", arm.sample(bad=True)))
    finally:
        unit.process.stop()
    print(results)


# =========================================================================== sim
def sim_probes() -> dict[str, Callable[[NodeUnderTest], None]]:
    def states(unit) -> list:
        return unit.outputs["joint_states"]

    def publish_rate(unit):
        check_period(unit, "publish_rate", 10.0, states(unit), 10_000, 0)
        count = unit.count_over(states(unit), 1.0)
        assert 5 <= count <= 15, count

    def real_time_factor(unit):
        def simulated_per_second() -> float:
            unit.tester.spin_for(0.3)
            first = len(states(unit))
            unit.tester.spin_for(2.0)
            got = states(unit)[first:]
            stamps = [m.header.stamp.sec + 1e-9 * m.header.stamp.nanosec for m in got]
            return (stamps[-1] - stamps[0]) / 2.0

        normal = simulated_per_second()
        unit.set("real_time_factor", 0.25)
        slow = simulated_per_second()
        assert 0.8 < normal < 1.2 and 0.15 < slow < 0.35, (normal, slow)

    def duration(unit):
        unit.set("duration", 0.5)  # simulated for seconds already: stops at once
        unit.tester.spin_until(lambda: not unit.process.alive, 20.0, "sim_node to finish")
        assert unit.process.wait(5.0) == 0
        assert "finished" in unit.process.output()

    def log_throttle(unit):
        check_log_throttle(unit, "effort_commands", bad_effort)

    return {"publish_rate": publish_rate, "real_time_factor": real_time_factor,
            "duration": duration, "log_throttle": log_throttle}


def bad_effort(unit: NodeUnderTest) -> None:
    unit.publish("effort_commands", Float64MultiArray(data=[1.0]))


def test_every_sim_node_parameter_is_applied_or_refused(tester, tmp_path, urdf_paths):
    unit = start(tester, tmp_path, "sim_node", sim_node.PARAMETERS, {
        "urdf_path": urdf_paths["ur5"], "controller": "none", "loading": "none"})
    try:
        unit.outputs["joint_states"] = tester.collect(JointState, f"{unit.ns}/joint_states")
        unit.publishers["effort_commands"] = tester.publisher(
            Float64MultiArray, f"{unit.ns}/effort_commands")
        tester.wait_matched([unit.publishers["effort_commands"]], 30.0, unit.process)
        tester.spin_until(lambda: len(unit.outputs["joint_states"]) > 10, 30.0,
                          "joint_states", unit.process)
        results = check_every_parameter(unit, sim_probes(), bad_effort, final=("duration",))
    finally:
        unit.process.stop()
    print(results)
