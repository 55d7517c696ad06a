"""RobotModel: URDF loading, Θ nominal, LOCAL Jacobians and derivatives, link inertia, errors."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

from robot_tv_dynamics import (
    InvalidInputError,
    RobotModel,
    UnknownNameError,
    UnsupportedJointError,
    URDFError,
)
from robot_tv_dynamics.dynamics.kinematics import hessian_to_derivative
from robot_tv_dynamics.inertia import (
    phi_from_mass_com_inertia,
    phi_from_pinocchio,
    pseudo_inertia,
    spatial_inertia,
    transform_phi,
)
from robot_tv_dynamics.model import parse_locked_joints


def _random_q(model: RobotModel, rng: np.random.Generator) -> np.ndarray:
    limits = model.joint_limits
    return rng.uniform(limits.lower, limits.upper)


def test_theta_nominal_equals_pinocchio_inertias(robot: RobotModel) -> None:
    model = robot.pinocchio_model
    assert robot.theta_nominal.shape == (robot.n_bodies, 10) == (model.njoints - 1, 10)
    for l in range(robot.n_bodies):
        inertia = model.inertias[l + 1]
        dyn = inertia.toDynamicParameters()  # (m, h, Ixx, Ixy, Iyy, Ixz, Iyz, Izz)
        expected = [dyn[0], dyn[1], dyn[2], dyn[3], dyn[4], dyn[6], dyn[9], dyn[5], dyn[8], dyn[7]]
        np.testing.assert_allclose(robot.theta_nominal[l], expected, atol=1e-14)
        np.testing.assert_allclose(pseudo_inertia(robot.theta_nominal[l]),
                                   pin.PseudoInertia.FromInertia(inertia).toMatrix(), atol=1e-12)
        np.testing.assert_allclose(spatial_inertia(robot.theta_nominal[l]), inertia.matrix(),
                                   atol=1e-12)
    assert not robot.theta_nominal.flags.writeable


def test_names_and_limits(panda: RobotModel, ur5: RobotModel) -> None:
    assert panda.nv == 9 and panda.n_bodies == 9
    assert panda.body_names[:7] == [f"panda_link{i}" for i in range(1, 8)]
    assert panda.joint_names[0] == "panda_joint1"
    assert ur5.body_names == ["shoulder_link", "upper_arm_link", "forearm_link", "wrist_1_link",
                              "wrist_2_link", "wrist_3_link"]
    assert panda.joint_limits.effort[0] == 87.0 and panda.joint_limits.upper[3] == -0.0698
    assert panda.joint_limits.prismatic.tolist() == [False] * 7 + [True] * 2


def test_local_jacobians_equal_pinocchio(robot: RobotModel) -> None:
    rng = np.random.default_rng(0)
    model, data = robot.pinocchio_model, robot.pinocchio_model.createData()
    for _ in range(5):
        q = _random_q(robot, rng)
        stacked = robot.body_jacobians_local(q)
        pin.computeJointJacobians(model, data, q)
        for l in range(robot.n_bodies):
            np.testing.assert_allclose(stacked[6 * l:6 * l + 6],
                                       pin.getJointJacobian(model, data, l + 1, pin.LOCAL),
                                       atol=1e-14)


def test_jacobian_derivatives_match_finite_differences(robot: RobotModel) -> None:
    rng = np.random.default_rng(1)
    eps = 1e-6
    for _ in range(3):
        q = _random_q(robot, rng)
        derivative = robot.body_jacobian_derivatives_local(q)
        for k in range(robot.nv):
            dq = np.zeros(robot.nv)
            dq[k] = eps
            fd = (robot.kinematics(q + dq).jacobians
                  - robot.kinematics(q - dq).jacobians) / (2 * eps)
            np.testing.assert_allclose(derivative[..., k], fd, atol=1e-8)


def test_hessian_reorder_is_needed() -> None:
    """The raw Pinocchio binding is not T[:, i, k]; the reorder is (guards the pitfall)."""
    nv = 3
    raw = np.arange(6 * nv * nv, dtype=float).reshape(6, nv, nv)
    reordered = hessian_to_derivative(raw, nv)
    assert reordered.shape == (6, nv, nv)
    assert not np.array_equal(reordered, raw)


def test_replacing_a_fixed_link_inertia_equals_an_edited_urdf(urdf_paths: dict[str, str]) -> None:
    cases = [("panda", "panda_hand"), ("ur5", "ee_link")]
    for robot_name, link in cases:
        text = Path(urdf_paths[robot_name]).read_text()
        robot = RobotModel.from_urdf_string(text)
        mass, com, rpy = 1.7, [0.01, -0.02, 0.08], [0.2, -0.1, 0.4]
        moments = dict(ixx=0.011, ixy=0.001, ixz=-0.002, iyy=0.013, iyz=0.0005, izz=0.009)
        inertial = (
            f'<inertial><origin xyz="{com[0]} {com[1]} {com[2]}" rpy="{rpy[0]} {rpy[1]} {rpy[2]}"/>'
            f'<mass value="{mass}"/><inertia '
            + " ".join(f'{k}="{v}"' for k, v in moments.items()) + "/></inertial>")
        pattern = re.compile(rf'(<link name="{link}"\s*>)(.*?)(</link>)', re.S)
        match = pattern.search(text)
        assert match, link
        body = re.sub(r"<inertial>.*?</inertial>", "", match.group(2), flags=re.S)
        edited = text[:match.start()] + match.group(1) + inertial + body + match.group(3) \
            + text[match.end():]
        rebuilt = RobotModel.from_urdf_string(edited)
        from robot_tv_dynamics.inertia import phi_from_urdf_inertial
        phi_link = phi_from_urdf_inertial(mass, com, rpy, *moments.values())
        replaced = robot.theta_with_link_inertia(robot.theta_nominal, link, phi_link)
        np.testing.assert_allclose(replaced, rebuilt.theta_nominal, atol=1e-12)
        assert not np.allclose(replaced, robot.theta_nominal)


def test_payload_as_mass_com_inertia_enters_the_owning_body(panda: RobotModel) -> None:
    phi = phi_from_mass_com_inertia(2.0, [0, 0, 0.1], np.diag([1e-3, 1e-3, 2e-3]))
    theta = panda.theta_with_link_inertia(panda.theta_nominal, "panda_hand_tcp", phi)
    changed = np.flatnonzero(np.any(theta != panda.theta_nominal, axis=1))
    assert changed.tolist() == [panda.body_index("panda_link7")]
    assert theta[6, 0] == pytest.approx(panda.theta_nominal[6, 0] + 2.0)


CONTINUOUS = """<robot name="c">
  <link name="base"/>
  <link name="a"><inertial><origin xyz="0.1 0 0"/><mass value="1"/>
    <inertia ixx="0.01" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.01"/></inertial></link>
  <link name="b"><inertial><origin xyz="0 0.2 0"/><mass value="2"/>
    <inertia ixx="0.02" ixy="0" ixz="0" iyy="0.01" iyz="0" izz="0.02"/></inertial></link>
  <joint name="j1" type="continuous"><parent link="base"/><child link="a"/>
    <axis xyz="0 0 1"/></joint>
  <joint name="j2" type="revolute"><parent link="a"/><child link="b"/>
    <origin xyz="0.3 0 0" rpy="0.3 0 0"/><axis xyz="0 1 0"/>
    <limit lower="-1" upper="1" effort="5" velocity="1"/></joint>
