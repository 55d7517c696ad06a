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
failed=()

echo "[run_tests] ruff check ."
ruff check . || failed+=("ruff")

# mypy runs beside the tests; its output follows theirs.
lanes="$(mktemp -d)"
trap 'rm -rf "$lanes"' EXIT
echo "[run_tests] mypy (the core: robot_tv_dynamics without robot_tv_dynamics/ros), beside the tests"
nice -n 10 mypy > "$lanes/mypy.log" 2>&1 &
mypy_pid=$!

# Two lanes at once (test/conftest.py): the tests that run live nodes against the wall
# clock in this process at normal priority, the others on every core beside them at
# nice 10 (pytest-xdist), so that a CPU-bound test never starves a node. Each lane has
# its own DDS domain, temporary folder and JUnit report; the last line adds them up.
cores="$(nproc 2>/dev/null || echo 2)"
other_domain=$(( ROS_DOMAIN_ID % 100 + 1 ))
echo "[run_tests] pytest $*: the realtime lane here (ROS_DOMAIN_ID=$ROS_DOMAIN_ID), the" \
     "other lane on $cores workers at nice 10 (ROS_DOMAIN_ID=$other_domain), its output" \
     "after this one's"
RTD_TEST_LANE=other ROS_DOMAIN_ID=$other_domain nice -n 10 \
    python -m pytest -n "$cores" --dist loadscope --basetemp="$lanes/other" \
    --junitxml="$lanes/other.xml" "$@" > "$lanes/other.log" 2>&1 &
other_pid=$!
realtime_status=0
RTD_TEST_LANE=realtime python -m pytest -p no:xdist --basetemp="$lanes/realtime" \
    --junitxml="$lanes/realtime.xml" "$@" || realtime_status=$?
other_status=0
wait "$other_pid" || other_status=$?
echo "[run_tests] the other lane (exit $other_status):"
cat "$lanes/other.log"
mypy_status=0
wait "$mypy_pid" || mypy_status=$?
echo "[run_tests] mypy (exit $mypy_status):"
cat "$lanes/mypy.log"
(( mypy_status == 0 )) || failed+=("mypy")

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
