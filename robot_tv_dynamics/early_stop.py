"""Stop signals before the executables' own handlers exist (stdlib only, no ROS).

A node's run loop (``robot_tv_dynamics.ros.node_base.run_node``) owns SIGINT, SIGTERM and
SIGHUP once its modules are imported; before that — the ~0.3–1 s in which the
interpreter imports NumPy, Pinocchio and rclpy — Python's defaults would print a
KeyboardInterrupt traceback (SIGINT) or die by the signal (SIGTERM). Nothing needs
cleaning up then (no ROS context, no DDS participant, no child), so
:func:`install_if_executable`, run when the package's ``__init__`` imports this module
(its first import), makes
such a signal end the process at once with exit code 0. It does so only when the
process *is* one of the package's executables (``python -m robot_tv_dynamics.ros.<x>``
or a console script of that name), never for a library user.
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
    """Exit 0 on SIGINT/SIGTERM/SIGHUP until the executable installs its own handlers.

    Returns:
        Whether the handlers were installed (this process is an executable of the
        package, in its main thread).
    """
    global _name
    name = _executable_of_this_process()
    if name is None:
        return False
    _name = name.rsplit(".", 1)[-1]
    try:
        for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
            if signum == signal.SIGHUP and signal.getsignal(signum) == signal.SIG_IGN:
                continue  # nohup: keep ignoring hang-ups
            signal.signal(signum, _exit_now)
    except ValueError:  # not the main thread
        return False
    return True


install_if_executable()
