"""A user's own law through the Protocol runs in the loop; ``adapt`` writes its outputs."""

from __future__ import annotations

import json

import numpy as np

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.cli import main
from robot_tv_dynamics.control import Controller, ControlOutput, run_adaptive
from robot_tv_dynamics.control.setups import reference_for, unknown_truth
from robot_tv_dynamics.paths import example_robot_urdf


class Damped:
    """The docs' example: τ = −K_d (q̇ − q̇_d) + G(q, Θ̂) by the package's regressor."""

    name = "damped"

    def __init__(self, model, kd):
        self.model, self.kd = model, kd
        self.theta_hat = np.array(model.theta_nominal)

    def reset(self, theta_hat):
        self.theta_hat = np.array(theta_hat)

    def step(self, state, dt):
        zero = np.zeros(self.model.nv)
        gravity = self.model.regressor(state.q, zero, zero, zero) @ self.theta_hat.ravel()
        return ControlOutput(gravity - self.kd * (state.qd - state.qd_d), self.theta_hat)


def test_a_users_law_is_a_controller_and_runs_in_the_loop():
    model = RobotModel.from_urdf(example_robot_urdf("ur_description/urdf/ur5_robot.urdf"))
    law = Damped(model, 20.0)
    assert isinstance(law, Controller)
    run = run_adaptive(model, law, reference_for(model, "poor"), unknown_truth(model),
                       duration=0.2, record_every=20, extremes_samples=16)
    assert run.t[-1] == np.float64(run.t[-1]) and abs(run.t[-1] - 0.2) < 1e-9
    assert np.all(np.isnan(run.lyapunov))  # the user's law defines no V
    summary = run.summary()
    assert summary["consistency_violations"] == 0  # Θ̂ stays the URDF's, consistent


def test_adapt_writes_report_and_summary_with_the_documented_keys(tmp_path):
    urdf = str(example_robot_urdf("ur_description/urdf/ur5_robot.urdf"))
    code = main(["adapt", "--controller", "natural", "--scenario", "grasp", "--urdf", urdf,
                 "--plant", "classical", "--duration", "0.2", "--out", str(tmp_path)])
    assert code == 0
    summary = json.loads((tmp_path / "summary.json").read_text())
    for key in ("controller", "plant", "tracking_rms_rad", "inf_margin",
                "inf_lambda_min_M_hat", "consistency_violations"):
        assert key in summary
    assert summary["controller"] == "natural" and summary["plant"] == "classical"
    assert (tmp_path / "report.png").stat().st_size > 10_000


def test_adapt_refuses_an_unknown_scenario_with_exit_2(tmp_path, capsys):
    code = main(["adapt", "--scenario", str(tmp_path / "nope.yaml"), "--duration", "0.1",
                 "--out", str(tmp_path)])
    assert code == 2
    assert "nope.yaml" in capsys.readouterr().err
