"""Theorems 2–4, Lemmas 1–3, the paper's counterexamples, the cache and the URDF report."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from support.bounds_cases import (
    LIMIT,
    LINK,
    joint,
    random_consistent_theta,
    random_q,
    urdf_arm,
)

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics import bounds as B
from robot_tv_dynamics.bounds.evaluator import BoxEvaluator
from robot_tv_dynamics.bounds.sampled import search_bounds
from robot_tv_dynamics.consistency import ConsistencyTracker, spectral_statistics
from robot_tv_dynamics.inertia import (
    phi_from_pseudo_inertia,
    pseudo_inertia,
    spatial_inertia,
)


def test_mass_matrix_eigenvalues_lie_in_alpha1_alpha2_for_random_consistent_theta_histories(
        robot: RobotModel, certified: dict[str, B.JacobianExtremes]) -> None:
    ext = certified["ur5" if robot.nv == 6 else "panda"]
    rng = np.random.default_rng(5)
    tracker = ConsistencyTracker(robot.n_bodies)
    history = [random_consistent_theta(robot.n_bodies, rng, spread=s)
               for s in (0.3, 1.0, 2.0)]
    for theta in history:
        snapshot = tracker.update(theta)
    bounds = B.uniform_mass_matrix_bounds(ext, snapshot.inf_margin, snapshot.sup_size)
    assert bounds.method == B.CERTIFIED and 0.0 < bounds.alpha1 <= bounds.alpha2
    for q in random_q(robot, rng, 20):
        for theta in history:
            eig = np.linalg.eigvalsh(robot.mass_matrix(q, theta))
            assert bounds.alpha1 <= eig[0] and eig[-1] <= bounds.alpha2


def test_sampled_alphas_are_bounds_and_estimates_are_labelled(robot: RobotModel) -> None:
    """Sampled mode: α₁, α₂ come from the structural ends, so they still bound M."""
    ext = B.sampled_jacobian_extremes(robot, samples=256, refine=2)
    rng = np.random.default_rng(6)
    theta = random_consistent_theta(robot.n_bodies, rng)
    tracker = ConsistencyTracker(robot.n_bodies)
    snapshot = tracker.update(theta)
    bounds = B.uniform_mass_matrix_bounds(ext, snapshot.inf_margin, snapshot.sup_size)
    assert bounds.method == B.SAMPLED
    assert bounds.gamma == ext.inf_lambda_min_JtJ_bracket[0] <= ext.inf_lambda_min_JtJ
    assert bounds.alpha1 <= bounds.alpha1_estimate
    assert bounds.alpha2 >= bounds.alpha2_estimate
    for q in random_q(robot, rng, 50):
        eig = np.linalg.eigvalsh(robot.mass_matrix(q, theta))
        assert bounds.alpha1 <= eig[0] and eig[-1] <= bounds.alpha2


def test_no_alpha_for_inconsistent_theta(robot: RobotModel) -> None:
    """Theorems 2, 3 need f(Φ_l) ≻ 0: with some μ ≤ 0 neither α is claimed."""
    ext = B.sampled_jacobian_extremes(robot, samples=64, refine=1)
    theta = np.array(robot.theta_nominal)
    theta[-1, 0] = -abs(theta[-1, 0])  # a negative mass
    snapshot = ConsistencyTracker(robot.n_bodies).update(theta)
    assert snapshot.inf_margin.min() < 0
    bounds = B.uniform_mass_matrix_bounds(ext, snapshot.inf_margin, snapshot.sup_size)
    assert math.isnan(bounds.alpha1) and math.isnan(bounds.alpha2)
    assert bounds.to_dict()["alpha1"] is None


def test_theorem4_bounds_the_mass_rate_matrix_for_random_theta_dot(
        robot: RobotModel, certified: dict[str, B.JacobianExtremes]) -> None:
    ext = certified["ur5" if robot.nv == 6 else "panda"]
    rng = np.random.default_rng(6)
    for q in random_q(robot, rng, 10):
        theta_dot = rng.normal(size=(robot.n_bodies, 10))  # any rate, consistent or not
        sigma_j2 = B.jacobian_extremes_at(robot, q)[1]
        exact = np.linalg.norm(robot.mass_matrix(q, theta_dot), ord=2)
        spectral = B.mass_rate_bound(theta_dot, sigma_j2)
        entrywise = B.rate_spatial_inertia_norm_entrywise(theta_dot) * sigma_j2
        assert exact <= spectral * (1 + 1e-12) <= entrywise * (1 + 1e-12)
        assert exact <= B.mass_rate_bound(theta_dot, ext.sup_sigma_max_J_sq)
        inst = B.instantaneous_bounds(robot, q, robot.theta_nominal, theta_dot)
        assert inst.mass_rate_sigma_max == pytest.approx(exact)
        assert inst.mass_rate_sigma_max <= inst.mass_rate_bound <= inst.mass_rate_bound_entrywise


def test_instantaneous_bounds_bracket_the_exact_eigenvalues(robot: RobotModel) -> None:
    rng = np.random.default_rng(7)
    for q in random_q(robot, rng, 10):
        theta = random_consistent_theta(robot.n_bodies, rng)
        inst = B.instantaneous_bounds(robot, q, theta)
        assert inst.lower_bound <= inst.lambda_min_M <= inst.lambda_max_M <= inst.upper_bound
    inconsistent = np.array(robot.theta_nominal)
    inconsistent[0, 0] = -1.0
    assert math.isnan(B.instantaneous_bounds(robot, q, inconsistent).lower_bound)


def test_lemma3_q0_has_largest_singular_value_sqrt2() -> None:
    assert B.lemma3_sigma_max_q0() == pytest.approx(math.sqrt(2.0), abs=1e-14)
    assert B.LEMMA3_BOUND == math.sqrt(2.0)


@given(st.lists(st.floats(-1.0, 1.0), min_size=16, max_size=16), st.floats(1e-3, 1.0))
def test_spatial_inertia_eigenvalues_are_bracketed_by_the_pseudo_inertia(
        entries: list[float], shift: float) -> None:
    factor = np.array(entries).reshape(4, 4)
    phi = phi_from_pseudo_inertia(factor @ factor.T + shift * np.eye(4))
    f_eig = np.linalg.eigvalsh(pseudo_inertia(phi))
    z_eig = np.linalg.eigvalsh(spatial_inertia(phi))
    assert z_eig[0] >= f_eig[0] * (1 - 1e-9) - 1e-12  # proof of Theorem 2
    assert z_eig[-1] <= 2 * f_eig[-1] * (1 + 1e-9) + 1e-12  # proof of Theorem 3


# --------------------------------------------------------------------------- paper's examples
SPHERE_RADIUS = 0.1


def _sphere_model() -> RobotModel:
    inertia = 0.4 * SPHERE_RADIUS ** 2
    return urdf_arm(LINK.format(name="sphere", mass=1.0, i=inertia),
                  joint("x", "prismatic", "base", "sphere", axis="1 0 0",
                         limit=LIMIT.format(lo=-1, hi=1)))


def _sphere_mass_matrix(model: RobotModel, q: float, theta: np.ndarray) -> np.ndarray:
    """M = Jᵀ Z(Θ) J (eq. 31) with the bounds module's Jacobian (valid for nv = 1)."""
    box = B.joint_search_box(model)
    jac = BoxEvaluator(model, box, search_bounds(box)).jacobians(np.array([[q]]))[0, 0]
    return jac.T @ spatial_inertia(theta[0]) @ jac


