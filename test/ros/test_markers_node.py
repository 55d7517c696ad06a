"""markers_node over real DDS, beside a real monitor_node: poses, sizes and colours.

Both nodes run as processes in one namespace (see ros_harness.py): the monitor
publishes ``consistency``, whose ``level`` colours the boxes; this process publishes
joint_states and Θ and reads ``inertia_markers``.
"""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from sensor_msgs.msg import JointState
from std_msgs.msg import Float64MultiArray
from support.ros_harness import BEST_EFFORT, RELIABLE, NodeProcess, RosClient, unique_namespace
from visualization_msgs.msg import Marker, MarkerArray

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.consistency.monitor import Level
from robot_tv_dynamics.inertia import (
    phi_from_point_masses,
    phi_from_pseudo_inertia,
    pseudo_inertia,
)
from robot_tv_dynamics.ros import conversions as cv
from robot_tv_dynamics.visualization import inertia_geometry, lead_radius
from robot_tv_dynamics.visualization.look import INCONSISTENT_COLOR, LEVEL_COLORS

pytestmark = [pytest.mark.ros, pytest.mark.slow]

TIMEOUT = 30.0
LAST = 6  # panda_link7: the arm's last body (hand, payload)



@pytest.fixture(scope="module")
def model(panda_urdf):
    return RobotModel.from_urdf(panda_urdf)


@pytest.fixture(scope="module")
def scene(tmp_path_factory, panda_urdf, model):
    logs = tmp_path_factory.mktemp("markers_logs")
    ns = unique_namespace("markers")
    monitor = NodeProcess("monitor_node", ns, logs, {
        "urdf_path": panda_urdf, "publish_rate": 5.0, "horizon": 0.0})
    markers = NodeProcess("markers_node", ns, logs, {
        "urdf_path": panda_urdf, "publish_rate": 20.0, "status_timeout": 0.0})
    tester = RosClient()
    received: list[MarkerArray] = tester.collect(MarkerArray, f"{ns}/inertia_markers", RELIABLE)
    pubs = {"joint_states": tester.publisher(JointState, f"{ns}/joint_states", BEST_EFFORT),
            "theta": tester.publisher(Float64MultiArray, f"{ns}/inertial_parameters")}
    tester.wait_matched(list(pubs.values()), 60.0, markers)
    tester.spin_until(lambda: pubs["theta"].get_subscription_count() >= 2, 60.0,
                      "the monitor to subscribe", monitor)
    yield tester, pubs, received, markers, model
    tester.close()
    for node in (markers, monitor):
        code = node.stop()
        assert code == 0, f"{node.name} exit code {code}:\n{node.output()[-3000:]}"


def keyed(array: MarkerArray) -> dict[tuple[str, int], Marker]:
    return {(m.ns, m.id): m for m in array.markers}


def joint_state(model: RobotModel, q: np.ndarray) -> JointState:
    msg = JointState()
    msg.header.stamp = cv.seconds_to_stamp(1000.0)
    msg.name = list(model.joint_names)
    msg.position = [float(v) for v in q]
    return msg  # positions only (no velocities): enough to place the markers


def latest(scene, q, theta, predicate, what):
    """Publish q and Θ every 0.25 s until the newest MarkerArray satisfies ``predicate``
    (joint_states is best effort: the first samples after matching may be dropped, and
    the monitor needs several samples)."""
    tester, pubs, received, node, model = scene

    def publish():
        pubs["joint_states"].publish(joint_state(model, q))
        pubs["theta"].publish(cv.body_array(theta, model.body_names, "phi"))

    def check():
        return received and predicate(keyed(received[-1])) and keyed(received[-1])
    return tester.publish_until(publish, check, TIMEOUT, what, node)


def com_by_pinocchio(model: RobotModel, q: np.ndarray, phi: np.ndarray, body: int) -> np.ndarray:
    pm = model.pinocchio_model
    data = pm.createData()
    pin.forwardKinematics(pm, data, model.pinocchio_configuration(q))
    return np.asarray(data.oMi[body + 1].act(phi[1:4] / phi[0]))


def position(marker: Marker) -> np.ndarray:
    p = marker.pose.position
    return np.array([p.x, p.y, p.z])


def color(marker: Marker) -> tuple[float, float, float]:
    return (marker.color.r, marker.color.g, marker.color.b)


