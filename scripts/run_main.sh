#!/usr/bin/env bash
# Bootstrap .venv, then run the main job: the robot_tv_dynamics CLI with the
# arguments given here (e.g. bash scripts/run_main.sh demo).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

bash scripts/bootstrap.sh >&2
# shellcheck source=scripts/ros_env.sh
source scripts/ros_env.sh
export PATH="$REPO/.venv/bin:$PATH"

exec python -m robot_tv_dynamics.cli "$@"
