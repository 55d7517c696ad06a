"""Node start-up over real DDS: a late ``/diagnostics`` reader, and γ, δ off the start path.

A node publishes its status at once when a new ``/diagnostics`` reader matches, so a
reader that joins late gets a message well before one diagnostics period elapsed; the
period here is long (:data:`PERIOD`) and every wait is a fraction of it, so a message
can only come from the matched event, not from the periodic timer. dynamics_node
without cached Jacobian extremes reports first, says ``pending``, and reports again as
soon as they are computed. The nodes whose paths need no SciPy do not import it.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from diagnostic_msgs.msg import DiagnosticArray
from support.ros_harness import REPO, NodeProcess, node_env, short_name, unique_namespace

pytestmark = pytest.mark.ros

#: The nodes' configured diagnostics period [s]: every wait below is a fraction of it.
PERIOD = 100.0  # monitor_node: publish_rate 0.01 Hz, its minimum
#: The certified search's time limit of the cold dynamics_node [s] (it runs this long).
SEARCH_S = 6.0


@pytest.fixture(scope="module")
def log_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("ready_logs")


def late_reader_gets_a_status(tester, node: NodeProcess) -> list[DiagnosticArray]:
    """The first reader's messages; fails unless a second reader, joining once the node
    has reported, gets one within a quarter of the node's period."""
    topic = f"{node.namespace}/diagnostics"
    first: list[DiagnosticArray] = tester.collect(DiagnosticArray, topic)
    tester.spin_until(lambda: first, PERIOD / 2, "the first diagnostics", node)
    late: list[DiagnosticArray] = tester.collect(DiagnosticArray, topic)
    tester.spin_until(lambda: late, PERIOD / 4, "diagnostics for the late reader", node)
    return first


@pytest.mark.parametrize(("executable", "parameters"), [
    ("monitor_node", {"publish_rate": 1.0 / PERIOD}),
    ("estimator_node", {"diagnostics_period": PERIOD}),
])
def test_a_late_diagnostics_reader_does_not_wait_a_period(
        tester, log_dir, urdf_paths, executable, parameters):
    node = NodeProcess(executable, unique_namespace(executable[:3]), log_dir,
                       {"urdf_path": urdf_paths["panda"], **parameters})
    try:
        late_reader_gets_a_status(tester, node)
    finally:
        assert node.stop() == 0, node.output()[-3000:]


def bounds_status(array: DiagnosticArray):
    found = [s for s in array.status if short_name(s.name) == "dynamics_node: bounds"]
    assert len(found) == 1, [s.name for s in array.status]
    return found[0], {kv.key: kv.value for kv in found[0].values}


def test_dynamics_node_reports_before_its_jacobian_extremes_and_again_when_they_come(
        tester, log_dir, urdf_paths, tmp_path):
    def start():
        return NodeProcess("dynamics_node", unique_namespace("dyn"), log_dir, {
            "urdf_path": urdf_paths["panda"], "cache_dir": str(tmp_path / "empty_cache"),
            "certified_bounds": True, "bounds_time_limit": SEARCH_S,
            "diagnostics_period": PERIOD})

    node = start()
    try:
        first = late_reader_gets_a_status(tester, node)
        status, values = bounds_status(first[0])
        assert status.level == b"\x00" and status.message.startswith("pending"), status
        assert values["method"] == "certified" and "gamma" not in values
        # ... published before the search ended (read from the log line's own time: the
        # search may end while this test reads the status)
        computed = re.search(r"\[(\d+\.\d+)\] \[[^\]]*\]: Jacobian extremes \(computed",
                             node.output())
        stamp = first[0].header.stamp.sec + 1e-9 * first[0].header.stamp.nanosec
        assert computed is None or stamp < float(computed.group(1)), (stamp, computed)
        # the status once they are known: at once, not at the next period
        tester.spin_until(lambda: any(not bounds_status(a)[0].message.startswith("pending")
                                      for a in first), SEARCH_S + PERIOD / 4,
                          "the bounds status after the search", node)
        status, values = next(bounds_status(a) for a in first
                              if not bounds_status(a)[0].message.startswith("pending"))
        assert status.level == b"\x00", status
        assert (values["method"], values["origin"]) == ("certified", "computed")
        assert float(values["gamma"]) >= 0.0 and float(values["delta"]) > 0.0
        assert "Jacobian extremes (computed" in node.output()
    finally:
        assert node.stop() == 0, node.output()[-3000:]
    # a second start finds them in the cache: no pending state at all
    node = start()
    try:
        first = late_reader_gets_a_status(tester, node)
        status, values = bounds_status(first[0])
        assert (values["method"], values["origin"]) == ("certified", "cache"), status
        assert "computing the Jacobian extremes" not in node.output()
    finally:
        assert node.stop() == 0, node.output()[-3000:]


@pytest.mark.no_deadline  # imports only
@pytest.mark.parametrize("executable", ["dynamics_node", "monitor_node", "markers_node"])
def test_a_node_that_needs_no_scipy_does_not_import_it(executable):
    """SciPy's linalg and interpolate cost ~0.8 s of a start on two cores; these nodes use
    them only on rare paths (Cholesky where ABA cannot, a spline for a trajectory
    without velocities), which import them when they run."""
    program = (f"import sys, robot_tv_dynamics.ros.{executable}\n"
               "print(sorted(m for m in sys.modules if m.split('.')[0] == 'scipy'))")
    done = subprocess.run([sys.executable, "-c", program], cwd=REPO, env=node_env(),
                          capture_output=True, text=True, timeout=120, check=True)
    assert done.stdout.strip() == "[]", done.stdout[:2000]
