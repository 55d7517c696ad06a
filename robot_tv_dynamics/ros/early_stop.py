"""Stop signals before the executables' own handlers exist (stdlib only, no ROS).

A node's run loop (``robot_tv_dynamics.ros.node_base.run_node``) owns SIGINT, SIGTERM and
SIGHUP once its modules are imported; before that — the ~0.3–1 s in which the
interpreter imports NumPy, Pinocchio and rclpy — Python's defaults would print a
KeyboardInterrupt traceback (SIGINT) or die by the signal (SIGTERM). Nothing needs
cleaning up then (no ROS context, no DDS participant, no child), so :func:`install`
makes such a signal end the process at once with exit code 0.

The executables call it first: a console script's entry point
(:mod:`robot_tv_dynamics.ros.entry_points`) with its own name, and the ROS layer's
``__init__`` through :func:`install_if_executable` when the process was started as
``python -m robot_tv_dynamics.ros.<x>`` (the node module's own imports come after it).
Importing the library (``robot_tv_dynamics`` and its core subpackages) installs nothing.
"""

from __future__ import annotations

import os
import signal
import sys

#: Module names (``python -m``) and console-script names that get the early handlers.
_MODULE_PREFIX = "robot_tv_dynamics.ros."
_EXECUTABLES = ("bringup", "monitor_group")


def _is_executable(name: str) -> bool:
    return name.endswith("_node") or name in _EXECUTABLES


def _executable_of_this_process() -> str | None:
    argv = list(getattr(sys, "orig_argv", []))
    if "-m" in argv[:-1]:
        module = argv[argv.index("-m") + 1]
        if module.startswith(_MODULE_PREFIX) and _is_executable(module[len(_MODULE_PREFIX):]):
            return module
        return None
    script = os.path.basename(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    return script if _is_executable(script) else None


def _exit_now(signum: int, frame: object) -> None:
    os.write(2, f"[{_name}] stopped during start-up ({signal.Signals(signum).name})\n".encode())
    os._exit(0)


_name = ""


def install_if_executable() -> bool:
    """:func:`install` when this process was started as one of the package's executables.

    Returns:
        Whether the handlers were installed (this process is an executable of the
        package, in its main thread).
    """
    name = _executable_of_this_process()
    return name is not None and install(name)


def install(name: str) -> bool:
    """Exit 0 on SIGINT/SIGTERM/SIGHUP until the executable installs its own handlers.

    Args:
        name: the executable, as the stop line on stderr names it (a module path's last
            component is used).

    Returns:
        Whether the handlers were installed (False outside the main thread).
    """
    global _name
    _name = name.rsplit(".", 1)[-1]
    try:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            if signum == signal.SIGHUP and signal.getsignal(signum) == signal.SIG_IGN:
                continue  # nohup: keep ignoring hang-ups
            signal.signal(signum, _exit_now)
    except ValueError:  # not the main thread
        return False
    return True

