"""ament_python build script for robot_tv_dynamics (colcon, pip, or setup.py)."""

from glob import glob

from setuptools import find_packages, setup

package_name = "robot_tv_dynamics"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        # The globs may match nothing yet (an empty folder is installed then).
        ("share/" + package_name + "/launch", sorted(glob("launch/*.launch.py"))),
        ("share/" + package_name + "/config", sorted(glob("config/*.yaml"))),
        ("share/" + package_name + "/config/loading", sorted(glob("config/loading/*.yaml"))),
        ("share/" + package_name + "/config/examples", sorted(glob("config/examples/*.yaml"))),
        ("share/" + package_name + "/config/foxglove", sorted(glob("config/foxglove/*.json"))),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="robot_tv_dynamics maintainers",
    maintainer_email="maintainers@robot-tv-dynamics.invalid",
    description=(
        "Time-dependent inertial parameters: generalized robotics equation (39), "
        "mass-matrix bounds and a uniform physical consistency monitor."
    ),
    license="Apache-2.0",
    extras_require={"test": ["pytest"]},
    entry_points={
        # One line per executable: "name = robot_tv_dynamics.module:function",
        # installed into lib/robot_tv_dynamics/ (see setup.cfg) for `ros2 run`.
        "console_scripts": [
            "robot-tv-dynamics = robot_tv_dynamics.cli:main",
            "dynamics_node = robot_tv_dynamics.ros.dynamics_node:main",
            "monitor_node = robot_tv_dynamics.ros.monitor_node:main",
            "sim_node = robot_tv_dynamics.ros.sim_node:main",
            "markers_node = robot_tv_dynamics.ros.markers_node:main",
            "estimator_node = robot_tv_dynamics.ros.estimator_node:main",
        ],
    },
)
