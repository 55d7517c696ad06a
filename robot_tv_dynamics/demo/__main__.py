"""``python -m robot_tv_dynamics.demo``: the same as ``robot-tv-dynamics demo``."""

import sys

from robot_tv_dynamics.cli import main

sys.exit(main(["demo", *sys.argv[1:]]))
