"""Effort-feasible retiming (robot_tv_dynamics.retiming): checked with evaluate, not with TOPP-RA.

Every expected value here is measured independently of the code under test: effort
ratios by ``evaluate`` on the output (eq. (39) point by point), the path against the
analytic input curve, the uniform slowdown by bisection over ``evaluate`` of the
scaled input, the loading-process assumption against ``process.state`` at the
output's own times.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest
import scipy.interpolate
from support.particle_lagrangian import find_example_robot_urdf
from support.retime_paths import (
    FINGERS,
    PANDA_ARM,
    PANDA_BULGE,
    PANDA_GOAL,
    PANDA_START,
    UR5_BULGE,
    UR5_GOAL,
    UR5_JOINTS,
    UR5_START,
    curve,
    curved_move,
    fill_process,
    hermite_resample,
    panda_heavy,
    ur5_heavy,
    ur5_nine_kg,
)

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.evaluation import Payload, Trajectory, evaluate, trajectory_from_dict
from robot_tv_dynamics.exceptions import (
    InvalidInputError,
    StaticHoldingError,
    UnknownNameError,
)
from robot_tv_dynamics.loading import loading_process_from_dict
from robot_tv_dynamics.retiming import retime

LOADING = Path(__file__).resolve().parents[2] / "config" / "loading"
#: Accepted overshoot of a verified peak ratio over the margin.
TOLERANCE = 2e-3


def distance_to_curve(positions, start, goal, bulge):
    """Largest distance of the points to the curve (sampled at 40001 parameters) [rad]."""
    dense = curve(start, goal, bulge, np.linspace(0.0, 1.0, 40001))
    tree = scipy.spatial.cKDTree(dense)
    distance, _ = tree.query(positions)
    return float(np.max(distance))


def peak(model, trajectory, load, **kwargs):
    """Peak |τ|/τ_max over joints and points, by evaluate."""
    result = evaluate(model, trajectory, load, compute_max_payload=False, **kwargs)
    return float(np.nanmax(result.effort_ratio)), result


def uniform_duration(model, trajectory, load, margin=1.0, **kwargs):
    """Shortest k·T of the input scaled t → k t that meets effort and velocity limits."""
    v_max = np.asarray(model.joint_limits.velocity)

    def ok(k):
        scaled = Trajectory(trajectory.joint_names, trajectory.time_from_start * k,
                            trajectory.positions, trajectory.velocities / k,
                            trajectory.accelerations / k**2)
        ratio, result = peak(model, scaled, load, **kwargs)
        return ratio <= margin and np.all(np.abs(result.velocities) <= v_max)

    low, high = 0.05, 20.0
    assert ok(high) and not ok(low)
    while high / low > 1.0 + 1e-5:
        middle = math.sqrt(low * high)
        low, high = (low, middle) if ok(middle) else (middle, high)
    return high * float(trajectory.time_from_start[-1])


@pytest.fixture(scope="module")
def panda(panda_locked):
    """This module's Panda: the fingers locked."""
    return panda_locked


# ---------------------------------------------------------------------------- heavy payloads
@pytest.mark.parametrize("robot", ["ur5", "panda"])
def test_heavy_payload_violating_input_is_retimed_within_limits_on_the_same_path(
        robot, ur5, panda):
    if robot == "ur5":
        model, load, args = ur5, ur5_heavy(), (UR5_START, UR5_GOAL, UR5_BULGE)
        move = curved_move(UR5_JOINTS, *args, duration=1.0, n=41)
    else:
        model, load, args = panda, panda_heavy(), (PANDA_START, PANDA_GOAL, PANDA_BULGE)
        move = curved_move(PANDA_ARM, *args, duration=0.5, n=41)
    before, before_eval = peak(model, move, load)
    assert before_eval.violations, f"the input must violate: peak {before:.3f}"

    result = retime(model, move, load, sample_rate=250.0)
    out = result.trajectory
    after, after_eval = peak(model, out, load)
    assert after <= 1.0 + TOLERANCE
    assert not [v for v in after_eval.violations if v.ratio > 1.0 + TOLERANCE]
    # what a controller would play between the points stays within limits too
    played, _ = peak(model, hermite_resample(out, 2000.0), load)
    assert played <= 1.0 + 0.01
    # the same path: every output position on the analytic input curve, same ends
    assert distance_to_curve(out.positions, *args) < 2e-4
    np.testing.assert_allclose(out.positions[0], move.positions[0], atol=1e-12)
    np.testing.assert_allclose(out.positions[-1], move.positions[-1], atol=1e-12)
    # not needlessly slow: a limit is reached and a uniform slowdown is slower
    v_ratio = np.max(np.abs(after_eval.velocities) / model.joint_limits.velocity)
    assert max(after, v_ratio) >= 0.98
    assert out.time_from_start[-1] < 0.9 * uniform_duration(model, move, load)
    assert result.duration_after == pytest.approx(out.time_from_start[-1])
    assert result.duration_before == pytest.approx(move.time_from_start[-1])


