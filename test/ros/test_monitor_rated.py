"""monitor_node with the cell's rated payload: a load within the rating never warns.

A UR5 (rated 5 kg) gets stamped Θ over real DDS: the URDF's Θ plus a load on tool0 (a
box, COM 5 cm out along tool0's z). With ``rated_payload: 5.0`` the 5 kg load gives no WARN
anywhere and 12 kg gives ERROR on the wrist body; the node without it (``upper_factor`` 10
× the wrist's own 0.19 kg body) alarms at 5 kg already, the behaviour the parameter fixes.
"""

from __future__ import annotations

import numpy as np
import pytest
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.srv import SetParameters
from rclpy.parameter import Parameter
from sensor_msgs.msg import JointState
from support.ros_harness import NodeProcess, RosClient, task_name, unique_namespace

from robot_tv_dynamics.inertia import phi_from_mass_com_inertia
from robot_tv_dynamics.ros import conversions as cv

pytestmark = [pytest.mark.ros]

BODY = "wrist_3_link"


def _theta(ur5, mass):
    side = 0.1
    inertia = np.eye(3) * mass * side ** 2 / 6.0  # a cube of side 10 cm about its COM
    phi = phi_from_mass_com_inertia(mass, [0.0, 0.0, 0.05], inertia)
    return ur5.theta_with_link_inertia(ur5.theta_nominal, "tool0", phi)  # tool0: no inertia


def _levels(arrays, after):
    """The last level per status name among arrays stamped after ``after`` [s]."""
    out = {}
    for array in arrays:
        if cv.stamp_to_seconds(array.header.stamp) > after:
            for status in array.status:
                out[task_name(status.name)] = status.level[0]
    return out


def test_a_rated_5_kg_load_does_not_warn_and_12_kg_is_an_error(tmp_path, urdf_paths, ur5):
    ns = unique_namespace("rated")
    common = {"urdf_path": urdf_paths["ur5"], "executor": "single_threaded",
              "publish_rate": 20.0, "legacy_theta_topics": False}
    nodes = {"rated": NodeProcess("monitor_node", f"{ns}/rated", tmp_path,
                                  {**common, "rated_payload": 5.0}),
             "factor": NodeProcess("monitor_node", f"{ns}/factor", tmp_path, common)}
    client = RosClient()
    try:
        diagnostics = {k: client.collect(DiagnosticArray, f"{ns}/{k}/diagnostics")
                       for k in nodes}
        pubs = {k: client.publisher(JointState, f"{ns}/{k}/inertial_parameters_stamped")
                for k in nodes}
        for kind, node in nodes.items():
            client.spin_until(lambda n=node: "ready" in n.output(), 60.0, kind, node)
        assert "rated payload 5 kg within 0.1 m of tool0" in nodes["rated"].output()
        client.wait_matched(list(pubs.values()), 20.0)
        stamp = [100.0]

        def send(mass, seconds=1.0):
            theta = _theta(ur5, mass)
            now = client.node.get_clock().now().nanoseconds * 1e-9
            for _ in range(int(seconds / 0.05)):
                stamp[0] += 0.05
                for pub in pubs.values():
                    pub.publish(cv.body_joint_state(stamp[0], ur5.body_names, "phi", theta))
                client.spin_for(0.05)
            client.spin_for(0.3)
            return now

        since = send(5.0)
        rated, factor = (_levels(diagnostics[k], since) for k in ("rated", "factor"))
        assert rated.get(BODY) == 0, rated
        assert all(level == 0 for level in rated.values()), rated  # no WARN anywhere
        assert factor.get(BODY, 0) >= 1, factor  # without the rating: an alarm at 5 kg
        since = send(12.0)
        assert _levels(diagnostics["rated"], since).get(BODY) == 2

        # at runtime: a rating of 15 kg clears the 12 kg ERROR; a frame on another body
        # is refused with the reason
        service = client.node.create_client(
            SetParameters, f"{ns}/rated/monitor_node/set_parameters")
        client.spin_until(service.service_is_ready, 20.0, "the parameter service")

        def set_parameter(parameter):
            future = service.call_async(SetParameters.Request(
                parameters=[parameter.to_parameter_msg()]))
            client.spin_until(future.done, 20.0, "set_parameters")
            return future.result().results[0]
        bad = set_parameter(Parameter("payload_frame", Parameter.Type.STRING, "no_link"))
        assert not bad.successful and "no_link" in bad.reason
        ok = set_parameter(Parameter("rated_payload", Parameter.Type.DOUBLE, 15.0))
        assert ok.successful, ok.reason
        since = send(12.0, 1.5)
        assert _levels(diagnostics["rated"], since).get(BODY) == 0
    finally:
        client.close()
        for node in nodes.values():
            node.stop()
