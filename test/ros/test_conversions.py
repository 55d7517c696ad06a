"""Messages ↔ arrays (robot_tv_dynamics.ros.conversions): layouts, names, validation."""

from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Duration, Time  # noqa: E402
from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from geometry_msgs.msg import InertiaStamped  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from std_msgs.msg import Float64MultiArray, MultiArrayDimension  # noqa: E402
from trajectory_msgs.msg import JointTrajectory, JointTrajectoryPoint  # noqa: E402

from robot_tv_dynamics import phi_from_mass_com_inertia  # noqa: E402
from robot_tv_dynamics.exceptions import InvalidInputError, UnknownNameError  # noqa: E402
from robot_tv_dynamics.ros import conversions as cv  # noqa: E402


def joint_state(names, q, qd):
    msg = JointState()
    msg.name = list(names)
    msg.position = [float(x) for x in q]
    msg.velocity = [float(x) for x in qd]
    return msg


def test_joint_state_is_matched_by_name_and_the_mapping_cached(panda):
    reader = cv.JointStateReader(panda.joint_names)
    order = np.random.default_rng(0).permutation(panda.nv)
    names = [panda.joint_names[i] for i in order]
    q = np.arange(panda.nv, dtype=float)
    q_msg, qd_msg = q[order], 10 * q[order]
    got_q, got_qd = reader.read(joint_state(names, q_msg, qd_msg))
    np.testing.assert_array_equal(got_q, q)
    np.testing.assert_array_equal(got_qd, 10 * q)
    take = reader.indices(names)
    assert reader.indices(list(names)) is take  # same name list: cached mapping


@pytest.mark.parametrize(("mutate", "error", "text"), [
    (lambda m: setattr(m, "name", [*m.name[:-1], "elbow"]), InvalidInputError,
     r'lacks the model joints .* \(joint "elbow" is not in the URDF\)'),
    (lambda m: (setattr(m, "name", m.name[:-1]), setattr(m, "position", m.position[:-1]),
                setattr(m, "velocity", m.velocity[:-1])), InvalidInputError, "lacks"),
    (lambda m: setattr(m, "name", [m.name[0], *m.name[:-1]]), InvalidInputError, "twice"),
    (lambda m: setattr(m, "position", m.position[:-1]), InvalidInputError, "position"),
    (lambda m: setattr(m, "velocity", []), InvalidInputError, "required"),
    (lambda m: m.position.__setitem__(2, float("nan")), InvalidInputError, "non-finite"),
    (lambda m: m.velocity.__setitem__(4, float("inf")), InvalidInputError, "velocity"),
])
def test_bad_joint_states_are_rejected_with_a_reason(panda, mutate, error, text):
    msg = joint_state(panda.joint_names, np.zeros(panda.nv), np.zeros(panda.nv))
    mutate(msg)
    with pytest.raises(error, match=text):
        cv.JointStateReader(panda.joint_names).read(msg)


def test_joints_the_model_lacks_are_skipped_and_told_once_per_name_list(panda):
    names = [*panda.joint_names, "conveyor"]
    msg = joint_state(names, np.arange(panda.nv + 1.0), np.ones(panda.nv + 1))
    told = []
    reader = cv.JointStateReader(panda.joint_names, on_unknown=told.append)
    for _ in range(3):
        q, _ = reader.read(msg)
    np.testing.assert_array_equal(q, np.arange(panda.nv, dtype=float))
    assert told == [["conveyor"]]


def test_strict_joints_reject_a_joint_the_model_lacks_and_can_be_switched(panda):
    msg = joint_state([*panda.joint_names, "conveyor"], np.ones(panda.nv + 1),
                      np.ones(panda.nv + 1))
    reader = cv.JointStateReader(panda.joint_names, strict=True)
    with pytest.raises(UnknownNameError, match='joint "conveyor" is not in the URDF'):
        reader.read(msg)
    reader.strict = False
    assert reader.read(msg)[0].shape == (panda.nv,)
    reader.strict = True  # the cached mapping does not outlive the rule
    with pytest.raises(UnknownNameError):
        reader.read(msg)


def test_body_array_round_trip_is_labelled_row_major(panda):
    theta = np.array(panda.theta_nominal)
    msg = cv.body_array(theta, panda.body_names, "phi")
    dims = msg.layout.dim
    assert cv.parse_dim_label(dims[0].label) == ("body", panda.body_names)
    assert cv.parse_dim_label(dims[1].label) == ("phi", list(cv.PHI_LABELS))
    assert (dims[0].size, dims[0].stride, dims[1].size, dims[1].stride) == (
        panda.n_bodies, 10 * panda.n_bodies, 10, 10)
    reader = cv.BodyArrayReader("inertial_parameters", panda.body_names, "phi", 10)
    np.testing.assert_array_equal(reader.read(msg), theta)