def test_output_velocities_and_accelerations_are_the_derivatives_of_its_positions(ur5):
    move = curved_move(UR5_JOINTS, UR5_START, UR5_GOAL, UR5_BULGE, 1.0, 41)
    out = retime(ur5, move, ur5_heavy(), sample_rate=2000.0, compare_uniform=False).trajectory
    t, q, qd, qdd = out.time_from_start, out.positions, out.velocities, out.accelerations
    dt = np.diff(t)
    # central differences of positions vs the reported velocity at the midpoints
    np.testing.assert_allclose(np.diff(q, axis=0) / dt[:, None], 0.5 * (qd[1:] + qd[:-1]),
                               atol=2e-3 * np.abs(qd).max())
    # the velocity change over each step vs the trapezoid of the reported acceleration:
    # exact up to O(Δt³) where q̈ is smooth; where s̈ jumps inside a step (bang-bang switch)
    # the trapezoid may be off by at most half the jump times the step
    trapezoid = 0.5 * (qdd[1:] + qdd[:-1]) * dt[:, None]
    error = np.abs(np.diff(qd, axis=0) - trapezoid)
    bound = 0.5 * np.abs(np.diff(qdd, axis=0)) * dt[:, None] + 1e-3 * np.abs(qdd).max() * dt[
        :, None]
    assert np.all(error <= bound)
    smooth = np.all(np.abs(np.diff(qdd, axis=0)) < 0.05 * np.abs(qdd).max(), axis=1)
    assert smooth.mean() > 0.9  # most steps have no switch inside: tight there
    assert np.max(error[smooth]) < 1e-4 * np.abs(qd).max()
    assert np.all(np.diff(t) > 0)
    np.testing.assert_allclose(qd[0], 0.0, atol=1e-9)
    np.testing.assert_allclose(qd[-1], 0.0, atol=1e-9)


def test_default_output_has_every_input_waypoint_at_its_position(panda):
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 0.5, 41)
    out = retime(panda, move, panda_heavy(), compare_uniform=False).trajectory
    assert out.joint_names == move.joint_names
    # the waypoints, plus knots at the switches of the path acceleration
    assert move.n_points <= out.n_points <= move.n_points + 40
    distance = np.min(np.linalg.norm(move.positions[:, None] - out.positions[None], axis=2),
                      axis=1)
    assert np.max(distance) < 1e-10
    assert peak(panda, out, panda_heavy())[0] <= 1.0 + TOLERANCE


def test_effort_margin_is_respected_and_makes_the_motion_slower(ur5):
    move = curved_move(UR5_JOINTS, UR5_START, UR5_GOAL, UR5_BULGE, 1.0, 41)
    full = retime(ur5, move, ur5_heavy(), compare_uniform=False)
    reduced = retime(ur5, move, ur5_heavy(), effort_margin=0.9, sample_rate=250.0,
                     compare_uniform=False)
    assert peak(ur5, reduced.trajectory, ur5_heavy())[0] <= 0.9 + TOLERANCE
    assert reduced.duration_after > full.duration_after
    assert reduced.active["effort"], "some joint's effort limit must be active"


def test_velocity_scale_and_acceleration_limit_are_respected(panda):
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 3.0, 41)
    result = retime(panda, move, None, velocity_scale=0.5, acceleration_limits=2.0,
                    sample_rate=500.0, compare_uniform=False)
    qd, qdd = result.trajectory.velocities, result.trajectory.accelerations
    v_max = np.asarray(panda.joint_limits.velocity)
    assert np.all(np.abs(qd) <= 0.5 * v_max * (1 + 1e-3))
    assert np.max(np.abs(qd) / (0.5 * v_max)) >= 0.98
    assert np.max(np.abs(qdd)) <= 2.0 * (1 + 1e-2)
    assert np.max(np.abs(qdd)) >= 0.98 * 2.0


# ---------------------------------------------------------------------------- no payload
def test_without_payload_a_slow_trajectory_gets_faster_within_limits(panda):
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 6.0, 41)
    assert peak(panda, move, None)[0] < 0.6
    result = retime(panda, move, None, sample_rate=250.0)
    assert result.duration_after < 0.5 * 6.0
    after, after_eval = peak(panda, result.trajectory, None)
    assert after <= 1.0 + TOLERANCE
    v_ratio = np.max(np.abs(after_eval.velocities) / panda.joint_limits.velocity)
    assert max(after, v_ratio) >= 0.98
    assert result.duration_after < uniform_duration(panda, move, None)


# ---------------------------------------------------------------------------- loading process
def test_filling_cup_is_retimed_within_limits_with_the_rate_terms_of_eq_39(panda):
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 0.6, 41)
    fill = fill_process()
    result = retime(panda, move, fill, time_offset=0.2, sample_rate=250.0)
    after, after_eval = peak(panda, result.trajectory, fill, time_offset=0.2)
    assert after <= 1.0 + TOLERANCE
    # the process really acts during the motion, with non-zero Θ̇ and Ψ̇ terms
    assert np.ptp(after_eval.payload_mass) > 0.5
    assert np.max(np.abs(after_eval.terms["psi_dot"])) > 0.1
    assert np.max(np.abs(after_eval.terms["mass_rate"])) > 0.1
    assert distance_to_curve(result.trajectory.positions, PANDA_START, PANDA_GOAL,
                             PANDA_BULGE) < 2e-4


def test_time_indexed_process_schedule_is_the_process_at_the_final_timing(panda):
    """The documented assumption: the load on the path is process(t_new(s) + offset)."""
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 0.6, 41)
    fill = fill_process()
    result = retime(panda, move, fill, time_offset=0.2, compare_uniform=False)
    assert result.load_converged and result.iterations >= 2
    out = result.trajectory  # the waypoints (their s is the chord length) and switches
    s_out = np.concatenate([[0.0], np.cumsum(np.linalg.norm(np.diff(move.positions, axis=0),
                                                            axis=1))])
    at = [int(np.argmin(np.abs(result.schedule.s - s))) for s in s_out]
    np.testing.assert_allclose(result.schedule.s[at], s_out, atol=1e-9)  # waypoints on the grid
    used = result.schedule.mass[at]
    knot = [int(np.argmin(np.linalg.norm(out.positions - q, axis=1))) for q in move.positions]
    np.testing.assert_allclose(out.positions[knot], move.positions, atol=1e-10)
    actual = np.array([fill.state(t + 0.2).phi[0] for t in out.time_from_start[knot]])
    # the fixed point up to the timing tolerance: 1e-3 s × 1.5 kg/s
    np.testing.assert_allclose(used, actual, atol=2e-3)
    # and it differs from the process on the input's timing (the iteration mattered)
    on_input_timing = np.array([fill.state(t + 0.2).phi[0] for t in move.time_from_start])
    assert np.max(np.abs(on_input_timing - actual)) > 0.05


