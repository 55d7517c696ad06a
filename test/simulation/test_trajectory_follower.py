"""The simulated joint trajectory controller tracks a trajectory with the torques of eq. (39).

The plant (RK4 of eq. (39) with a 9 kg load) is driven by the follower; the reference is
the analytic quintic, the expected torque ``evaluate`` on it (not the follower's own
computation).
"""

from __future__ import annotations

import numpy as np
from support.gate_cases import COM, Q0, Q1, quintic, theta_with_payload

from robot_tv_dynamics.evaluation import evaluate
from robot_tv_dynamics.loading import loading_process_from_dict
from robot_tv_dynamics.simulation import ArmSimulator
from robot_tv_dynamics.simulation.trajectory_follower import TrajectoryFollower, start_pose


def test_the_follower_tracks_a_quintic_with_the_torques_of_eq_39(ur5):
    process = loading_process_from_dict({
        "process": "grasp", "link": "tool0", "start": 0.0, "ramp_time": 0.01, "mass": 9.0,
        "com": COM.tolist(), "approach": COM.tolist(), "inertia": [0.0] * 6})
    plant = ArmSimulator(ur5, process, q0=Q0, rate=1000.0)
    follower = TrajectoryFollower(ur5, Q0)
    for _ in range(1500):  # the load settles on the flange (its 10 ms ramp jolts the arm)
        plant.step(follower.torque(plant.t, plant.q, plant.qd, plant.loads(plant.t)))
    planned = quintic(4.0)
    follower.start(planned, plant.t, plant.q)
    t0, error, taus, times = plant.t, 0.0, [], []
    while plant.t < follower.end_time + 0.1:
        tau = follower.torque(plant.t, plant.q, plant.qd, plant.loads(plant.t))
        error = max(error, float(np.abs(follower.reference(plant.t)[0] - plant.q).max()))
        taus.append(tau)
        times.append(plant.t - t0)
        plant.step(tau)
    assert error < 1e-3
    np.testing.assert_allclose(plant.q, Q1, atol=1e-4)
    # the torque applied at the planned points is eq. (39) of the plan under 9 kg
    expected = evaluate(ur5, planned, None, theta=theta_with_payload(ur5, 9.0),
                        compute_max_payload=False).effort
    index = np.searchsorted(np.array(times), planned.time_from_start - 1e-9)
    np.testing.assert_allclose(np.array(taus)[index], expected, atol=0.5)


def test_start_pose_sets_the_named_joints_and_refuses_unknown_ones(ur5):
    q = start_pose(ur5, ["shoulder_lift_joint=-1.2", "elbow_joint=1.0"])
    assert q[1] == -1.2 and q[2] == 1.0 and q[0] == 0.0
    assert start_pose(ur5, []) is None
    import pytest

    from robot_tv_dynamics.exceptions import InvalidInputError
    with pytest.raises(InvalidInputError, match="not a joint"):
        start_pose(ur5, ["knee=1"])
