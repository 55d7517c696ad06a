"""The trajectory gate's decision (robot_tv_dynamics.retiming.gate), UR5 with a payload on tool0.

Expected values are measured independently: the efforts of what is executed by
``evaluate`` on joint_trajectory_controller's interpolation of the output points
(``controller_playback``), the path against the input's spline, the refusal against the
static torque at the path's worst point.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest
from support.gate_cases import Q0, Q1, UR5_JOINTS, quintic, theta_with_payload

from robot_tv_dynamics.evaluation import Trajectory, evaluate
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.retiming.gate import FORWARD, REFUSE, RETIME, GateOptions, gate_trajectory
from robot_tv_dynamics.retiming.playback import controller_playback
from robot_tv_dynamics.retiming.result import uniform_scaling


def test_a_feasible_trajectory_is_forwarded(ur5):
    decision = gate_trajectory(ur5, quintic(4.0), theta_with_payload(ur5, 9.0))
    assert decision.action == FORWARD and decision.trajectory is None
    assert decision.peak_ratio_before < 1.0
    assert "within the limits" in decision.reason


@pytest.mark.parametrize("method", ["uniform", "time-optimal"])
def test_an_infeasible_trajectory_is_retimed_within_the_limits_as_played(ur5, method):
    theta = theta_with_payload(ur5, 9.0)
    planned = quintic(1.0)
    before = evaluate(ur5, planned, None, theta=theta, compute_max_payload=False)
    assert np.nanmax(before.peak_ratio) > 1.05  # the case is really infeasible
    decision = gate_trajectory(ur5, planned, theta, GateOptions(effort_margin=0.95,
                                                                method=method))
    assert decision.action == RETIME, decision.reason
    assert "shoulder_lift_joint" in decision.reason
    out = decision.trajectory
    played = evaluate(ur5, controller_playback(out, 12), None, theta=theta,
                      compute_max_payload=False)
    assert np.nanmax(played.peak_ratio) <= 0.95 + 5e-3
    # same path: start, goal, and every output point on the straight joint-space line
    # the quintic blends along
    np.testing.assert_allclose(out.positions[0], Q0, atol=1e-9)
    np.testing.assert_allclose(out.positions[-1], Q1, atol=1e-9)
    fraction = (out.positions - Q0) @ (Q1 - Q0) / np.dot(Q1 - Q0, Q1 - Q0)
    off_line = out.positions - Q0 - np.outer(fraction, Q1 - Q0)
    assert np.abs(off_line).max() < 1e-6


@pytest.mark.parametrize("verify_playback", [True, False])
def test_the_time_optimal_retiming_checked_by_torques_is_that_of_retime(ur5, verify_playback):
    """retime_checked (τ by RNEA) finds and verifies what retime (evaluate) does."""
    from robot_tv_dynamics.retiming import RetimeOptions, retime
    from robot_tv_dynamics.retiming.solve import retime_checked

    theta = theta_with_payload(ur5, 9.0)
    planned = quintic(1.0)
    options = RetimeOptions(effort_margin=0.95, gridpoints=60, max_iterations=4,
                            compare_uniform=False, verify_playback=verify_playback)
    checked = retime_checked(ur5, planned, theta, options)
    full = retime(ur5, planned, None, options, theta=theta)
    assert checked.iterations == full.iterations
    assert checked.duration == pytest.approx(full.duration_after, rel=1e-9)
    np.testing.assert_allclose(checked.trajectory.time_from_start,
                               full.trajectory.time_from_start, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(checked.trajectory.positions, full.trajectory.positions,
                               rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(checked.peak_ratio, full.peak_ratio_after, rtol=1e-9)
    np.testing.assert_allclose(checked.peak_ratio_playback, full.peak_ratio_playback,
                               rtol=1e-9)
    assert np.all(np.isnan(checked.peak_ratio_playback)) != verify_playback


def test_the_torque_check_is_evaluate_at_the_same_points(ur5):
    from robot_tv_dynamics.retiming.torques import TorqueCheck

    theta = theta_with_payload(ur5, 9.0)
    played = controller_playback(quintic(1.0), 4)
    dynamics = ur5.dynamics()
    dynamics.set_loads(theta)
    limit = np.asarray(ur5.joint_limits.effort, dtype=np.float64)
    check = TorqueCheck.of(ur5, dynamics, played, None, limit)
    expected = evaluate(ur5, played, None, theta=theta, compute_max_payload=False)
    np.testing.assert_allclose(check.effort_ratio, expected.effort_ratio, rtol=1e-10,
                               atol=1e-12)
    np.testing.assert_array_equal(check.velocities, expected.velocities)
    np.testing.assert_array_equal(check.accelerations, expected.accelerations)
    np.testing.assert_allclose(check.peak_ratio, expected.peak_ratio, rtol=1e-10)


def test_the_uniform_slowdown_is_the_smallest_one_bisection_finds(ur5):
    theta = theta_with_payload(ur5, 9.0)
    planned = quintic(1.0)
    decision = gate_trajectory(ur5, planned, theta, GateOptions(effort_margin=0.95))
    k = decision.duration_after / decision.duration_before
    np.testing.assert_array_equal(decision.trajectory.positions, planned.positions)
    # bisection over evaluate of the scaled input and its playback (retiming.result)
    velocity = np.asarray(ur5.joint_limits.velocity)
    found = uniform_scaling(ur5, planned, None, 0.95, velocity, np.full(ur5.nv, np.inf),
                            {"theta": theta})
    assert k == pytest.approx(found.factor, rel=2e-3)
    assert k > 1.5  # a real slowdown, not the input


def test_a_fast_trajectory_over_the_velocity_limit_is_retimed(ur5):
    planned = quintic(0.5)  # peak |qd| = 1.875 x 1.5 / 0.5 = 5.6 rad/s > 3.15
    decision = gate_trajectory(ur5, planned, ur5.theta_nominal)
    assert decision.action == RETIME and "velocity limit" in decision.reason
    played = controller_playback(decision.trajectory, 12)
    assert np.all(np.abs(played.velocities) <= np.asarray(ur5.joint_limits.velocity) * 1.01)


def test_a_payload_the_arm_cannot_hold_is_refused_with_the_reason(ur5):
    theta = theta_with_payload(ur5, 25.0)
    static = evaluate(ur5, Trajectory(UR5_JOINTS, np.array([0.0, 1.0]), np.stack([Q1, Q1])),
                      None, theta=theta, compute_max_payload=False)
    assert np.nanmax(static.peak_ratio) > 1.0  # even holding the goal pose is over
    decision = gate_trajectory(ur5, quintic(4.0), theta)
    assert decision.action == REFUSE and decision.trajectory is None
    assert "cannot hold the load at rest" in decision.reason
    assert "shoulder_lift_joint" in decision.reason


@pytest.mark.parametrize("field, value", [("effort_margin", 0.0), ("velocity_scale", -1.0),
                                          ("acceleration_limit", float("nan")),
                                          ("gridpoints", 5), ("max_iterations", 0),
                                          ("method", "fastest")])
def test_bad_options_are_refused_by_name(field, value):
    with pytest.raises(InvalidInputError, match=field):
        GateOptions(**{field: value})


def test_a_time_optimal_timing_over_the_limit_as_played_falls_back_to_the_uniform_one(
        ur5, monkeypatch):
    """Should TOPP-RA's tightening stop with the playback over the limit (the offline
    ``retime`` then warns), the gate executes the verified uniform slowdown and says why."""
    from robot_tv_dynamics.retiming import solve

    real = solve.retime_checked

    def playing_over(*args, **kwargs):
        result = real(*args, **kwargs)
        return replace(result, peak_ratio_playback=np.full_like(result.peak_ratio, 1.2))

    monkeypatch.setattr(solve, "retime_checked", playing_over)
    theta = theta_with_payload(ur5, 9.0)
    planned = quintic(1.0)
    decision = gate_trajectory(ur5, planned, theta, GateOptions(effort_margin=0.95,
                                                                method="time-optimal"))
    assert decision.action == RETIME, decision.reason
    assert "plays at peak |tau|/tau_max 1.200" in decision.reason
    assert "slowed down uniformly" in decision.reason
    played = evaluate(ur5, controller_playback(decision.trajectory, 12), None, theta=theta,
                      compute_max_payload=False)
    assert np.nanmax(played.peak_ratio) <= 0.95 + 5e-3
    # without the playback check the time-optimal timing is kept
    decision = gate_trajectory(ur5, planned, theta, GateOptions(
        effort_margin=0.95, method="time-optimal", verify_playback=False))
    assert "retimed to peak" in decision.reason
