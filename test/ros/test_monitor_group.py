"""monitor_group: several monitors in one process behave as separate monitor_node processes.

Real rclpy over real DDS (ros_harness.py): a ``monitor_group`` process with two members
(the true Θ, and an estimate under ``estimates/classical``, as the demo wires them) and,
beside it, the same two monitors as two ``monitor_node`` processes with the demo's
former remaps and ``status_prefix``. Both get the same Θ streams; they must publish the
same topics, the same diagnostics (names, levels) and the same consistency tables, and
the group must stop cleanly on SIGINT.
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import time

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from std_msgs.msg import Float64MultiArray
from support.ros_harness import BEST_EFFORT, node_env, short_name, unique_namespace

from robot_tv_dynamics.consistency import spectral_statistics
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.ros import bringup
from robot_tv_dynamics.ros import conversions as cv
from robot_tv_dynamics.ros.bringup import MonitorMember

pytestmark = [pytest.mark.ros, pytest.mark.slow]

START_TIMEOUT = 60.0
ANSWER_TIMEOUT = 15.0
ESTIMATE = "estimates/classical"
#: What no log of a requested stop may contain.
BAD = re.compile(r"Traceback|FATAL|terminate called|Fatal Python error|Aborted|"
                 r"Segmentation fault|Exception in")
#: Topics every node has, whatever it does.
COMMON_TOPICS = {"/rosout", "/parameter_events"}


def start(command: list[str], log) -> subprocess.Popen:
    return subprocess.Popen(command, env=node_env(), stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)


def common_ros_args(ns: str) -> list[str]:
    """The namespace and a private /diagnostics (concurrent tests never see each other)."""
    return ["-r", f"__ns:={ns}", "-r", f"/diagnostics:={ns}/diagnostics"]


def stop(process: subprocess.Popen, timeout: float = 15.0) -> int:
    process.send_signal(signal.SIGINT)
    try:
        return process.wait(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise



@pytest.fixture(scope="module")
def both(tester, tmp_path_factory, panda_urdf):
    """The group (namespace ``g``) and the two separate monitor_nodes (``s``), started."""
    logs = tmp_path_factory.mktemp("monitor_group")
    parameters = {"publish_rate": 10.0}
    members = [MonitorMember("monitor_truth"), MonitorMember("monitor_classical", ESTIMATE)]
    g, s = unique_namespace("grp"), unique_namespace("sep")
    group_log = logs / "group.log"
    commands = {
        "group": bringup.monitor_group_command(
            members, urdf=panda_urdf, python=sys.executable, parameters=parameters,
            ros_args=common_ros_args(g)),
        # the demo's wiring before the group: one process each, remapped and prefixed
        "truth": bringup.node_command(
            "monitor_node", urdf=panda_urdf, name="monitor_truth", parameters=parameters,
            ros_args=common_ros_args(s)),
        "classical": bringup.node_command(
            "monitor_node", urdf=panda_urdf, name="monitor_classical",
            parameters={**parameters, "status_prefix": ESTIMATE},
            remaps={topic: f"{ESTIMATE}/{topic}" for topic in (
                "inertial_parameters", "inertial_parameter_rates", "consistency",
                "inertial_parameters_stamped", "consistency_stamped")},
            ros_args=common_ros_args(s)),
    }
    files = {name: open(logs / f"{name}.log", "w") for name in commands}
    processes = {name: start(commands[name], files[name]) for name in commands}
    topics = {}
    for ns in (g, s):
        topics[ns] = {
            "theta": tester.publisher(Float64MultiArray, f"{ns}/inertial_parameters",
                                      BEST_EFFORT),
            "theta_hat": tester.publisher(
                Float64MultiArray, f"{ns}/{ESTIMATE}/inertial_parameters", BEST_EFFORT),
            "diagnostics": tester.collect(DiagnosticArray, f"{ns}/diagnostics"),
            "consistency": tester.collect(Float64MultiArray, f"{ns}/consistency"),
            "consistency_hat": tester.collect(Float64MultiArray,
                                              f"{ns}/{ESTIMATE}/consistency"),
        }
    try:
        publishers = [topics[ns][k] for ns in (g, s) for k in ("theta", "theta_hat")]
        tester.spin_until(
            lambda: all(p.get_subscription_count() > 0 for p in publishers)
            or any(p.poll() is not None for p in processes.values()),
            START_TIMEOUT, "the monitors to subscribe")
        assert all(p.poll() is None for p in processes.values()), {
            name: (logs / f"{name}.log").read_text()[-2000:] for name in processes}
        yield {"g": g, "s": s, "topics": topics, "processes": processes,
               "group_log": group_log}
    finally:
        for process in processes.values():
            if process.poll() is None:
                stop(process)
        for file in files.values():
            file.close()


def test_the_group_publishes_the_diagnostics_and_tables_of_separate_monitors(
        tester, both, panda):
    g, s, topics = both["g"], both["s"], both["topics"]
    k = 6  # the estimate loses one body's mass: ERROR there, OK everywhere else
    body = panda.body_names[k]
    nominal = np.array(panda.theta_nominal)
    broken = nominal.copy()
    broken[k] *= 0.01
    sent = 0
    deadline = time.monotonic() + 3.0
    while time.monotonic() < deadline:
        for ns in (g, s):
            topics[ns]["theta"].publish(cv.body_array(nominal, panda.body_names))
            topics[ns]["theta_hat"].publish(cv.body_array(broken, panda.body_names))
        sent += 1
        tester.spin_for(0.02)

    def last_levels(ns: str) -> dict[str, int]:
        levels = {}
        for array in topics[ns]["diagnostics"]:
            for status in array.status:
                levels[short_name(status.name)] = cv.status_level(status)
        return levels

    estimate_body = f"monitor_classical: {ESTIMATE}: {body}"
    tester.spin_until(lambda: all(last_levels(ns).get(estimate_body) == 2 for ns in (g, s)),
                      ANSWER_TIMEOUT, f"ERROR for {estimate_body} from both")
    tester.spin_for(0.5)  # the last periodic statuses
    group, separate = last_levels(g), last_levels(s)
    expected = ({f"monitor_truth: {b}" for b in panda.body_names} | {"monitor_truth: input"}
                | {f"monitor_classical: {ESTIMATE}: {b}" for b in panda.body_names}
                | {f"monitor_classical: {ESTIMATE}: input"})
    assert set(group) == set(separate) == expected, (set(group) ^ expected)
    assert group == separate
    assert all(group[f"monitor_truth: {b}"] == 0 for b in panda.body_names)  # consistent
    assert group[estimate_body] == 2
    assert all(group[f"monitor_classical: {ESTIMATE}: {b}"] == 0
               for b in panda.body_names if b != body)
    # the consistency tables: the same margins, those of the Θ sent (computed here)
    for key, theta in (("consistency", nominal), ("consistency_hat", broken)):
        assert topics[g][key] and topics[s][key], key
        tables = []
        for ns in (g, s):
            last = topics[ns][key][-1]
            assert cv.parse_dim_label(last.layout.dim[0].label) == ("body", panda.body_names)
            _, fields = cv.parse_dim_label(last.layout.dim[1].label)
            tables.append(np.array(last.data).reshape(panda.n_bodies, len(fields)))
        mu = tables[0][:, fields.index("mu")]
        np.testing.assert_allclose(mu, spectral_statistics(theta)[0], rtol=1e-12)
        np.testing.assert_array_equal(tables[0][:, fields.index("level")],
                                      tables[1][:, fields.index("level")])
    assert len(topics[g]["consistency_hat"]) > sent // 4  # one table per Θ̂ (best effort)


def test_each_member_has_the_topics_of_the_same_monitor_run_alone(tester, both):
    g, s = both["g"], both["s"]
    node = tester.node

    def topics_of(name: str, ns: str) -> set[tuple[str, str]]:
        found = set()
        for kind, query in (("pub", node.get_publisher_names_and_types_by_node),
                            ("sub", node.get_subscriber_names_and_types_by_node)):
            for topic, _types in query(name, ns):
                if topic not in COMMON_TOPICS:
                    found.add((kind, topic.replace(ns, "<ns>", 1)))
        return found

    for name in ("monitor_truth", "monitor_classical"):
        tester.spin_until(lambda n=name: topics_of(n, g) and topics_of(n, s), ANSWER_TIMEOUT,
                          f"{name} in the graph")
        assert topics_of(name, g) == topics_of(name, s), name
    # every relative topic of the estimate's monitor is under the estimate's namespace
    # (a topic the monitor gains must join monitor_group.WATCHED_TOPICS)
    absolute = {"<ns>/diagnostics", "<ns>/robot_description"}
    watched = {topic for _, topic in topics_of("monitor_classical", g)} - absolute
    assert watched and all(t.startswith(f"<ns>/{ESTIMATE}/") for t in watched), watched
    assert {t for _, t in topics_of("monitor_truth", g)} - absolute == {
        "<ns>/inertial_parameters", "<ns>/inertial_parameter_rates", "<ns>/consistency",
        "<ns>/inertial_parameters_stamped", "<ns>/consistency_stamped"}


def test_the_group_logs_every_member_ready_and_stops_cleanly_on_sigint(both):
    group = both["processes"]["group"]
    log = both["group_log"]
    deadline = time.monotonic() + START_TIMEOUT
    while "ready: all" not in log.read_text():
        assert time.monotonic() < deadline and group.poll() is None, log.read_text()
        time.sleep(0.05)
    text = log.read_text()
    assert re.search(r"[.[]monitor_truth\]: ready: ", text), text
    assert re.search(r"[.[]monitor_classical\]: ready: ", text), text
    assert "ready: all 2 monitors (monitor_truth, monitor_classical)" in text
    assert stop(group) == 0
    text = log.read_text()
    assert "stopping (SIGINT)" in text
    assert not BAD.search(text), text


def test_a_group_stopped_during_start_up_by_the_bring_up_exits_0(tmp_path, panda_urdf):
    command = bringup.monitor_group_command(
        [MonitorMember("a"), MonitorMember("b", "x")], urdf=panda_urdf,
        ros_args=common_ros_args(unique_namespace("early")))
    for delay in (0.01, 0.6, 1.5):  # the interpreter, the imports, the members' models
        running = bringup.BringUp(logs=tmp_path)
        name = f"early{delay}"
        running.start(name, command, env=node_env())
        time.sleep(delay)
        codes = running.stop(timeout=15.0)
        text = running.log(name).read_text()
        assert codes == {name: 0} and not running.killed, text
        assert not BAD.search(text), text


def test_a_member_that_cannot_start_stops_the_group_with_one_clear_message(tmp_path,
                                                                           panda_urdf):
    member_file = tmp_path / "bad.yaml"  # one member's parameters: a file key /**/<name>
    member_file.write_text("/**/bad:\n  ros__parameters:\n    margin_fraction: 5.0\n")
    command = bringup.monitor_group_command(  # margin_fraction's range is 0…1
        [MonitorMember("good"), MonitorMember("bad", "x")], urdf=panda_urdf,
        ros_args=[*common_ros_args(unique_namespace("bad")), "--params-file", str(member_file)])
    result = subprocess.run(command, env=node_env(), capture_output=True, text=True,
                            timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 1, output
    fatal = [line for line in output.splitlines() if "cannot start" in line]
    assert len(fatal) == 1 and "margin_fraction" in fatal[0], output
    assert "Traceback" not in output


def test_bad_member_specs_are_usage_errors_naming_the_problem(panda_urdf):
    for specs, words in ((["a", "a=x"], "distinct"), (["9a"], "node name"),
                         (["a=x/../y"], "namespace")):
        argv = [sys.executable, "-m", "robot_tv_dynamics.ros.monitor_group"]
        for spec in specs:
            argv += ["--monitor", spec]
        result = subprocess.run([*argv, "--ros-args", "-p", f"urdf_path:={panda_urdf}"],
                                env=node_env(), capture_output=True, text=True, timeout=120)
        assert result.returncode == 2 and words in result.stderr, result.stderr


def test_member_specs_round_trip_and_the_command_lists_every_member():
    assert MonitorMember.parse("monitor_x") == MonitorMember("monitor_x", "")
    assert MonitorMember.parse(" m = /estimates/geometric/ ") == MonitorMember(
        "m", "estimates/geometric")
    for member in (MonitorMember("m"), MonitorMember("m", "a/b")):
        assert MonitorMember.parse(member.spec()) == member
    with pytest.raises(InvalidInputError, match="node name"):
        MonitorMember.parse("=estimates/x")
    command = bringup.monitor_group_command(
        [MonitorMember("t"), MonitorMember("c", "estimates/c")], urdf="/a.urdf",
        config="/c.yaml", namespace="arm", python="py", parameters={"publish_rate": 10.0})
    assert command[:3] == ["py", "-m", "robot_tv_dynamics.ros.monitor_group"]
    ros = command.index("--ros-args")
    assert command[3:ros] == ["--monitor", "t", "--monitor", "c=estimates/c"]
    rest = command[ros:]
    assert "__node:=" not in " ".join(rest)  # each member names itself
    assert rest.index("--params-file") < rest.index("urdf_path:='/a.urdf'") < rest.index(
        "publish_rate:=10.0")
    assert "__ns:=/arm" in rest
    with pytest.raises(InvalidInputError, match="distinct"):
        bringup.monitor_group_command([MonitorMember("t"), MonitorMember("t", "x")])
