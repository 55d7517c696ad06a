"""``robot-tv-dynamics play``: a recorded arm through the live nodes, on the bag's clock.

A UR5 joint_states bag (200 samples at 100 Hz, stamps = log times in 2023) is played
with ``--remap`` into a dynamics_node started with ``use_sim_time:=true``. Every sample
is answered (the count is stated), with τ equal to an offline computation apart from
the package (:func:`independent_torques`: the q̈ filter's ODE integrated by SciPy,
Pinocchio's RNEA on the URDF), and the node's diagnostics carry the bag's time (its
clock is ``/clock``).
"""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from scipy.integrate import solve_ivp
from sensor_msgs.msg import JointState
from support.launching import Launched, require_launch
from support.ros_harness import NodeProcess, node_env, unique_namespace

from robot_tv_dynamics.bags import write_joint_state_bag

pytestmark = [pytest.mark.ros, pytest.mark.slow]

N, RATE = 200, 100.0
T0_NS = 1_700_000_000_000_000_000
#: dynamics_node's acceleration_cutoff (its default) [Hz]
CUTOFF = 20.0


def independent_torques(urdf: str, joint_names: list[str], stamps_ns: list[int],
                        q: np.ndarray, qd: np.ndarray) -> np.ndarray:
    """τ = M q̈ + C q̇ + G of each sample by a path apart from the package, (n, nv) [N·m].

    q̈ is the node's filter as its docs state it (robot_tv_dynamics.filters: ẋ = v,
    v̇ = ω²(q̇ − x) − 2ωv, ω = 2π f_c, started at x = q̇₀, v = 0, q̇ linear between
    samples), integrated numerically by SciPy step by step; the steps are those of the
    stamps as the node reads them, float seconds ``sec + 1e-9·nanosec`` (at 1.7e9 s
    they are 2.4e-7 s apart, which moves q̈ by ~1e-4 rad/s²). τ is Pinocchio's RNEA on
    the model it builds from the URDF.
    """
    w = 2.0 * math.pi * CUTOFF
    t = [ns // 1_000_000_000 + 1e-9 * (ns % 1_000_000_000) for ns in stamps_ns]
    nv = qd.shape[1]
    qdd = np.zeros_like(qd)
    state = np.concatenate([qd[0], np.zeros(nv)])
    for k in range(1, len(t)):
        h, u0, du = t[k] - t[k - 1], qd[k - 1], qd[k] - qd[k - 1]

        def rates(s: float, y: np.ndarray, h=h, u0=u0, du=du) -> np.ndarray:
            x, v = y[:nv], y[nv:]
            return np.concatenate([v, w * w * (u0 + du * (s / h) - x) - 2.0 * w * v])
        state = solve_ivp(rates, (0.0, h), state, method="DOP853", rtol=1e-12,
                          atol=1e-12).y[:, -1]
        qdd[k] = state[nv:]
    model = pin.buildModelFromUrdf(urdf)
    data = model.createData()
    columns = [model.joints[model.getJointId(name)].idx_v for name in joint_names]
    tau = np.empty_like(qd)
    for k in range(len(t)):
        full = [np.zeros(model.nv) for _ in range(3)]
        for vector, values in zip(full, (q[k], qd[k], qdd[k]), strict=True):
            vector[columns] = values
        tau[k] = pin.rnea(model, data, *full)[columns]
    return tau


def samples(ur5) -> list[tuple[int, np.ndarray, np.ndarray, np.ndarray]]:
    """(stamp [ns], q, q̇, effort) of a smooth motion."""
    out = []
    omega = 2 * math.pi * np.linspace(0.4, 0.9, ur5.nv)
    for k in range(N):
        t = k / RATE
        q = np.array([0.2, -1.1, 1.3, -0.6, 0.4, 0.1]) + 0.4 * np.sin(omega * t)
        qd = 0.4 * omega * np.cos(omega * t)
        out.append((T0_NS + k * 10_000_000, q, qd, np.zeros(ur5.nv)))
    return out


def loaded_motion(ur5, theta, n: int):
    """(stamp [ns], q, q̇, τ) of a 200 Hz exciting motion of the UR5 with loads ``theta``."""
    omega = 2 * math.pi * np.linspace(0.3, 0.7, ur5.nv)
    for k in range(n):
        arg = omega * k / 200.0 + np.linspace(0.0, 2.0, ur5.nv)
        q = np.array([0.0, -1.2, 1.2, -1.5, -1.5, 0.0]) + 0.6 * np.sin(arg)
        qd, qdd = 0.6 * omega * np.cos(arg), -0.6 * omega**2 * np.sin(arg)
        yield T0_NS + k * 5_000_000, q, qd, ur5.inverse_dynamics(q, qd, qdd, theta).tau


def test_a_played_bag_runs_through_the_dynamics_node_on_the_bags_clock(tester, tmp_path, ur5,
                                                                       urdf_paths):
    bag = tmp_path / "arm.mcap"
    recorded = samples(ur5)
    with write_joint_state_bag(bag, ["/joint_states"]) as write:
        for ns, q, qd, effort in recorded:
            write("/joint_states", ns, ur5.joint_names, q, qd, effort)
    node = NodeProcess("dynamics_node", unique_namespace("play"), tmp_path, {
        "urdf_path": urdf_paths["ur5"], "use_sim_time": True, "observer_model": "off",
        "cache_dir": str(tmp_path), "jacobian_samples": 64, "diagnostics_period": 0.5,
        "joint_states_depth": 1000})  # the whole bag: a node that lags loses no sample
    ns = node.namespace
    torques = tester.collect(JointState, f"{ns}/generalized_torques")
    diagnostics = tester.collect(DiagnosticArray, f"{ns}/diagnostics")
    try:
        tester.spin_until(lambda: "ready" in node.output(), 60.0, "the node", node)
        tester.wait_readers_matched([f"{ns}/generalized_torques", f"{ns}/diagnostics"], 30.0,
                                    node)
        player = subprocess.Popen(
            [sys.executable, "-m", "robot_tv_dynamics.cli", "play", str(bag),
             "--remap", f"/joint_states:={ns}/joint_states", "--wait-for", "1",
             "--wait-topic", f"{ns}/joint_states"],
            env=node_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        tester.spin_until(lambda: player.poll() is not None, 60.0, "the replay", node)
        said = player.stdout.read() if player.stdout else ""
        assert player.returncode == 0, said
        assert f"play: {N} messages on {ns}/joint_states" in said, said
        tester.spin_until(lambda: len(torques) >= N, 20.0, f"{N} torques", node)
        tester.spin_for(0.5)
    finally:
        code = node.stop()
    assert code == 0, node.output()[-3000:]
    # every sample answered once, in order, with its own stamp
    stamps = [m.header.stamp.sec * 1_000_000_000 + m.header.stamp.nanosec for m in torques]
    assert stamps == [ns_ for ns_, *_ in recorded], "a sample missing or answered twice"
    # τ: the filter's ODE and RNEA, computed apart from the package
    want = independent_torques(urdf_paths["ur5"], list(ur5.joint_names), stamps,
                               np.array([q for _, q, _, _ in recorded]),
                               np.array([qd for _, _, qd, _ in recorded]))
    np.testing.assert_allclose([m.effort for m in torques], want, rtol=1e-9, atol=1e-7)
    # the node's clock was the bag's: its diagnostics are stamped inside the recording
    bag_start, bag_end = T0_NS * 1e-9, T0_NS * 1e-9 + N / RATE
    inside = [a for a in diagnostics
              if bag_start <= a.header.stamp.sec + 1e-9 * a.header.stamp.nanosec <= bag_end]
    assert inside, [a.header.stamp.sec for a in diagnostics]


def test_a_played_bag_gives_the_estimator_node_the_offline_estimate(tester, tmp_path, ur5,
                                                                     urdf_paths):
    """1 kg on tool0; estimator_node on the played bag = ``robot-tv-dynamics estimate``."""
    import json

    from geometry_msgs.msg import InertiaStamped

    from robot_tv_dynamics import phi_from_mass_com_inertia

    theta = ur5.theta_with_link_inertia(np.array(ur5.theta_nominal), "tool0",
                                        phi_from_mass_com_inertia(
                                            1.0, np.array([0.0, 0.01, 0.05]),
                                            np.diag([2e-3, 2e-3, 1e-3])))
    bag = tmp_path / "loaded.mcap"
    n = 800
    with write_joint_state_bag(bag, ["/joint_states"]) as write:
        for stamp_ns, q, qd, tau in loaded_motion(ur5, theta, n):
            write("/joint_states", stamp_ns, ur5.joint_names, q, qd, tau)
    offline = subprocess.run(
        [sys.executable, "-m", "robot_tv_dynamics.cli", "estimate", "--urdf",
         urdf_paths["ur5"], "--data", str(bag), "--link", "wrist_3_link", "--noise-std",
         "0.05", "--json"], env=node_env(), capture_output=True, text=True, timeout=300)
    assert offline.returncode == 0, offline.stderr[-3000:]
    final = json.loads(offline.stdout)["final"]
    assert abs(final["mass"] - 1.0) < 0.05  # the estimate is of the load
    node = NodeProcess("estimator_node", unique_namespace("playest"), tmp_path, {
        "urdf_path": urdf_paths["ur5"], "use_sim_time": True, "noise_std": "0.05",
        "publish_period": 0.0, "link": "wrist_3_link",
        "joint_states_depth": 1000})  # the whole bag: a node that lags loses no sample
    ns = node.namespace
    estimates = tester.collect(InertiaStamped, f"{ns}/payload_estimate")
    try:
        tester.spin_until(lambda: "ready" in node.output(), 60.0, "the node", node)
        tester.wait_readers_matched([f"{ns}/payload_estimate"], 30.0, node)
        player = subprocess.run(
            [sys.executable, "-m", "robot_tv_dynamics.cli", "play", str(bag), "--remap",
             f"/joint_states:={ns}/joint_states", "--wait-for", "1", "--wait-topic",
             f"{ns}/joint_states", "--rate", "2"],
            env=node_env(), capture_output=True, text=True, timeout=120)
        assert player.returncode == 0, player.stderr
        assert f"play: {n} messages on {ns}/joint_states" in player.stderr, player.stderr
        last_ns = T0_NS + (n - 1) * 5_000_000
        tester.spin_until(lambda: estimates and (
            estimates[-1].header.stamp.sec * 1_000_000_000 + estimates[-1].header.stamp.nanosec
            == last_ns), 30.0, "the estimate of the last sample", node)
        accepted = node.output()
    finally:
        code = node.stop()
    assert code == 0, node.output()[-3000:]
    assert "rejected" not in accepted  # every sample taken
    got = estimates[-1].inertia
    assert got.m == pytest.approx(final["mass"], abs=1e-6)
    np.testing.assert_allclose([got.com.x, got.com.y, got.com.z], final["com"], atol=1e-6)
    want = final["inertia"]
    np.testing.assert_allclose([got.ixx, got.ixy, got.ixz, got.iyy, got.iyz, got.izz],
                               [want[k] for k in ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")],
                               atol=1e-6)


def start_cell(starter: str, urdf: str, namespace: str, params: Path, folder: Path):
    """dynamics, monitor and markers nodes with the cell options; returns their stop.

    ``bring_up``: ``python -m robot_tv_dynamics.ros.bringup``'s function; ``launch``: the
    package's launch file run by launch_ros with the same arguments (skipped without it).
    """
    from robot_tv_dynamics.ros import bringup
    from robot_tv_dynamics.ros.cell import CellOptions

    if starter == "launch":
        require_launch()
        launched = Launched([{"namespace": namespace.lstrip("/"), "urdf": urdf,
                              "joint_states": "driver/joint_states", "use_sim_time": "true",
                              "params_file": str(params)}], folder, node_env())
        return launched.stop
    log = (folder / "bringup.log").open("w")
    running = bringup.bring_up(
        urdf, namespace=namespace, env=node_env(),
        cell=CellOptions(joint_states="driver/joint_states", use_sim_time=True,
                         params_file=str(params)), stdout=log, stderr=subprocess.STDOUT)

    def stop() -> None:
        running.stop()
        log.close()
    return stop


@pytest.mark.parametrize("starter", ["bring_up", "launch"])
def test_a_cell_recording_runs_through_the_bring_up_with_the_cell_options(
        starter, tester, tmp_path, ur5, urdf_paths):
    """A UR driver's bag (currents in A with offsets, joints in its own order, a gripper
    joint) → the CLI bring-up, and the launch file where launch_ros is installed.

    The nodes run under a namespace with the cell options (joint_states remapped to a
    driver topic, ``use_sim_time``, a per-node parameter file accepting the gripper
    joint and naming the UR current preset with the offsets); an estimator_node beside
    it in the namespace (its Θ̂ under ``estimated/``, so that dynamics_node keeps the
    URDF's Θ and its τ can be checked offline); ``play``
    replays the bag. Every sample is answered with the offline τ, and the final estimate
    is the offline ``estimate`` of the same data (without the gripper, in model order)
    to 1e-6.
    """
    import json

    from geometry_msgs.msg import InertiaStamped

    from robot_tv_dynamics import phi_from_mass_com_inertia
    from robot_tv_dynamics.inputs.efforts import effort_map

    theta = ur5.theta_with_link_inertia(np.array(ur5.theta_nominal), "tool0",
                                        phi_from_mass_com_inertia(
                                            1.5, np.array([0.01, 0.0, 0.06]),
                                            np.diag([3e-3, 3e-3, 1.5e-3])))
    n = 600
    order = list(reversed(range(ur5.nv)))  # the driver's joint order
    driver_names = [ur5.joint_names[j] for j in order] + ["gripper_finger_joint"]
    # a UR e-series driver in current mode: motor currents [A], here with an offset per
    # joint too (model joint order, as the effort parameters take them)
    offsets = (0.05, -0.1, 0.02, 0.0, 0.03, -0.02)
    amperes = effort_map("ur_e_series_current", offset=offsets)
    cell_bag, clean_bag = tmp_path / "cell.mcap", tmp_path / "clean.mcap"
    recorded = []
    with write_joint_state_bag(cell_bag, ["/joint_states"]) as cell_write, \
            write_joint_state_bag(clean_bag, ["/joint_states"]) as clean_write:
        for stamp_ns, q, qd, tau in loaded_motion(ur5, theta, n):
            recorded.append((stamp_ns, q, qd))
            cell_write("/joint_states", stamp_ns, driver_names, np.append(q[order], 0.02),
                       np.append(qd[order], 0.0), np.append(amperes.raw(tau)[order], 0.1))
            clean_write("/joint_states", stamp_ns, ur5.joint_names, q, qd, tau)
    offline = subprocess.run(
        [sys.executable, "-m", "robot_tv_dynamics.cli", "estimate", "--urdf",
         urdf_paths["ur5"], "--data", str(clean_bag), "--link", "wrist_3_link",
         "--noise-std", "0.05", "--json"], env=node_env(), capture_output=True, text=True,
        timeout=300)
    assert offline.returncode == 0, offline.stderr[-3000:]
    final = json.loads(offline.stdout)["final"]
    params = tmp_path / "ur_cell.yaml"
    dialect = ("    effort_preset: ur_e_series_current\n"
               f"    effort_offset: \"{','.join(str(v) for v in offsets)}\"\n")
    params.write_text(
        "/**/dynamics_node:\n  ros__parameters:\n    strict_joints: false\n" + dialect +
        "    joint_states_depth: 1000\n"
        "    observer_model: \"off\"\n    jacobian_samples: 64\n"
        "/**/estimator_node:\n  ros__parameters:\n    strict_joints: false\n" + dialect +
        "    joint_states_depth: 1000\n"
        "    noise_std: \"0.05\"\n    publish_period: 0.0\n    link: wrist_3_link\n")
    ns = unique_namespace("cell") + "/ur"
    torques = tester.collect(JointState, f"{ns}/generalized_torques")
    estimates = tester.collect(InertiaStamped, f"{ns}/payload_estimate")
    stop = start_cell(starter, urdf_paths["ur5"], ns, params, tmp_path)
    estimator = NodeProcess("estimator_node", ns, tmp_path, {"urdf_path": urdf_paths["ur5"]}, [
        "--params-file", str(params), "-p", "use_sim_time:=true",
        "-r", "joint_states:=driver/joint_states",
        "-r", "inertial_parameters_stamped:=estimated/inertial_parameters_stamped",
        "-r", "inertial_parameters:=estimated/inertial_parameters"])
    try:
        tester.wait_readers_matched([f"{ns}/generalized_torques", f"{ns}/payload_estimate"],
                                    60.0)
        # spun while it plays: the test's readers keep up (their queues are 100 deep)
        player = subprocess.Popen(
            [sys.executable, "-m", "robot_tv_dynamics.cli", "play", str(cell_bag), "--remap",
             f"/joint_states:={ns}/driver/joint_states", "--wait-for", "3", "--wait-topic",
             f"{ns}/driver/joint_states", "--delay", "1.0"],
            env=node_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        tester.spin_until(lambda: player.poll() is not None, 120.0, "the replay")
        said = player.stdout.read() if player.stdout else ""
        assert player.returncode == 0, said
        assert "3 subscriber(s)" in said, said  # dynamics, markers and estimator nodes
        assert f"play: {n} messages on {ns}/driver/joint_states" in said, said
        last_ns = recorded[-1][0]

        def stamp_of(msg) -> int:
            return msg.header.stamp.sec * 1_000_000_000 + msg.header.stamp.nanosec

        try:
            tester.spin_until(lambda: len(torques) >= n and estimates
                              and stamp_of(estimates[-1]) == last_ns, 60.0,
                              "every sample's τ and the last estimate")
        except AssertionError as error:
            raise AssertionError(
                f"{error}: {len(torques)} torques of {n} "
                f"({[(stamp_of(m) - T0_NS) // 5_000_000 for m in torques[:3]]} … "
                f"{[(stamp_of(m) - T0_NS) // 5_000_000 for m in torques[-3:]]}), last estimate at "
                f"{stamp_of(estimates[-1]) - T0_NS if estimates else None} ns of "
                f"{last_ns - T0_NS}; {said}") from None
        tester.spin_for(0.3)
    finally:
        stop()
        estimator.stop()
    # every sample answered once, in order, in model joint order, with the offline τ
    assert [stamp_of(m) for m in torques] == [s for s, _, _ in recorded]
    assert all(list(m.name) == list(ur5.joint_names) for m in torques)
    want = independent_torques(urdf_paths["ur5"], list(ur5.joint_names),
                               [s for s, _, _ in recorded],
                               np.array([q for _, q, _ in recorded]),
                               np.array([qd for _, _, qd in recorded]))
    np.testing.assert_allclose([m.effort for m in torques], want, rtol=1e-9, atol=1e-7)
    got = estimates[-1].inertia
    assert got.m == pytest.approx(final["mass"], abs=1e-6) and abs(got.m - 1.5) < 0.05
    np.testing.assert_allclose([got.com.x, got.com.y, got.com.z], final["com"], atol=1e-6)


def test_a_wait_for_readers_that_never_come_is_an_error_and_nothing_is_played(tmp_path, ur5):
    """``--wait-for 1`` on a topic nobody reads: InvalidInputError naming the count, and
    no message count is said (nothing went out)."""
    from robot_tv_dynamics.exceptions import InvalidInputError
    from robot_tv_dynamics.ros.play import PlayOptions, play

    bag = tmp_path / "short.mcap"
    with write_joint_state_bag(bag, ["/joint_states"]) as write:
        for ns_, q, qd, effort in samples(ur5)[:3]:
            write("/joint_states", ns_, ur5.joint_names, q, qd, effort)
    topic = f"{unique_namespace('nobody')}/joint_states"
    said: list[str] = []
    options = PlayOptions(remaps={"/joint_states": topic}, wait_for=1, wait_topic=topic,
                          wait_timeout=0.5, delay=0.0, linger=0.0)
    with pytest.raises(InvalidInputError, match=r"has 0 subscriber\(s\) after 0.5 s, not 1"):
        play(bag, options, say=said.append)
    assert not any("messages on" in line for line in said), said


@pytest.mark.parametrize("field", ["delay", "linger", "wait_for", "wait_timeout"])
def test_a_negative_play_setting_is_refused_by_name(field):
    from robot_tv_dynamics.exceptions import InvalidInputError
    from robot_tv_dynamics.ros.play import PlayOptions

    name = field if field == "wait_timeout" else "--" + field.replace("_", "-")
    with pytest.raises(InvalidInputError, match=f"{name}.*must be >= 0, got -1"):
        PlayOptions(**{field: -1})
