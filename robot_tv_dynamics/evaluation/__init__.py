r"""Payload-aware evaluation of a planned joint trajectory (the MoveIt pipeline).

A planner (MoveIt, a teach pendant, a script) hands over a joint trajectory in the
``trajectory_msgs/JointTrajectory`` shape: joint names, and points with positions,
velocities, accelerations and ``time_from_start``. Given the payload the arm will carry
— a constant one as franka ``set_load`` and UR ``set_payload`` take it (mass, centre of
mass, inertia about the centre of mass, in a link frame), or a time-dependent loading
process — :func:`evaluate` computes at every point the torque of the generalized
robotics equation (39) with each addend separately,

.. math::
    τ = M(q,Θ)\ddot q + \big(C(q,\dot q,Θ) + M(q,\dotΘ) + H(q,Ψ)\big)\dot q + G(q,Θ)
        + J(q)^\top Q_0 \dotΨ ,

the effort ratios |τ_i| / τ_i,max against the URDF limits, the bounds λ_min, λ_max of
M(q, Θ) and the consistency margin λ_min(f(Φ)) of the loaded body, and lists the
violations.

:func:`max_payload` answers "how heavy may the payload be for this trajectory", exactly
(τ is affine in the payload's mass), beside MoveIt's static number.

Pure: no rclpy, no message types. One module per concept:
:mod:`~robot_tv_dynamics.evaluation.trajectory`, :mod:`~robot_tv_dynamics.evaluation.payload`,
:mod:`~robot_tv_dynamics.evaluation.result`, :mod:`~robot_tv_dynamics.evaluation.efforts`,
:mod:`~robot_tv_dynamics.evaluation.verdict` and :mod:`~robot_tv_dynamics.evaluation.io`
(the YAML and rosbag2 files of the ``evaluate`` command); one sample rather than a
trajectory: :mod:`~robot_tv_dynamics.evaluation.sample` (:class:`SampleTorques`, τ and
the addends per joint_states sample, as ``dynamics_node`` answers them).
"""


from robot_tv_dynamics.dynamics import TERM_NAMES
from robot_tv_dynamics.evaluation.efforts import (
    evaluate,
    max_payload,
)
from robot_tv_dynamics.evaluation.io import (
    load_payload,
    load_trajectory,
    read_bag_joint_trajectory,
)
from robot_tv_dynamics.evaluation.payload import (
    Load,
    Payload,
    payload_from_dict,
)
from robot_tv_dynamics.evaluation.result import (
    RATIO_TOLERANCE,
    EffortViolation,
    MaxPayload,
    TrajectoryEvaluation,
)
from robot_tv_dynamics.evaluation.sample import TERM_ROWS, SampleTorques
from robot_tv_dynamics.evaluation.trajectory import (
    JOINT_TRAJECTORY_TYPE,
    Trajectory,
    approach,
    derive_velocities_accelerations,
    held_positions,
    model_columns,
    trajectory_from_dict,
    trajectory_from_message,
)
from robot_tv_dynamics.evaluation.verdict import (
    ERROR,
    OK,
    WARN,
    EffortVerdict,
    effort_verdict,
)

__all__ = [
    "ERROR",
    "EffortVerdict",
    "EffortViolation",
    "JOINT_TRAJECTORY_TYPE",
    "Load",
    "MaxPayload",
    "OK",
    "Payload",
    "RATIO_TOLERANCE",
    "SampleTorques",
    "TERM_NAMES",
    "TERM_ROWS",
    "Trajectory",
    "approach",
    "TrajectoryEvaluation",
    "WARN",
    "derive_velocities_accelerations",
    "effort_verdict",
    "evaluate",
    "held_positions",
    "load_payload",
    "load_trajectory",
    "max_payload",
    "model_columns",
    "payload_from_dict",
    "read_bag_joint_trajectory",
    "trajectory_from_dict",
    "trajectory_from_message",
]
