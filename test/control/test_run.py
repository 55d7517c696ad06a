"""``run_adaptive``'s statistics and the suite's cases (control/run.py, control/suite.py).

* the recording leaves the closed loop untouched: the trajectory and Θ̂ are bit for bit
  those of :class:`~robot_tv_dynamics.simulation.loop.ControlLoop` (the sim_node loop,
  which records nothing) with the same controller;
* μ(Θ̂) and the Ĵ check are taken at every control step, not on the 50 Hz record grid:
  the infima equal those computed here from every step's Θ̂ and Ĵ;
* the projected law whose band is never reached is the natural law number for number;
* the suite's cases: excitation × arm × scenario × plant × controller, and bad names.
"""

from __future__ import annotations

import numpy as np
import pytest

from robot_tv_dynamics.cli import main
from robot_tv_dynamics.control import run_adaptive
from robot_tv_dynamics.control.natural import band_budget
from robot_tv_dynamics.control.setups import make_controller, reference_for, unknown_truth
from robot_tv_dynamics.control.suite import SuiteCase, suite_cases
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import consistency_margin
from robot_tv_dynamics.paths import example_robot_urdf
from robot_tv_dynamics.simulation.loop import ControlLoop

UR5 = str(example_robot_urdf("ur_description/urdf/ur5_robot.urdf"))


@pytest.mark.parametrize("law", ["natural", "slotine-li"])
def test_the_recording_leaves_the_loop_untouched_and_takes_mu_at_every_step(ur5, law):
    truth, reference = unknown_truth(ur5), reference_for(ur5, "persistent")
    run = run_adaptive(ur5, make_controller(law, ur5, ur5.theta_nominal, gain=10.0), reference,
                       truth, duration=0.2, record_every=20, extremes_samples=16)
    controller = make_controller(law, ur5, ur5.theta_nominal, gain=10.0)
    loop = ControlLoop(ur5, controller, reference, theta_base=truth)
    samples, j_eig = [], []
    for _ in range(run.steps):
        samples.append(loop.step())
        if law == "natural":
            j_eig.append(np.linalg.eigvalsh(controller.j_hat[controller.adapted])[:, 0])
    assert run.steps == 201 and not any(s.saturated for s in samples)
    grid = slice(0, None, 20)
    np.testing.assert_array_equal(run.q, np.array([s.q for s in samples])[grid])
    np.testing.assert_array_equal(run.theta_hat, np.array([s.theta_hat for s in samples])[grid])
    adapted = run.adapted
    mu = np.array([consistency_margin(s.theta_hat) for s in samples])[:, adapted]
    assert np.all(np.isinf(run.step_margins[~adapted]))
    np.testing.assert_allclose(run.step_margins[adapted], mu.min(axis=0), rtol=1e-9, atol=1e-15)
    # every step includes the record grid's steps: never above the grid's infimum
    assert np.all(run.step_margins[adapted] <= run.margins[:, adapted].min(axis=0) + 1e-15)
    assert run.step_violations == int(np.sum(np.any(mu <= 0.0, axis=1)))
    bad = np.flatnonzero(np.any(mu <= 0.0, axis=1))
    assert run.first_violation_t == (None if bad.size == 0 else samples[bad[0]].t)
    summary = run.summary()
    assert summary["inf_margin_every_step"] == pytest.approx(mu.min(), rel=1e-9)
    if law == "natural":
        assert run.min_j_eig == np.min(j_eig)  # the same eigvalsh of the same Ĵ
        assert run.step_violations == 0
    else:
        assert run.step_violations > 0  # the gradient law leaves the consistent set


def test_the_projected_law_that_never_reaches_its_band_is_the_natural_law_exactly(ur5):
    truth, reference = unknown_truth(ur5), reference_for(ur5, "poor")
    runs = [run_adaptive(ur5, make_controller(law, ur5, ur5.theta_nominal, gain=10.0), reference,
                         truth, duration=0.2, record_every=10, extremes_samples=16)
            for law in ("natural", "projected")]
    projected = make_controller("projected", ur5, ur5.theta_nominal, gain=10.0)
    eps = projected.epsilon  # type: ignore[attr-defined]
    assert np.all(runs[1].step_margins[runs[1].adapted] > 2 * eps[runs[1].adapted])
    np.testing.assert_array_equal(runs[0].theta_hat, runs[1].theta_hat)
    np.testing.assert_array_equal(runs[0].q, runs[1].q)
    assert runs[0].min_j_eig == runs[1].min_j_eig


