"""Payload frames: the flange frame of a URDF, a load moved between frames of one body.

Expected values are point-mass sums written out here, with the fixed transforms read
off the URDF text (UR5: tool0 sits at (0, 0.0823, 0) in wrist_3_link, turned −90° about
x; Panda: panda_hand at panda_link8's origin, turned −45° about z), not from the code
under test.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from robot_tv_dynamics.evaluation import Payload, evaluate, load_trajectory
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import mass_com_inertia_from_phi, phi_from_mass_com_inertia
from robot_tv_dynamics.model.frames import (
    flange_frame,
    frame_change_matrix,
    load_in_frame,
    payload_frame_for,
)
from robot_tv_dynamics.paths import package_config_dir

MASSES = np.array([1.2, 0.8, 0.5, 1.5])
POINTS_TOOL0 = np.array([[0.02, 0.01, 0.05], [-0.03, 0.04, 0.12],
                         [0.05, -0.02, 0.09], [0.0, 0.0, 0.03]])  # [m] in tool0


def _rx(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[1, 0, 0], [0, c, -s], [0, s, c]])


def _rz(a):
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])


def _by_hand(points):
    """Mass, COM and inertia about the COM of MASSES at ``points`` (rows)."""
    m = MASSES.sum()
    com = MASSES @ points / m
    inertia = np.zeros((3, 3))
    for mass, x in zip(MASSES, points - com, strict=True):
        inertia += mass * (x @ x * np.eye(3) - np.outer(x, x))
    return m, com, inertia


def test_flange_frames_of_the_vendors_urdfs(ur5, panda):
    assert flange_frame(ur5) == "tool0"
    assert flange_frame(panda) == "panda_link8"
    assert payload_frame_for(ur5, "wrist_3_link") == "tool0"
    assert payload_frame_for(panda, "panda_hand") == "panda_link8"
    assert payload_frame_for(panda, "panda_hand", "panda_hand") == "panda_hand"
    assert payload_frame_for(ur5, "forearm_link") == "forearm_link"  # tool0 is elsewhere


def test_a_load_in_tool0_is_converted_into_wrist_3_link_exactly(ur5):
    points_w3 = POINTS_TOOL0 @ _rx(-math.pi / 2).T + np.array([0.0, 0.0823, 0.0])
    m, com_t, inertia_t = _by_hand(POINTS_TOOL0)
    _, com_w, inertia_w = _by_hand(points_w3)
    phi = load_in_frame(ur5, phi_from_mass_com_inertia(m, com_t, inertia_t), "tool0",
                        "wrist_3_link")
    mass, com, inertia = mass_com_inertia_from_phi(phi)
    assert mass == pytest.approx(m, rel=1e-14)
    np.testing.assert_allclose(com, com_w, atol=1e-12)
    np.testing.assert_allclose(inertia, inertia_w, atol=1e-12)
    back = load_in_frame(ur5, phi, "wrist_3_link", "tool0")
    np.testing.assert_allclose(back, phi_from_mass_com_inertia(m, com_t, inertia_t), atol=1e-12)
    change = frame_change_matrix(ur5, "tool0", "wrist_3_link")
    np.testing.assert_allclose(change @ phi_from_mass_com_inertia(m, com_t, inertia_t), phi,
                               atol=1e-12)


def test_the_same_load_given_in_tool0_or_wrist_3_link_gives_identical_torques(ur5):
    points_w3 = POINTS_TOOL0 @ _rx(-math.pi / 2).T + np.array([0.0, 0.0823, 0.0])
    trajectory = load_trajectory(str(package_config_dir() / "examples" / "ur5_trajectory.yaml"))
    in_tool0 = Payload("tool0", *_by_hand(POINTS_TOOL0))
    in_wrist = Payload("wrist_3_link", *_by_hand(points_w3))
    a = evaluate(ur5, trajectory, in_tool0, compute_max_payload=False)
    b = evaluate(ur5, trajectory, in_wrist, compute_max_payload=False)
    unloaded = evaluate(ur5, trajectory, Payload("tool0", 0.0), compute_max_payload=False)
    assert np.abs(np.asarray(a.effort) - np.asarray(unloaded.effort)).max() > 1.0  # it counts
    np.testing.assert_allclose(a.effort, b.effort, rtol=0, atol=1e-9)


def test_panda_hand_to_the_flange_is_a_turn_about_z(panda):
    points_link8 = POINTS_TOOL0 @ _rz(-math.pi / 4).T  # the hand's points seen from link8
    m, com_h, inertia_h = _by_hand(POINTS_TOOL0)
    phi = load_in_frame(panda, phi_from_mass_com_inertia(m, com_h, inertia_h), "panda_hand",
                        "panda_link8")
    _, com, inertia = mass_com_inertia_from_phi(phi)
    _, com_8, inertia_8 = _by_hand(points_link8)
    np.testing.assert_allclose(com, com_8, atol=1e-12)
    np.testing.assert_allclose(inertia, inertia_8, atol=1e-12)


def test_a_frame_on_another_body_is_refused_naming_both(ur5):
    with pytest.raises(InvalidInputError, match="forearm_link.*tool0|tool0.*forearm_link"):
        payload_frame_for(ur5, "tool0", "forearm_link")
