#!/usr/bin/env bash
# Create or update the project's virtual environment (.venv in the repo root) with
# everything the code, the tests and the colcon build need: requirements/dev.txt.
#
# Then scripts/build_interfaces.sh builds control_msgs' FollowJointTrajectory into the
# venv (once; it has a stamp of its own and says how long it took).
#
# Idempotent: a stamp file in .venv records a hash of the requirement files, the pip
# version and the interpreter; when it matches, nothing is installed (fast second run).
# The package itself is installed editable (pip install -e . --no-deps): the
# robot-tv-dynamics command and the node executables land in .venv/bin, and edits of
# the tree take effect without reinstalling.
#
# Usage: bash scripts/bootstrap.sh            # create/update .venv
#        bash scripts/bootstrap.sh --relock   # rewrite requirements/constraints.txt
# Environment: PYTHON (interpreter to build the venv from, default python3).
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv"
PYTHON="${PYTHON:-python3}"
PIP_VERSION="26.3"
STAMP="$VENV/.bootstrap-stamp"
# Let ros-wheels-bootstrapper set up this venv's own library path (see ROS_WHEELS.md).
unset _ROS_WHEELS_BOOTSTRAP_COMPLETE

say() { echo "[bootstrap] $*"; }
die() { echo "[bootstrap] error: $*" >&2; exit 1; }

pip_flags=(--disable-pip-version-check --no-input)
if [[ "${CI:-}" == "true" ]]; then pip_flags+=(--progress-bar off); fi

command -v "$PYTHON" >/dev/null 2>&1 || die "interpreter '$PYTHON' not found (set PYTHON=...)"
"$PYTHON" -c 'import sys; sys.exit(not (3, 10) <= sys.version_info[:2] <= (3, 12))' \
    || die "$("$PYTHON" -V 2>&1) is not supported: use Python 3.10-3.12 (PYTHON=python3.x)"
"$PYTHON" -c 'import ensurepip, venv' 2>/dev/null \
    || die "'$PYTHON -m venv' is unavailable (Debian: apt-get install python3-venv)"
py_id="$("$PYTHON" -c 'import sys; print(sys.implementation.cache_tag, sys.version.split()[0])')"

if [[ "${1:-}" == "--relock" ]]; then
    # Resolve requirements/dev.txt from scratch in a throwaway venv (constraints
    # emptied) and write the exact versions pip installed as the new lock.
    tmp="$(mktemp -d)"
    trap 'rm -rf "$tmp"' EXIT
    cp -r "$REPO/requirements" "$tmp/requirements"
    : > "$tmp/requirements/constraints.txt"
    say "relock: resolving requirements/dev.txt with $py_id in a throwaway venv"
    "$PYTHON" -m venv "$tmp/venv"
    "$tmp/venv/bin/python" -m pip install "${pip_flags[@]}" -q "pip==$PIP_VERSION"
    "$tmp/venv/bin/python" -m pip install "${pip_flags[@]}" -q -r "$tmp/requirements/dev.txt"
    minor="$("$PYTHON" -c 'import sys; print(f"{sys.version_info[0]}.{sys.version_info[1]}")')"
    {
        sed -n '/^#/p' "$REPO/requirements/constraints.txt"
        # Only what pip installed: the ROS wheels also embed *.egg-info records
        # (rclpy==7.1.5, std_msgs, ...) that are not distributions on PyPI.
        "$tmp/venv/bin/python" - "$minor" <<'EOF'
import importlib.metadata as md
import sys

rows = {}
for dist in md.distributions():
    name = dist.metadata['Name']
    if (dist.read_text('INSTALLER') or '').strip() == 'pip' and name.lower() != 'pip':
        rows[name.lower()] = f'{name}=={dist.version}; python_version == "{sys.argv[1]}"'
print('\n'.join(rows[key] for key in sorted(rows)))
EOF
    } > "$tmp/constraints.txt"
    mv "$tmp/constraints.txt" "$REPO/requirements/constraints.txt"
    say "relock: wrote requirements/constraints.txt ($(grep -vc '^#' "$REPO/requirements/constraints.txt") packages)"
    exit 0
fi

# One bootstrap at a time per checkout (run_main.sh and run_tests.sh may race).
if command -v flock >/dev/null 2>&1; then
    lock="${TMPDIR:-/tmp}/robot_tv_dynamics-bootstrap-$(printf '%s' "$REPO" | cksum | cut -d' ' -f1).lock"
    exec 9>"$lock"
    flock 9
fi

want="$(
    cd "$REPO"
    { echo "bootstrap-v2 $py_id pip==$PIP_VERSION $REPO"; cat requirements/*.txt setup.py setup.cfg; } | sha256sum | cut -d' ' -f1
)"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" && -x "$VENV/bin/python" ]] \
    && "$VENV/bin/python" -c '' >/dev/null 2>&1; then
    say "$VENV is up to date (stamp $want); nothing to install"
    bash "$REPO/scripts/build_interfaces.sh"
    exit 0
fi

if [[ -x "$VENV/bin/python" ]] \
    && [[ "$("$VENV/bin/python" -c 'import sys; print(sys.implementation.cache_tag, sys.version.split()[0])' 2>/dev/null)" == "$py_id" ]]; then
    say "updating $VENV ($py_id): requirements changed"
else
    if [[ -e "$VENV" ]]; then
        say "removing $VENV: missing, broken, or built from another interpreter"
        rm -rf "$VENV"
    fi
    say "creating $VENV with $("$PYTHON" -c 'import sys; print(sys.executable)') ($py_id)"
    "$PYTHON" -m venv "$VENV"
fi
rm -f "$STAMP"

# colcon must never crawl the venv: the ROS wheels put package.xml files in .venv/share.
touch "$VENV/COLCON_IGNORE" "$VENV/AMENT_IGNORE"

say "installing pip==$PIP_VERSION"
"$VENV/bin/python" -m pip install "${pip_flags[@]}" -q "pip==$PIP_VERSION"
say "installing requirements/dev.txt (pinned; constraints.txt locks the rest)"
"$VENV/bin/python" -m pip install "${pip_flags[@]}" -q -r "$REPO/requirements/dev.txt"
say "installing robot_tv_dynamics itself, editable (pip install -e . --no-deps)"
"$VENV/bin/python" -m pip install "${pip_flags[@]}" -q --no-deps --no-build-isolation -e "$REPO"
say "checking dependencies (pip check)"
"$VENV/bin/python" -m pip check
say "smoke test: import numpy, scipy, pinocchio, rclpy (via ros-wheels-bootstrapper)"
"$VENV/bin/python" -c 'import numpy, scipy, pinocchio, rclpy, std_msgs.msg, sensor_msgs.msg; print("[bootstrap] numpy", numpy.__version__, "| pinocchio", pinocchio.__version__, "| rclpy ok")'

echo "$want" > "$STAMP"
say "done: $VENV ready (stamp $want)"
# control_msgs' FollowJointTrajectory (the trajectory gate's action), built into the venv
bash "$REPO/scripts/build_interfaces.sh"