def test_the_projected_law_clips_to_its_band_when_it_reaches_it(ur5):
    controller = make_controller("projected", ur5, ur5.theta_nominal, gain=1e3)
    run = run_adaptive(ur5, controller, reference_for(ur5, "persistent"), unknown_truth(ur5),
                       duration=0.3, record_every=5, extremes_samples=16)
    eps = controller.epsilon  # type: ignore[attr-defined]
    adapted = run.adapted
    # reached: some body sits on ε (the natural law alone would have gone below)
    assert np.any(np.isclose(run.step_margins[adapted], eps[adapted], rtol=1e-6))
    assert np.all(run.step_margins[adapted] >= eps[adapted] * (1 - 1e-9))
    mu = np.atleast_1d(consistency_margin(controller.theta_hat))[adapted]
    assert np.all(mu >= eps[adapted] * (1 - 1e-9))


def test_at_gamma_300_the_natural_step_collapses_where_the_projected_law_holds_eps(ur5):
    # 43× the matched γ: one multiplicative step contracts λ_min by e^{−γΔt λ_max(A)}
    runs = {}
    for law in ("natural", "projected"):
        controller = make_controller(law, ur5, ur5.theta_nominal, gain=300.0)
        runs[law] = (controller, run_adaptive(
            ur5, controller, reference_for(ur5, "persistent"), unknown_truth(ur5),
            duration=1.0, record_every=5, extremes_samples=16))
    eps = runs["projected"][0].epsilon  # type: ignore[attr-defined]
    adapted = runs["natural"][1].adapted
    natural, projected = runs["natural"][1], runs["projected"][1]
    # the natural law's Ĵ of some body lost its margin (below ε, to 0 in floating point)
    # and the run ended there; the projected law ran the second with every μ_i ≥ ε_i
    assert np.any(natural.step_margins[adapted] < eps[adapted])
    assert natural.info["diverged_at_s"] is not None and "cannot step" in natural.info["diverged"]
    assert projected.info["diverged_at_s"] is None and projected.steps == 1001
    assert np.all(projected.step_margins[adapted] >= eps[adapted] * (1 - 1e-9))
    assert np.any(np.isclose(projected.step_margins[adapted], eps[adapted], rtol=1e-6))
    # the continuous law could not have reached ε (band budget < 1 on every body): at
    # this γ it is the discrete step (γΔt λ_max(Ĵ^½SĴ^½) not small) that gets there
    law = runs["projected"][0]
    mu0 = np.atleast_1d(consistency_margin(ur5.theta_nominal))
    budget = band_budget(law.gamma, mu0, law.gradient_integral)  # type: ignore[attr-defined]
    assert np.all(budget[adapted] < 1.0)


def test_suite_cases_run_excitation_arm_scenario_plant_controller_in_that_order():
    cases = suite_cases(["ur5"], ["constant", "fill"], ["natural", "projected"],
                        ["persistent", "poor"], ["classical", "generalized"])
    assert cases[:5] == [SuiteCase("ur5", "constant", "generalized", "natural", "persistent"),
                         SuiteCase("ur5", "constant", "generalized", "projected", "persistent"),
                         SuiteCase("ur5", "fill", "classical", "natural", "persistent"),
                         SuiteCase("ur5", "fill", "classical", "projected", "persistent"),
                         SuiteCase("ur5", "fill", "generalized", "natural", "persistent")]
    assert len(cases) == 12 and {c.excitation for c in cases[6:]} == {"poor"}
    # the classical plant alone leaves the unloaded scenarios out (they have one plant)
    assert [c.scenario for c in suite_cases(["ur5"], ["constant", "fill"], ["natural"],
                                            plants=["classical"])] == ["fill"]