def test_heavier_fill_makes_the_motion_slower(panda):
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 0.6, 41)
    light = retime(panda, move, fill_process(mass_flow=0.3), compare_uniform=False)
    heavy = retime(panda, move, fill_process(mass_flow=1.8), compare_uniform=False)
    assert heavy.duration_after > light.duration_after


# ---------------------------------------------------------------------------- bad input
def test_unknown_joint_in_the_path_is_a_clear_error(ur5):
    move = curved_move(UR5_JOINTS, UR5_START, UR5_GOAL, UR5_BULGE, 1.0, 11)
    bad = Trajectory(("shoulder_pan_joint", "no_such_joint", *UR5_JOINTS[2:]),
                     move.time_from_start, move.positions)
    with pytest.raises(UnknownNameError, match='joint "no_such_joint" is not in the URDF'):
        retime(ur5, bad, None)


def test_positions_outside_the_limits_name_the_joint_and_point(panda):
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 1.0, 11)
    q = move.positions.copy()
    q[4, 3] = 0.5  # panda_joint4 ∈ [−3.07, −0.07]
    with pytest.raises(InvalidInputError, match=r'points\[4\].*"panda_joint4" at 0.5 is outside'):
        retime(panda, Trajectory(PANDA_ARM, move.time_from_start, q), None)


def test_payload_too_heavy_to_hold_names_the_joint_and_by_how_much(ur5):
    move = curved_move(UR5_JOINTS, UR5_START, UR5_GOAL, UR5_BULGE, 1.0, 21)
    load = Payload("tool0", 40.0, np.zeros(3), np.zeros((3, 3)))
    with pytest.raises(StaticHoldingError) as caught:
        retime(ur5, move, load)
    error = caught.value
    # independently: the static torque G(q) of the worst waypoint
    theta = ur5.theta_with_link_inertia(ur5.theta_nominal, "tool0", np.zeros(10))
    body, phi = ur5.link_phi_in_body("tool0", load.phi())
    theta[body] += phi
    zero = np.zeros(ur5.nv)
    static = np.array([ur5.inverse_dynamics(q, zero, zero, theta).tau for q in move.positions])
    ratios = np.abs(static) / ur5.joint_limits.effort
    worst = np.unravel_index(np.argmax(ratios), ratios.shape)
    assert error.joint == ur5.joint_names[worst[1]]
    assert error.ratio == pytest.approx(ratios[worst], rel=0.02)
    assert error.ratio > 1.0
    assert error.joint in str(error) and "% over" in str(error)


def test_nan_positions_and_options_are_clear_errors(ur5):
    data = {"joint_names": list(UR5_JOINTS), "points": [
        {"positions": [0.0] * 6, "time_from_start": 0.0},
        {"positions": [0.1, math.nan, 0, 0, 0, 0], "time_from_start": 1.0}]}
    with pytest.raises(InvalidInputError, match="positions"):
        trajectory_from_dict(data)
    move = curved_move(UR5_JOINTS, UR5_START, UR5_GOAL, UR5_BULGE, 1.0, 11)
    for option in ({"effort_margin": math.nan}, {"velocity_scale": 0.0},
                   {"gridpoints": 3}, {"acceleration_limits": -1.0},
                   {"sample_rate": math.inf}):
        with pytest.raises(InvalidInputError):
            retime(ur5, move, None, **option)


def test_a_path_of_zero_length_is_a_clear_error(ur5):
    q = np.tile(UR5_START, (3, 1))
    with pytest.raises(InvalidInputError, match="no length"):
        retime(ur5, Trajectory(UR5_JOINTS, np.array([0.0, 1.0, 2.0]), q), None)


def test_held_joints_stay_put_and_carry_their_torque():
    model = RobotModel.from_urdf(find_example_robot_urdf("panda"))  # fingers not locked
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 0.5, 31)
    held = {"panda_finger_joint1": 0.02, "panda_finger_joint2": 0.02}
    result = retime(model, move, panda_heavy(), default_positions=held, compare_uniform=False)
    assert result.trajectory.joint_names == PANDA_ARM
    ratio, after = peak(model, result.trajectory, panda_heavy(), default_positions=held)
    assert ratio <= 1.0 + TOLERANCE
    fingers = [model.joint_names.index(name) for name in FINGERS]
    arm = [model.joint_names.index(name) for name in PANDA_ARM]
    # stay put: the retimed motion, as evaluated, has the fingers at 0.02 m at rest
    for checked in (after, result.verification, result.evaluation):
        np.testing.assert_array_equal(checked.positions[:, fingers], 0.02)
        np.testing.assert_array_equal(checked.velocities[:, fingers], 0.0)
        np.testing.assert_array_equal(checked.accelerations[:, fingers], 0.0)
    # carry their torque: the finger efforts are eq. (39) of the whole arm with the
    # fingers held there (independently: inverse_dynamics at the assembled q, q̇, q̈)
    theta = model.theta_nominal.copy()
    body, phi, *_ = model.link_load_in_body("panda_link8", panda_heavy().phi())
    theta[body] += phi
    out = result.trajectory
    for k in range(0, out.n_points, 7):
        q, qd, qdd = (np.zeros(model.nv) for _ in range(3))
        q[fingers] = 0.02
        q[arm], qd[arm], qdd[arm] = out.positions[k], out.velocities[k], out.accelerations[k]
        tau = model.inverse_dynamics(q, qd, qdd, theta).tau
        np.testing.assert_allclose(result.evaluation.effort[k], tau, rtol=1e-9, atol=1e-9)
    assert np.max(np.abs(result.evaluation.effort[:, fingers])) > 1e-3


