"""Clean shutdown by construction: every node and the bring-up, SIGINT and SIGTERM.

Each cycle starts the four executables (dynamics, monitor, markers, sim) at once, each
in its own namespace and process group, and signals them either during start-up or
after they are ready, under ~1 kHz traffic on their inputs. ``CYCLES`` = 10 cycles
alternate SIGINT / SIGTERM and start-up / traffic, so every node gets 10 signals
(5 SIGINT, 5 SIGTERM; each kind both during start-up and under traffic): 40 node
shutdowns in about a minute on 2 cores. Every exit must be 0, and no log may hold a
traceback, a FATAL line or an abort. The bring-up is stopped by a SIGINT to its whole
process group (a terminal's Ctrl-C) and by a SIGTERM to it alone: exit 0, and no node
pid survives.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from support.ros_harness import BEST_EFFORT, RosClient, node_env, param, unique_namespace

from robot_tv_dynamics.ros import conversions as cv

pytestmark = [pytest.mark.ros, pytest.mark.slow]

CYCLES = 10
EXECUTABLES = ("dynamics_node", "monitor_node", "markers_node", "sim_node")
#: What no log of a requested stop may contain.
BAD = re.compile(r"Traceback|FATAL|terminate called|Fatal Python error|Aborted|"
                 r"Segmentation fault|Exception in")
READY_TIMEOUT = 60.0
EXIT_TIMEOUT = 15.0



def start(executable: str, ns: str, log: Path, urdf: str, cache: Path) -> subprocess.Popen:
    """One node in its own process group (so the test signals it, and it alone)."""
    command = [sys.executable, "-m", f"robot_tv_dynamics.ros.{executable}", "--ros-args",
               "-r", f"__ns:={ns}", "-r", f"/diagnostics:={ns}/diagnostics",
               *param("urdf_path", urdf)]
    if executable == "dynamics_node":
        command += [*param("cache_dir", str(cache)), *param("jacobian_samples", 256)]
    if executable == "sim_node":
        command += [*param("controller", "none"), *param("publish_rate", 1000.0)]
    with log.open("w") as out:
        return subprocess.Popen(command, env=node_env(), stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True)


def traffic(client: RosClient, pubs: list, messages: list, seconds: float) -> int:
    """Publish every message on its publisher at ~1 kHz for ``seconds``; the count."""
    sent = 0
    deadline = time.monotonic() + seconds
    period = 1e-3
    next_time = time.monotonic()
    while time.monotonic() < deadline:
        for pub, make in zip(pubs, messages, strict=True):
            pub.publish(make())
            sent += 1
        next_time += period
        delay = next_time - time.monotonic()
        if delay > 0:
            time.sleep(delay)
    return sent


def message_makers(model) -> list:
    """Makers of a joint_states sample (fresh stamp), Θ and an effort command."""
    stamps = iter(float(int(time.time())) + 1e-3 * np.arange(1, 10**6))
    zeros = [0.0] * model.nv
    theta = cv.body_array(np.array(model.theta_nominal), model.body_names)

    def joint_state() -> JointState:
        msg = JointState(name=list(model.joint_names), position=zeros, velocity=zeros)
        msg.header.stamp = cv.seconds_to_stamp(next(stamps))
        return msg

    return [joint_state, lambda: theta, joint_state, lambda: Float64MultiArray(data=zeros)]


def failure_excerpt(log: str) -> str:
    """What a failure report keeps of a node's log: its tail, and a stop watchdog's or a
    traceback's whole dump (the frames that hang are at its start, not its end)."""
    starts = [i for i in (log.find("Thread 0x"), log.find("Current thread"),
                          log.find("Traceback")) if i >= 0]
    return log[min(starts):][:8000] if starts else log[-1500:]