def test_flat_array_and_permuted_body_labels_are_accepted(panda):
    theta = np.random.default_rng(1).normal(size=(panda.n_bodies, 12))
    reader = cv.BodyArrayReader("psi", panda.body_names, "psi", 12)
    flat = Float64MultiArray(data=theta.ravel().tolist())
    np.testing.assert_array_equal(reader.read(flat), theta)
    order = np.arange(panda.n_bodies)[::-1]
    names = [panda.body_names[i] for i in order]
    msg = cv.labelled_array(theta[order], [("body", names), ("psi", None)])
    np.testing.assert_array_equal(reader.read(msg), theta)


def layout(labels, sizes, strides):
    return [MultiArrayDimension(label=a, size=b, stride=c)
            for a, b, c in zip(labels, sizes, strides, strict=True)]


@pytest.mark.parametrize(("dims", "length", "error", "text"), [
    (layout(["phi", "body"], [10, 9], [90, 9]), 90, InvalidInputError, "labels"),
    (layout(["body", "phi"], [9, 12], [108, 12]), 108, InvalidInputError, "sizes"),
    (layout(["body", "phi"], [9, 10], [90, 9]), 90, InvalidInputError, "strides"),
    (layout(["body"], [9], [9]), 90, InvalidInputError, "2 dimensions"),
    (layout(["body", "phi"], [9, 10], [90, 10]), 89, InvalidInputError, "89 values"),
    ([], 80, InvalidInputError, "80 values"),
    (layout(["body:a,b,c,d,e,f,g,h,tool", "phi"], [9, 10], [90, 10]), 90, UnknownNameError,
     '"a"'),
])
def test_wrong_layouts_are_rejected_with_a_reason(panda, dims, length, error, text):
    msg = Float64MultiArray(data=[0.0] * length)
    msg.layout.dim = dims
    with pytest.raises(error, match=text):
        cv.BodyArrayReader("inertial_parameters", panda.body_names, "phi", 10).read(msg)


def test_non_finite_body_array_names_the_body(panda):
    theta = np.array(panda.theta_nominal)
    theta[3, 7] = np.inf
    msg = cv.body_array(theta, panda.body_names)
    with pytest.raises(InvalidInputError, match=f'"{panda.body_names[3]}", entry 7'):
        cv.BodyArrayReader("inertial_parameters", panda.body_names, "phi", 10).read(msg)


def test_inertia_stamped_gives_phi_about_the_link_origin():
    msg = InertiaStamped()
    msg.header.frame_id = "panda_hand"
    msg.inertia.m = 1.5
    msg.inertia.com.x, msg.inertia.com.y, msg.inertia.com.z = 0.01, -0.02, 0.1
    msg.inertia.ixx, msg.inertia.iyy, msg.inertia.izz = 0.01, 0.02, 0.025
    msg.inertia.ixy, msg.inertia.ixz, msg.inertia.iyz = 0.001, -0.002, 0.003
    link, phi = cv.inertia_stamped_to_phi(msg)
    inertia = np.array([[0.01, 0.001, -0.002], [0.001, 0.02, 0.003], [-0.002, 0.003, 0.025]])
    assert link == "panda_hand"
    np.testing.assert_allclose(
        phi, phi_from_mass_com_inertia(1.5, [0.01, -0.02, 0.1], inertia), rtol=1e-15)
    msg.inertia.m = -1.0
    with pytest.raises(InvalidInputError, match="negative"):
        cv.inertia_stamped_to_phi(msg)
    msg.inertia.m = float("nan")
    with pytest.raises(InvalidInputError, match="non-finite"):
        cv.inertia_stamped_to_phi(msg)
    msg.header.frame_id = ""
    with pytest.raises(InvalidInputError, match="frame_id"):
        cv.inertia_stamped_to_phi(msg)


def trajectory(joints, stamp, points):
    msg = JointTrajectory()
    msg.header.stamp = stamp
    msg.joint_names = list(joints)
    for offset, acc in points:
        p = JointTrajectoryPoint()
        p.time_from_start = Duration(sec=int(offset), nanosec=int(round(offset % 1 * 1e9)))
        p.accelerations = [float(a) for a in acc]
        msg.points.append(p)
    return msg