def test_options_reach_every_segment_of_a_trajectory_with_stops(ur5, monkeypatch):
    """A trajectory with stops is retimed per segment with every option of retime."""
    import dataclasses

    from robot_tv_dynamics.retiming import RetimeOptions, segments, solve

    move, _, _ = corner_move()
    seen = {}

    def capture(retime_one, model, trajectory, payload, ranges, options):
        seen.update({f.name: getattr(options, f.name) for f in dataclasses.fields(options)})
        raise RuntimeError("captured")

    monkeypatch.setattr(segments, "retime_segments", capture)
    given = {"effort_margin": 0.9, "velocity_scale": 0.8, "acceleration_limits": 5.0,
             "gridpoints": 50, "sample_rate": 100.0, "theta": None,
             "default_positions": None, "time_offset": 0.5, "max_iterations": 4,
             "timing_tolerance": 2e-3, "ratio_tolerance": 2e-3, "compare_uniform": False,
             "verify_playback": False, "smoothing": 0.0, "loading_index": "time",
             "moveit_scaling": (0.5, 0.25)}
    with pytest.raises(RuntimeError, match="captured"):
        solve.retime(ur5, move, None, **given)
    # every setting of retime (the fields of its options record) reaches the segments
    keywords = {f.name for f in dataclasses.fields(RetimeOptions)} - {"split_at_stops"}
    assert seen.pop("split_at_stops") is True
    assert set(seen) == keywords == set(given)
    assert seen == given


# ---------------------------------------------------------------------------- the constraint
def test_path_coefficients_reproduce_eq_39_with_the_rates_of_a_loading_process(panda):
    """τ = a s̈ + b ṡ² + c + d ṡ equals inverse_dynamics at q̇ = p'ṡ, q̈ = p's̈ + p''ṡ²."""
    from robot_tv_dynamics.dynamics import psi_momentum
    from robot_tv_dynamics.loading import body_loads
    from robot_tv_dynamics.retiming.constraints import GridLoad, effort_coefficients
    from robot_tv_dynamics.retiming.path import JointPath

    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 1.0, 21)
    path = JointPath(panda, move)
    s = np.linspace(0.0, path.length, 7)
    samples = path.samples(s)
    fill = fill_process()
    times = np.linspace(0.3, 0.9, s.size)  # during the fill: Θ̇, Ψ, Ψ̇ all non-zero
    states = [body_loads(panda, fill, t, panda.theta_nominal) for t in times]
    load = GridLoad(np.array([x[0] for x in states]), np.array([x[1] for x in states]),
                    np.array([psi_momentum(x[2]) for x in states]),
                    np.array([psi_momentum(x[3]) for x in states]), np.zeros(s.size))
    coefficients = effort_coefficients(panda, samples, load)
    rng = np.random.default_rng(7)
    for j in range(s.size):
        theta, theta_dot, psi, psi_dot = states[j]
        assert np.any(theta_dot) and np.any(psi) and np.any(psi_dot)
        for sd, sdd in rng.uniform([0.0, -5.0], [3.0, 5.0], size=(3, 2)):
            qd = samples.dq[j] * sd
            qdd = samples.dq[j] * sdd + samples.ddq[j] * sd**2
            expected = panda.inverse_dynamics(samples.q[j], qd, qdd, theta, theta_dot, psi,
                                              psi_dot).tau
            got = (coefficients.a[j] * sdd + coefficients.b[j] * sd**2 + coefficients.c[j]
                   + coefficients.d[j] * sd)
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_path_coefficients_of_a_load_without_rates_reproduce_eq_39(ur5):
    """Without rates (by RNEA): τ = a s̈ + b ṡ² + c, d = 0, also where Θ(s) steps."""
    from support.gate_cases import quintic, theta_with_payload

    from robot_tv_dynamics.retiming.constraints import GridLoad, effort_coefficients
    from robot_tv_dynamics.retiming.path import JointPath

    path = JointPath(ur5, quintic(1.0))
    s = np.linspace(0.0, path.length, 9)
    samples = path.samples(s)
    thetas = np.array([theta_with_payload(ur5, 9.0 if j < 5 else 3.0) for j in range(s.size)])
    load = GridLoad.constant(thetas[0], s.size)
    load = GridLoad(thetas, load.theta_dot, load.gamma, load.gamma_dot, load.mass)
    assert not load.has_rates
    coefficients = effort_coefficients(ur5, samples, load)
    assert not np.any(coefficients.d)
    rng = np.random.default_rng(3)
    for j in range(s.size):
        for sd, sdd in rng.uniform([0.0, -5.0], [3.0, 5.0], size=(3, 2)):
            qd = samples.dq[j] * sd
            qdd = samples.dq[j] * sdd + samples.ddq[j] * sd**2
            expected = ur5.inverse_dynamics(samples.q[j], qd, qdd, thetas[j]).tau
            got = coefficients.a[j] * sdd + coefficients.b[j] * sd**2 + coefficients.c[j]
            np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-9)