def test_every_node_exits_0_on_sigint_and_sigterm_at_start_up_and_under_traffic(
        tmp_path, panda_urdf, panda):
    client = RosClient()
    cache = tmp_path / "cache"
    results: list[tuple[str, str, str, int, str]] = []
    total_sent = 0
    started: list[subprocess.Popen] = []
    try:
        for cycle in range(CYCLES):
            sig = signal.SIGINT if cycle % 2 == 0 else signal.SIGTERM
            during_start = cycle % 4 in (2, 3) and cycle > 1  # cycles 0-1 warm the cache
            namespaces = {name: unique_namespace(name.split("_")[0]) for name in EXECUTABLES}
            logs = {name: tmp_path / f"{name}_{cycle}.log" for name in EXECUTABLES}
            processes = {name: start(name, namespaces[name], logs[name], panda_urdf, cache)
                         for name in EXECUTABLES}
            started += processes.values()
            if during_start:
                time.sleep(0.3 + 0.4 * (cycle % 3))  # imports, model, extremes
            else:
                deadline = time.monotonic() + READY_TIMEOUT
                while not all("ready" in logs[n].read_text() for n in EXECUTABLES):
                    assert time.monotonic() < deadline, {n: logs[n].read_text()[-800:]
                                                         for n in EXECUTABLES}
                    assert all(p.poll() is None for p in processes.values())
                    time.sleep(0.05)
                pubs = [
                    client.publisher(JointState, f"{namespaces['dynamics_node']}/joint_states",
                                     BEST_EFFORT),
                    client.publisher(Float64MultiArray,
                                     f"{namespaces['monitor_node']}/inertial_parameters",
                                     BEST_EFFORT),
                    client.publisher(JointState, f"{namespaces['markers_node']}/joint_states",
                                     BEST_EFFORT),
                    client.publisher(Float64MultiArray,
                                     f"{namespaces['sim_node']}/effort_commands", BEST_EFFORT)]
                messages = message_makers(panda)
                client.wait_matched(pubs, READY_TIMEOUT)
                total_sent += traffic(client, pubs, messages, 0.6)
                # the signal lands while messages are still arriving
                for process in processes.values():
                    os.killpg(process.pid, sig)
                total_sent += traffic(client, pubs, messages, 0.2)
                for pub in pubs:
                    client.node.destroy_publisher(pub)
            if during_start:
                for process in processes.values():
                    os.killpg(process.pid, sig)
            for name, process in processes.items():
                try:
                    code = process.wait(EXIT_TIMEOUT)
                except subprocess.TimeoutExpired:
                    os.killpg(process.pid, signal.SIGKILL)
                    code = process.wait()
                    code = -1000 if code == 0 else code
                phase = "start-up" if during_start else "traffic"
                results.append((name, sig.name, phase, code, logs[name].read_text()))
    finally:
        client.close()
        for process in started:  # a failing test leaves nothing running
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
    failures = [(name, sig, phase, code, failure_excerpt(log))
                for name, sig, phase, code, log in results if code != 0 or BAD.search(log)]
    assert len(results) == CYCLES * len(EXECUTABLES)
    assert not failures, "\n\n".join(map(str, failures))
    phases = {(name, sig, phase) for name, sig, phase, _, _ in results}
    assert len(phases) == len(EXECUTABLES) * 4  # both signals, both phases, every node
    assert total_sent > 1000


# ---------------------------------------------------------------------------- bring-up
def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie (exited, not yet reaped) is not running
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


