#!/usr/bin/env bash
# Everything the tests need, then the tests: bootstrap .venv, lint (ruff), type-check
# the core (mypy), run pytest in two lanes (below). Arguments go to pytest (-k, -x, a path).
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

# Two lanes, one after the other (test/conftest.py): first the tests that run live nodes
# against the wall clock, alone in one process (a CPU-bound test beside them, even at
# nice 10, made their nodes miss their deadlines), then the others on every core
# (pytest-xdist). Each lane has its own temporary folder and JUnit report; the last line
# adds them up.
lanes="$(mktemp -d)"
trap 'rm -rf "$lanes"' EXIT
cores="$(nproc 2>/dev/null || echo 2)"
echo "[run_tests] pytest $*: the realtime lane (ROS_DOMAIN_ID=$ROS_DOMAIN_ID), then the" \
     "other lane on $cores workers"
realtime_status=0
RTD_TEST_LANE=realtime python -m pytest -p no:xdist --basetemp="$lanes/realtime" \
    --junitxml="$lanes/realtime.xml" "$@" || realtime_status=$?
other_status=0
RTD_TEST_LANE=other python -m pytest -n "$cores" --dist loadscope --basetemp="$lanes/other" \
    --junitxml="$lanes/other.xml" "$@" || other_status=$?

# Exit 5 (no test collected) is fine for one lane: -k or a path may name one lane only.
for lane in "realtime $realtime_status" "other $other_status"; do
    read -r name status <<< "$lane"
    if (( status != 0 && status != 5 )); then failed+=("pytest $name lane (exit $status)"); fi
done
if (( realtime_status == 5 && other_status == 5 )); then
    echo "[run_tests] error: pytest collected no tests (exit 5)" >&2
    failed+=("pytest (no tests collected)")
fi
python - "$lanes"/*.xml <<'EOF'
import sys
import xml.etree.ElementTree as ET

total = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
for path in sys.argv[1:]:
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        continue
    for suite in root.iter("testsuite"):
        for key in total:
            total[key] += int(suite.get(key, 0))
bad = total["failures"] + total["errors"]
print(f"pytest: {total['tests'] - bad - total['skipped']} passed, {bad} failed, "
      f"{total['skipped']} skipped")
EOF

if (( ${#failed[@]} )); then
    echo "[run_tests] FAILED: ${failed[*]}" >&2
    exit 1
fi
