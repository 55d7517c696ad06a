"""``excite --play``: an identification motion played on an arm through its
FollowJointTrajectory controller (sim_node as a joint_trajectory_controller), recorded.

The arm starts away from the motion's start pose: the command approaches it slowly,
plays the motion and records joint_states; the recording follows the designed path and
``identify`` reads it.
"""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
from support.ros_harness import NodeProcess, node_env, unique_namespace

from robot_tv_dynamics.cli import main
from robot_tv_dynamics.evaluation import load_trajectory
from robot_tv_dynamics.identification.data import load_samples

#: Where sim_node's UR5 starts: away from any motion's start pose [rad].
START = (0.3, -1.0, 1.0, -1.2, -1.3, 0.2)


@pytest.mark.ros
def test_excite_play_approaches_plays_and_records_the_motion(tmp_path, ur5, urdf_paths):
    urdf = urdf_paths["ur5"]
    ns = unique_namespace("excite")
    pose = [f"{name}={value}" for name, value in zip(ur5.joint_names, START, strict=True)]
    sim = NodeProcess("sim_node", ns, tmp_path, {
        "urdf_path": urdf, "controller": "trajectory", "initial_positions": pose,
        "publish_rate": 200.0, "legacy_theta_topics": False})
    out, bag = tmp_path / "motion.yaml", tmp_path / "motion.mcap"
    try:
        run = subprocess.run(
            [sys.executable, "-m", "robot_tv_dynamics.cli", "excite", "--urdf", urdf,
             "--duration", "4", "--harmonics", "3", "--base-frequency", "0.25",
             "--candidates", "12", "--iterations", "0", "--rate", "50",
             "--out", str(out), "--play", f"{ns}/sim_node/follow_joint_trajectory",
             "--record", str(bag), "--joint-states", f"{ns}/joint_states",
             "--approach-speed", "0.3"],
            env=node_env(), capture_output=True, text=True, timeout=240)
    finally:
        code = sim.stop()
    assert run.returncode == 0, run.stderr[-3000:] + sim.output()[-2000:]
    assert code == 0, sim.output()[-2000:]
    assert "approach:" in run.stderr and "recorded" in run.stderr, run.stderr
    motion = load_trajectory(out)
    samples = load_samples(str(bag), ur5, topic=f"{ns}/joint_states")
    # the whole motion at 200 Hz (its 4 s and the wait for the result), nothing else
    span = samples.t[-1] - samples.t[0]
    assert 3.9 <= span <= 4.0 + 1.0, span
    assert samples.t.size >= 0.95 * 200 * 4.0, samples.t.size
    # it started at the motion's start pose, not at sim_node's START: the approach ran
    start = motion.positions[0]
    assert np.abs(samples.q[0] - start).max() < 0.02, samples.q[0] - start
    assert np.abs(np.asarray(START) - start).max() > 0.1
    # every recorded configuration lies on the designed path (sampled finely)
    grid = np.linspace(0.0, float(motion.time_from_start[-1]), 2001)
    path = np.column_stack([np.interp(grid, motion.time_from_start, motion.positions[:, j])
                            for j in range(ur5.nv)])
    off = np.array([np.abs(path - q).max(axis=1).min() for q in samples.q])
    assert off.max() < 0.02, off.max()
    # and it ends at rest where it began (a Fourier motion returns to its start)
    assert np.abs(samples.q[-1] - start).max() < 0.02


def test_record_and_play_go_together_and_an_existing_bag_is_refused(tmp_path, capsys,
                                                                      urdf_paths):
    urdf = urdf_paths["ur5"]
    base = ["excite", "--urdf", urdf, "--duration", "2", "--candidates", "1",
            "--iterations", "0", "--out", str(tmp_path / "m.yaml")]
    assert main([*base, "--record", str(tmp_path / "r.mcap")]) == 2
    assert "--record" in capsys.readouterr().err
    assert main([*base, "--play", "/arm/follow_joint_trajectory"]) == 2
    assert "--record BAG" in capsys.readouterr().err
    (tmp_path / "exists.mcap").write_text("")
    assert main([*base, "--play", "/arm/follow_joint_trajectory", "--record",
                 str(tmp_path / "exists.mcap")]) == 2
    assert "exists" in capsys.readouterr().err
    assert not (tmp_path / "m.yaml").exists()  # refused before the design ran
