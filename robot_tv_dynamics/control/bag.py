r"""``adapt --bag``: one run as a rosbag2 MCAP in the package's topics and stamped schema.

Topics (every message sensor_msgs/JointState, stamped ``start`` + t, log time = stamp,
at the run's recording rate):

- ``/joint_states``: q, q̇ and effort = the controller's τ (model joint order);
- ``/reference_joint_states``: the desired q_d, q̇_d;
- ``/inertial_parameters_stamped``: the plant's true Θ (position) and Θ̇ (velocity);
- ``/estimates/controller/inertial_parameters_stamped``: the controller's Θ̂ (position),

the last two in the stamped body-vector schema (:mod:`robot_tv_dynamics.inputs.
body_vectors`: names ``<body>/<parameter>``, eq. (7) order), as ``sim_node`` publishes
them with ``controller:=<law>``. Read back with :func:`robot_tv_dynamics.bags.open_bag`.
"""

from __future__ import annotations

from pathlib import Path

from robot_tv_dynamics.bags import write_joint_state_bag
from robot_tv_dynamics.control.run import AdaptiveRun
from robot_tv_dynamics.inputs.body_vectors import body_vector_names
from robot_tv_dynamics.model import RobotModel

#: The topic of the controller's Θ̂ (as sim_node publishes it).
ESTIMATE_TOPIC = "/estimates/controller/inertial_parameters_stamped"
#: The topics written, in the order of the module docstring.
TOPICS = ("/joint_states", "/reference_joint_states", "/inertial_parameters_stamped",
          ESTIMATE_TOPIC)


def write_run_bag(path: str | Path, run: AdaptiveRun, model: RobotModel, *,
                  start: float = 100.0) -> Path:
    """Write ``run`` as an MCAP (module docstring).

    Args:
        path: a ``.mcap`` file, or a folder (a rosbag2 directory, MCAP storage).
        run: the recorded run.
        model: its arm (joint and body names).
        start: stamp of t = 0 [s].

    Returns:
        The path written.

    Raises:
        InvalidInputError: ``path`` exists.
    """
    joints = list(model.joint_names)
    bodies = body_vector_names(model.body_names, "phi")
    with write_joint_state_bag(path, TOPICS, argument="--bag") as write:
        for k, t in enumerate(run.t):
            ns = int(round((float(t) + start) * 1e9))
            write("/joint_states", ns, joints, run.q[k], run.qd[k], run.tau[k])
            write("/reference_joint_states", ns, joints, run.q_d[k], run.qd_d[k])
            write("/inertial_parameters_stamped", ns, bodies, run.theta[k], run.theta_dot[k])
            write(ESTIMATE_TOPIC, ns, bodies, run.theta_hat[k])
    return Path(path)
