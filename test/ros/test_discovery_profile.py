"""Discovery: the Fast DDS profile the bring-up hands on, and whose range is whose.

The package's Fast DDS discovery profile: Fast DDS reads it, the bring-up hands it on.
The discovery range: scripts/ros_env.sh leaves the user's settings alone (a driver on
another host must be reachable); the tests and the demo keep their own runs on this host.

What it changes (how soon two participants find each other after a missed first
exchange) is a time: benchmarks/bench_ready.py measures it; here only that the file is
one Fast DDS accepts and that the bring-up gives it to its children unless a profile is
already set.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from support.ros_harness import DOMAIN_ID

from robot_tv_dynamics.paths import package_config_dir
from robot_tv_dynamics.ros import bringup

#: Nothing here runs live: a node made and gone, a profile read, environments compared.
pytestmark = [pytest.mark.ros, pytest.mark.no_deadline]

PROFILE = package_config_dir() / bringup.DISCOVERY_PROFILE
#: A process that makes one node (so Fast DDS loads its default profile) and exits.
ONE_NODE = ("import rclpy; rclpy.init(); node = rclpy.create_node('profile_check');"
            " print('node made', flush=True); node.destroy_node(); rclpy.shutdown()")


def without_profiles() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k not in bringup.PROFILE_ENV}


def make_node(profile) -> subprocess.CompletedProcess:
    env = {**without_profiles(), "FASTRTPS_DEFAULT_PROFILES_FILE": str(profile),
           "ROS_DOMAIN_ID": str(DOMAIN_ID)}
    return subprocess.run([sys.executable, "-c", ONE_NODE], env=env, capture_output=True,
                          text=True, timeout=60)


def test_fast_dds_reads_the_profile_without_a_parser_error(tmp_path):
    made = make_node(PROFILE)
    said = made.stdout + made.stderr  # Fast DDS logs its parser errors to stdout
    assert made.returncode == 0 and "node made" in made.stdout, said
    assert "XMLPARSER" not in said and "Error" not in said, said
    # the check can fail: the same file with one element misspelt is reported
    broken = tmp_path / "broken.xml"
    broken.write_text(PROFILE.read_text().replace("<sec>1</sec>", "<secs>1</secs>"))
    made = make_node(broken)
    said = made.stdout + made.stderr
    assert "XMLPARSER" in said and "Error" in said, said


def test_the_profile_sets_one_second_announcements():
    import xml.etree.ElementTree as ET

    ns = {"p": "http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles"}
    participant = ET.parse(PROFILE).getroot().find("p:participant", ns)
    assert participant.get("is_default_profile") == "true"
    config = participant.find("p:rtps/p:builtin/p:discovery_config", ns)
    assert config.findtext("p:leaseAnnouncement/p:sec", namespaces=ns) == "1"
    assert config.findtext("p:initialAnnouncements/p:count", namespaces=ns) == "10"
    assert config.findtext("p:initialAnnouncements/p:period/p:nanosec",
                           namespaces=ns) == "100000000"


def test_the_bring_up_gives_its_children_the_profile_unless_one_is_set(tmp_path):
    program = ("import os; print('profiles', os.environ.get('FASTRTPS_DEFAULT_PROFILES_FILE'),"
               " os.environ.get('FASTDDS_DEFAULT_PROFILES_FILE'), flush=True)")
    running = bringup.BringUp(logs=tmp_path)
    before = {name: os.environ.get(name) for name in bringup.PROFILE_ENV}
    try:
        running.start("default", [sys.executable, "-c", program], env=without_profiles())
        running.start("own", [sys.executable, "-c", program],
                      env={**without_profiles(), "FASTDDS_DEFAULT_PROFILES_FILE": "/my.xml"})
        running.wait_for_output(["default", "own"], "profiles", timeout=30.0)
    finally:
        running.stop(timeout=5.0)
    assert f"profiles {PROFILE} {PROFILE}" in running.log("default").read_text()
    assert "profiles None /my.xml" in running.log("own").read_text()  # the user's, alone
    assert {name: os.environ.get(name) for name in bringup.PROFILE_ENV} == before


# ---------------------------------------------------------------------------- range
REPO = Path(__file__).resolve().parents[2]
DISCOVERY = ("ROS_AUTOMATIC_DISCOVERY_RANGE", "ROS_STATIC_PEERS", "ROS_LOCALHOST_ONLY")


def sourced_env(user: dict[str, str]) -> dict[str, str]:
    """The discovery variables after ``source scripts/ros_env.sh`` in a shell with ``user``."""
    base = {k: v for k, v in os.environ.items() if k not in DISCOVERY}
    script = ("source scripts/ros_env.sh >/dev/null 2>&1; for v in " + " ".join(DISCOVERY)
              + '; do echo "$v=${!v-<unset>}"; done')
    out = subprocess.run(["bash", "-c", script], env={**base, **user}, cwd=REPO,
                         capture_output=True, text=True, timeout=60, check=True).stdout
    return dict(line.split("=", 1) for line in out.splitlines())


def test_ros_env_leaves_the_users_discovery_settings_alone():
    user = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "SUBNET", "ROS_STATIC_PEERS": "192.168.1.12",
            "ROS_LOCALHOST_ONLY": "0"}
    assert sourced_env(user) == user
    assert sourced_env({}) == dict.fromkeys(DISCOVERY, "<unset>")


def test_the_tests_and_the_demo_keep_their_discovery_on_this_host(monkeypatch):
    from support.ros_harness import node_env

    monkeypatch.setenv("ROS_AUTOMATIC_DISCOVERY_RANGE", "SUBNET")
    monkeypatch.setenv("ROS_STATIC_PEERS", "192.168.1.12")
    env = node_env()
    assert env["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    assert "ROS_STATIC_PEERS" not in env
    bringup.use_local_discovery()  # the demo's, before its first participant
    assert os.environ["ROS_AUTOMATIC_DISCOVERY_RANGE"] == "LOCALHOST"
    assert "ROS_STATIC_PEERS" not in os.environ
    script = (REPO / "scripts" / "run_tests.sh").read_text()
    assert "export ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST" in script