def test_joint_trajectory_is_due_at_stamp_plus_time_from_start(panda):
    joints = panda.joint_names[:7]
    msg = trajectory(joints, Time(sec=100, nanosec=500_000_000), [(0.0, [1.0] * 7),
                                                                  (1.0, [3.0] * 7)])
    ref = cv.joint_trajectory_to_reference(msg, panda.joint_names, now=5.0)
    np.testing.assert_allclose(ref.times, [100.5, 101.5])
    np.testing.assert_allclose(ref.at(101.0), [2.0] * 7 + [0.0, 0.0])
    zero = trajectory(joints, Time(), [(0.5, [1.0] * 7)])
    assert cv.joint_trajectory_to_reference(zero, panda.joint_names, now=5.0).times[0] == 5.5
    assert cv.joint_trajectory_to_reference(trajectory(joints, Time(), []),
                                            panda.joint_names, now=0.0) is None
    no_acc = trajectory(joints, Time(), [(0.5, [])])
    with pytest.raises(InvalidInputError, match="accelerations are required"):
        cv.joint_trajectory_to_reference(no_acc, panda.joint_names, now=0.0)
    backwards = trajectory(joints, Time(), [(1.0, [0.0] * 7), (0.5, [0.0] * 7)])
    with pytest.raises(InvalidInputError, match="reference.time_from_start"):
        cv.joint_trajectory_to_reference(backwards, panda.joint_names, now=0.0)


def test_status_levels_values_and_time_conversions():
    status = cv.make_status("panda_link7", 2, "margin below epsilon", "panda",
                            [("margin", 1.23456789e-5), ("samples", 3)])
    assert isinstance(status, DiagnosticStatus)
    assert cv.status_level(status) == 2 and status.level == DiagnosticStatus.ERROR
    assert [(kv.key, kv.value) for kv in status.values] == [("margin", "1.23457e-05"),
                                                           ("samples", "3")]
    with pytest.raises(InvalidInputError):
        cv.make_status("x", 7, "", "")
    stamp = cv.seconds_to_stamp(12.25)
    assert (stamp.sec, stamp.nanosec) == (12, 250_000_000)
    assert cv.stamp_to_seconds(stamp) == 12.25
    assert cv.dim_label("term", ["a", "b"]) == "term:a,b"
    assert cv.parse_dim_label("joint") == ("joint", None)


# ---------------------------------------------------------------------------- stamped bodies
def test_stamped_body_vector_round_trips_in_any_name_order(panda):
    from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader

    rng = np.random.default_rng(3)
    theta = np.array(panda.theta_nominal) + 0.01 * rng.normal(size=(panda.n_bodies, 10))
    rate = rng.normal(size=theta.shape)
    msg = cv.body_joint_state(1_700_000_000.25, panda.body_names, "phi", theta, rate)
    assert msg.name[0] == f"{panda.body_names[0]}/m"
    assert msg.name[13] == f"{panda.body_names[1]}/h3"
    assert (msg.header.stamp.sec, msg.header.stamp.nanosec) == (1_700_000_000, 250_000_000)
    order = rng.permutation(len(msg.name))  # a publisher free to order its names
    shuffled = JointState(name=[msg.name[i] for i in order],
                          position=[msg.position[i] for i in order],
                          velocity=[msg.velocity[i] for i in order])
    shuffled.header.stamp = msg.header.stamp
    t, value, got_rate = BodyVectorReader("inertial_parameters", panda.body_names, "phi").read(
        shuffled)
    assert t == 1_700_000_000_250_000_000  # [ns]
    np.testing.assert_array_equal(value, theta)
    np.testing.assert_array_equal(got_rate, rate)


def test_stamped_psi_rates_only_message(panda):
    from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader

    psi_dot = np.arange(panda.n_bodies * 12, dtype=float).reshape(panda.n_bodies, 12) * 1e-3
    msg = cv.body_joint_state(2.0, panda.body_names, "psi", rates=psi_dot)
    assert msg.name[11] == f"{panda.body_names[0]}/psi12" and len(msg.position) == 0
    t, value, rate = BodyVectorReader("psi", panda.body_names, "psi").read(msg)
    assert t == 2_000_000_000 and value is None
    np.testing.assert_array_equal(rate, psi_dot)


@pytest.mark.parametrize("break_it, match", [
    (lambda m: setattr(m.header, "stamp", Time(sec=0, nanosec=0)), "is zero"),
    (lambda m: setattr(m, "name", [*m.name[:-1], "nobody/m"]), "not <body>/<parameter>"),
    (lambda m: setattr(m, "name", [*m.name[:-1], m.name[0]]), "appears twice"),
    (lambda m: setattr(m, "position", list(m.position)[:-1]), "entries for"),
    (lambda m: setattr(m, "position", [float("nan")] + list(m.position)[1:]), "non-finite"),
    (lambda m: setattr(m, "position", [1e12] + list(m.position)[1:]), "position"),
    (lambda m: (setattr(m, "position", []), setattr(m, "velocity", [])), "neither"),
])
def test_stamped_body_vector_bad_input_names_the_problem(panda, break_it, match):
    from robot_tv_dynamics.inputs.body_vectors import BodyVectorReader

    msg = cv.body_joint_state(3.0, panda.body_names, "phi", np.array(panda.theta_nominal))
    break_it(msg)
    with pytest.raises(InvalidInputError, match=match):
        BodyVectorReader("inertial_parameters", panda.body_names, "phi").read(msg)