def test_interpolation_rows_impose_each_gridpoint_on_the_stage_before():
    """Stage j holds the rows of s_j at (u, x) and those of s_{j+1} at x + 2Δ_j u."""
    from robot_tv_dynamics.retiming.constraints import interpolation_rows

    rng = np.random.default_rng(11)
    g, m = 6, 2
    grid = np.cumsum(rng.uniform(0.1, 0.5, g))
    a, b, c = (rng.normal(size=(g, m)) for _ in range(3))
    f = np.vstack([np.eye(m), -np.eye(m)])
    bound = rng.uniform(1.0, 2.0, 2 * m)
    a2, b2, c2, f2, g2 = interpolation_rows(a, b, c, f, bound, grid)
    for j in range(g):
        for u, x in rng.normal(size=(3, 2)):
            rows = f2 @ (a2[j] * u + b2[j] * x + c2[j]) - g2
            here = f @ (a[j] * u + b[j] * x + c[j]) - bound
            k = min(j + 1, g - 1)
            x_next = x + 2.0 * (grid[k] - grid[j]) * u
            there = f @ (a[k] * u + b[k] * x_next + c[k]) - bound
            np.testing.assert_allclose(rows, np.concatenate([here, there]), atol=1e-12)


def test_tangent_bound_of_the_linear_rate_term_is_conservative_and_tight_at_sigma():
    """|d ṡ| ≤ |d| (ṡ²/(2σ) + σ/2), equality at ṡ = σ (the rows EffortConstraint builds)."""
    from robot_tv_dynamics.retiming.constraints import EffortCoefficients, EffortConstraint

    rng = np.random.default_rng(3)
    g, nv = 5, 3
    coef = EffortCoefficients(*(rng.normal(size=(g, nv)) for _ in range(4)))
    sigma = rng.uniform(0.2, 2.0, g)
    constraint = EffortConstraint(np.linspace(0, 1, g), coef, np.full(nv, 10.0), sigma)
    a, b, c = constraint._a, constraint._b, constraint._c
    for sd in np.linspace(0.0, 3.0, 31):
        for sdd in (-2.0, 0.0, 1.5):
            true = coef.a * sdd + coef.b * sd**2 + coef.c + coef.d * sd
            upper = a[:, :nv] * sdd + b[:, :nv] * sd**2 + c[:, :nv]
            lower = a[:, nv:] * sdd + b[:, nv:] * sd**2 + c[:, nv:]
            assert np.all(upper >= true - 1e-12) and np.all(lower <= true + 1e-12)
    true = coef.a + coef.b * sigma[:, None] ** 2 + coef.c + coef.d * sigma[:, None]
    upper = a[:, :nv] + b[:, :nv] * sigma[:, None] ** 2 + c[:, :nv]
    lower = a[:, nv:] + b[:, nv:] * sigma[:, None] ** 2 + c[:, nv:]
    tight = np.where(coef.d >= 0, upper, lower)
    np.testing.assert_allclose(tight, true, atol=1e-12)


# ---------------------------------------------------------------------------- smoothing
def test_smoothing_makes_accelerations_continuous_within_limits_on_the_same_path(panda):
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 0.5, 41)
    raw = retime(panda, move, panda_heavy(), sample_rate=1000.0, compare_uniform=False,
                 verify_playback=False)
    smooth = retime(panda, move, panda_heavy(), sample_rate=1000.0, compare_uniform=False,
                    verify_playback=False, smoothing=0.03)

    def jerk(result):
        out = result.trajectory
        return np.max(np.abs(np.diff(out.accelerations, axis=0))
                      / np.diff(out.time_from_start)[:, None])

    # the time-optimal law jumps in q̈ (finite differences explode at 1 kHz); smoothed not
    assert jerk(smooth) < 0.3 * jerk(raw)
    out = smooth.trajectory
    assert peak(panda, out, panda_heavy())[0] <= 1.0 + TOLERANCE
    assert np.all(np.abs(out.velocities) <= np.asarray(panda.joint_limits.velocity) * (1 + 1e-6))
    assert distance_to_curve(out.positions, PANDA_START, PANDA_GOAL, PANDA_BULGE) < 2e-4
    # it costs about the window, not more than a few of them
    assert raw.duration_after < smooth.duration_after < raw.duration_after + 0.1


def test_smoothed_law_is_the_moving_average_of_the_optimal_one():
    from robot_tv_dynamics.retiming.smoothing import SmoothedTiming
    from robot_tv_dynamics.retiming.timing import PathTiming

    rng = np.random.default_rng(5)
    grid = np.linspace(0.0, 2.0, 41)
    speed = np.concatenate([[0.0], rng.uniform(0.5, 2.0, 39), [0.0]])
    law = PathTiming.from_speeds(grid, speed)
    w = 0.05
    smooth = SmoothedTiming(law, w)
    t = np.linspace(0.0, smooth.duration, 301)
    s, sd, sdd = smooth.at_time(t)
    # independent: trapezoid average of the base s over [t − w, t] (s = 0 / L outside)
    fine = np.linspace(-w, law.duration + w, 200001)
    base = np.where(fine < 0, 0.0, np.where(fine > law.duration, 2.0, law.at_time(fine)[0]))
    cumulative = np.concatenate([[0.0], np.cumsum(0.5 * (base[1:] + base[:-1]) * np.diff(fine))])
    average = (np.interp(t, fine, cumulative) - np.interp(t - w, fine, cumulative)) / w
    np.testing.assert_allclose(s, average, atol=1e-6)
    np.testing.assert_allclose(np.gradient(s, t), sd, atol=2e-2 * np.abs(sd).max())
    assert smooth.duration == pytest.approx(law.duration + w)
    back, _, _ = smooth.at_path(s)
    np.testing.assert_allclose(smooth.at_time(back)[0], s, atol=1e-9)
    assert sd[0] == 0.0 and sd[-1] == pytest.approx(0.0, abs=1e-12)
    assert np.all(np.isfinite(sdd))