def node_pids(log: Path, timeout: float = 60.0) -> dict[str, int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        match = re.search(r"bringup: started (.*)", log.read_text())
        if match:
            return {name: int(pid) for name, pid in
                    re.findall(r"(\w+) \(pid (\d+)\)", match.group(1))}
        time.sleep(0.05)
    raise AssertionError(log.read_text())


@pytest.mark.parametrize("how", ["group SIGINT", "SIGTERM to the parent",
                                 "group SIGINT during start-up"])
def test_bring_up_stops_every_node_and_exits_0(tmp_path, panda_urdf, how):
    ns = unique_namespace("bring")
    log = tmp_path / "bringup.log"
    with log.open("w") as out:
        parent = subprocess.Popen(
            [sys.executable, "-m", "robot_tv_dynamics.ros.bringup", "--urdf", panda_urdf,
             "--namespace", ns], env=node_env(), stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)  # its own group: a "terminal" the test can Ctrl-C
    try:
        pids = node_pids(log)
        assert set(pids) == {"dynamics_node", "monitor_node", "markers_node"}
        if "start-up" in how:
            time.sleep(0.5)
        else:
            deadline = time.monotonic() + READY_TIMEOUT
            while log.read_text().count("ready:") < 3:
                assert time.monotonic() < deadline and parent.poll() is None, log.read_text()
                time.sleep(0.1)
        if "group" in how:
            os.killpg(parent.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        else:
            parent.send_signal(signal.SIGTERM)
        code = parent.wait(30.0)
    finally:
        if parent.poll() is None:
            os.killpg(parent.pid, signal.SIGKILL)
    text = log.read_text()
    assert code == 0, text[-3000:]
    assert not BAD.search(text), text[-3000:]
    assert "did not stop" not in text and "killed" not in text, text[-3000:]
    deadline = time.monotonic() + 5.0
    while any(alive(pid) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [name for name, pid in pids.items() if alive(pid)], text[-2000:]


def test_a_node_outlives_no_killed_bring_up(tmp_path, panda_urdf):
    """SIGKILL to the bring-up: its nodes notice (PR_SET_PDEATHSIG / getppid) and exit."""
    ns = unique_namespace("orphan")
    log = tmp_path / "bringup.log"
    with log.open("w") as out:
        parent = subprocess.Popen(
            [sys.executable, "-m", "robot_tv_dynamics.ros.bringup", "--urdf", panda_urdf,
             "--namespace", ns], env=node_env(), stdout=out, stderr=subprocess.STDOUT,
            start_new_session=True)
    try:
        pids = node_pids(log)
    finally:
        if not log.read_text().count("bringup: started"):
            parent.kill()
    deadline = time.monotonic() + READY_TIMEOUT
    while log.read_text().count("ready:") < 3 and time.monotonic() < deadline:
        time.sleep(0.1)
    parent.kill()
    parent.wait()
    deadline = time.monotonic() + 15.0
    while any(alive(pid) for pid in pids.values()) and time.monotonic() < deadline:
        time.sleep(0.1)
    survivors = [name for name, pid in pids.items() if alive(pid)]
    for pid in pids.values():
        if alive(pid):
            os.kill(pid, signal.SIGKILL)
    assert not survivors, log.read_text()[-2000:]


def test_bring_up_names_a_node_it_had_to_kill(capfd):
    """A child that ignores SIGINT past the grace period: killed, and named on stderr."""
    from robot_tv_dynamics.ros.bringup import BringUp

    running = BringUp()
    running.start("stubborn", [sys.executable, "-c",
                               "import signal, sys, time\n"
                               "signal.signal(signal.SIGINT, signal.SIG_IGN)\n"
                               "print('ignoring', flush=True)\ntime.sleep(60)"],
                   stdout=subprocess.PIPE)
    # the polite child installs Python's SIGINT handler itself, as the package's nodes do
    # (StopRequest.install), and says so before the SIGINT comes: a test run started as a
    # shell's background job inherits SIGINT ignored, and a plain child would sleep on
    running.start("polite", [sys.executable, "-c",
                             "import signal, time\n"
                             "signal.signal(signal.SIGINT, signal.default_int_handler)\n"
                             "print('running', flush=True)\ntime.sleep(60)"],
                  stdout=subprocess.PIPE)
    assert running.processes["stubborn"].stdout.readline().strip() == b"ignoring"
    assert running.processes["polite"].stdout.readline().strip() == b"running"
    codes = running.stop(timeout=1.0)
    assert running.killed == ["stubborn"]
    assert codes["stubborn"] == -signal.SIGKILL and codes["polite"] != 0  # KeyboardInterrupt
    assert "stubborn (pid" in capfd.readouterr().err


def test_a_node_whose_stop_hangs_prints_its_stack_and_exits_1():
    """The executables' stop watchdog: a hang after the stop request ends in seconds."""
    code = ("import time\n"
            "from robot_tv_dynamics.ros.node_base import StopRequest\n"
            "StopRequest(watchdog=0.5).request('test')\n"
            "def hanging_in_shutdown():\n    time.sleep(60)\n"
            "hanging_in_shutdown()\n")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-c", code], env=node_env(), capture_output=True,
                          text=True, timeout=30)
    assert done.returncode == 1
    assert time.monotonic() - started < 20
    assert "hanging_in_shutdown" in done.stderr


def test_nodes_stopped_in_their_first_milliseconds_exit_0(tmp_path, panda_urdf):
    """The SIGINT lands while the interpreters still start (before any handler exists)."""
    from robot_tv_dynamics.ros.bringup import BringUp, node_command

    running = BringUp(logs=tmp_path)
    for k in range(3):
        running.start(f"monitor{k}", node_command(
            "monitor_node", urdf=panda_urdf, namespace=unique_namespace("early")),
            env=node_env())
    codes = running.stop(timeout=10.0)
    logs = "\n".join(running.log(name).read_text() for name in running.processes)
    assert codes == {name: 0 for name in running.processes}, logs[-3000:]
    assert running.killed == []
    assert not BAD.search(logs), logs[-3000:]