</robot>"""


def test_continuous_joint_uses_angles(tmp_path: Path) -> None:
    robot = RobotModel.from_urdf_string(CONTINUOUS)
    assert robot.nv == 2 and robot.pinocchio_model.nq == 3
    assert robot.joint_limits.continuous.tolist() == [True, False]
    assert robot.joint_limits.lower[0] == pytest.approx(-np.pi)
    q, eps = np.array([0.7, -0.4]), 1e-6
    derivative = robot.body_jacobian_derivatives_local(q)
    for k in range(2):
        dq = np.zeros(2)
        dq[k] = eps
        fd = (robot.kinematics(q + dq).jacobians - robot.kinematics(q - dq).jacobians) / (2 * eps)
        np.testing.assert_allclose(derivative[..., k], fd, atol=1e-8)


# ----------------------------------------------------------------------------- errors
def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(URDFError, match="does not exist"):
        RobotModel.from_urdf(tmp_path / "nope.urdf")


def test_unreadable_file(tmp_path: Path) -> None:
    path = tmp_path / "binary.urdf"
    path.write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(URDFError, match="cannot be read|malformed"):
        RobotModel.from_urdf(path)


def test_malformed_xml() -> None:
    with pytest.raises(URDFError, match="malformed XML"):
        RobotModel.from_urdf_string("<robot name='x'><link name='a'></robot>")
    with pytest.raises(URDFError, match="empty"):
        RobotModel.from_urdf_string("  ")
    with pytest.raises(URDFError, match="expected <robot>"):
        RobotModel.from_urdf_string("<sdf/>")


def test_urdf_without_movable_joints() -> None:
    xml = """<robot name="r"><link name="a"/><link name="b"/>
      <joint name="f" type="fixed"><parent link="a"/><child link="b"/></joint></robot>"""
    with pytest.raises(URDFError, match="no movable joint"):
        RobotModel.from_urdf_string(xml)


def test_floating_base_is_refused_by_name() -> None:
    xml = CONTINUOUS.replace('type="continuous"', 'type="floating"')
    with pytest.raises(UnsupportedJointError, match='"j1".*floating base is not'):
        RobotModel.from_urdf_string(xml)


def test_negative_mass_in_urdf() -> None:
    xml = CONTINUOUS.replace('<mass value="2"/>', '<mass value="-2"/>')
    with pytest.raises(URDFError, match='link "b".*negative'):
        RobotModel.from_urdf_string(xml)


def test_unknown_link(panda: RobotModel) -> None:
    with pytest.raises(UnknownNameError, match='link "gripper_x" is not in the URDF') as error:
        panda.theta_with_link_inertia(panda.theta_nominal, "gripper_x", np.zeros(10))
    assert "panda_hand" in error.value.known
    with pytest.raises(InvalidInputError, match="fixed to the base"):
        panda.theta_with_link_inertia(panda.theta_nominal, "panda_link0", np.zeros(10))
    with pytest.raises(UnknownNameError, match="body"):
        panda.body_index("nope")


@pytest.mark.parametrize("theta, message", [
    (np.zeros((9, 9)), r"theta: expected shape \(9, 10\)"),
    (np.full((9, 10), np.nan), "theta: non-finite"),
    (np.full((9, 10), np.inf), "theta: non-finite"),
])
def test_bad_theta(panda: RobotModel, theta: np.ndarray, message: str) -> None:
    with pytest.raises(InvalidInputError, match=message):
        panda.theta_with_link_inertia(theta, "panda_hand", np.zeros(10))


def test_phi_of_pinocchio_links_is_consistent(robot: RobotModel) -> None:
    for l in range(robot.n_bodies):
        phi = phi_from_pinocchio(robot.pinocchio_model.inertias[l + 1])
        assert np.linalg.eigvalsh(pseudo_inertia(phi))[0] > 0


def test_link_load_moves_into_the_owning_body_like_its_particles(panda: RobotModel) -> None:
    """Φ, Φ̇, ψ, ψ̇ of moving, mass-changing particles given in a link frame."""
    rng = np.random.default_rng(4)
    attachment = panda.link_attachment("panda_hand_tcp")
    rotation, translation = attachment.rotation, attachment.translation
    m, md = rng.uniform(0.1, 1, 3), rng.normal(size=3)
    x, u, ud = (rng.normal(scale=0.1, size=(3, 3)) for _ in range(3))

    def state(points: np.ndarray, vel: np.ndarray, acc: np.ndarray) -> tuple:
        from robot_tv_dynamics.inertia import phi_from_point_masses
        phi = phi_from_point_masses(m, points)
        h = 1e-6  # Φ̇ by a central difference of the moving cloud (Φ is quadratic in x)
        phi_dot = (phi_from_point_masses(m + h * md, points + h * vel)
                   - phi_from_point_masses(m - h * md, points - h * vel)) / (2 * h)
        psi = sum(mi * np.r_[vi, np.outer(vi, xi).ravel()]
                  for mi, xi, vi in zip(m, points, vel, strict=True))
        psi_dot = sum(mdi * np.r_[vi, np.outer(vi, xi).ravel()]
                      + mi * np.r_[ai, (np.outer(ai, xi) + np.outer(vi, vi)).ravel()]
                      for mi, mdi, xi, vi, ai in zip(m, md, points, vel, acc, strict=True))
        return phi, phi_dot, psi, psi_dot

    in_link = state(x, u, ud)
    in_body = state(x @ rotation.T + translation, u @ rotation.T, ud @ rotation.T)
    body, *moved = panda.link_load_in_body("panda_hand_tcp", *in_link)
    assert body == panda.body_index("panda_link7")
    for got, want in zip(moved, in_body, strict=True):
        np.testing.assert_allclose(got, want, atol=1e-8)


SLIDER = """<robot name="sphere_on_a_rail">
  <link name="rail"/>
  <link name="sphere"><inertial><mass value="2"/>
    <inertia ixx="0.008" ixy="0" ixz="0" iyy="0.008" iyz="0" izz="0.008"/></inertial></link>
  <joint name="x" type="prismatic"><parent link="rail"/><child link="sphere"/>
    <axis xyz="1 0 0"/><limit lower="-1" upper="1" effort="10" velocity="1"/></joint>