def test_markers_sit_at_the_coms_of_pinocchio_fk_and_grow_with_the_load(scene):
    model = scene[-1]
    q = np.array([0.3, -0.4, 0.2, -1.8, 0.1, 1.5, 0.6, 0.02, 0.02])
    theta = np.array(model.theta_nominal)

    def at_q(markers):
        lead = markers.get(("truth/lead", LAST))
        return lead is not None and np.allclose(
            position(lead), com_by_pinocchio(model, q, theta[LAST], LAST), atol=1e-9)

    markers = latest(scene, q, theta, at_q, "markers at the FK COM")
    for l in range(model.n_bodies):
        np.testing.assert_allclose(position(markers[("truth/lead", l)]),
                                   com_by_pinocchio(model, q, theta[l], l), atol=1e-9)
        assert markers[("truth/lead", l)].header.frame_id == "panda_link0"
    small_ball = markers[("truth/lead", LAST)].scale.x
    small_box = markers[("truth/box", LAST)].scale
    assert small_ball == pytest.approx(2 * lead_radius(theta[LAST, 0]), rel=1e-9)

    # a 1.5 kg block in the hand, 12 cm out along the flange axis
    block = phi_from_point_masses(np.full(8, 1.5 / 8), np.array(
        [[x, y, z] for x in (-0.03, 0.03) for y in (-0.03, 0.03) for z in (0.17, 0.23)]))
    heavy = theta.copy()
    heavy[LAST] += block

    def grown(markers):
        lead = markers.get(("truth/lead", LAST))
        return lead is not None and lead.scale.x > small_ball * 1.05

    markers = latest(scene, q, heavy, grown, "the last body's ball to grow")
    lead, box = markers[("truth/lead", LAST)], markers[("truth/box", LAST)]
    assert lead.scale.x == pytest.approx(2 * lead_radius(heavy[LAST, 0]), rel=1e-9)
    np.testing.assert_allclose(position(lead), com_by_pinocchio(model, q, heavy[LAST], LAST),
                               atol=1e-9)
    np.testing.assert_allclose([box.scale.x, box.scale.y, box.scale.z],
                               inertia_geometry(heavy[LAST]).box.dimensions, rtol=1e-9)
    # the box holds the same inertia about the (moved) COM: its sides change too (a
    # compact block concentrates the mass: here they shrink)
    assert not np.allclose([box.scale.x, box.scale.y, box.scale.z],
                           [small_box.x, small_box.y, small_box.z], rtol=1e-3)


def with_margin(phi: np.ndarray, margin: float) -> np.ndarray:
    """Φ with the smallest eigenvalue of f(Φ) moved to ``margin``."""
    values, vectors = np.linalg.eigh(pseudo_inertia(phi))
    values[0] = margin
    return phi_from_pseudo_inertia(vectors @ np.diag(values) @ vectors.T)


def test_the_colour_follows_the_monitors_status_of_the_body(scene):
    model = scene[-1]
    q = np.zeros(model.nv)
    theta = np.array(model.theta_nominal)
    ok, warn, error = (LEVEL_COLORS[level][:3] for level in (Level.OK, Level.WARN, Level.ERROR))

    def box_colour(expected):
        def check(markers):
            box = markers.get(("truth/box", LAST))
            return (box is not None and box.action == Marker.ADD
                    and color(box) == pytest.approx(expected, abs=1e-6))
        return check

    latest(scene, q, theta, box_colour(ok), "a green box (OK)")
    mu = np.linalg.eigvalsh(pseudo_inertia(theta[LAST]))[0]  # ε = 0.1 μ (margin_fraction)
    near = theta.copy()
    near[LAST] = with_margin(theta[LAST], 0.05 * mu)  # consistent, below ε: ERROR
    markers = latest(scene, q, near, box_colour(error), "a red box (ERROR, μ < ε)")
    assert color(markers[("truth/box", 0)]) == pytest.approx(ok, abs=1e-6)  # others stay
    assert ("truth/label", LAST) not in markers  # never drawn: no label, no DELETE of one

    bad = theta.copy()
    bad[LAST] = with_margin(theta[LAST], -0.5 * mu)  # f(Φ) indefinite: no box

    def no_box(markers):
        box, lead = markers.get(("truth/box", LAST)), markers.get(("truth/lead", LAST))
        return (box is not None and box.action == Marker.DELETE and lead is not None
                and color(lead) == pytest.approx(INCONSISTENT_COLOR[:3], abs=1e-6))

    markers = latest(scene, q, bad, no_box, "the inconsistent look")
    assert "inconsistent" in markers[("truth/label", LAST)].text

    _, _, received, _, _ = scene
    since = len(received)
    latest(scene, q, theta, lambda m: box_colour(ok)(m) and ("truth/label", LAST) not in m,
           "the green box back and no label (deleted once, then not sent)")
    labels = [keyed(array).get(("truth/label", LAST)) for array in received[since:]]
    assert any(label is not None and label.action == Marker.DELETE for label in labels)
    assert warn != ok and warn != error
