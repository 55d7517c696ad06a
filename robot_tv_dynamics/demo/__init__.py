"""The demo: the simulated arm, estimators, dynamics and monitors over DDS, and its analysis.

The run (:mod:`robot_tv_dynamics.ros.demo`) brings up, as separate processes talking
over real DDS (no launch_ros needed):

- ``sim_node``: the Panda (or ``--urdf``) integrating eq. (39) under a loading process,
  with a computed-torque controller on the *projected* payload estimate and the
  *classical* estimator running open loop on the same noisy torque measurements;
- ``dynamics_node``: τ of eq. (39) term by term and the mass-matrix bounds for the true
  Θ(t) (q̈ from the simulator's ``joint_accelerations``), and both momentum observers'
  residuals on the simulator's efforts (``external_torques``: generalized, Θ(t), Ψ(t);
  ``external_torques_classical``: the Θ of the first sample held) with their contact
  statuses;
- three ``monitor_node`` instances, all on ``/diagnostics``: on the true Θ(t) (statuses
  named by body) and on each estimate (``status_prefix`` ``estimates/<name>``: statuses
  named ``estimates/<name>: <body>``).

It records every topic into ``DIR/run.mcap`` (rosbag2 MCAP, readable by rosbags and
Foxglove) while showing a progress bar. This package is the part without ROS:

- :mod:`~robot_tv_dynamics.demo.scenario`: scenarios, recorded topics, status names and
  the scenario file handed to sim_node;
- :mod:`~robot_tv_dynamics.demo.recording`: ``run.mcap`` read back with rosbags;
- :mod:`~robot_tv_dynamics.demo.analysis`: alarms replayed on the recorded estimates,
  contacts replayed on the recorded observer residuals, ``summary.json``;
- :mod:`~robot_tv_dynamics.demo.report`: ``report.png``.

The options are :mod:`robot_tv_dynamics.cli.demo`.
"""

from robot_tv_dynamics.demo.analysis import analyse, load_run, summary, write_results
from robot_tv_dynamics.demo.recording import Recording, read_recording
from robot_tv_dynamics.demo.report import console_summary, report, report_figure
from robot_tv_dynamics.demo.scenario import (
    ESTIMATORS,
    MARKERS_PARAMETERS,
    MONITOR_PARAMETERS,
    OBSERVER_PARAMETERS,
    OBSERVER_TOPICS,
    RECORDED,
    SCENARIOS,
    STAMPED_ONLY,
    TRUTH,
    ScenarioSetup,
    layout_file,
    scenario_file,
    start_pose,
    status_prefix,
    status_source,
    tool_link,
)

__all__ = [
    "ESTIMATORS",
    "MARKERS_PARAMETERS",
    "MONITOR_PARAMETERS",
    "STAMPED_ONLY",
    "OBSERVER_PARAMETERS",
    "OBSERVER_TOPICS",
    "RECORDED",
    "SCENARIOS",
    "TRUTH",
    "Recording",
    "ScenarioSetup",
    "analyse",
    "console_summary",
    "load_run",
    "report_figure",
    "layout_file",
    "read_recording",
    "report",
    "scenario_file",
    "start_pose",
    "status_prefix",
    "status_source",
    "summary",
    "tool_link",
    "write_results",
]