@pytest.mark.parametrize("kind", ["grasp", "drain"])
def test_the_shipped_grasp_and_drain_processes_are_retimed_within_limits(kind, panda):
    from robot_tv_dynamics.loading import load_loading_process

    process = load_loading_process(LOADING / f"{kind}.yaml")
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 0.5, 41)
    # process time 0.9 s at the start: the grasp ramp / the draining happen during the move
    result = retime(panda, move, process, time_offset=0.9, sample_rate=250.0,
                    compare_uniform=False)
    after, after_eval = peak(panda, result.trajectory, process, time_offset=0.9)
    assert after <= 1.0 + TOLERANCE
    assert np.ptp(after_eval.payload_mass) > 0.05  # the load does change along the motion
    assert result.load_converged


# ---------------------------------------------------------------------------- path-indexed
def short_fill():
    """4 kg/s for 0.3 s from process time 0.1 s: active only in the middle of a 0.6 s move."""
    return loading_process_from_dict({
        "process": "fill", "link": "panda_hand", "start": 0.1, "fill_time": 0.3,
        "mass_flow": 4.0, "inlet_height": 0.3, "inlet_speed": 0.5,
        "container": {"radius": 0.06, "height": 0.25, "mass": 0.2,
                      "origin": {"xyz": [0.0, 0.0, 0.22], "rpy": [math.pi, 0.0, 0.0]}}})


def test_path_indexed_process_keeps_the_load_where_the_input_had_it(panda):
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 0.6, 41)
    fill = short_fill()
    result = retime(panda, move, fill, loading_index="path", compare_uniform=False)
    before = evaluate(panda, move, fill, compute_max_payload=False)
    after = evaluate(panda, result.trajectory, result.load, compute_max_payload=False)
    # the assumption: the same load at the same waypoint, whatever the new timing
    out = result.trajectory
    knot = [int(np.argmin(np.linalg.norm(out.positions - q, axis=1))) for q in move.positions]
    np.testing.assert_allclose(out.positions[knot], move.positions, atol=1e-10)
    np.testing.assert_allclose(after.payload_mass[knot], before.payload_mass, atol=1e-9)
    assert np.ptp(after.payload_mass) > 1.0
    assert float(np.nanmax(after.effort_ratio)) <= 1.0 + TOLERANCE
    assert np.max(np.abs(after.terms["psi_dot"])) > 0.5
    assert result.duration_after != pytest.approx(move.time_from_start[-1], rel=1e-3)
    assert result.load_converged  # nothing to iterate: the load is a function of s


def test_path_indexed_view_rates_are_the_time_derivatives_along_the_retimed_motion(panda):
    """Φ̇ and ψ̇ of the view are d/dt of its Φ and ψ (finite differences): the chain rule."""
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 0.6, 41)
    result = retime(panda, move, short_fill(), loading_index="path", compare_uniform=False,
                    verify_playback=False, smoothing=0.02)  # smoothed: ṡ is C¹, r is C⁰
    view, h = result.load, 1e-6
    for t in np.linspace(0.05, result.duration_after - 0.05, 9):
        state = view.state(t)
        ahead, behind = view.state(t + h), view.state(t - h)
        np.testing.assert_allclose(state.phi_dot, (ahead.phi - behind.phi) / (2 * h),
                                   atol=1e-4 * (1 + np.abs(state.phi_dot).max()))
        np.testing.assert_allclose(state.psi_dot, (ahead.psi - behind.psi) / (2 * h),
                                   atol=2e-3 * (1 + np.abs(state.psi_dot).max()))


def test_path_indexed_process_changing_while_the_input_rests_is_a_clear_error(panda):
    move = curved_move(PANDA_ARM, PANDA_START, PANDA_GOAL, PANDA_BULGE, 0.6, 41)
    with pytest.raises(InvalidInputError, match="zero path length"):
        retime(panda, move, fill_process(), time_offset=0.2, loading_index="path")
    with pytest.raises(InvalidInputError, match="loading_index"):
        retime(panda, move, fill_process(), loading_index="progress")


# ---------------------------------------------------------------------------- interior stops
def corner_move(duration=0.6, n=21):
    """Two rest-to-rest straight moves of the UR5 meeting at a corner where it stops."""
    corner = UR5_START + np.array([0.8, 0.3, -0.3, 0.0, 0.0, 0.0])
    first = curved_move(UR5_JOINTS, UR5_START, corner, np.zeros(6), duration, n)
    second = curved_move(UR5_JOINTS, corner, UR5_GOAL, np.zeros(6), duration, n)
    t = np.concatenate([first.time_from_start, second.time_from_start[1:] + duration])
    join = [np.concatenate([getattr(first, a), getattr(second, a)[1:]])
            for a in ("positions", "velocities", "accelerations")]
    return Trajectory(UR5_JOINTS, t, *join), corner, n - 1


