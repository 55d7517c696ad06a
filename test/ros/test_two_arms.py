"""Two arms, a UR5 and a Panda, brought up side by side under two namespaces.

Each arm is one CLI bring-up (``bringup.bring_up``: dynamics, monitor, markers and
sim_node) with its own namespace and cell options: the joint states remapped to a
driver-like topic, the Panda's nodes at log level ``warn``. Over real DDS:

- each arm's ``generalized_torques`` carry its own joints only;
- on the one shared ``/diagnostics``, every status is named after its node's full name
  (``/ur/monitor_node: wrist_3_link``): both arms' statuses are there, none named alike,
  each with its own robot as hardware_id, no body of one arm in the other's statuses;
- the log level reached the Panda's nodes (no INFO line) and not the UR5's.
"""

from __future__ import annotations

import subprocess

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from support.ros_harness import REPO, node_env, unique_namespace

from robot_tv_dynamics.ros import bringup
from robot_tv_dynamics.ros.cell import CellOptions
from robot_tv_dynamics.ros.robot_description import robot_name

pytestmark = [pytest.mark.ros, pytest.mark.slow]

TIMEOUT = 120.0


def test_two_arms_under_two_namespaces_keep_their_outputs_and_diagnostics_apart(
        tester, tmp_path, ur5, panda, urdf_paths):
    base = unique_namespace("arms")
    arms = {"ur": (ur5, urdf_paths["ur5"], "info"), "panda": (panda, urdf_paths["panda"], "warn")}
    torques = {arm: tester.collect(JointState, f"{base}/{arm}/generalized_torques")
               for arm in arms}
    diagnostics = tester.collect(DiagnosticArray, "/diagnostics")
    running, logs = {}, {}
    try:
        for arm, (_, urdf, level) in arms.items():
            logs[arm] = (tmp_path / f"{arm}.log").open("w")
            cell = CellOptions(joint_states="driver/joint_states", log_level=level)
            running[arm] = bringup.bring_up(
                urdf, use_sim=True, namespace=f"{base}/{arm}", scenario="none",
                controller="computed-torque", config=REPO / "config" / "tv_dynamics.yaml",
                env=node_env(), cell=cell, stdout=logs[arm], stderr=subprocess.STDOUT)
        full = {arm: f"{base}/{arm}" for arm in arms}
        wanted = {f"{full[arm]}/{node}: {task}" for arm, (model, _, _) in arms.items()
                  for node, task in [("dynamics_node", "input"), ("monitor_node", "input")]
                  + [("monitor_node", body) for body in model.body_names]}

        def everything_there() -> bool:
            names = {s.name for a in diagnostics for s in a.status}
            return wanted <= names and all(len(torques[arm]) >= 20 for arm in arms)

        tester.spin_until(everything_there, TIMEOUT, "both arms' torques and statuses")
        for arm in arms:
            assert running[arm].poll() is None, arm
    finally:
        for started in running.values():
            started.stop()
        for log in logs.values():
            log.close()
    for arm, (model, _, _) in arms.items():
        assert all(list(m.name) == list(model.joint_names) for m in torques[arm]), arm
    seen: dict[str, set[str]] = {arm: set() for arm in arms}
    for array in diagnostics:
        for status in array.status:
            node, _, task = status.name.partition(": ")
            owners = [arm for arm in arms if node.startswith(f"{full[arm]}/")]
            if not node.startswith(base):
                continue  # another test's node on this domain
            assert len(owners) == 1, status.name
            arm = owners[0]
            model = arms[arm][0]
            assert status.hardware_id == robot_name(model), (status.name, status.hardware_id)
            seen[arm].add(status.name)
            other = next(m for a, (m, _, _) in arms.items() if a != arm)
            assert task not in set(other.body_names) - set(model.body_names), status.name
    assert not seen["ur"] & seen["panda"]
    ur_log, panda_log = ((tmp_path / f"{arm}.log").read_text() for arm in ("ur", "panda"))
    assert "[INFO]" in ur_log and "ready" in ur_log
    assert "[INFO]" not in panda_log, panda_log[-2000:]