def _sphere_theta(mass: float) -> np.ndarray:
    """Solid uniform sphere of mass m, radius r, centred at the body origin (eq. 7 order)."""
    inertia = 0.4 * mass * SPHERE_RADIUS ** 2
    return np.array([[mass, 0, 0, 0, inertia, inertia, inertia, 0, 0, 0]])


def test_sphere_counterexample_mass_to_zero_keeps_consistency_but_alpha1_collapses() -> None:
    model = _sphere_model()
    ext = B.certified_jacobian_extremes(model, time_limit=10.0, samples=16)
    assert ext.inf_lambda_min_JtJ_bracket == ext.sup_sigma_max_J_sq_bracket == (1.0, 1.0)
    assert ext.normal is True and ext.active_joints == ()  # J = (1, 0, 0, 0, 0, 0)ᵀ
    tracker = ConsistencyTracker(1)
    alpha1 = []
    for t in np.linspace(0.0, 30.0, 31):
        mass = math.exp(-t)
        snapshot = tracker.update(_sphere_theta(mass))
        assert snapshot.consistent.all()  # f = m diag(r²/5 I, 1) ≻ 0 at every t
        assert snapshot.margin[0] == pytest.approx(mass * SPHERE_RADIUS ** 2 / 5)
        assert _sphere_mass_matrix(model, 0.3, _sphere_theta(mass))[0, 0] == pytest.approx(mass)
        alpha1.append(B.uniform_mass_matrix_bounds(ext, snapshot.inf_margin,
                                                   snapshot.sup_size).alpha1)
    assert alpha1[-1] < 1e-14 and all(np.diff(alpha1) < 0)  # no positive uniform bound