</robot>"""


def test_one_dof_robot_has_mass_matrix_m() -> None:
    """The paper's sphere on the x-axis: J = (1, 0, 0, 0, 0, 0)ᵀ and M(q, Θ) = m."""
    robot = RobotModel.from_urdf_string(SLIDER)
    assert robot.nv == 1
    np.testing.assert_allclose(robot.body_jacobians_local([0.3]), [[1], [0], [0], [0], [0], [0]])
    terms = robot.inverse_dynamics([0.3], [0.5], [2.0], robot.theta_nominal)
    np.testing.assert_allclose(terms.mass_matrix, [[2.0]])
    np.testing.assert_allclose(terms.tau, [4.0])  # m q̈, gravity ⟂ the rail


# ---------------------------------------------------------------------------- locked joints
FINGERS = {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}


@pytest.fixture(scope="module")
def panda_arm(urdf_paths: dict[str, str]) -> RobotModel:
    """The Panda with its fingers locked at 2 cm: the 7-dof arm MoveIt plans for."""
    return RobotModel.from_urdf(urdf_paths["panda"], locked_joints=FINGERS)


def _fingers_in_link7(panda: RobotModel) -> np.ndarray:
    """Θ of the 9-dof Panda with the finger rows moved into link7 at the locked position."""
    model = panda.pinocchio_model
    data = model.createData()
    q = np.zeros(panda.nv)
    q[7:] = 0.02
    pin.forwardKinematics(model, data, q)
    theta = panda.theta_nominal[:7].copy()
    for finger in (7, 8):
        placement = data.oMi[7].actInv(data.oMi[finger + 1])
        theta[6] += transform_phi(panda.theta_nominal[finger], placement.rotation,
                                  placement.translation)
    return theta


