"""Trajectory evaluation under a payload (MoveIt pipeline): evaluation.py."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pinocchio as pin
import pytest
from support.examples import (
    EXAMPLES,
    LOADING,
    PANDA_ARM,
    UR5_JOINTS,
    panda_move,
    ur5_move,
    ur5_payload,
    write_bag,
)

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.evaluation import (
    ERROR,
    OK,
    TERM_NAMES,
    Payload,
    Trajectory,
    effort_verdict,
    evaluate,
    load_payload,
    load_trajectory,
    max_payload,
    payload_from_dict,
    trajectory_from_dict,
    trajectory_from_message,
)
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    PhysicalConsistencyError,
    UnknownNameError,
)
from robot_tv_dynamics.loading import body_loads, load_loading_process


def panda_payload(mass=2.0):
    return Payload("panda_link8", mass, np.array([0.0, 0.01, 0.1]),
                   np.diag([0.003467, 0.003467, 0.002133]) * (mass / 2.0))


CASES = {
    "ur5": (ur5_move, ur5_payload),
    "panda": (panda_move, panda_payload),
}


@pytest.fixture(scope="module")
def models(urdf_paths):
    return {name: RobotModel.from_urdf(path) for name, path in urdf_paths.items()}


# ------------------------------------------------------------------ agreement
@pytest.mark.parametrize("robot", ["ur5", "panda"])
def test_efforts_equal_inverse_dynamics_point_by_point(models, robot):
    model = models[robot]
    move, payload_of = CASES[robot]
    trajectory, payload = move(), payload_of()
    result = evaluate(model, trajectory, payload)
    theta = model.theta_with_link_inertia(model.theta_nominal, payload.link,
                                          model.urdf_link_phi(payload.link) + payload.phi())
    for k in range(trajectory.n_points):
        terms = model.inverse_dynamics(result.positions[k], result.velocities[k],
                                       result.accelerations[k], theta)
        np.testing.assert_allclose(result.effort[k], terms.tau, rtol=1e-12, atol=1e-10)
        for name, value in terms.breakdown().items():
            np.testing.assert_allclose(result.terms[name][k], value, rtol=1e-12, atol=1e-10)
        eigenvalues = np.linalg.eigvalsh(terms.mass_matrix)
        assert result.mass_matrix_min_eigenvalue[k] == pytest.approx(eigenvalues[0])
        assert result.mass_matrix_max_eigenvalue[k] == pytest.approx(eigenvalues[-1])
    # the trajectory's columns are where the message puts them
    columns = [model.joint_names.index(name) for name in trajectory.joint_names]
    np.testing.assert_array_equal(result.efforts_in_trajectory_order(),
                                  result.effort[:, columns])
    np.testing.assert_array_equal(result.positions[:, columns], trajectory.positions)


@pytest.mark.parametrize("robot", ["ur5", "panda"])
def test_efforts_equal_pinocchio_rnea_with_payload_merged_by_hand(models, robot):
    model = models[robot]
    move, payload_of = CASES[robot]
    trajectory, payload = move(), payload_of()
    result = evaluate(model, trajectory, payload)
    pmodel = pin.Model(model.pinocchio_model)
    frame = pmodel.frames[pmodel.getFrameId(payload.link)]
    load = pin.Inertia(payload.mass, payload.com, payload.inertia)
    pmodel.inertias[frame.parentJoint] = pmodel.inertias[frame.parentJoint] + \
        frame.placement.act(load)
    data = pmodel.createData()
    for k in range(trajectory.n_points):
        tau = pin.rnea(pmodel, data, model.pinocchio_configuration(result.positions[k]),
                       result.velocities[k], result.accelerations[k])
        np.testing.assert_allclose(result.effort[k], tau, rtol=1e-10, atol=1e-9)


def test_terms_sum_to_effort_and_no_rate_terms_for_a_constant_payload(models):
    result = evaluate(models["ur5"], ur5_move(), ur5_payload())
    total = sum(result.terms[name] for name in TERM_NAMES)
    np.testing.assert_allclose(total, result.effort, atol=1e-10)
    for name in ("mass_rate", "gyroscopic", "psi_dot"):
        assert np.all(result.terms[name] == 0.0)
    assert result.loaded_bodies == ("wrist_3_link",)
    assert np.all(result.consistency_margin > 0.0)


def test_loading_process_efforts_equal_inverse_dynamics_at_offset_time(models):
    model = models["panda"]
    process = load_loading_process(LOADING / "grasp.yaml")
    trajectory = panda_move()
    offset = 0.4
    result = evaluate(model, trajectory, process, time_offset=offset)
    for k, t in enumerate(trajectory.time_from_start):
        theta, theta_dot, psi, psi_dot = body_loads(model, process, t + offset,
                                                    model.theta_nominal)
        tau = model.inverse_dynamics(result.positions[k], result.velocities[k],
                                     result.accelerations[k], theta, theta_dot, psi,
                                     psi_dot).tau
        np.testing.assert_allclose(result.effort[k], tau, rtol=1e-12, atol=1e-10)
    assert np.any(result.terms["mass_rate"] != 0.0)  # the grasp ramp changes Θ
    assert result.payload_mass[0] == 0.0 and result.payload_mass[-1] == pytest.approx(0.8)
    assert any("loading process" in note for note in result.notes)
    # the max payload scales the whole process and lands exactly on the limit
    best = result.max_payload
    assert best is not None and best.joint is not None
    assert best.mass == pytest.approx(best.scale * 0.8)
    assert best.verified_ratio == pytest.approx(1.0, abs=1e-9)


# ------------------------------------------------------------------ limits
def test_heavy_payload_on_ur5_violates_naming_the_joint_light_one_does_not(models):
    model, trajectory = models["ur5"], ur5_move()
    heavy = evaluate(model, trajectory, ur5_payload(15.0))
    assert heavy.violations
    assert "shoulder_lift_joint" in heavy.violating_joints
    for violation in heavy.violations:
        assert violation.ratio > 1.0
        assert violation.joint in UR5_JOINTS
        k = violation.index
        assert violation.t == trajectory.time_from_start[k]
        i = UR5_JOINTS.index(violation.joint)
        assert abs(heavy.effort[k, i]) / 150.0 == pytest.approx(violation.ratio) or \
            abs(heavy.effort[k, i]) / 28.0 == pytest.approx(violation.ratio)
    verdict = effort_verdict(heavy)
    assert verdict.level == ERROR
    assert "shoulder_lift_joint" in verdict.message

    light = evaluate(model, trajectory, ur5_payload(1.0))
    assert light.violations == ()
    assert effort_verdict(light).level == OK
    assert np.nanmax(light.effort_ratio) < 1.0


@pytest.mark.parametrize("robot", ["ur5", "panda"])
def test_max_payload_puts_exactly_one_joint_at_ratio_one(models, robot):
    model = models[robot]
    move, payload_of = CASES[robot]
    trajectory, payload = move(), payload_of()
    best = max_payload(model, trajectory, payload)
    assert best.mass is not None and 0.0 < best.mass < math.inf
    assert best.verified_ratio == pytest.approx(1.0, abs=1e-9)

    at = evaluate(model, trajectory, payload.with_mass(best.mass))
    peak = at.peak_ratio
    assert np.nanmax(at.effort_ratio) == pytest.approx(1.0, abs=1e-6)
    saturated = [name for name, p in zip(model.joint_names, peak, strict=True)
                 if p > 1.0 - 1e-6]
    assert saturated == [best.joint]
    i = model.joint_names.index(best.joint)
    assert at.t[int(np.nanargmax(at.effort_ratio[:, i]))] == best.t
    assert at.violations == ()

    over = evaluate(model, trajectory, payload.with_mass(1.01 * best.mass))
    assert np.nanmax(over.effort_ratio) > 1.0
    assert best.joint in over.violating_joints


def test_max_payload_is_independent_of_the_mass_the_shape_was_given_with(models):
    model, trajectory = models["ur5"], ur5_move()
    a = max_payload(model, trajectory, ur5_payload(1.0)).mass
    b = max_payload(model, trajectory, ur5_payload(7.0)).mass
    assert a == pytest.approx(b, rel=1e-12)


def test_moveit_static_max_payload_is_gravity_only_point_mass_at_link_origin(models):
    model, trajectory = models["ur5"], ur5_move()
    result = evaluate(model, trajectory, ur5_payload())
    static = result.moveit_static_max_payload
    assert static is not None and static.joint is not None and static.mass is not None
    # independently: a point mass at the tool0 origin, q̇ = q̈ = 0, at that mass
    point = Payload("tool0", static.mass, np.zeros(3), np.zeros((3, 3)))
    theta = model.theta_with_link_inertia(model.theta_nominal, "tool0",
                                          model.urdf_link_phi("tool0") + point.phi())
    limits = model.joint_limits.effort
    ratios = np.array([
        np.abs(model.inverse_dynamics(q, np.zeros(6), np.zeros(6), theta).tau) / limits
        for q in result.positions])
    assert ratios.max() == pytest.approx(1.0, abs=1e-9)
    k, i = np.unravel_index(np.argmax(ratios), ratios.shape)
    assert model.joint_names[i] == static.joint and trajectory.time_from_start[k] == static.t
    # a fast move needs more torque than the static estimate allows for: exact < static
    assert result.max_payload.mass < static.mass


def test_exact_max_payload_reduces_to_moveit_static_for_a_point_mass_at_rest(models):
    model = models["ur5"]
    q = np.array([[0.3, -0.4, 0.6, -1.2, -1.5, 0.2]])
    trajectory = Trajectory(tuple(UR5_JOINTS), np.array([0.0]), q, np.zeros((1, 6)),
                            np.zeros((1, 6)))
    result = evaluate(model, trajectory, Payload("tool0", 2.0))
    assert result.max_payload.mass == pytest.approx(result.moveit_static_max_payload.mass,
                                                    rel=1e-12)
    assert result.max_payload.joint == result.moveit_static_max_payload.joint


def test_joint_without_effort_limit_gives_nan_ratio_and_a_warning(urdf_paths):
    xml = Path(urdf_paths["ur5"]).read_text()
    xml, count = re.subn(r'(<joint name="wrist_3_joint".*?<limit[^>]*?effort=")[^"]*(")',
                         r"\g<1>0\g<2>", xml, count=1, flags=re.S)
    assert count == 1
    model = RobotModel.from_urdf_string(xml, "ur5-no-wrist3-limit")
    result = evaluate(model, ur5_move(), ur5_payload())
    assert np.all(np.isnan(result.effort_ratio[:, 5]))
    assert np.all(np.isfinite(result.effort_ratio[:, :5]))
    assert any('"wrist_3_joint" has no effort limit' in w for w in result.warnings)
    assert math.isnan(result.peak_ratio[5])
    assert result.max_payload.mass is not None and math.isfinite(result.max_payload.mass)
    json.dumps(result.as_dict(), allow_nan=False)  # NaN became null


# ------------------------------------------------------------------ input completion
def test_missing_accelerations_are_derived_by_finite_differences_and_noted(models):
    model = models["ur5"]
    exact = evaluate(model, ur5_move(n=61), None)
    derived = evaluate(model, ur5_move(n=61, accelerations=True), None)
    assert any("accelerations were not given" in note and "finite differences" in note
               for note in derived.notes)
    assert not any("accelerations" in note for note in exact.notes)
    error = np.abs(derived.accelerations - exact.accelerations).max()
    assert error < 0.02 * np.abs(exact.accelerations).max()
    np.testing.assert_array_equal(derived.velocities, exact.velocities)


def test_missing_velocities_and_accelerations_come_from_a_cubic_spline(models):
    model = models["ur5"]
    exact = evaluate(model, ur5_move(n=61), None)
    derived = evaluate(model, ur5_move(n=61, velocities=True, accelerations=True), None)
    assert any("cubic spline" in note for note in derived.notes)
    assert np.abs(derived.velocities - exact.velocities).max() < 1e-3
    assert np.abs(derived.accelerations - exact.accelerations).max() < \
        0.02 * np.abs(exact.accelerations).max()


def test_joints_not_in_the_trajectory_are_held_at_default_positions(models):
    model = models["panda"]
    result = evaluate(model, panda_move(), None,
                      default_positions={"panda_finger_joint1": 0.03})
    fingers = [model.joint_names.index(f"panda_finger_joint{i}") for i in (1, 2)]
    np.testing.assert_array_equal(result.positions[:, fingers[0]], 0.03)
    np.testing.assert_array_equal(result.positions[:, fingers[1]], 0.0)
    np.testing.assert_array_equal(result.velocities[:, fingers], 0.0)
    np.testing.assert_array_equal(result.accelerations[:, fingers], 0.0)
    assert any("held" in note and "panda_finger_joint1 = 0.03" in note
               for note in result.notes)


# ------------------------------------------------------------------ bad input
def test_unknown_trajectory_joint_is_a_clear_error(models):
    trajectory = Trajectory(("shoulder_pan_joint", "elbow_jiont"), np.array([0.0, 1.0]),
                            np.zeros((2, 2)))
    with pytest.raises(UnknownNameError, match='joint "elbow_jiont" is not in the URDF'):
        evaluate(models["ur5"], trajectory, None)


def test_unknown_held_joint_is_a_clear_error(models):
    with pytest.raises(UnknownNameError, match="panda_finger_joint9"):
        evaluate(models["panda"], panda_move(), None,
                 default_positions={"panda_finger_joint9": 0.0})


def test_non_monotonic_times_name_the_index():
    with pytest.raises(InvalidInputError, match=r"point 2 is at 0\.5 s, point 1 at 1 s"):
        Trajectory(("a",), np.array([0.0, 1.0, 0.5]), np.zeros((3, 1)))
    with pytest.raises(InvalidInputError, match="point 1"):
        trajectory_from_dict({"joint_names": ["a"], "points": [
            {"positions": [0.0], "time_from_start": {"sec": 1, "nanosec": 0}},
            {"positions": [0.1], "time_from_start": 1.0}]})


def test_payload_link_not_in_the_urdf_is_a_clear_error(models):
    with pytest.raises(UnknownNameError, match='link "tool9" is not in the URDF'):
        evaluate(models["ur5"], ur5_move(), Payload("tool9", 1.0))
    with pytest.raises(InvalidInputError, match="fixed to the base"):
        evaluate(models["ur5"], ur5_move(), Payload("world", 1.0))


def test_malformed_points_are_clear_errors():
    with pytest.raises(InvalidInputError, match=r"points\[1\]\.positions.*expected 2 values"):
        trajectory_from_dict({"joint_names": ["a", "b"], "points": [
            {"positions": [0, 0], "time_from_start": 0},
            {"positions": [0], "time_from_start": 1}]})
    with pytest.raises(InvalidInputError, match=r"points\[1\]\.accelerations.*every point"):
        trajectory_from_dict({"joint_names": ["a"], "points": [
            {"positions": [0], "accelerations": [0], "time_from_start": 0},
            {"positions": [0], "time_from_start": 1}]})
    with pytest.raises(InvalidInputError, match="nanosec"):
        trajectory_from_dict({"joint_names": ["a"], "points": [
            {"positions": [0], "time_from_start": {"sec": 0, "nanosec": 2_000_000_000}}]})
    with pytest.raises(InvalidInputError, match="duplicate joints"):
        Trajectory(("a", "a"), np.array([0.0]), np.zeros((1, 2)))
    with pytest.raises(InvalidInputError, match="non-finite"):
        Trajectory(("a",), np.array([0.0, 1.0]), np.array([[0.0], [np.nan]]))


def test_payload_validation():
    with pytest.raises(PhysicalConsistencyError, match="negative"):
        Payload("tool0", -1.0)
    with pytest.raises(PhysicalConsistencyError, match="no physical body"):
        Payload("tool0", 1.0, np.zeros(3), np.diag([0.01, 0.01, 0.05]))  # triangle inequality
    with pytest.raises(InvalidInputError, match="unknown keys"):
        payload_from_dict({"link": "tool0", "mass": 1.0, "cog": [0, 0, 0]})
    payload = payload_from_dict({"link": "tool0", "mass": 2.0, "com": [0, 0, 0.1],
                                 "inertia": {"ixx": 0.01, "iyy": 0.02, "izz": 0.015,
                                             "ixy": 0.001}})
    np.testing.assert_array_equal(payload.inertia[0, 1], 0.001)
    np.testing.assert_array_equal(payload.inertia[1, 0], 0.001)
    assert payload.with_mass(4.0).inertia[1, 1] == pytest.approx(0.04)


# ------------------------------------------------------------------ files and messages
def test_example_files_load_and_stay_within_limits(models):
    for robot, joints in (("ur5", UR5_JOINTS), ("panda", PANDA_ARM)):
        trajectory = load_trajectory(EXAMPLES / f"{robot}_trajectory.yaml")
        payload = load_payload(EXAMPLES / f"{robot}_payload.yaml")
        assert list(trajectory.joint_names) == joints
        assert trajectory.velocities is not None and trajectory.accelerations is not None
        result = evaluate(models[robot], trajectory, payload)
        assert result.violations == () and result.warnings == ()
        assert 0 < result.max_payload.mass < result.moveit_static_max_payload.mass


def test_loading_process_yaml_is_recognised_by_load_payload():
    process = load_payload(LOADING / "grasp.yaml")
    assert not isinstance(process, Payload)
    assert process.link == "panda_hand"


def test_trajectory_from_a_message_shaped_object():
    def duration(seconds):
        return SimpleNamespace(sec=int(seconds), nanosec=int(round((seconds % 1) * 1e9)))

    message = SimpleNamespace(joint_names=["a", "b"], points=[
        SimpleNamespace(positions=[0.0, 1.0], velocities=[], accelerations=[], effort=[],
                        time_from_start=duration(0.0)),
        SimpleNamespace(positions=[0.5, 1.0], velocities=[], accelerations=[], effort=[],
                        time_from_start=duration(0.25)),
    ])
    trajectory = trajectory_from_message(message)
    assert trajectory.joint_names == ("a", "b")
    np.testing.assert_allclose(trajectory.time_from_start, [0.0, 0.25])
    assert trajectory.velocities is None and trajectory.accelerations is None


@pytest.mark.parametrize("storage", ["mcap", "sqlite3"])
def test_rosbag2_trajectory_is_read(tmp_path, models, storage):
    trajectory = ur5_move(n=11)
    bag = tmp_path / f"bag_{storage}"
    write_bag(bag, trajectory, storage)
    assert (bag / "metadata.yaml").is_file()
    read = load_trajectory(bag)
    assert read.joint_names == trajectory.joint_names
    np.testing.assert_allclose(read.time_from_start, trajectory.time_from_start, atol=1e-9)
    np.testing.assert_array_equal(read.positions, trajectory.positions)
    np.testing.assert_array_equal(read.accelerations, trajectory.accelerations)
    # the storage file alone, and an explicit topic
    storage_file = next(p for p in bag.iterdir() if p.suffix in (".mcap", ".db3"))
    np.testing.assert_array_equal(load_trajectory(storage_file).positions, trajectory.positions)
    np.testing.assert_array_equal(load_trajectory(bag, "/planned_trajectory").positions,
                                  trajectory.positions)
    a = evaluate(models["ur5"], read, ur5_payload())
    b = evaluate(models["ur5"], trajectory, ur5_payload())
    np.testing.assert_allclose(a.effort, b.effort, atol=1e-9)
    with pytest.raises(InvalidInputError, match="/chatter.*has type std_msgs/msg/String"):
        load_trajectory(bag, "/chatter")
    with pytest.raises(InvalidInputError, match='"/nope" is not in the bag'):
        load_trajectory(bag, "/nope")


def test_rosbag2_without_a_joint_trajectory_is_a_clear_error(tmp_path):
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_HUMBLE)
    with Writer(tmp_path / "bag", version=9, storage_plugin=StoragePlugin.MCAP) as writer:
        connection = writer.add_connection("/chatter", "std_msgs/msg/String", typestore=store)
        writer.write(connection, 1, store.serialize_cdr(
            store.types["std_msgs/msg/String"](data="hi"), "std_msgs/msg/String"))
    with pytest.raises(InvalidInputError, match="no trajectory_msgs/msg/JointTrajectory topic"):
        load_trajectory(tmp_path / "bag")


def test_as_dict_is_strict_json_with_points_violations_and_max_payload(models):
    result = evaluate(models["ur5"], ur5_move(n=11), ur5_payload(15.0))
    data = json.loads(json.dumps(result.as_dict(), allow_nan=False))
    assert len(data["points"]) == 11
    assert data["points"][3]["t"] == pytest.approx(0.45)
    assert data["points"][3]["effort"] == pytest.approx(result.effort[3].tolist())
    assert {v["joint"] for v in data["violations"]} == set(result.violating_joints)
    assert data["max_payload_mass"] == pytest.approx(result.max_payload.mass)
    assert data["moveit_static_max_payload_mass"] == pytest.approx(
        result.moveit_static_max_payload.mass)
    assert data["max_payload_joint"] == "shoulder_lift_joint"


def test_an_arm_over_its_limits_without_payload_allows_no_payload(models):
    model = models["ur5"]
    heavy_arm = 20.0 * np.asarray(model.theta_nominal)
    result = evaluate(model, ur5_move(n=11), ur5_payload(), theta=heavy_arm)
    assert result.violations
    assert result.max_payload.mass is None and result.max_payload.joint is None
    static = result.moveit_static_max_payload
    assert static.mass == 0.0
    k, i = static.index, model.joint_names.index(static.joint)
    base = model.inverse_dynamics(result.positions[k], np.zeros(6), np.zeros(6), heavy_arm).tau
    assert abs(base[i]) >= model.joint_limits.effort[i]  # the joint named is saturated
    data = json.loads(json.dumps(result.as_dict(), allow_nan=False))
    assert data["max_payload_mass"] is None
    assert effort_verdict(result).level == ERROR


def test_a_misspelled_key_in_a_trajectory_point_is_an_error_naming_it():
    from robot_tv_dynamics.evaluation.trajectory import trajectory_from_dict
    from robot_tv_dynamics.exceptions import InvalidInputError

    good = {"joint_names": ["a"], "points": [
        {"positions": [0.0], "time_from_start": 0.0},
        {"positions": [1.0], "acclerations": [0.0], "time_from_start": 1.0}]}
    with pytest.raises(InvalidInputError, match=r"points\[1\].*unknown key.*acclerations"):
        trajectory_from_dict(good)
    with pytest.raises(InvalidInputError, match="unknown key.*jointnames"):
        trajectory_from_dict({"joint_names": ["a"], "jointnames": [], "points": []})
    ok = trajectory_from_dict({"joint_names": ["a"], "header": {}, "points": [
        {"positions": [0.0], "effort": [], "time_from_start": {"sec": 0, "nanosec": 0}},
        {"positions": [1.0], "time_from_start": 1.0}]})
    assert ok.n_points == 2