def test_sphere_counterexample_mass_to_infinity_has_no_finite_alpha2() -> None:
    model = _sphere_model()
    ext = B.certified_jacobian_extremes(model, time_limit=10.0, samples=16)
    tracker = ConsistencyTracker(1)
    alpha2 = []
    for t in np.linspace(0.0, 30.0, 31):
        mass = math.exp(t)
        snapshot = tracker.update(_sphere_theta(mass))
        bounds = B.uniform_mass_matrix_bounds(ext, snapshot.inf_margin, snapshot.sup_size)
        assert _sphere_mass_matrix(model, 0.0, _sphere_theta(mass))[0, 0] <= bounds.alpha2
        alpha2.append(bounds.alpha2)
    assert alpha2[-1] > 1e12 and all(np.diff(alpha2) > 0)


def _zero_axis_arm() -> RobotModel:
    """Two revolute joints; the second has a zero axis: it moves no body."""
    return urdf_arm(LINK.format(name="a", mass=1.0, i=0.1), LINK.format(name="b", mass=1.0, i=0.1),
                  joint("j1", "revolute", "base", "a"),
                  joint("j2", "revolute", "a", "b", axis="0 0 0", xyz="0.5 0 0"))


def test_lemma1_zero_axis_joint_gives_non_normal_j_and_singular_mass_matrix_with_z_identity(
) -> None:
    model = _zero_axis_arm()
    ext = B.certified_jacobian_extremes(model, time_limit=10.0, samples=16)
    assert ext.normal is False and ext.inf_lambda_min_JtJ_bracket == (0.0, 0.0)
    assert "zero motion axis" in ext.normal_reason and "j2" in ext.normal_reason
    report = B.bounds_report(model, ext)
    assert report.normality.holds is False and report.normality.method == B.STRUCTURAL
    # Lemma 1: Φ_l = (m = 1, h = 0, I = I₃) is consistent and makes Z(Θ) = I, so M = JᵀJ.
    theta = np.tile([1.0, 0, 0, 0, 1, 1, 1, 0, 0, 0], (2, 1))
    assert all(spectral_statistics(theta)[0] > 0)
    np.testing.assert_allclose(spatial_inertia(theta), np.broadcast_to(np.eye(6), (2, 6, 6)))
    for q in np.random.default_rng(8).uniform(-1, 1, size=(5, 2)):
        jac = model.body_jacobians_local(q)
        np.testing.assert_allclose(model.mass_matrix(q, theta), jac.T @ jac, atol=1e-14)
        assert np.linalg.eigvalsh(model.mass_matrix(q, theta))[0] == pytest.approx(0, abs=1e-14)


def test_serial_chain_with_nonzero_axes_is_normal_even_with_parallel_prismatic_joints() -> None:
    # The stacked J of all bodies is block lower-triangular with the unit twist S_l on the
    # "diagonal": it has full column rank, so two prismatic joints along the same axis do
    # not make it non-normal (λ_min(JᵀJ) = (3 − √5)/2, the paper's non-normal case needs
    # a joint that moves nothing).
    model = urdf_arm(LINK.format(name="a", mass=1.0, i=0.1), LINK.format(name="b", mass=1.0, i=0.1),
                   joint("p1", "prismatic", "base", "a", axis="1 0 0"),
                   joint("p2", "prismatic", "a", "b", axis="1 0 0"))
    ext = B.certified_jacobian_extremes(model, time_limit=10.0, samples=16)
    assert ext.inf_lambda_min_JtJ_bracket[0] == pytest.approx((3 - math.sqrt(5)) / 2)
    assert ext.normal is True


