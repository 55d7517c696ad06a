#!/usr/bin/env bash
# Bootstrap .venv, then run the main job: the robot_tv_dynamics CLI with the
# arguments given here (e.g. bash scripts/run_main.sh demo).
#
# The command runs in the caller's working directory: relative paths (--trajectory,
# --payload, --plot, --out) mean what they mean where you are, and the default outputs
# (demo_output/) land there, never silently inside the repo.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"

bash "$REPO/scripts/bootstrap.sh" >&2
# shellcheck source=scripts/ros_env.sh
source "$REPO/scripts/ros_env.sh"
export PATH="$REPO/.venv/bin:$PATH"

exec python -m robot_tv_dynamics.cli "$@"