def distance_to_polyline(points, vertices):
    """Largest distance of the points to the polyline through the vertices."""
    best = np.full(len(points), np.inf)
    for a, b in zip(vertices[:-1], vertices[1:], strict=True):
        d = b - a
        x = np.clip((points - a) @ d / (d @ d), 0.0, 1.0)
        best = np.minimum(best, np.linalg.norm(points - (a + x[:, None] * d), axis=1))
    return float(np.max(best))


def test_a_stop_inside_the_path_is_kept_and_the_corner_not_rounded(ur5):
    move, corner, stop = corner_move()
    vertices = [UR5_START, corner, UR5_GOAL]
    result = retime(ur5, move, ur5_heavy(), sample_rate=250.0)
    out = result.trajectory
    assert distance_to_polyline(out.positions, vertices) < 1e-9
    at_corner = np.flatnonzero(np.linalg.norm(out.positions - corner, axis=1) < 1e-12)
    assert at_corner.size == 1
    np.testing.assert_allclose(out.velocities[at_corner[0]], 0.0, atol=1e-12)
    assert peak(ur5, out, ur5_heavy())[0] <= 1.0 + TOLERANCE
    assert np.all(np.diff(out.time_from_start) > 0)
    assert any("stops at waypoint(s) [20]" in note for note in result.notes)
    assert result.duration_after == pytest.approx(out.time_from_start[-1])
    # one spline through everything would round the corner (what the split avoids)
    single = retime(ur5, move, ur5_heavy(), sample_rate=250.0, split_at_stops=False,
                    compare_uniform=False)
    assert distance_to_polyline(single.trajectory.positions, vertices) > 1e-4
    assert any("stops at waypoint" in warning for warning in single.warnings)


# ---------------------------------------------------------------------------- MoveIt's view
#: Acceleration limits of the UR5 as a MoveIt joint_limits.yaml would give them [rad/s²].
UR5_ACCELERATION = np.full(6, 8.0)


def limits_parameterized(model, v_factor, a_factor, n=41):
    """Rest-to-rest straight move timed by scaled velocity and acceleration limits.

    The quintic time law x = 10τ³ − 15τ⁴ + 6τ⁵ peaks at q̇ = 15/8 d/T and q̈ = 10/√3 d/T²,
    so the shortest T within v·q̇_max and a·q̈_max is the larger of the two: scaling the
    limits by (v/k, a/k²) scales T by exactly k, as MoveIt's limit-based
    parameterizations do. q(t) is a quintic polynomial: a controller's quintic through
    the points replays it exactly.
    """
    d = np.abs(UR5_GOAL - UR5_START)
    v = v_factor * np.asarray(model.joint_limits.velocity)
    a = a_factor * UR5_ACCELERATION
    duration = float(max(np.max(15 / 8 * d / v), np.sqrt(np.max(10 / math.sqrt(3) * d / a))))
    return curved_move(UR5_JOINTS, UR5_START, UR5_GOAL, np.zeros(6), duration, n)


def feasible_as_played(model, move, load):
    """Peak |τ|/τ_max and |q̇|/q̇_max of the exact motion, at 2001 instants (evaluate)."""
    dense = limits_dense(move)
    ratio, result = peak(model, dense, load)
    return ratio, float(np.max(np.abs(result.velocities) / model.joint_limits.velocity))


def limits_dense(move):
    duration = float(move.time_from_start[-1])
    return curved_move(UR5_JOINTS, UR5_START, UR5_GOAL, np.zeros(6), duration, 2001)


def test_reported_moveit_factors_are_feasible_and_two_percent_more_is_not(ur5):
    v0, a0 = 0.8, 0.8  # what the input was planned with
    move = limits_parameterized(ur5, v0, a0)
    load = ur5_nine_kg()
    assert feasible_as_played(ur5, move, load)[0] > 1.0  # the plan overloads the arm
    result = retime(ur5, move, load, moveit_scaling=(v0, a0))
    report = result.as_dict()
    scaling = report["scaling"]
    fv, fa = scaling["max_velocity_scaling_factor"], scaling["max_acceleration_scaling_factor"]
    assert 0.0 < fv < v0 and 0.0 < fa < a0
    k = result.uniform.factor
    assert fv == pytest.approx(v0 / k) and fa == pytest.approx(a0 / k**2)
    # MoveIt replanning with the reported factors: within the limits ...
    ratio, velocity = feasible_as_played(ur5, limits_parameterized(ur5, fv, fa), load)
    assert ratio <= 1.0 + 1e-6 and velocity <= 1.0 + 1e-9
    # ... and with both 2 % larger: over a limit
    ratio, velocity = feasible_as_played(ur5, limits_parameterized(ur5, 1.02 * fv, 1.02 * fa),
                                         load)
    assert ratio > 1.0 or velocity > 1.0
    assert report["duration_uniform_scaling"] == pytest.approx(
        k * float(move.time_from_start[-1]))
    for key in ("duration_in", "duration_out", "duration_uniform_scaling", "max_effort_ratio",
                "scaling", "saturating"):
        assert key in report
    assert report["duration_in"] == pytest.approx(float(move.time_from_start[-1]))
    assert report["duration_out"] == pytest.approx(result.duration_after)
    assert report["max_effort_ratio"] == pytest.approx(
        max(np.nanmax(result.peak_ratio_after), np.nanmax(result.peak_ratio_playback)))
    # saturating: each entry is where evaluate finds that joint at ≥ 98 % of its limit
    assert report["saturating"]
    check = result.verification
    for entry in report["saturating"]:
        i = ur5.joint_names.index(entry["joint"])
        k_t = int(np.argmin(np.abs(check.t - entry["t"])))
        value = (check.effort_ratio[k_t, i] if entry["kind"] == "effort"
                 else abs(check.velocities[k_t, i]) / ur5.joint_limits.velocity[i])
        assert value >= 0.98 and value == pytest.approx(entry["ratio"])


