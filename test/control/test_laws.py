"""The adaptive laws against independent references (docs/adaptive.md).

* Slotine–Li's τ against M a + C v + G − K_D s written out from Pinocchio's CRBA,
  Coriolis matrix and gravity on a Pinocchio model that carries Θ̂ (not the package's
  regressor);
* the natural step against a fine-step integration (SciPy's ``solve_ivp``) of the ODE
  Ĵ̇ = −γ Ĵ S Ĵ, and S against its defining identity;
* V̇ = −sᵀK_D s on the classical plant with constant unknown Θ (Panda, UR5), short runs;
* the natural law's Ĵ positive definite at every step; the projected law in its band.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from scipy.integrate import solve_ivp
from support.particle_lagrangian import EQ7_FROM_PIN

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.control import (
    ComputedTorqueOnEstimate,
    ControlState,
    SlotineLiGradient,
    SlotineLiNatural,
    SlotineLiProjected,
    gradient_matrix,
    natural_step,
    run_adaptive,
)
from robot_tv_dynamics.control.setups import make_controller, reference_for, unknown_truth
from robot_tv_dynamics.exceptions import InvalidInputError, PhysicalConsistencyError
from robot_tv_dynamics.inertia import PSEUDO_BASIS, consistency_margin, pseudo_inertia
from robot_tv_dynamics.paths import example_robot_urdf

UR5 = "ur_description/urdf/ur5_robot.urdf"


def _arm(name):
    return str(example_robot_urdf() if name == "panda" else example_robot_urdf(UR5))


def _pin_with(urdf, theta):
    """A Pinocchio model of the URDF whose body inertias are Θ (eq. (7) rows → pin order)."""
    model = pin.buildModelFromUrdf(urdf)
    for body, phi in enumerate(theta):
        dyn = np.zeros(10)
        dyn[EQ7_FROM_PIN] = phi
        model.inertias[body + 1] = pin.Inertia.FromDynamicParameters(dyn)
    return model, model.createData()


@pytest.mark.parametrize("arm", ["panda", "ur5"])
def test_slotine_li_torque_equals_m_a_plus_c_v_plus_g_minus_kd_s_from_pinocchio(arm):
    urdf = _arm(arm)
    model = RobotModel.from_urdf(urdf)
    rng = np.random.default_rng(3)
    theta_hat = unknown_truth(model, seed=5)
    lam, kd = 3.0 + rng.uniform(size=model.nv), 5.0 + rng.uniform(size=model.nv)
    law = SlotineLiGradient(model, theta_hat, gamma=2.0, lam=lam, kd=kd)
    q, qd, q_d, qd_d, qdd_d = (rng.uniform(-1, 1, model.nv) for _ in range(5))
    out = law.step(ControlState(0.0, q, qd, q_d, qd_d, qdd_d), 1e-3)
    # written out: q̇_r = q̇_d − Λ(q − q_d), q̈_r = q̈_d − Λ(q̇ − q̇_d), s = q̇ − q̇_r
    qd_r = qd_d - lam * (q - q_d)
    qdd_r = qdd_d - lam * (qd - qd_d)
    s = qd - qd_r
    pm, pd = _pin_with(urdf, theta_hat)
    m = pin.crba(pm, pd, q)
    m = np.triu(m) + np.triu(m, 1).T
    c = pin.computeCoriolisMatrix(pm, pd, q, qd)
    g = pin.computeGeneralizedGravity(pm, pd, q)
    expected = m @ qdd_r + c @ qd_r + g - kd * s
    assert np.allclose(out.tau, expected, rtol=1e-9, atol=1e-9 * np.abs(expected).max())


def test_the_gradient_step_moves_theta_hat_by_minus_dt_gamma_y_transpose_s():
    urdf = _arm("ur5")
    model = RobotModel.from_urdf(urdf)
    rng = np.random.default_rng(4)
    law = SlotineLiGradient(model, model.theta_nominal, gamma=3.0, lam=2.0, kd=4.0)
    q, qd, q_d, qd_d, qdd_d = (rng.uniform(-1, 1, model.nv) for _ in range(5))
    before = law.theta_hat.copy()
    out = law.step(ControlState(0.0, q, qd, q_d, qd_d, qdd_d), 1e-3)
    # Yᵀs by finite differences of τ in θ̂ (τ is linear in θ̂): τ(θ̂ + e_k) − τ(θ̂) = Y e_k
    s = qd - (qd_d - 2.0 * (q - q_d))
    probe = SlotineLiGradient(model, model.theta_nominal, gamma=3.0, lam=2.0, kd=4.0)
    tau0 = probe.step(ControlState(0.0, q, qd, q_d, qd_d, qdd_d), 0.0).tau
    y_t_s = np.zeros(before.size)
    for k in range(before.size):
        shifted = before.ravel().copy()
        shifted[k] += 1.0
        probe.theta_hat = shifted.reshape(before.shape)
        y_t_s[k] = (probe.step(ControlState(0.0, q, qd, q_d, qd_d, qdd_d), 0.0).tau - tau0) @ s
    expected = before.ravel() - 1e-3 * 3.0 * y_t_s * law.adapted.repeat(10)
    assert np.allclose(out.theta_hat.ravel(), expected, rtol=1e-9, atol=1e-9)


def test_s_is_the_gradient_as_a_symmetric_matrix():
    rng = np.random.default_rng(0)
    g = rng.normal(size=10)
    s_matrix = gradient_matrix(g)
    assert np.allclose(s_matrix, s_matrix.T)
    for _ in range(5):
        dphi = rng.normal(size=10)
        df = np.einsum("h,hij->ij", dphi, PSEUDO_BASIS)
        assert np.isclose(np.trace(s_matrix @ df), g @ dphi, rtol=1e-12)


def _random_pd(rng):
    a = rng.normal(size=(4, 4))
    return a @ a.T + 0.1 * np.eye(4)


def test_the_natural_step_agrees_with_a_fine_integration_of_the_ode_to_second_order():
    rng = np.random.default_rng(1)
    j0, s_matrix = _random_pd(rng), gradient_matrix(rng.normal(size=10))
    s_matrix = s_matrix / np.linalg.norm(s_matrix)
    gamma = 0.7

    def ode(_t, y):
        j = y.reshape(4, 4)
        return (-gamma * j @ s_matrix @ j).ravel()

    errors = []
    for dt in (0.02, 0.01, 0.005):
        fine = solve_ivp(ode, (0.0, dt), j0.ravel(), rtol=1e-12, atol=1e-14).y[:, -1]
        errors.append(np.abs(natural_step(j0, s_matrix, gamma * dt) - fine.reshape(4, 4)).max())
    ratios = np.array(errors[:-1]) / np.array(errors[1:])
    assert np.all((ratios > 3.5) & (ratios < 4.5)), (errors, ratios)  # local error O(Δt²)
    assert errors[-1] < 1e-3


def test_the_natural_step_stays_positive_definite_for_any_step_and_refuses_an_indefinite_j():
    rng = np.random.default_rng(2)
    j0, s_matrix = _random_pd(rng), gradient_matrix(rng.normal(size=10))
    s_matrix /= np.linalg.norm(s_matrix)
    root = np.linalg.cholesky(j0)
    for gain_dt in (1e-3, 0.1, 1.0, 3.0):
        # λ_min(Ĵ⁺) ≥ λ_min(Ĵ)·exp(−γΔt λ_max(Ĵ^½SĴ^½)) > 0; the explicit Euler step
        # Ĵ − γΔt ĴSĴ of the same ODE loses definiteness at the larger steps
        worst = np.linalg.eigvalsh(root.T @ s_matrix @ root)[-1]
        bound = np.linalg.eigvalsh(j0)[0] * np.exp(-gain_dt * worst)
        assert np.linalg.eigvalsh(natural_step(j0, s_matrix, gain_dt))[0] >= 0.999 * bound > 0
    with pytest.raises(PhysicalConsistencyError):
        natural_step(np.diag([1.0, 1.0, 1.0, -1.0]), s_matrix, 1e-3)


def test_bad_gains_are_refused_naming_them():
    model = RobotModel.from_urdf(_arm("ur5"))
    with pytest.raises(InvalidInputError, match="kd"):
        SlotineLiGradient(model, model.theta_nominal, kd=0.0)
    with pytest.raises(InvalidInputError, match="gamma"):
        SlotineLiNatural(model, model.theta_nominal, gamma=-1.0)
    with pytest.raises(InvalidInputError, match="margin_fraction"):
        SlotineLiProjected(model, model.theta_nominal, margin_fraction=2.0)
    with pytest.raises(InvalidInputError, match="controller"):
        make_controller("pid", model, model.theta_nominal)


@pytest.mark.parametrize("arm,law", [("ur5", "natural"), ("ur5", "slotine-li"),
                                     ("panda", "natural"), ("panda", "slotine-li")])
def test_v_dot_is_minus_s_kd_s_on_the_classical_plant_with_constant_unknown_theta(arm, law):
    model = RobotModel.from_urdf(_arm(arm))
    # γ = 1: the explicit-Euler gradient step adds ½Δt²gᵀΓg per step, small at this gain
    controller = make_controller(law, model, model.theta_nominal, gain=1.0)
    run = run_adaptive(model, controller, reference_for(model, "persistent"),
                       unknown_truth(model), duration=1.0, record_every=50,
                       extremes_samples=16)
    balance = run.lyapunov[0] - run.lyapunov[-1]  # V(0) − V(T)
    assert run.dissipated[-1] > 0.0
    assert balance == pytest.approx(run.dissipated[-1], rel=0.05)
    # and along the way, not only at the end
    assert np.allclose(run.lyapunov[0] - run.lyapunov, run.dissipated,
                       atol=0.05 * run.dissipated[-1])
    if law == "natural":
        assert run.min_j_eig > 0.0  # Ĵ ≻ 0 at every step


def test_the_projected_law_keeps_every_adapted_body_in_its_band():
    model = RobotModel.from_urdf(_arm("ur5"))
    controller = make_controller("projected", model, model.theta_nominal, gain=1e3)
    run = run_adaptive(model, controller, reference_for(model, "persistent"),
                       unknown_truth(model), duration=0.3, record_every=5,
                       extremes_samples=16)
    eps = controller.epsilon  # type: ignore[attr-defined]
    beta = controller.beta  # type: ignore[attr-defined]
    adapted = run.adapted
    assert np.all(run.margins[:, adapted] >= eps[adapted] * (1 - 1e-9))
    assert np.all(run.sizes[:, adapted] <= beta[adapted] * (1 + 1e-9))
    assert np.all(np.atleast_1d(consistency_margin(model.theta_nominal))[adapted] > 0)


def test_computed_torque_on_the_true_theta_is_m_a_plus_c_qd_plus_g_from_pinocchio():
    urdf = _arm("ur5")
    model = RobotModel.from_urdf(urdf)
    rng = np.random.default_rng(6)
    law = ComputedTorqueOnEstimate(model, model.theta_nominal, omega=4.0)
    q, qd, q_d, qd_d, qdd_d = (rng.uniform(-1, 1, model.nv) for _ in range(5))
    tau = law.step(ControlState(0.0, q, qd, q_d, qd_d, qdd_d), 1e-3).tau
    a = qdd_d - 8.0 * (qd - qd_d) - 16.0 * (q - q_d)
    pm, pd = _pin_with(urdf, model.theta_nominal)
    assert np.allclose(tau, pin.rnea(pm, pd, q, qd, a), rtol=1e-9, atol=1e-9)


def test_pseudo_inertia_of_the_natural_estimate_is_theta_hat():
    model = RobotModel.from_urdf(_arm("ur5"))
    law = SlotineLiNatural(model, model.theta_nominal)
    rng = np.random.default_rng(7)
    q, qd, q_d, qd_d, qdd_d = (rng.uniform(-1, 1, model.nv) for _ in range(5))
    out = law.step(ControlState(0.0, q, qd, q_d, qd_d, qdd_d), 1e-2)
    assert np.allclose(pseudo_inertia(out.theta_hat)[law.adapted], law.j_hat[law.adapted])


def test_the_classical_plant_leaves_out_the_rate_terms_and_keeps_theta_t():
    from robot_tv_dynamics.loading import load_loading_process
    from robot_tv_dynamics.paths import package_config_dir
    from robot_tv_dynamics.simulation import ArmSimulator

    model = RobotModel.from_urdf(_arm("panda"))
    process = load_loading_process(package_config_dir() / "loading" / "fill.yaml")
    q0 = np.array((0.0, -0.3, 0.0, -2.2, 0.0, 2.0, 0.8, 0.02, 0.02))
    plants = {c: ArmSimulator(model, process, q0=q0, t0=3.0, classical=c) for c in (False, True)}
    tau = np.zeros(model.nv)
    loads = plants[True].loads(3.0)
    assert np.abs(loads.theta_dot).max() > 0  # the cup is filling at t = 3 s
    qdd = {c: p.step(tau) for c, p in plants.items()}
    zero = np.zeros_like(loads.theta_dot)
    classical = model.forward_dynamics(q0, np.zeros(model.nv), tau, loads.theta, zero,
                                       np.zeros_like(loads.psi), np.zeros_like(loads.psi))
    generalized = model.forward_dynamics(q0, np.zeros(model.nv), tau, loads.theta,
                                         loads.theta_dot, loads.psi, loads.psi_dot)
    assert np.allclose(qdd[True], classical, atol=1e-8)
    assert np.allclose(qdd[False], generalized, atol=1e-8)
    assert np.abs(classical - generalized).max() > 1e-6
