"""Jacobian extremes: the joint box, enclosures, the sampled and certified searches."""

from __future__ import annotations

import math

import numpy as np
import pytest
from support.bounds_cases import (
    extreme_values,
    random_q,
)

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics import bounds as B
from robot_tv_dynamics.bounds.evaluator import BoxEvaluator
from robot_tv_dynamics.bounds.sampled import search_bounds
from robot_tv_dynamics.exceptions import InvalidInputError


# --------------------------------------------------------------------------- structure
def test_bracket_formula_matches_pinocchio_kinematic_hessians(robot: RobotModel) -> None:
    box = B.joint_search_box(robot)
    evaluator = BoxEvaluator(robot, box, search_bounds(box))
    rng = np.random.default_rng(1)
    qs = random_q(robot, rng, 5)
    jac = evaluator.jacobians(qs)
    derivative = evaluator.derivatives(jac)
    for q, j, d in zip(qs, jac, derivative, strict=True):
        kin = robot.kinematics(q)
        np.testing.assert_allclose(j, kin.jacobians, atol=1e-12)
        np.testing.assert_allclose(d, kin.jacobian_derivatives[..., box.active], atol=1e-12)


def test_search_box_drops_exactly_the_joints_singular_values_do_not_depend_on(
        ur5: RobotModel, panda: RobotModel) -> None:
    ur5_box = B.joint_search_box(ur5)
    assert ur5_box.active_joints == ("shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                                     "wrist_2_joint")
    panda_box = B.joint_search_box(panda)
    assert panda_box.active_joints == tuple(panda.joint_names[1:])  # 6 arm joints + 2 fingers
    rng = np.random.default_rng(2)
    for model, box in ((ur5, ur5_box), (panda, panda_box)):
        for q in random_q(model, rng, 4):
            base = np.linalg.svd(model.body_jacobians_local(q), compute_uv=False)
            for k in range(model.nv):
                moved = q.copy()
                moved[k] += 0.7
                sigma = np.linalg.svd(model.body_jacobians_local(moved), compute_uv=False)
                if box.active[k]:
                    continue
                np.testing.assert_allclose(sigma, base, atol=1e-12)
    # the searched joints really matter (one configuration where σ changes suffices)
    q = np.array([0.0, 0.3, 0.5, -0.2, 0.4, 0.0])
    for k in np.flatnonzero(ur5_box.active):
        moved = q.copy()
        moved[k] += 0.7
        assert not np.allclose(np.linalg.svd(ur5.body_jacobians_local(moved), compute_uv=False),
                               np.linalg.svd(ur5.body_jacobians_local(q), compute_uv=False))


def test_revolute_range_wider_than_one_period_is_cut_to_one_period(ur5: RobotModel) -> None:
    box = B.joint_search_box(ur5)
    assert ur5.joint_limits.upper[1] - ur5.joint_limits.lower[1] > 2 * np.pi
    assert box.upper[1] - box.lower[1] == pytest.approx(2 * np.pi)


def test_trigonometric_model_reproduces_jtj(ur5: RobotModel) -> None:
    box = B.joint_search_box(ur5)
    evaluator = BoxEvaluator(ur5, box, search_bounds(box))
    trig = evaluator.trig
    assert trig is not None
    assert trig.abs_coeff.shape[0] < 100  # sparse: rotations about parallel axes cancel


@pytest.mark.parametrize("path", ["taylor", "interval"])
def test_box_enclosures_contain_every_sampled_value(robot: RobotModel, path: str) -> None:
    box = B.joint_search_box(robot)
    evaluator = BoxEvaluator(robot, box, search_bounds(box))
    rng = np.random.default_rng(3)
    for radius in (0.02, 0.1, 0.4):
        centre = evaluator.lower + rng.random((6, evaluator.d)) * (evaluator.upper
                                                                   - evaluator.lower)
        lo = np.maximum(centre - radius, evaluator.lower)
        hi = np.minimum(centre + radius, evaluator.upper)
        if path == "taylor":
            result = evaluator.boxes(lo, hi)
        else:
            result = evaluator._interval_boxes(lo, hi)
        for b in range(lo.shape[0]):
            x = lo[b] + rng.random((200, evaluator.d)) * (hi[b] - lo[b])
            lam_min, lam_max = evaluator.values(evaluator.full(x))
            assert lam_min.min() >= result["gamma_lo"][b]
            assert lam_max.max() <= result["delta_hi"][b]


# --------------------------------------------------------------------------- extremes
def test_certified_bracket_contains_every_sampled_value(
        robot: RobotModel, certified: dict[str, B.JacobianExtremes]) -> None:
    name = "ur5" if robot.nv == 6 else "panda"
    ext = certified[name]
    assert ext.method == B.CERTIFIED and ext.certified
    g_lo, g_hi = ext.inf_lambda_min_JtJ_bracket
    d_lo, d_hi = ext.sup_sigma_max_J_sq_bracket
    assert 0.0 <= g_lo <= g_hi <= d_lo <= d_hi < math.inf
    assert ext.inf_lambda_min_JtJ == g_lo and ext.sup_sigma_max_J_sq == d_hi
    # sampled over the URDF limits (UR5: ±2π, wider than the searched period)
    lam_min, lam_max = extreme_values(robot, random_q(robot, np.random.default_rng(4), 300))
    assert lam_min.min() >= g_lo and lam_max.max() <= d_hi
    # the ends that are attained values are attained at the reported configurations
    assert B.jacobian_extremes_at(robot, ext.argmin_q)[0] == pytest.approx(g_hi, rel=1e-9)
    assert B.jacobian_extremes_at(robot, ext.argmax_q)[1] == pytest.approx(d_lo, rel=1e-9)
    assert ext.normal is True and ext.normal_method == B.STRUCTURAL
    assert g_lo >= B.structural_gamma_lower_bound(robot) > 0.0
    assert ext.bounded is True


def test_certified_search_is_deterministic_under_a_box_budget(ur5: RobotModel) -> None:
    first = B.certified_jacobian_extremes(ur5, time_limit=60.0, max_boxes=800, samples=256)
    second = B.certified_jacobian_extremes(ur5, time_limit=60.0, max_boxes=800, samples=256)
    assert first.inf_lambda_min_JtJ_bracket == second.inf_lambda_min_JtJ_bracket
    assert first.sup_sigma_max_J_sq_bracket == second.sup_sigma_max_J_sq_bracket


def test_sampled_estimate_is_labelled_and_lies_inside_the_certified_bracket(
        ur5: RobotModel, certified: dict[str, B.JacobianExtremes]) -> None:
    sampled = B.jacobian_extremes(ur5, B.SAMPLED, samples=512)
    assert sampled.method == "sampled" and not sampled.certified
    # the lower end is the structural bound, not a sampled value
    assert sampled.inf_lambda_min_JtJ_bracket[0] == B.structural_gamma_lower_bound(ur5)
    cert = certified["ur5"]
    assert cert.inf_lambda_min_JtJ_bracket[0] <= sampled.inf_lambda_min_JtJ
    assert sampled.sup_sigma_max_J_sq <= cert.sup_sigma_max_J_sq_bracket[1]
    assert sampled.sup_sigma_max_J_sq_bracket[1] >= cert.sup_sigma_max_J_sq_bracket[0]
    assert sampled.normal_method == B.STRUCTURAL and "left inverse" in sampled.normal_reason


def test_progress_callback_reports_a_growing_fraction(ur5: RobotModel) -> None:
    reports: list[B.SearchProgress] = []
    B.certified_jacobian_extremes(ur5, time_limit=60.0, max_boxes=300, samples=128,
                                  progress=reports.append)
    assert reports and all(0.0 <= r.fraction <= 1.0 for r in reports)
    assert reports[-1].boxes >= reports[0].boxes
    # one count over the samples, the local floor and the branch and bound: never back
    assert all(a.boxes <= b.boxes for a, b in zip(reports, reports[1:], strict=False))


def test_bad_settings_raise_invalid_input(ur5: RobotModel) -> None:
    with pytest.raises(InvalidInputError, match="method"):
        B.jacobian_extremes(ur5, "guessed")
    with pytest.raises(InvalidInputError, match="time_limit"):
        B.certified_jacobian_extremes(ur5, time_limit=-1.0)
    with pytest.raises(InvalidInputError, match="samples"):
        B.sampled_jacobian_extremes(ur5, samples=0)


def test_structural_left_inverse_bound_holds_everywhere_and_proves_normality(
        robot: RobotModel) -> None:
    floor = B.structural_gamma_lower_bound(robot)
    assert floor > 0.29
    rng = np.random.default_rng(10)
    wide = rng.uniform(-10, 10, size=(200, robot.nv))  # far outside the joint limits
    lam_min, _ = extreme_values(robot, wide)
    assert lam_min.min() >= floor


# --------------------------------------------------------------------------- theorems