# --------------------------------------------------------------------------- bad input
def test_prismatic_joint_without_finite_limits_gives_an_unbounded_verdict_not_a_crash() -> None:
    model = urdf_arm(LINK.format(name="a", mass=1.0, i=0.1), LINK.format(name="b", mass=1.0, i=0.1),
                   joint("j1", "revolute", "base", "a"),
                   joint("slide", "prismatic", "a", "b", axis="1 0 0", xyz="0.5 0 0",
                          limit=LIMIT.format(lo=-1e30, hi=1e30)))
    box = B.joint_search_box(model)
    assert box.unbounded == ("slide",) and not box.bounded
    for method in B.METHODS:
        ext = B.jacobian_extremes(model, method, samples=64, time_limit=10.0)
        assert ext.bounded is False and ext.sup_sigma_max_J_sq == math.inf
        assert "slide" in ext.bounded_reason and "δ = ∞" in ext.bounded_reason
        assert ext.normal is True  # the constant left inverse needs no bounded box
        data = ext.to_dict()
        json.dumps(data, allow_nan=False)  # ∞ is reported as null, not as a bare Infinity
        assert data["sup_sigma_max_J_sq"] is None
        report = B.bounds_report(model, ext)
        assert report.bounds.alpha2 == math.inf and report.to_dict()["alpha2"] is None


def test_unbounded_prismatic_joint_that_j_does_not_depend_on_is_harmless() -> None:
    # A first joint never enters J: an infinite rail under the arm keeps Assumption 2.
    model = urdf_arm(LINK.format(name="a", mass=1.0, i=0.1), LINK.format(name="b", mass=1.0, i=0.1),
                   joint("rail", "prismatic", "base", "a", axis="1 0 0",
                          limit=LIMIT.format(lo=-1e30, hi=1e30)),
                   joint("j2", "revolute", "a", "b", xyz="0.5 0 0"))
    ext = B.certified_jacobian_extremes(model, time_limit=10.0, samples=64)
    assert ext.bounded is True and ext.normal is True


def test_limit_without_lower_upper_is_reported_as_a_zero_width_range() -> None:
    model = urdf_arm(LINK.format(name="a", mass=1.0, i=0.1), LINK.format(name="b", mass=1.0, i=0.1),
                   joint("j1", "revolute", "base", "a"),
                   joint("slide", "prismatic", "a", "b", axis="1 0 0",
                          limit='<limit effort="1" velocity="1"/>'))
    box = B.joint_search_box(model)
    assert any("slide: zero-width range" in note for note in box.notes)
    ext = B.sampled_jacobian_extremes(model, samples=32)
    assert ext.bounded is True and math.isfinite(ext.sup_sigma_max_J_sq)


# --------------------------------------------------------------------------- tracker, records
def test_extremes_round_trip_through_json_and_the_cache(tmp_path, ur5: RobotModel,
                                                        certified) -> None:
    ext = certified["ur5"]
    again = B.JacobianExtremes.from_dict(json.loads(json.dumps(ext.to_dict())))
    assert again.to_dict() == ext.to_dict()
    key = B.extremes_cache_key(ur5, ext.method, {"max_boxes": 6000})
    assert key != B.extremes_cache_key(ur5, ext.method, {"max_boxes": 6001})
    assert B.load_cached_extremes(tmp_path, key) is None
    B.store_cached_extremes(tmp_path, key, ext)
    assert B.load_cached_extremes(tmp_path, key).to_dict() == ext.to_dict()
    next(tmp_path.glob("*.json")).write_text("{not json")
    assert B.load_cached_extremes(tmp_path, key) is None


def test_cached_jacobian_extremes_computes_once(tmp_path, ur5: RobotModel) -> None:
    first = B.cached_jacobian_extremes(ur5, tmp_path, B.SAMPLED, samples=64)
    second = B.cached_jacobian_extremes(ur5, tmp_path, B.SAMPLED, samples=64)
    assert second.to_dict() == first.to_dict()
    assert len(list(tmp_path.glob("*.json"))) == 1


def test_bounds_report_json_has_the_documented_keys(ur5: RobotModel, certified) -> None:
    data = B.bounds_report(ur5, certified["ur5"]).to_dict()
    json.dumps(data, allow_nan=False)
    assert {"alpha1", "alpha2", "bodies", "jacobian", "normality", "assumption2",
            "lemma3"} <= set(data)
    assert [b["name"] for b in data["bodies"]] == ur5.body_names
    assert data["jacobian"]["method"] == "certified"
    margins = [b["margin"] for b in data["bodies"]]
    assert data["alpha1"] == pytest.approx(min(margins) * data["jacobian"][
        "inf_lambda_min_JtJ_bracket"][0])
