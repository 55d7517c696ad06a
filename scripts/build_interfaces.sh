#!/usr/bin/env bash
# Build control_msgs' FollowJointTrajectory (interfaces/control_msgs: the Jazzy
# definitions, same type hashes) into the project's virtual environment, for set-ups
# without a ROS install. scripts/bootstrap.sh runs it; run it alone after editing
# interfaces/.
#
# Skipped when a stamp in .venv records the same sources, build tools and interpreter,
# or when `import control_msgs.action` already works in the venv's environment (a
# control_msgs that came from elsewhere). Otherwise: pip installs the build tools
# (requirements/interfaces.txt), apt-get installs cmake and g++ when missing (as root;
# `apt-get update` first), CMake configures, builds and installs into .venv.
#
# In a ROS 2 install nothing here is used: colcon skips interfaces/ (COLCON_IGNORE) and
# the system's control_msgs serves the nodes.
#
# Usage: bash scripts/build_interfaces.sh
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
VENV="$REPO/.venv"
SOURCE="$REPO/interfaces/control_msgs"
STAMP="$VENV/.control_msgs-stamp"
PY="$VENV/bin/python"

say() { echo "[interfaces] $*"; }
die() { echo "[interfaces] error: $*" >&2; exit 1; }

[[ -x "$PY" ]] || die "$VENV is missing: run bash scripts/bootstrap.sh first"
started=$SECONDS

want="$(
    cd "$REPO"
    { "$PY" -c 'import sys; print(sys.implementation.cache_tag, sys.version.split()[0])'
      cat requirements/interfaces.txt scripts/build_interfaces.sh
      find interfaces -type f | LC_ALL=C sort | xargs cat; } | sha256sum | cut -d' ' -f1
)"

# What scripts/ros_env.sh gives a process: the venv's libraries and ament prefix, the
# repo on PYTHONPATH (a sourced ROS install is not mixed in).
run_in_venv() {
    env -u PYTHONPATH -u AMENT_PREFIX_PATH -u _ROS_WHEELS_BOOTSTRAP_COMPLETE \
        PYTHONPATH="$REPO" AMENT_PREFIX_PATH="$VENV" "$@"
}
importable() {
    run_in_venv "$PY" -c 'from control_msgs.action import FollowJointTrajectory' >/dev/null 2>&1
}

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$want" ]] && importable; then
    say "control_msgs is up to date (stamp $want); nothing to build"
    exit 0
fi
# ours carries this package.xml marker; any other control_msgs is left alone
ours="$VENV/share/control_msgs/package.xml"
if importable && ! grep -qs "robot-tv-dynamics.invalid" "$ours"; then
    where="$(run_in_venv "$PY" -c 'import control_msgs; print(control_msgs.__file__)' 2>/dev/null)"
    say "control_msgs is already importable ($where); nothing to build"
    exit 0
fi
rm -f "$STAMP"

missing=()
command -v cmake >/dev/null 2>&1 || missing+=(cmake)
command -v g++ >/dev/null 2>&1 || missing+=(g++)
command -v make >/dev/null 2>&1 || missing+=(make)
# the Python bindings compile against the interpreter's headers (Debian: python3-dev)
"$PY" -c 'import os, sys, sysconfig
sys.exit(not os.path.isfile(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
    || missing+=(python3-dev)
if (( ${#missing[@]} )); then
    if [[ "$(id -u)" != 0 ]] || ! command -v apt-get >/dev/null 2>&1; then
        die "${missing[*]} not found: install them (Debian/Ubuntu: apt-get install ${missing[*]})"
    fi
    say "installing ${missing[*]} (apt-get)"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null
fi

say "installing the build tools (requirements/interfaces.txt)"
pip_flags=(--disable-pip-version-check --no-input -q)
if [[ "${CI:-}" == "true" ]]; then pip_flags+=(--progress-bar off); fi
"$PY" -m pip install "${pip_flags[@]}" -r "$REPO/requirements/interfaces.txt"

build="$(mktemp -d)"
trap 'rm -rf "$build"' EXIT
log="$build/build.log"
lib_path="$VENV/lib"
for dir in "$VENV"/lib/python3*/site-packages/ros_*.libs; do
    [[ -d "$dir" ]] && lib_path="$lib_path:$dir"
done
cmake_env=(env -u PYTHONPATH PATH="$VENV/bin:$PATH" AMENT_PREFIX_PATH="$VENV"
           CMAKE_PREFIX_PATH="$VENV" LD_LIBRARY_PATH="$lib_path${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
           _ROS_WHEELS_BOOTSTRAP_COMPLETE=1)
jobs="$(nproc 2>/dev/null || echo 2)"

say "building control_msgs (FollowJointTrajectory, JointTolerance, JointComponentTolerance) with $jobs jobs"
if ! "${cmake_env[@]}" cmake -S "$SOURCE" -B "$build" \
        -DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF \
        -DCMAKE_INSTALL_PREFIX="$VENV" -DCMAKE_PREFIX_PATH="$VENV" \
        -DPython3_EXECUTABLE="$PY" \
        -DCMAKE_PROJECT_INCLUDE="$REPO/interfaces/drop_missing_includes.cmake" >"$log" 2>&1 \
    || ! "${cmake_env[@]}" cmake --build "$build" -j "$jobs" >>"$log" 2>&1 \
    || ! "${cmake_env[@]}" cmake --install "$build" >>"$log" 2>&1; then
    tail -40 "$log" >&2
    die "the control_msgs build failed (last lines above)"
fi
importable || die "control_msgs was installed into $VENV but does not import"

echo "$want" > "$STAMP"
say "done: control_msgs built and installed into $VENV in $((SECONDS - started)) s"
