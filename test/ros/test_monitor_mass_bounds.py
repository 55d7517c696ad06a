"""monitor_node's mass_matrix_lower_bounds over real DDS: certified, live, cached per arm.

The node (``mass_bounds`` true) publishes per judged Θ the weighted α₁ʷ(t) and the
loading floor. Checked here against what this test computes itself, from Pinocchio's
CRBA and LOCAL Jacobians and a spatial inertia built by hand (never the bounds code):
α₁ʷ(t) is below the sampled λ_min(Σ z_l J_lᵀJ_l) and λ_min(M(q, Θ)) and within a
factor 2 of the former; the floor holds for a consistent load and is reported broken,
naming the body, for an inconsistent load estimate; a second start reads the cache.
"""

from __future__ import annotations

import numpy as np
import pytest
from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from sensor_msgs.msg import JointState
from support.by_hand import z_by_hand
from support.ros_harness import RELIABLE, NodeProcess, short_name, unique_namespace

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.ros import conversions as cv

pytestmark = [pytest.mark.ros, pytest.mark.slow]

TIMEOUT = 90.0




def sampled_minima(model: RobotModel, theta: np.ndarray, qs: np.ndarray) -> tuple[float, float]:
    """min over qs of λ_min(Σ z_l J_lᵀJ_l) and of λ_min(M(q, Θ)) (CRBA)."""
    z = np.linalg.eigvalsh(z_by_hand(theta))[:, 0]
    rd = model.dynamics()
    rd.set_theta(theta)
    weighted, mass = np.inf, np.inf
    for q in qs:
        jac = model.body_jacobians_local(q).reshape(model.n_bodies, 6, model.nv)
        weighted = min(weighted, np.linalg.eigvalsh(np.einsum("l,lri,lrj->ij", z, jac, jac))[0])
        mass = min(mass, np.linalg.eigvalsh(rd.mass_matrix(q))[0])
    return float(weighted), float(mass)


def test_the_published_weighted_alpha1_and_loading_floor_bound_lambda_min_of_m(
        tester, tmp_path, ur5, urdf_paths):
    params = {"urdf_path": urdf_paths["ur5"], "publish_rate": 10.0, "mass_bounds": True,
              "cache_dir": str(tmp_path / "cache"), "bounds_time_limit": 3.0,
              "legacy_theta_topics": False}
    node = NodeProcess("monitor_node", unique_namespace("mbounds"), tmp_path, params)
    ns, names = node.namespace, ur5.body_names
    theta_pub = tester.publisher(JointState, f"{ns}/inertial_parameters_stamped", RELIABLE)
    out = tester.collect(JointState, f"{ns}/mass_matrix_lower_bounds")
    diagnostics = tester.collect(DiagnosticArray, f"{ns}/diagnostics")
    theta0 = np.array(ur5.theta_nominal)
    loaded = theta0.copy()  # a 2 kg load on the last body: consistent
    loaded[-1] += [2.0, 0.0, 0.0, 0.2, 0.06, 0.06, 0.02, 0.0, 0.0, 0.0]
    estimate = theta0.copy()  # a load estimate of −50 g: the body stays consistent
    estimate[-1, 0] -= 0.05
    sent: dict[tuple[int, int], np.ndarray] = {}
    clock = [1_700_000_000]

    def send(theta: np.ndarray) -> tuple[int, int]:
        clock[0] += 1
        stamp = Time(sec=clock[0], nanosec=0)
        sent[(clock[0], 0)] = theta
        theta_pub.publish(cv.body_joint_state(stamp, names, "phi", theta))
        return clock[0], 0

    def entries(key):
        for msg in out:
            if (msg.header.stamp.sec, msg.header.stamp.nanosec) == key:
                return dict(zip(msg.name, msg.position, strict=True))
        return None

    try:
        tester.wait_matched([theta_pub], TIMEOUT, node)
        tester.spin_for(0.5)

        def floor_known():
            key = send(theta0)
            tester.spin_for(0.3)
            got = entries(key)
            return got is not None and np.isfinite(got["loading_floor"])

        tester.spin_until(floor_known, TIMEOUT, "the loading floor searched", node)
        keys = {"nominal": send(theta0), "loaded": send(loaded), "doubled": send(2 * theta0),
                "estimate": send(estimate)}
        tester.spin_until(lambda: all(entries(k) for k in keys.values()), TIMEOUT,
                          "the bounds of every Θ sent", node)
        rng = np.random.default_rng(5)
        qs = rng.uniform(-np.pi, np.pi, (300, ur5.nv))
        for label in ("nominal", "loaded", "doubled"):
            got = entries(keys[label])
            weighted, mass = sampled_minima(ur5, sent[keys[label]], qs)
            assert got["weighted_alpha1"] <= weighted, label
            assert got["weighted_alpha1"] <= mass, label
            assert got["weighted_alpha1"] >= 0.5 * weighted, label  # within a factor 2
            assert got["paper_alpha1"] <= got["weighted_alpha1"], label
        nominal, doubled = entries(keys["nominal"]), entries(keys["doubled"])
        assert doubled["weighted_alpha1"] == pytest.approx(2 * nominal["weighted_alpha1"],
                                                           rel=1e-9)  # homogeneous in z
        floor = nominal["loading_floor"]
        loaded_mass = sampled_minima(ur5, loaded, qs)[1]
        assert entries(keys["loaded"])["loading_floor_holds"] == 1.0
        assert floor <= loaded_mass and floor <= sampled_minima(ur5, theta0, qs)[1]
        broken = entries(keys["estimate"])
        assert broken["loading_floor_holds"] == 0.0 and broken["min_load_margin"] < 0.0

        def warned():
            for array in diagnostics:
                for status in array.status:
                    if (short_name(status.name) == "monitor_node: mass matrix"
                            and cv.status_level(status) == 1):
                        return status
            return None

        status = tester.spin_until(warned, TIMEOUT, "the mass matrix status WARN", node)
        assert names[-1] in status.message and "inconsistent load estimate" in status.message
    finally:
        assert node.stop() == 0
    assert "loading floor (computed)" in node.output()
    again = NodeProcess("monitor_node", unique_namespace("mbounds2"), tmp_path, params)
    try:
        tester.spin_until(lambda: "loading floor (cache)" in again.output(), TIMEOUT,
                          "the floor read from the cache", again)
    finally:
        assert again.stop() == 0
