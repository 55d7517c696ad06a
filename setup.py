"""Build script of robot_tv_dynamics: one tree, a Python library (pip) and a ROS 2 package (colcon).

* ``pip install .`` installs the core with its dependencies (``install_requires``);
  ``pip install ".[ros]"`` adds rclpy and the messages as the PyPI ``ros-jazzy-*`` wheels
  (no ROS install needed) for the nodes and ``robot-tv-dynamics demo``.
* ``colcon build`` (ament_python) installs the same package with package.xml, the ament
  index marker, ``launch/`` and ``config/`` under ``share/robot_tv_dynamics`` and the
  executables in ``lib/robot_tv_dynamics`` (setup.cfg) for ``ros2 run``.

``config/`` is also shipped as package data (``robot_tv_dynamics/config`` in the wheel),
so a pip install finds its parameter and loading files without an ament prefix
(robot_tv_dynamics/paths.py: source tree, ament share, package data).

Version ranges: the lower ends are the oldest releases the code is known to need, the
upper ends the next major release; requirements/runtime.txt pins the tested versions.
"""

from glob import glob

from setuptools import find_packages, setup

package_name = "robot_tv_dynamics"

#: The core's dependencies (requirements/runtime.txt pins the versions tested).
INSTALL_REQUIRES = [
    "numpy>=1.26,<3",
    "scipy>=1.13,<2",
    "pin>=3.4,<5",
    "example-robot-data>=4.1,<7",
    "pyyaml>=6.0,<7",
    "matplotlib>=3.8,<4",
    "rosbags>=0.10,<0.12",
    "mcap-ros2-support>=0.5,<0.7",
    "cvxpy>=1.5,<2",
    "clarabel>=0.9,<0.12",
    "scs>=3.2,<4",
    "toppra>=0.6.2,<0.7",
    "dask[distributed]>=2024.1,<2027",
]
#: ``.[ros]``: rclpy and the message packages from PyPI (ROS 2 Jazzy wheels).
ROS_REQUIRES = [
    "ros-wheels-bootstrapper>=0.1.2,<0.2",
    "ros-jazzy-rclpy>=7.1,<8",
    "ros-jazzy-std-msgs>=5.3,<6",
    "ros-jazzy-sensor-msgs>=5.3,<6",
    "ros-jazzy-geometry-msgs>=5.3,<6",
    "ros-jazzy-diagnostic-msgs>=5.3,<6",
    "ros-jazzy-trajectory-msgs>=5.3,<6",
    "ros-jazzy-visualization-msgs>=5.3,<6",
    "ros-jazzy-std-srvs>=5.3,<6",
    "ros-jazzy-rmw-fastrtps-cpp>=8.4,<9",
]
#: Package data: the repo's config/ mapped onto robot_tv_dynamics/config in the wheel.
CONFIG_PATTERNS = ["*.yaml", "*.xml", "loading/*.yaml", "loading/*.csv", "examples/*.yaml",
                   "foxglove/*.json"]

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]) + [package_name + ".config"],
    package_dir={package_name + ".config": "config"},
    package_data={package_name + ".config": CONFIG_PATTERNS},
    python_requires=">=3.10,<3.13",
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        # The globs may match nothing yet (an empty folder is installed then).
        ("share/" + package_name + "/launch", sorted(glob("launch/*.launch.py"))),
        ("share/" + package_name + "/config",
         sorted(glob("config/*.yaml") + glob("config/*.xml"))),
        ("share/" + package_name + "/config/loading", sorted(glob("config/loading/*.yaml"))),
        ("share/" + package_name + "/config/examples", sorted(glob("config/examples/*.yaml"))),
        ("share/" + package_name + "/config/foxglove", sorted(glob("config/foxglove/*.json"))),
    ],
    install_requires=INSTALL_REQUIRES,
    zip_safe=False,
    maintainer="robot_tv_dynamics maintainers",
    maintainer_email="maintainers@robot-tv-dynamics.invalid",
    description=(
        "Time-dependent inertial parameters: generalized robotics equation (39), "
        "mass-matrix bounds and a uniform physical consistency monitor."
    ),
    license="Apache-2.0",
    extras_require={"ros": ROS_REQUIRES, "test": ["pytest"]},
    entry_points={
        # One line per executable: "name = robot_tv_dynamics.module:function", installed
        # into bin/ by pip and into lib/robot_tv_dynamics/ by colcon (setup.cfg) for
        # `ros2 run`. The nodes go through ros/entry_points.py: without rclpy they print
        # one line naming the [ros] extra instead of a traceback.
        "console_scripts": [
            "robot-tv-dynamics = robot_tv_dynamics.cli:main",
            "dynamics_node = robot_tv_dynamics.ros.entry_points:dynamics_node",
            "monitor_node = robot_tv_dynamics.ros.entry_points:monitor_node",
            "monitor_group = robot_tv_dynamics.ros.entry_points:monitor_group",
            "sim_node = robot_tv_dynamics.ros.entry_points:sim_node",
            "markers_node = robot_tv_dynamics.ros.entry_points:markers_node",
            "estimator_node = robot_tv_dynamics.ros.entry_points:estimator_node",
            "trajectory_gate = robot_tv_dynamics.ros.entry_points:trajectory_gate",
        ],
    },
)