def test_locked_fingers_leave_the_seven_arm_joints_and_merge_into_link7(
    panda: RobotModel, panda_arm: RobotModel
) -> None:
    assert panda_arm.nv == 7 and panda_arm.n_bodies == 7
    assert panda_arm.joint_names == panda.joint_names[:7]
    assert panda_arm.body_names == panda.body_names[:7]
    assert dict(panda_arm.locked_joints) == FINGERS
    limits, full = panda_arm.joint_limits, panda.joint_limits
    for field in ("lower", "upper", "velocity", "effort", "prismatic"):
        np.testing.assert_array_equal(getattr(limits, field), getattr(full, field)[:7])
    np.testing.assert_allclose(panda_arm.theta_nominal, _fingers_in_link7(panda), atol=1e-15)
    assert not panda_arm.theta_nominal.flags.writeable


def test_links_of_locked_joints_belong_to_the_parent_body(
    panda: RobotModel, panda_arm: RobotModel
) -> None:
    attachment = panda_arm.link_attachment("panda_leftfinger")
    assert attachment.body == panda_arm.body_index("panda_link7")
    hand = panda_arm.link_attachment("panda_hand")
    np.testing.assert_allclose(attachment.translation - hand.translation,
                               hand.rotation @ [0.0, 0.02, 0.0584], atol=1e-12)
    # removing a finger's URDF inertia leaves link7 with the other finger only
    theta = panda_arm.theta_with_link_inertia(panda_arm.theta_nominal, "panda_leftfinger",
                                              np.zeros(10))
    np.testing.assert_allclose(theta[6, 0], panda.theta_nominal[6, 0] + panda.theta_nominal[8, 0])
    body, phi, *_ = panda_arm.link_load_in_body("panda_rightfinger", np.r_[1.0, np.zeros(9)])
    assert body == 6 and phi[0] == 1.0


