"""The package's launch file run by launch_ros, where launch_ros and an install exist.

CI has neither (no launch/launch_ros wheels): the tests that use this skip there, with
the reason. With a ROS 2 install (or launch/launch_ros installed by hand) and the package
in the ament index (``colcon build``, its prefix in ``AMENT_PREFIX_PATH``) they run.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import IO

import pytest

#: The package's launch file.
LAUNCH = Path(__file__).resolve().parents[2] / "launch" / "tv_dynamics.launch.py"

#: A LaunchService on the launch file given as argv[1] (what ``ros2 launch`` does).
RUNNER = ("import sys; from launch import LaunchService; "
          "from launch.actions import IncludeLaunchDescription; "
          "from launch.launch_description_sources import PythonLaunchDescriptionSource; "
          "service = LaunchService(); service.include_launch_description("
          "IncludeLaunchDescription(PythonLaunchDescriptionSource(sys.argv[1]))); "
          "sys.exit(service.run())")

#: One or more inclusions of the package's launch file, each with its arguments.
INCLUDES = '''
from launch import LaunchDescription
from launch.actions import IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource


def generate_launch_description():
    return LaunchDescription([
        IncludeLaunchDescription(PythonLaunchDescriptionSource({launch!r}),
                                 launch_arguments=arguments.items())
        for arguments in {includes!r}])
'''


def require_launch() -> None:
    """Skip (with the reason) unless launch_ros imports and the package is in the ament index."""
    pytest.importorskip("launch_ros")
    from ament_index_python.packages import PackageNotFoundError, get_package_share_directory

    try:
        get_package_share_directory("robot_tv_dynamics")
    except PackageNotFoundError:
        pytest.skip("robot_tv_dynamics is not installed in the ament index (colcon build)")


class Launched:
    """The launch file included once per argument mapping, run in its own process group."""

    def __init__(self, includes: list[dict[str, str]], folder: Path, env: dict[str, str]):
        launch_file = folder / "included.launch.py"
        launch_file.write_text(INCLUDES.format(launch=str(LAUNCH), includes=includes))
        self.log: IO[str] = (folder / "launch.log").open("w")
        self.process = subprocess.Popen([sys.executable, "-c", RUNNER, str(launch_file)],
                                        env=env, stdout=self.log, stderr=subprocess.STDOUT,
                                        start_new_session=True)

    def stop(self, timeout: float = 30.0) -> None:
        """SIGINT the launch (it stops its nodes), then kill what is left."""
        os.killpg(self.process.pid, signal.SIGINT)
        try:
            self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait()
        self.log.close()
