#!/usr/bin/env bash
# Everything the tests need, then the tests: bootstrap .venv, lint (ruff), then at once
# type-check the core (mypy) and run pytest in two lanes (below). Arguments go to pytest
# (-k, -x, a path). All three always run; the exit status is non-zero if any failed,
# including a pytest run that collected no test (pytest exit 5).
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

# Idle priority for everything that is not the realtime lane: SCHED_IDLE where the system
# has it (it runs only on a core the realtime lane leaves idle, with no privilege needed),
# else nice 19.
if command -v chrt >/dev/null && chrt --idle 0 true 2>/dev/null; then
    idle=(chrt --idle 0)
else
    idle=(nice -n 19)
fi

# Two lanes at once (test/conftest.py): the tests that run live nodes against the wall
# clock alone in one process at normal priority, and the others on every core
# (pytest-xdist) at idle priority, so that they take only the CPU time the live nodes
# leave (a CPU-bound test beside them at the same priority, even at nice 10, made their
# nodes miss their deadlines; at idle priority they met them, and the lanes together
# took 12.8 min here instead of 19.6 min one after the other). mypy runs at idle
# priority too. The realtime lane prints as it goes; the other two print when they are
# done. Each lane has its own temporary folder and JUnit report; the last line adds
# them up.
lanes="$(mktemp -d)"
# an interrupted run takes its background lane and mypy with it
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$lanes"' EXIT
cores="$(nproc 2>/dev/null || echo 2)"
"${idle[@]}" mypy > "$lanes/mypy.log" 2>&1 &
mypy_pid=$!
# the lanes' demos and installed nodes in two domains (a lane's tests pick their own too)
RTD_TEST_LANE=other ROS_DOMAIN_ID=$(( ROS_DOMAIN_ID % 100 + 1 )) \
    "${idle[@]}" python -m pytest -n "$cores" --dist loadscope --basetemp="$lanes/other" \
    --junitxml="$lanes/other.xml" "$@" > "$lanes/other.log" 2>&1 &
other_pid=$!
echo "[run_tests] pytest $*: the realtime lane (ROS_DOMAIN_ID=$ROS_DOMAIN_ID) here; the" \
     "other lane on $cores workers and mypy at idle priority (${idle[*]}), printed when done"
realtime_status=0
RTD_TEST_LANE=realtime python -m pytest -p no:xdist --basetemp="$lanes/realtime" \
    --junitxml="$lanes/realtime.xml" "$@" || realtime_status=$?
other_status=0
wait "$other_pid" || other_status=$?
echo "[run_tests] the other lane:"
cat "$lanes/other.log"
echo "[run_tests] mypy (the core: robot_tv_dynamics without robot_tv_dynamics/ros)"
wait "$mypy_pid" || failed+=("mypy")
cat "$lanes/mypy.log"

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