def test_locked_model_equals_the_full_model_at_the_locked_fingers(
    panda: RobotModel, panda_arm: RobotModel
) -> None:
    """M, τ of (39) equal the arm rows/columns of the 9-dof model at q̇_f = q̈_f = 0.

    Exact: the locked fingers are rigidly attached to link7. Θ̇, Ψ and Ψ̇ act on the
    arm bodies (the finger rows are zero in the 9-dof model).
    """
    rng = np.random.default_rng(11)
    theta_full = panda.theta_nominal.copy()
    for _ in range(5):
        q = _random_q(panda_arm, rng)
        qd, qdd = rng.normal(size=7), rng.normal(size=7)
        theta_arm = rng.normal(scale=0.3, size=(7, 10))
        theta_full[:7] = panda.theta_nominal[:7] + theta_arm
        theta_dot, psi, psi_dot = (rng.normal(size=(7, 10)), rng.normal(size=(7, 12)),
                                   rng.normal(size=(7, 12)))

        def pad(value: np.ndarray) -> np.ndarray:
            return np.vstack([value, np.zeros((2, value.shape[1]))])

        full = panda.inverse_dynamics(
            np.r_[q, 0.02, 0.02], np.r_[qd, 0, 0], np.r_[qdd, 0, 0], theta_full,
            pad(theta_dot), pad(psi), pad(psi_dot))
        arm = panda_arm.inverse_dynamics(
            q, qd, qdd, _fingers_in_link7(panda) + theta_arm, theta_dot, psi, psi_dot)
        np.testing.assert_allclose(arm.mass_matrix, full.mass_matrix[:7, :7], atol=1e-12)
        np.testing.assert_allclose(arm.mass_rate_matrix, full.mass_rate_matrix[:7, :7],
                                   atol=1e-12)
        np.testing.assert_allclose(arm.tau, full.tau[:7], atol=1e-10)


def test_locked_joints_change_the_cache_key(urdf_paths: dict[str, str],
                                            panda: RobotModel, panda_arm: RobotModel) -> None:
    path = urdf_paths["panda"]
    at_zero = RobotModel.from_urdf(path, ["panda_finger_joint1", "panda_finger_joint2"])
    assert dict(at_zero.locked_joints) == {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
    same = RobotModel.from_urdf(path, {"panda_finger_joint2": 0.0, "panda_finger_joint1": 0.0})
    keys = {panda.urdf_sha256, panda_arm.urdf_sha256, at_zero.urdf_sha256}
    assert len(keys) == 3 and same.urdf_sha256 == at_zero.urdf_sha256
    assert panda_arm.xml_sha256 == panda.xml_sha256 == panda.urdf_sha256
    assert RobotModel.from_urdf(path, {}).urdf_sha256 == panda.urdf_sha256


def test_locked_joint_errors(urdf_paths: dict[str, str]) -> None:
    path = urdf_paths["panda"]
    with pytest.raises(UnknownNameError, match='joint "panda_joint8"') as error:
        RobotModel.from_urdf(path, {"panda_joint8": 0.0})  # a fixed joint of the URDF
    assert error.value.kind == "joint" and "panda_finger_joint1" in error.value.known
    with pytest.raises(InvalidInputError, match='"panda_finger_joint1".*outside its limits'):
        RobotModel.from_urdf(path, {"panda_finger_joint1": 0.05})
    with pytest.raises(InvalidInputError, match="not a finite number"):
        RobotModel.from_urdf(path, {"panda_joint1": float("nan")})
    with pytest.raises(URDFError, match="no movable joint"):
        RobotModel.from_urdf(path, RobotModel.from_urdf(path).joint_names)
    with pytest.raises(URDFError, match="no movable joint"):
        RobotModel.from_urdf_string(SLIDER, locked_joints=["x"])


def test_parse_locked_joints() -> None:
    assert parse_locked_joints(["a", " b = 0.5 "]) == {"a": None, "b": 0.5}
    for bad in (["a="], ["=1"], ["a=x"], ["a=inf"], ["a", "a=1"]):
        with pytest.raises(InvalidInputError, match="--lock"):
            parse_locked_joints(bad, "--lock")
