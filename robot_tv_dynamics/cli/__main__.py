"""``python -m robot_tv_dynamics.cli``: the same as ``robot-tv-dynamics``."""

import sys

from robot_tv_dynamics.cli import main

sys.exit(main())
