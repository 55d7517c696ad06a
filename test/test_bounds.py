"""Mass-matrix bounds (section 4): Jacobian extremes, Theorems 2–4, Lemmas 1–3, counterexamples."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics import bounds as B
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    phi_from_pseudo_inertia,
    pseudo_inertia,
    spatial_inertia,
)

# --------------------------------------------------------------------------- helpers
LINK = ('<link name="{name}"><inertial><mass value="{mass}"/>'
        '<inertia ixx="{i}" iyy="{i}" izz="{i}" ixy="0" ixz="0" iyz="0"/></inertial></link>')
LIMIT = '<limit lower="{lo}" upper="{hi}" effort="10" velocity="1"/>'


def _joint(name: str, kind: str, parent: str, child: str, axis: str = "0 0 1",
           xyz: str = "0 0 0", limit: str = LIMIT.format(lo=-1, hi=1)) -> str:
    return (f'<joint name="{name}" type="{kind}"><parent link="{parent}"/>'
            f'<child link="{child}"/><origin xyz="{xyz}"/><axis xyz="{axis}"/>{limit}</joint>')


def _robot(*parts: str) -> RobotModel:
    return RobotModel.from_urdf_string('<robot name="t"><link name="base"/>' + "".join(parts)
                                       + "</robot>")


def _random_consistent_theta(n: int, rng: np.random.Generator, spread: float = 1.0) -> np.ndarray:
    """Θ with f(Φ_l) = L Lᵀ + 0.01 I: random, physically consistent (Theorem 1)."""
    factor = spread * rng.normal(size=(n, 4, 4))
    f = factor @ np.swapaxes(factor, 1, 2) + 0.01 * np.eye(4)
    return phi_from_pseudo_inertia(f)


def _random_q(model: RobotModel, rng: np.random.Generator, count: int) -> np.ndarray:
    limits = model.joint_limits
    return rng.uniform(limits.lower, limits.upper, size=(count, model.nv))


def _extreme_values(model: RobotModel, qs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    lam = np.array([np.linalg.eigvalsh(j.T @ j) for j in map(model.body_jacobians_local, qs)])
    return lam[:, 0], lam[:, -1]


@pytest.fixture(scope="module")
def certified(ur5: RobotModel, panda: RobotModel) -> dict[str, B.JacobianExtremes]:
    """Short certified searches (box budget, so the result is reproducible)."""
    return {
        "ur5": B.certified_jacobian_extremes(ur5, time_limit=60.0, max_boxes=6000,
                                             samples=1024),
        "panda": B.certified_jacobian_extremes(panda, time_limit=60.0, max_boxes=256,
                                               samples=256),
    }


# --------------------------------------------------------------------------- structure
def test_bracket_formula_matches_pinocchio_kinematic_hessians(robot: RobotModel) -> None:
    box = B.joint_search_box(robot)
    evaluator = B._Evaluator(robot, box, B._search_bounds(box))
    rng = np.random.default_rng(1)
    qs = _random_q(robot, rng, 5)
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
        for q in _random_q(model, rng, 4):
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
    evaluator = B._Evaluator(ur5, box, B._search_bounds(box))
    trig = evaluator.trig
    assert trig is not None
    assert trig.abs_coeff.shape[0] < 100  # sparse: rotations about parallel axes cancel


@pytest.mark.parametrize("path", ["taylor", "interval"])
def test_box_enclosures_contain_every_sampled_value(robot: RobotModel, path: str) -> None:
    box = B.joint_search_box(robot)
    evaluator = B._Evaluator(robot, box, B._search_bounds(box))
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
    lam_min, lam_max = _extreme_values(robot, _random_q(robot, np.random.default_rng(4), 300))
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
    lam_min, _ = _extreme_values(robot, wide)
    assert lam_min.min() >= floor


# --------------------------------------------------------------------------- theorems
def test_mass_matrix_eigenvalues_lie_in_alpha1_alpha2_for_random_consistent_theta_histories(
        robot: RobotModel, certified: dict[str, B.JacobianExtremes]) -> None:
    ext = certified["ur5" if robot.nv == 6 else "panda"]
    rng = np.random.default_rng(5)
    tracker = B.ConsistencyTracker(robot.n_bodies)
    history = [_random_consistent_theta(robot.n_bodies, rng, spread=s)
               for s in (0.3, 1.0, 2.0)]
    for theta in history:
        snapshot = tracker.update(theta)
    bounds = B.uniform_mass_matrix_bounds(ext, snapshot.inf_margin, snapshot.sup_size)
    assert bounds.method == B.CERTIFIED and 0.0 < bounds.alpha1 <= bounds.alpha2
    for q in _random_q(robot, rng, 20):
        for theta in history:
            eig = np.linalg.eigvalsh(robot.mass_matrix(q, theta))
            assert bounds.alpha1 <= eig[0] and eig[-1] <= bounds.alpha2


def test_sampled_alphas_are_bounds_and_estimates_are_labelled(robot: RobotModel) -> None:
    """Sampled mode: α₁, α₂ come from the structural ends, so they still bound M."""
    ext = B.sampled_jacobian_extremes(robot, samples=256, refine=2)
    rng = np.random.default_rng(6)
    theta = _random_consistent_theta(robot.n_bodies, rng)
    tracker = B.ConsistencyTracker(robot.n_bodies)
    snapshot = tracker.update(theta)
    bounds = B.uniform_mass_matrix_bounds(ext, snapshot.inf_margin, snapshot.sup_size)
    assert bounds.method == B.SAMPLED
    assert bounds.gamma == ext.inf_lambda_min_JtJ_bracket[0] <= ext.inf_lambda_min_JtJ
    assert bounds.alpha1 <= bounds.alpha1_estimate
    assert bounds.alpha2 >= bounds.alpha2_estimate
    for q in _random_q(robot, rng, 50):
        eig = np.linalg.eigvalsh(robot.mass_matrix(q, theta))
        assert bounds.alpha1 <= eig[0] and eig[-1] <= bounds.alpha2


def test_no_alpha_for_inconsistent_theta(robot: RobotModel) -> None:
    """Theorems 2, 3 need f(Φ_l) ≻ 0: with some μ ≤ 0 neither α is claimed."""
    ext = B.sampled_jacobian_extremes(robot, samples=64, refine=1)
    theta = np.array(robot.theta_nominal)
    theta[-1, 0] = -abs(theta[-1, 0])  # a negative mass
    snapshot = B.ConsistencyTracker(robot.n_bodies).update(theta)
    assert snapshot.inf_margin.min() < 0
    bounds = B.uniform_mass_matrix_bounds(ext, snapshot.inf_margin, snapshot.sup_size)
    assert math.isnan(bounds.alpha1) and math.isnan(bounds.alpha2)
    assert bounds.to_dict()["alpha1"] is None


def test_theorem4_bounds_the_mass_rate_matrix_for_random_theta_dot(
        robot: RobotModel, certified: dict[str, B.JacobianExtremes]) -> None:
    ext = certified["ur5" if robot.nv == 6 else "panda"]
    rng = np.random.default_rng(6)
    for q in _random_q(robot, rng, 10):
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
    for q in _random_q(robot, rng, 10):
        theta = _random_consistent_theta(robot.n_bodies, rng)
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
    return _robot(LINK.format(name="sphere", mass=1.0, i=inertia),
                  _joint("x", "prismatic", "base", "sphere", axis="1 0 0",
                         limit=LIMIT.format(lo=-1, hi=1)))


def _sphere_mass_matrix(model: RobotModel, q: float, theta: np.ndarray) -> np.ndarray:
    """M = Jᵀ Z(Θ) J (eq. 31) with the bounds module's Jacobian (valid for nv = 1)."""
    box = B.joint_search_box(model)
    jac = B._Evaluator(model, box, B._search_bounds(box)).jacobians(np.array([[q]]))[0, 0]
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
    tracker = B.ConsistencyTracker(1)
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
    tracker = B.ConsistencyTracker(1)
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
    return _robot(LINK.format(name="a", mass=1.0, i=0.1), LINK.format(name="b", mass=1.0, i=0.1),
                  _joint("j1", "revolute", "base", "a"),
                  _joint("j2", "revolute", "a", "b", axis="0 0 0", xyz="0.5 0 0"))


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
    assert all(B.spectral_statistics(theta)[0] > 0)
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
    model = _robot(LINK.format(name="a", mass=1.0, i=0.1), LINK.format(name="b", mass=1.0, i=0.1),
                   _joint("p1", "prismatic", "base", "a", axis="1 0 0"),
                   _joint("p2", "prismatic", "a", "b", axis="1 0 0"))
    ext = B.certified_jacobian_extremes(model, time_limit=10.0, samples=16)
    assert ext.inf_lambda_min_JtJ_bracket[0] == pytest.approx((3 - math.sqrt(5)) / 2)
    assert ext.normal is True