def test_factors_above_one_are_capped_for_a_slow_input(ur5):
    move = limits_parameterized(ur5, 0.1, 0.1)
    result = retime(ur5, move, None, moveit_scaling=(0.1, 0.1))
    scaling = result.as_dict()["scaling"]
    # the input could run 10× faster (at the velocity limit); a₀/k² would be 10 > 1:
    # k' = max(k, v₀, √a₀) = √0.1 keeps both factors within MoveIt's (0, 1]
    assert result.uniform.factor == pytest.approx(0.1, rel=2e-4)
    assert scaling["max_acceleration_scaling_factor"] == pytest.approx(1.0)
    assert scaling["max_velocity_scaling_factor"] == pytest.approx(0.1 / math.sqrt(0.1))
    with pytest.raises(InvalidInputError, match="moveit_scaling"):
        retime(ur5, move, None, moveit_scaling=(1.5, 1.0))


def test_written_ur5_points_and_the_quintic_between_them_keep_every_limit(ur5):
    """The curved UR5 path with 9 kg (an effort peak inside the path), as written and played."""
    move = curved_move(UR5_JOINTS, UR5_START, UR5_GOAL, UR5_BULGE, 1.0, 41)
    load = ur5_nine_kg()
    _, before = peak(ur5, move, load)
    worst = int(np.nanargmax(np.max(before.effort_ratio, axis=0)))
    at = int(np.argmax(before.effort_ratio[:, worst]))
    assert 0 < at < move.n_points - 1  # the input's effort peak is inside the path
    result = retime(ur5, move, load, compare_uniform=False)
    # what is written, read back as a controller gets it (times rounded to ns)
    from robot_tv_dynamics.cli.retime import trajectory_to_dict

    out = trajectory_from_dict(trajectory_to_dict(result.trajectory))
    v_max = np.asarray(ur5.joint_limits.velocity)
    ratio, written = peak(ur5, out, load)
    assert ratio <= 1.0 + 1e-3
    assert np.all(np.abs(written.velocities) <= v_max * (1 + 1e-6))
    played_traj = hermite_resample(out, 20000.0)
    played, played_eval = peak(ur5, played_traj, load)
    assert played <= 1.0 + 1e-3
    assert np.all(np.abs(played_eval.velocities) <= v_max * (1 + 1e-6))
    # the written accelerations agree with the written velocities: at every inner knot
    # q̈ lies between the backward and forward differences of q̇ (up to the curvature of
    # q̈ inside a segment, 1e-3 of its range)
    t, qd, qdd = out.time_from_start, out.velocities, out.accelerations
    slope = np.diff(qd, axis=0) / np.diff(t)[:, None]
    low = np.minimum(slope[:-1], slope[1:])
    high = np.maximum(slope[:-1], slope[1:])
    excess = np.maximum(low - qdd[1:-1], qdd[1:-1] - high)
    assert np.max(excess) <= 1e-3 * np.max(np.abs(qdd))


def test_controller_playback_is_quintic_cubic_or_linear_by_the_fields_given():
    from robot_tv_dynamics.retiming.playback import controller_playback

    rng = np.random.default_rng(2)
    t = np.cumsum(rng.uniform(0.1, 0.3, 6))
    q, qd, qdd = (rng.normal(size=(6, 2)) for _ in range(3))
    full = controller_playback(Trajectory(("a", "b"), t, q, qd, qdd), 5)
    quintic = scipy.interpolate.BPoly.from_derivatives(t, np.stack([q, qd, qdd], axis=1))
    np.testing.assert_allclose(full.positions, quintic(full.time_from_start), atol=1e-12)
    np.testing.assert_allclose(full.velocities, quintic(full.time_from_start, 1), atol=1e-10)
    np.testing.assert_allclose(full.accelerations, quintic(full.time_from_start, 2),
                               atol=1e-8)
    cubic = controller_playback(Trajectory(("a", "b"), t, q, qd), 5)
    hermite = scipy.interpolate.CubicHermiteSpline(t, q, qd)
    np.testing.assert_allclose(cubic.positions, hermite(cubic.time_from_start), atol=1e-12)
    np.testing.assert_allclose(cubic.velocities, hermite(cubic.time_from_start, 1), atol=1e-12)
    linear = controller_playback(Trajectory(("a", "b"), t, q), 5)
    np.testing.assert_allclose(linear.positions,
                               np.column_stack([np.interp(linear.time_from_start, t, q[:, i])
                                                for i in range(2)]), atol=1e-12)


def test_settings_are_one_record_and_keywords_replace_its_fields(ur5):
    """RetimeOptions is checked when made; keywords beside it replace its fields."""
    from robot_tv_dynamics.retiming import RetimeOptions, retime

    options = RetimeOptions(effort_margin=0.9, gridpoints=50)
    assert (options.effort_margin, options.gridpoints, options.moveit_scaling) == (
        0.9, 50, (1.0, 1.0))
    with pytest.raises(InvalidInputError, match="gridpoints"):
        RetimeOptions(gridpoints=5)
    move, _, _ = corner_move()
    with pytest.raises(InvalidInputError, match="gridpoints"):
        retime(ur5, move, None, options, gridpoints=5)
    with pytest.raises(TypeError, match="no_such_setting"):
        retime(ur5, move, None, options, no_such_setting=1)
