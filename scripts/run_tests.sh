#!/usr/bin/env bash
# Everything the tests need, then the tests: bootstrap .venv, lint (ruff), type-check
# the core (mypy), run pytest. Arguments go to pytest (e.g. -k, -x, test/test_x.py).
# All three always run; the exit status is non-zero if any failed, including a pytest
# run that collected no test (pytest exit 5).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO"

bash scripts/bootstrap.sh
# shellcheck source=scripts/ros_env.sh
source scripts/ros_env.sh
# A private DDS domain for this run (tests may pick their own per test); 1..100 keeps
# Fast DDS ports below the Linux ephemeral range.
export ROS_DOMAIN_ID="${ROS_DOMAIN_ID:-$(( $$ % 100 + 1 ))}"
# The tests' participants discover on this host only, whatever the user's settings.
export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST
unset ROS_STATIC_PEERS ROS_LOCALHOST_ONLY
export PATH="$REPO/.venv/bin:$PATH"

failed=()

echo "[run_tests] ruff check ."
ruff check . || failed+=("ruff")

echo "[run_tests] mypy (the core: robot_tv_dynamics without robot_tv_dynamics/ros)"
mypy || failed+=("mypy")

echo "[run_tests] pytest $* (ROS_DOMAIN_ID=$ROS_DOMAIN_ID)"
status=0
python -m pytest "$@" || status=$?
if [[ $status -eq 5 ]]; then
    echo "[run_tests] error: pytest collected no tests (exit 5)" >&2
    failed+=("pytest (no tests collected)")
elif [[ $status -ne 0 ]]; then
    failed+=("pytest (exit $status)")
fi

if (( ${#failed[@]} )); then
    echo "[run_tests] FAILED: ${failed[*]}" >&2
    exit 1
fi
# Nothing printed after pytest's own summary on success.