def test_the_disturbance_is_w_at_the_plant_unknown_to_the_controller(ur5, tmp_path, capsys):
    """run_adaptive's ``disturbance`` is the loop's extra torque w (eq. (39)), bit for bit;
    the plant's first step with w differs from the one without by M(q, Θ)⁻¹w; ``adapt
    --disturbance`` records it and refuses a value that is not a finite number."""
    truth, reference = unknown_truth(ur5), reference_for(ur5, "persistent")
    w = np.linspace(0.5, 2.0, ur5.nv)

    def law():
        return make_controller("natural", ur5, ur5.theta_nominal, gain=10.0)

    run = run_adaptive(ur5, law(), reference, truth, duration=0.1, record_every=10,
                       extremes_samples=16, disturbance=w)
    loop = ControlLoop(ur5, law(), reference, theta_base=truth)
    loop.set_extra_torque(w)
    samples = [loop.step() for _ in range(run.steps)]
    np.testing.assert_array_equal(run.q, np.array([s.q for s in samples])[::10])
    np.testing.assert_array_equal(run.theta_hat, np.array([s.theta_hat for s in samples])[::10])
    quiet = ControlLoop(ur5, law(), reference, theta_base=truth).step()
    mass = ur5.mass_matrix(quiet.q, truth)  # the plant's Θ at t = 0 (no load)
    np.testing.assert_allclose(samples[0].qdd - quiet.qdd, np.linalg.solve(mass, w),
                               rtol=1e-9, atol=1e-12)
    out = tmp_path / "w"
    assert main(["adapt", "--urdf", UR5, "--duration", "0.05", "--disturbance", "1.5",
                 "--out", str(out)]) == 0
    assert "disturbance w = 1.5 N·m on every joint" in capsys.readouterr().out
    import json

    assert json.loads((out / "summary.json").read_text())["disturbance"] == 1.5
    assert main(["adapt", "--duration", "0.05", "--disturbance", "nan"]) == 2
    assert "--disturbance" in capsys.readouterr().err


def test_bad_suite_plants_and_excitations_are_refused_naming_them(capsys):
    with pytest.raises(InvalidInputError, match="plants.*quantum"):
        suite_cases(["ur5"], ["fill"], ["natural"], plants=["quantum"])
    with pytest.raises(InvalidInputError, match="excitation.*wild"):
        suite_cases(["ur5"], ["fill"], ["natural"], excitations=["wild"])
    assert main(["adapt", "--excitation", "persistent,poor", "--duration", "0.1"]) == 2
    assert "--excitation" in capsys.readouterr().err
    assert main(["adapt", "--suite", "--excitation", "steady", "--duration", "0.1"]) == 2
    assert "steady" in capsys.readouterr().err


class _Exploding:
    """Gravity compensation on the nominal Θ whose estimate turns to NaN after 10 steps."""

    name = "exploding"

    def __init__(self, model):
        self.model, self.calls = model, 0
        self.theta_hat = np.array(model.theta_nominal)

    def reset(self, theta_hat):
        self.theta_hat = np.array(theta_hat)

    def step(self, state, dt):
        from robot_tv_dynamics.control import ControlOutput

        self.calls += 1
        zero = np.zeros(self.model.nv)
        tau = self.model.regressor(state.q, zero, zero, zero) @ self.model.theta_nominal.ravel()
        hat = self.theta_hat if self.calls <= 10 else np.full_like(self.theta_hat, np.nan)
        return ControlOutput(tau, hat.copy())


def test_a_controller_whose_estimate_blows_up_ends_the_run_as_a_divergence(ur5):
    run = run_adaptive(ur5, _Exploding(ur5), reference_for(ur5, "poor"), unknown_truth(ur5),
                       duration=0.1, record_every=5, extremes_samples=16)
    assert run.steps == 10 and run.summary()["diverged_at_s"] == pytest.approx(0.010)
    assert "not finite" in run.info["diverged"]
    assert np.all(np.isfinite(run.theta_hat))
