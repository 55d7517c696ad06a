"""A newcomer's install: a wheel of this tree in fresh virtualenvs, from the pinned requirements.

Two throwaway venvs (pip's cache makes the second and later runs fast):

* ``core``: the wheel with the pinned core dependencies and **no ROS** — ``import
  robot_tv_dynamics``, ``robot-tv-dynamics bounds`` and ``evaluate`` on example-robot-data
  URDFs, run from a folder outside the repo with relative paths; a node executable then
  says in one line which extra is missing;
* ``ros``: the wheel with the ``[ros]`` extra — ``dynamics_node`` from that install,
  with the parameter file found as package data (no ``AMENT_PREFIX_PATH``, no
  PYTHONPATH), answers a joint state with a torque over DDS.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from robot_tv_dynamics.exceptions import RosExtraMissingError

REPO = Path(__file__).resolve().parents[1]
UR5 = "ur_description/urdf/ur5_robot.urdf"
PANDA = "panda_description/urdf/panda.urdf"
#: Environment a ROS-sourced shell or our scripts would leak into the fresh venv.
LEAKS = ("PYTHONPATH", "AMENT_PREFIX_PATH", "LD_LIBRARY_PATH", "_ROS_WHEELS_BOOTSTRAP_COMPLETE",
         "VIRTUAL_ENV", "COLCON_PREFIX_PATH", "CMAKE_PREFIX_PATH")

pytestmark = [pytest.mark.slow]


def clean_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in LEAKS}
    env.update(PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_INPUT="1", **extra)
    return env


def run(command: list[str], timeout: float = 600, **kwargs) -> subprocess.CompletedProcess:
    """Run outside the repo (``python -c`` would import the working tree from the cwd)."""
    kwargs.setdefault("cwd", tempfile.gettempdir())
    result = subprocess.run(command, capture_output=True, text=True, timeout=timeout,
                            env=kwargs.pop("env", clean_env()), **kwargs)
    return result


def check(result: subprocess.CompletedProcess, what: str) -> str:
    assert result.returncode == 0, (
        f"{what} failed ({result.returncode}):\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    return result.stdout


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """A wheel built from a copy of the working tree (the tree itself stays untouched)."""
    tmp = tmp_path_factory.mktemp("wheel")
    source = tmp / "src"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", "build", "install", "log", "*.egg-info", "__pycache__",
        ".mypy_cache", ".ruff_cache", ".pytest_cache", ".hypothesis", "demo_output", "out"))
    check(run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
               "-q", "-w", str(tmp / "dist"), str(source)]), "pip wheel")
    wheels = list((tmp / "dist").glob("robot_tv_dynamics-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def make_venv(where: Path, requirements: list[str]) -> tuple[Path, float]:
    """A fresh venv with ``pip install <requirements>``; returns (bin dir, seconds)."""
    start = time.monotonic()
    check(run([sys.executable, "-m", "venv", str(where)]), "python -m venv")
    # --no-compile: the modules a test imports compile as they are imported; compiling
    # every installed module up front (scipy, cvxpy, the ROS wheels) took a quarter of
    # this module's time (107 s → 80 s for its six tests here)
    check(run([str(where / "bin" / "python"), "-m", "pip", "install", "-q", "--no-compile",
               *requirements]), "pip install")
    return where / "bin", time.monotonic() - start


@pytest.fixture(scope="module")
def core_venv(wheel, tmp_path_factory) -> Path:
    """The wheel and the pinned core requirements (requirements/runtime.txt minus ROS)."""
    tmp = tmp_path_factory.mktemp("core")
    pins = tmp / "core-pins.txt"
    lines = [line for line in (REPO / "requirements" / "runtime.txt").read_text().splitlines()
             if not line.startswith(("ros-", "-c"))]
    pins.write_text(f"-c {REPO / 'requirements' / 'constraints.txt'}\n" + "\n".join(lines))
    bin_dir, seconds = make_venv(tmp / "venv", [str(wheel), "-r", str(pins)])
    print(f"\n[test_install] core venv installed in {seconds:.1f} s")
    return bin_dir


@pytest.fixture(scope="module")
def ros_venv(wheel, tmp_path_factory) -> Path:
    """The wheel with its ``[ros]`` extra, from requirements/runtime.txt (pins + lock)."""
    tmp = tmp_path_factory.mktemp("ros")
    bin_dir, seconds = make_venv(
        tmp / "venv", [f"{wheel}[ros]", "-r", str(REPO / "requirements" / "runtime.txt")])
    print(f"\n[test_install] ros venv installed in {seconds:.1f} s")
    return bin_dir


def example_urdf(bin_dir: Path, relative: str) -> str:
    out = check(run([str(bin_dir / "python"), "-c",
                     "import sys; from robot_tv_dynamics.paths import example_robot_urdf; "
                     "print(example_robot_urdf(sys.argv[1]))", relative]), "example_robot_urdf")
    return out.strip()


def test_the_wheel_imports_and_builds_a_model_without_ros(core_venv, tmp_path):
    code = ("import importlib.util, robot_tv_dynamics, json\n"
            "from robot_tv_dynamics import RobotModel\n"
            "from robot_tv_dynamics.paths import example_robot_urdf, config_dir_candidates\n"
            "m = RobotModel.from_urdf(example_robot_urdf())\n"
            "print(json.dumps({'nv': m.nv, 'file': robot_tv_dynamics.__file__,\n"
            "  'config': [w for w, _ in config_dir_candidates()],\n"
            "  'profile': (config_dir_candidates()[0][1] / 'fastdds_discovery.xml').is_file(),\n"
            "  'rclpy': importlib.util.find_spec('rclpy') is not None}))")
    info = json.loads(check(run([str(core_venv / "python"), "-c", code], cwd=tmp_path),
                            "import"))
    assert info["nv"] == 9
    assert "site-packages" in info["file"], "imported the source tree, not the install"
    assert info["config"] == ["package data"]
    assert info["profile"], "the Fast DDS discovery profile is not in the package data"
    assert not info["rclpy"]


def test_bounds_and_evaluate_run_from_the_install_with_relative_paths(core_venv, tmp_path):
    cli = str(core_venv / "robot-tv-dynamics")
    ur5 = example_urdf(core_venv, UR5)
    bounds = json.loads(check(run([cli, "bounds", "--urdf", ur5, "--json"], cwd=tmp_path),
                              "bounds"))
    assert bounds["alpha1"] > 0 and bounds["jacobian"]["method"] == "sampled"
    for name in ("ur5_trajectory.yaml", "ur5_payload.yaml"):
        shutil.copy(REPO / "config" / "examples" / name, tmp_path / name)
    result = run([cli, "evaluate", "--urdf", ur5, "--trajectory", "ur5_trajectory.yaml",
                  "--payload", "ur5_payload.yaml", "--json", "--plot", "mine.png"],
                 cwd=tmp_path)
    assert result.returncode in (0, 1), result.stderr
    data = json.loads(result.stdout)
    assert data["max_payload_mass"] > 0
    assert (tmp_path / "mine.png").is_file()


def test_a_node_without_the_ros_extra_names_the_extra_in_one_line(core_venv, tmp_path):
    result = run([str(core_venv / "dynamics_node")], cwd=tmp_path, timeout=60)
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    # Installed from a wheel there is no source tree to name: the hint says where to run pip.
    assert len(lines) == 1 and "source folder>[ros]'" in lines[0], result.stderr
    demo = run([str(core_venv / "robot-tv-dynamics"), "demo"], cwd=tmp_path, timeout=60)
    assert demo.returncode == 2 and "source folder>[ros]'" in demo.stderr
    assert len(demo.stderr.strip().splitlines()) == 1, demo.stderr


@pytest.mark.ros
@pytest.mark.no_deadline  # one answer within 60 s: beside the core venv's tests (one wheel)
def test_dynamics_node_from_the_install_answers_with_a_torque_over_dds(ros_venv, tmp_path):
    from sensor_msgs.msg import JointState
    from support.ros_harness import DOMAIN_ID, RosClient

    ur5 = example_urdf(ros_venv, UR5)
    ns = f"/install{os.getpid()}"
    command = json.loads(check(run([str(ros_venv / "python"), "-c",
        "import json, sys; from robot_tv_dynamics.ros.bringup import node_command; "
        "print(json.dumps(node_command('dynamics_node', urdf=sys.argv[1], namespace=sys.argv[2],"
        " parameters={'bounds_time_limit': 2.0, 'jacobian_samples': 64, 'cache_dir': ''})))",
        ur5, ns], cwd=tmp_path), "node_command"))
    assert str(ros_venv.parent) in command[0]
    params_file = Path(command[command.index("--params-file") + 1])
    assert "site-packages/robot_tv_dynamics/config" in str(params_file)
    command[0] = str(ros_venv / "dynamics_node")
    del command[1:3]  # the console script instead of python -m
    log = open(tmp_path / "dynamics_node.log", "w")
    node = subprocess.Popen(command, cwd=tmp_path, stdout=log, stderr=subprocess.STDOUT,
                            env=clean_env(ROS_DOMAIN_ID=str(DOMAIN_ID), PYTHONUNBUFFERED="1"))
    client = RosClient()
    try:
        torques = client.collect(JointState, f"{ns}/generalized_torques")
        publisher = client.publisher(JointState, f"{ns}/joint_states")
        names = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint",
                 "wrist_2_joint", "wrist_3_joint"]

        def answered() -> bool:
            if node.poll() is not None:
                raise AssertionError((tmp_path / "dynamics_node.log").read_text()[-3000:])
            if publisher.get_subscription_count():
                msg = JointState(name=names, position=[0.0, -1.0, 1.0, 0.0, 0.0, 0.0],
                                 velocity=[0.0] * 6)
                msg.header.stamp = client.node.get_clock().now().to_msg()
                publisher.publish(msg)
            return bool(torques)

        client.spin_until(answered, 60.0, "a torque from the installed dynamics_node")
        assert len(torques[0].effort) == 6 and any(abs(e) > 1.0 for e in torques[0].effort)
    finally:
        client.close()
        node.terminate()
        try:
            node.wait(10)
        except subprocess.TimeoutExpired:
            node.kill()
        log.close()


def test_the_node_entry_points_run_the_node_modules():
    from robot_tv_dynamics.ros import entry_points

    for name in ("dynamics_node", "monitor_node", "sim_node", "markers_node"):
        assert getattr(entry_points, name).__name__ == name
    with pytest.raises(Exception, match=r"\[ros\]. \(the ros-jazzy-\* wheels\)"):
        entry_points.require_ros("x_node", modules=("no_such_module_rtd",))


def test_the_missing_ros_message_names_the_source_tree_it_runs_from(monkeypatch):
    from robot_tv_dynamics.ros import entry_points
    monkeypatch.setattr(entry_points.importlib.util, "find_spec", lambda name: None)
    with pytest.raises(RosExtraMissingError) as caught:
        entry_points.require_ros("dynamics_node")
    # The package is not on PyPI: the command that works is the local install of the extra.
    assert f"pip install '{REPO}[ros]'" in str(caught.value)
