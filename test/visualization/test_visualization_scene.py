"""Poses of the scene from the package's forward kinematics, checked against Pinocchio's."""

from __future__ import annotations

import numpy as np
import pinocchio as pin

from robot_tv_dynamics.visualization import base_frame_name, inertia_scene, skeleton


def random_q(model, rng):
    lower = np.maximum(model.joint_limits.lower, -np.pi)
    upper = np.minimum(model.joint_limits.upper, np.pi)
    return lower + rng.random(model.nv) * (upper - lower)


def test_coms_and_box_axes_are_where_pinocchio_places_them(robot):
    rng = np.random.default_rng(5)
    pm = robot.pinocchio_model
    data = pm.createData()
    for _ in range(5):
        q = random_q(robot, rng)
        scene = inertia_scene(robot, robot.theta_nominal, kinematics=robot.kinematics(q))
        pin.forwardKinematics(pm, data, robot.pinocchio_configuration(q))
        assert scene.in_base_frame and len(scene.bodies) == robot.n_bodies
        for body in scene.bodies:
            placement = data.oMi[body.index + 1]
            np.testing.assert_allclose(body.com, placement.act(body.geometry.com), atol=1e-12)
            np.testing.assert_allclose(
                body.rotation, placement.rotation @ body.geometry.box.rotation, atol=1e-12)
            # Pinocchio's own COM of the body's inertia, in the world
            np.testing.assert_allclose(body.com, placement.act(pm.inertias[body.index + 1].lever),
                                       atol=1e-12)


def test_the_skeleton_joins_each_joint_origin_to_its_parent(robot):
    rng = np.random.default_rng(8)
    q = random_q(robot, rng)
    pm = robot.pinocchio_model
    data = pm.createData()
    pin.forwardKinematics(pm, data, robot.pinocchio_configuration(q))
    bones = skeleton(robot, robot.kinematics(q))
    assert bones.points.shape == (robot.n_bodies + 1, 3)
    np.testing.assert_allclose(bones.points[0], 0.0)
    for j in range(1, pm.njoints):
        np.testing.assert_allclose(bones.points[j], data.oMi[j].translation, atol=1e-12)
    assert [tuple(s) for s in bones.segments] == [(pm.parents[j], j) for j in range(1, pm.njoints)]
    assert bones.segment_points().shape == (robot.n_bodies, 2, 3)


def test_without_kinematics_the_poses_stay_in_the_body_frames(panda):
    scene = inertia_scene(panda, panda.theta_nominal)
    assert not scene.in_base_frame and scene.skeleton is None
    for body in scene.bodies:
        np.testing.assert_allclose(body.com, body.geometry.com)


def test_the_base_frame_is_the_urdf_root_link(panda, ur5):
    assert base_frame_name(panda) == "panda_link0"
    assert base_frame_name(ur5) == "world"
