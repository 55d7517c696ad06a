"""The gain rule of control/gains.py, checked against closed forms and an independent fit.

* the gradient law's t₉₀ is ln 10 ΔᵀΔ / (γ ΔᵀRΔ) (a linear ODE);
* the natural law's t₉₀ along a body's own direction Δ = cΦ₀ has the closed-form
  integrand 4c²/((1 + σc)²(1 − σ)), integrated here by SciPy's quad;
* the natural metric W(Ĵ) is the first-order step of ``natural_step``;
* the load body's mass on the UR5 is not identifiable from the joint torques: its
  regressor column is a combination of the other columns (least squares, residual ~0),
  so no law can single it out at any gain; a column that is identifiable is not;
* ``adapt`` writes the gains it used into summary.json and takes ``--adaptation-time``.
"""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from scipy.integrate import quad

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.cli import main
from robot_tv_dynamics.control.gains import (
    matched_gains,
    natural_metric,
    step_time_constant,
    unobservable_fraction,
)
from robot_tv_dynamics.control.natural import gradient_matrix, natural_step
from robot_tv_dynamics.control.setups import damping, reference_for
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import pseudo_inertia
from robot_tv_dynamics.paths import example_robot_urdf

UR5 = str(example_robot_urdf("ur_description/urdf/ur5_robot.urdf"))


@pytest.fixture(scope="module")
def ur5():
    return RobotModel.from_urdf(UR5)


def _spd(rng, n=10):
    a = rng.normal(size=(n, n))
    return a @ a.T + 0.1 * np.eye(n)


def test_the_gradient_step_time_is_ln10_over_the_rayleigh_rate(ur5):
    rng = np.random.default_rng(3)
    r, step = _spd(rng), rng.normal(size=10)
    expected = math.log(10.0) * (step @ step) / (step @ r @ step)
    assert step_time_constant(ur5.theta_nominal[5], step, r, "gradient") == pytest.approx(
        expected, rel=1e-9)


def test_the_natural_step_time_along_the_body_itself_matches_the_closed_form(ur5):
    rng = np.random.default_rng(4)
    r, phi0 = _spd(rng), ur5.theta_nominal[5]
    for c in (0.3, 4.0, -0.8):  # 30 %, a load five times the body, most of it released
        integral, _ = quad(lambda s, c=c: 4 * c**2 / ((1 + s * c) ** 2 * (1 - s)), 0.0, 0.9)
        expected = integral / (c**2 * (phi0 @ r @ phi0))
        got = step_time_constant(phi0, c * phi0, r, "natural", nodes=4000)
        assert got == pytest.approx(expected, rel=1e-4)


def test_the_natural_metric_is_the_first_order_natural_step(ur5):
    rng = np.random.default_rng(5)
    j = pseudo_inertia(ur5.theta_nominal[4])
    g = rng.normal(size=10)
    eps = 1e-7
    stepped = natural_step(j, gradient_matrix(g), eps)
    np.testing.assert_allclose((j - stepped) / eps, pseudo_inertia(natural_metric(j) @ g),
                               rtol=1e-4, atol=1e-9 * np.abs(j).max())


def _regressor_samples(model, seconds=20.0, samples=400):
    reference = reference_for(model, "persistent")
    kd = damping(model)
    rows = []
    for t in np.linspace(0.0, seconds, samples):
        q, qd, qdd = reference(float(t))
        rows.append(model.regressor(q, qd, qd, qdd) / np.sqrt(kd)[:, None])
    return np.vstack(rows)


def test_the_ur5_load_mass_is_not_identifiable_from_the_torques(ur5):
    from robot_tv_dynamics.control.gains import excitation_matrix

    y = _regressor_samples(ur5)
    mass = 10 * 5  # wrist_3_link's mass: the load body of every UR5 scenario
    others = np.delete(y, mass, axis=1)
    fit = np.linalg.lstsq(others, y[:, mass], rcond=None)[0]
    residual = np.linalg.norm(others @ fit - y[:, mass]) / np.linalg.norm(y[:, mass])
    assert residual < 1e-6  # the column lies in the span of the others
    h1 = mass + 1  # its first moment about x: seen by joint 6 alone
    others = np.delete(y, h1, axis=1)
    fit = np.linalg.lstsq(others, y[:, h1], rcond=None)[0]
    assert np.linalg.norm(others @ fit - y[:, h1]) / np.linalg.norm(y[:, h1]) > 1e-3
    r = excitation_matrix(ur5, reference_for(ur5, "persistent"), damping(ur5))
    assert unobservable_fraction(r, mass) > 0.5
    assert unobservable_fraction(r, h1) < 1e-6


def test_matched_gains_refuse_a_bad_adaptation_time_and_an_unadapted_body(ur5):
    from robot_tv_dynamics.control.setups import make_controller

    with pytest.raises(InvalidInputError, match="gains"):
        make_controller("natural", ur5, ur5.theta_nominal)  # no gain, no gains
    r = np.broadcast_to(np.eye(10), (ur5.n_bodies, 10, 10))
    adapted = np.ones(ur5.n_bodies, dtype=bool)
    with pytest.raises(InvalidInputError, match="adaptation_time"):
        matched_gains(ur5, ur5.theta_nominal, r, adapted, 5, adaptation_time=0.0)
    adapted[5] = False
    with pytest.raises(InvalidInputError, match="calibration_body"):
        matched_gains(ur5, ur5.theta_nominal, r, adapted, 5)


def test_a_shorter_adaptation_time_gives_a_larger_gain_written_to_the_summary(tmp_path):
    gains = {}
    for t_a in ("2", "4"):
        out = tmp_path / t_a
        assert main(["adapt", "--urdf", UR5, "--controller", "natural", "--scenario", "grasp",
                     "--duration", "1.6", "--adaptation-time", t_a, "--out", str(out)]) == 0
        gains[t_a] = json.loads((out / "summary.json").read_text())["adaptation_gains"]
    assert gains["2"]["adaptation_time_s"] == 2.0
    assert gains["2"]["calibration_body"] == "wrist_3_link"  # the grasp ends at 1.5 s
    assert gains["2"]["calibration_step"] == "the scenario's load"
    assert not gains["2"]["natural_capped"] and not gains["4"]["natural_capped"]
    # γ ∝ 1/T_a while uncapped; the calibration body's t₉₀ is T_a
    assert gains["2"]["natural_gamma"] == pytest.approx(2 * gains["4"]["natural_gamma"])
    assert gains["2"]["natural_t90_s"]["wrist_3_link"] == pytest.approx(2.0)
    assert main(["adapt", "--adaptation-time", "0", "--duration", "0.05",
                 "--out", str(tmp_path)]) == 2
