r"""A simulated arm: eq. (39) integrated forward under a payload-loading process.

- :mod:`~robot_tv_dynamics.simulation.plant`: :class:`ArmSimulator`, RK4 at a fixed step
  with τ held over the step (the module explains why RK4);
- :mod:`~robot_tv_dynamics.simulation.interface`: the one interface every controller
  implements (state in, τ and Θ̂ out);
- :mod:`~robot_tv_dynamics.simulation.control`: the reference motion and the
  computed-torque law on estimated parameters;
- :mod:`~robot_tv_dynamics.simulation.loop`: :class:`ControlLoop`, the plant under any
  controller, step by step (the package's one closed loop);
- :mod:`~robot_tv_dynamics.simulation.closed_loop`: :class:`ClosedLoop`, the embedded
  default of the package (that loop with computed torque on the projected estimate, and
  the classical, projected and geometric estimators on the same noisy torque
  measurements) and the demo's settings.

No ROS code; ``ros/sim_node.py`` publishes the loop's samples.
"""

from robot_tv_dynamics.exceptions import SimulationDivergedError
from robot_tv_dynamics.paths import example_robot_urdf
from robot_tv_dynamics.simulation.closed_loop import (
    DEMO_MARGIN_FRACTION,
    DEMO_PROJECTION_MARGIN,
    DEMO_PROJECTION_UPPER,
    ClosedLoop,
    ClosedLoopConfig,
    LoopSample,
    demo_config,
    demo_loop,
)
from robot_tv_dynamics.simulation.control import (
    PANDA_JOINTS,
    PANDA_READY,
    ComputedTorqueOnEstimate,
    SineReference,
    default_reference,
    start_configuration,
    start_pose,
)
from robot_tv_dynamics.simulation.interface import Controller, ControlOutput, ControlState
from robot_tv_dynamics.simulation.loop import ControlLoop, ControlSample
from robot_tv_dynamics.simulation.plant import ArmSimulator, Loads

__all__ = [
    "DEMO_MARGIN_FRACTION",
    "DEMO_PROJECTION_MARGIN",
    "DEMO_PROJECTION_UPPER",
    "PANDA_JOINTS",
    "PANDA_READY",
    "ArmSimulator",
    "ClosedLoop",
    "ClosedLoopConfig",
    "ComputedTorqueOnEstimate",
    "ControlLoop",
    "ControlOutput",
    "ControlSample",
    "ControlState",
    "Controller",
    "Loads",
    "LoopSample",
    "SimulationDivergedError",
    "SineReference",
    "default_reference",
    "demo_config",
    "demo_loop",
    "example_robot_urdf",
    "start_configuration",
    "start_pose",
]