# --------------------------------------------------------------------------- bad input
def test_prismatic_joint_without_finite_limits_gives_an_unbounded_verdict_not_a_crash() -> None:
    model = _robot(LINK.format(name="a", mass=1.0, i=0.1), LINK.format(name="b", mass=1.0, i=0.1),
                   _joint("j1", "revolute", "base", "a"),
                   _joint("slide", "prismatic", "a", "b", axis="1 0 0", xyz="0.5 0 0",
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
    model = _robot(LINK.format(name="a", mass=1.0, i=0.1), LINK.format(name="b", mass=1.0, i=0.1),
                   _joint("rail", "prismatic", "base", "a", axis="1 0 0",
                          limit=LIMIT.format(lo=-1e30, hi=1e30)),
                   _joint("j2", "revolute", "a", "b", xyz="0.5 0 0"))
    ext = B.certified_jacobian_extremes(model, time_limit=10.0, samples=64)
    assert ext.bounded is True and ext.normal is True


def test_limit_without_lower_upper_is_reported_as_a_zero_width_range() -> None:
    model = _robot(LINK.format(name="a", mass=1.0, i=0.1), LINK.format(name="b", mass=1.0, i=0.1),
                   _joint("j1", "revolute", "base", "a"),
                   _joint("slide", "prismatic", "a", "b", axis="1 0 0",
                          limit='<limit effort="1" velocity="1"/>'))
    box = B.joint_search_box(model)
    assert any("slide: zero-width range" in note for note in box.notes)
    ext = B.sampled_jacobian_extremes(model, samples=32)
    assert ext.bounded is True and math.isfinite(ext.sup_sigma_max_J_sq)


# --------------------------------------------------------------------------- tracker, records
def test_consistency_tracker_keeps_running_extremes_and_rejects_bad_samples() -> None:
    tracker = B.ConsistencyTracker(2)
    rng = np.random.default_rng(9)
    thetas = [_random_consistent_theta(2, rng) for _ in range(5)]
    rates = [rng.normal(size=(2, 10)) for _ in range(5)]
    for theta, rate in zip(thetas, rates, strict=True):
        snapshot = tracker.update(theta, rate)
    margins = np.array([B.spectral_statistics(t)[0] for t in thetas])
    sizes = np.array([B.spectral_statistics(t)[1] for t in thetas])
    sigma = np.array([np.linalg.norm(pseudo_inertia(r), ord=2, axis=(-2, -1)) for r in rates])
    np.testing.assert_allclose(snapshot.inf_margin, margins.min(axis=0))
    np.testing.assert_allclose(snapshot.sup_size, sizes.max(axis=0))
    np.testing.assert_allclose(snapshot.sup_rate, sigma.max(axis=0))
    assert snapshot.samples == 5 and snapshot.min_margin == margins.min()
    with pytest.raises(InvalidInputError):
        tracker.update(np.full((2, 10), np.nan))
    with pytest.raises(InvalidInputError):
        tracker.update(np.zeros((3, 10)))
    assert tracker.samples == 5 and tracker.last is snapshot
    with pytest.raises(ValueError):
        snapshot.margin[0] = 1.0  # read-only
    tracker.reset()
    assert tracker.samples == 0 and tracker.last is None
    assert np.isnan(tracker.update(thetas[0]).sup_rate).all()


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
