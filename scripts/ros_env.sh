# shellcheck shell=bash
# Source me (bash): the environment under which rclpy and the message packages from the
# PyPI ROS 2 wheels in .venv work, in this shell and in every process it starts
# (pytest, node subprocesses, `python -m ...`). Findings: scripts/ROS_WHEELS.md.
#
#   source scripts/ros_env.sh        # after bash scripts/bootstrap.sh
#
# Sets LD_LIBRARY_PATH (the wheels' shared libraries) and the guard of
# ros-wheels-bootstrapper, so that no interpreter re-executes itself; AMENT_PREFIX_PATH
# (the wheels install an ament prefix into the venv); RMW_IMPLEMENTATION; PYTHONPATH =
# the repo root. A sourced ROS 2 install is replaced, not mixed in. ROS_DOMAIN_ID and
# the discovery settings (ROS_AUTOMATIC_DISCOVERY_RANGE, ROS_STATIC_PEERS,
# ROS_LOCALHOST_ONLY) are left as the user has them: a driver on another host must be
# reachable (docs/ros_interface.md, "Discovery"); run_tests.sh and the demo keep their
# own runs on this host.

_rtd_repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_rtd_venv="${_rtd_repo}/.venv"

if [[ ! -x "${_rtd_venv}/bin/python" ]]; then
    echo "[ros_env] ${_rtd_venv} is missing: run bash scripts/bootstrap.sh first" >&2
    return 1 2>/dev/null || exit 1
fi

_rtd_site=("${_rtd_venv}"/lib/python3*/site-packages)
_rtd_ld="${_rtd_venv}/lib"
for _rtd_dir in "${_rtd_site[0]}"/ros_*.libs; do
    [[ -d "${_rtd_dir}" ]] && _rtd_ld="${_rtd_ld}:${_rtd_dir}"
done

if [[ -n "${ROS_DISTRO:-}" || "${PYTHONPATH:-}" == *"/opt/ros/"* ]]; then
    echo "[ros_env] note: ignoring the sourced ROS 2 install (${ROS_DISTRO:-?}); using ${_rtd_venv}" >&2
fi

# Ours first; whatever the caller had stays after it.
export LD_LIBRARY_PATH="${_rtd_ld}${LD_LIBRARY_PATH:+:${LD_LIBRARY_PATH}}"
# ros-wheels-bootstrapper's guard: its .pth would otherwise execve() every interpreter
# once more with the same LD_LIBRARY_PATH.
export _ROS_WHEELS_BOOTSTRAP_COMPLETE=1
# ament_index_python (ros2cli, get_package_share_directory) raises without it.
export AMENT_PREFIX_PATH="${_rtd_venv}"
export PYTHONPATH="${_rtd_repo}"
# The only RMW the wheels ship: another value (a cell's Cyclone DDS) would fail every node,
# so it is set, and a different value already set is named.
if [ -n "${RMW_IMPLEMENTATION:-}" ] && [ "${RMW_IMPLEMENTATION}" != rmw_fastrtps_cpp ]; then
    echo "ros_env.sh: RMW_IMPLEMENTATION=${RMW_IMPLEMENTATION} is not in the wheels;" \
         "using rmw_fastrtps_cpp" >&2
fi
export RMW_IMPLEMENTATION=rmw_fastrtps_cpp

unset _rtd_repo _rtd_venv _rtd_site _rtd_ld _rtd_dir
