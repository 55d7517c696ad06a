"""What Θ(t) looks like: lead balls, equivalent boxes, a consistency look, the skeleton.

Pure geometry (NumPy, Pinocchio through :class:`~robot_tv_dynamics.model.RobotModel`):

- :mod:`~robot_tv_dynamics.visualization.inertia_box`: per Φ the lead ball at the COM
  and the uniform box with the same inertia about the COM (None when Φ is inconsistent);
- :mod:`~robot_tv_dynamics.visualization.look`: colours for the monitor's level and the
  "inconsistent: no box exists" look;
- :mod:`~robot_tv_dynamics.visualization.skeleton`: joint origins from the package's
  forward kinematics, joined parent to child;
- :mod:`~robot_tv_dynamics.visualization.scene`: all of it for one Θ at one q, in the
  base frame.

The messages (visualization_msgs/MarkerArray) are built in ``ros/markers.py``.
"""

from robot_tv_dynamics.visualization.inertia_box import (
    LEAD_DENSITY,
    EquivalentBox,
    InertiaGeometry,
    inertia_geometry,
    lead_radius,
)
from robot_tv_dynamics.visualization.look import Look, Verdict, look
from robot_tv_dynamics.visualization.scene import (
    BodyVisual,
    InertiaScene,
    base_frame_name,
    inertia_scene,
)
from robot_tv_dynamics.visualization.skeleton import Skeleton, skeleton

__all__ = [
    "LEAD_DENSITY",
    "BodyVisual",
    "EquivalentBox",
    "InertiaGeometry",
    "InertiaScene",
    "Look",
    "Skeleton",
    "Verdict",
    "base_frame_name",
    "inertia_geometry",
    "inertia_scene",
    "lead_radius",
    "look",
    "skeleton",
]
