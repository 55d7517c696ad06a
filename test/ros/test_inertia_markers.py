"""The MarkerArray adapter: what the scene becomes as visualization_msgs (no DDS)."""

from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
from builtin_interfaces.msg import Time
from visualization_msgs.msg import Marker

from robot_tv_dynamics.consistency.monitor import Level
from robot_tv_dynamics.inertia import phi_from_mass_com_inertia
from robot_tv_dynamics.ros.markers import scene_markers
from robot_tv_dynamics.visualization import inertia_scene

pytestmark = pytest.mark.ros


def by_key(markers):
    return {(m.ns, m.id): m for m in markers}


def rotation_of(marker) -> np.ndarray:
    o = marker.pose.orientation
    return np.asarray(pin.Quaternion(o.w, o.x, o.y, o.z).matrix())


def test_each_body_gets_a_ball_and_a_box_posed_like_the_scene(panda):
    q = np.linspace(-0.5, 0.5, panda.nv)
    levels = [Level.OK] * panda.n_bodies
    scene = inertia_scene(panda, panda.theta_nominal, levels, panda.kinematics(q))
    markers = by_key(scene_markers(scene, "truth", panda.n_bodies, "panda_link0", Time()))
    for body in scene.bodies:
        lead, box = markers[("truth/lead", body.index)], markers[("truth/box", body.index)]
        assert lead.type == Marker.SPHERE and box.type == Marker.CUBE
        assert lead.action == box.action == Marker.ADD
        assert lead.header.frame_id == "panda_link0"
        p = lead.pose.position
        np.testing.assert_allclose([p.x, p.y, p.z], body.com, atol=1e-12)
        assert lead.scale.x == pytest.approx(2 * body.geometry.lead_radius)
        np.testing.assert_allclose([box.scale.x, box.scale.y, box.scale.z],
                                   np.maximum(body.geometry.box.dimensions, 1e-4))
        np.testing.assert_allclose(rotation_of(box), body.rotation, atol=1e-9)
        assert markers[("truth/label", body.index)].action == Marker.DELETE
    skeleton = markers[("truth/skeleton", 0)]
    assert skeleton.type == Marker.LINE_LIST and len(skeleton.points) == 2 * panda.n_bodies


def test_an_estimate_is_drawn_beside_with_its_own_namespace(panda):
    kin = panda.kinematics(np.zeros(panda.nv))
    scene = inertia_scene(panda, panda.theta_nominal, None, kin)
    truth = by_key(scene_markers(scene, "truth", panda.n_bodies, "panda_link0", Time()))
    beside = by_key(scene_markers(scene, "estimates/classical", panda.n_bodies, "panda_link0",
                                  Time(), offset=(0.0, 1.0, 0.0)))
    a, b = truth[("truth/lead", 6)].pose.position, beside[("estimates/classical/lead", 6)]
    assert (b.pose.position.y - a.y, b.pose.position.x - a.x) == pytest.approx((1.0, 0.0))
    assert beside[("estimates/classical/title", 0)].text == "estimates/classical"


def test_a_massless_body_gets_no_marker_and_an_inconsistent_one_no_box(panda):
    theta = np.array(panda.theta_nominal)
    theta[2] = 0.0
    theta[6] = phi_from_mass_com_inertia(1.0, [0.0, 0.0, 0.1], np.diag([1.0, 0.1, 0.1]))
    scene = inertia_scene(panda, theta, [Level.OK] * panda.n_bodies,
                          panda.kinematics(np.zeros(panda.nv)))
    markers = scene_markers(scene, "truth", panda.n_bodies, "panda_link0", Time())
    added = {(m.ns, m.id) for m in markers if m.action == Marker.ADD}
    assert not {key for key in added if key[1] == 2 and key[0] != "truth/skeleton"
                and key[0] != "truth/joints" and key[0] != "truth/title"}
    keyed = by_key(markers)
    assert keyed[("truth/lead", 2)].action == Marker.DELETE
    assert keyed[("truth/box", 6)].action == Marker.DELETE
    lead, label = keyed[("truth/lead", 6)], keyed[("truth/label", 6)]
    assert lead.action == label.action == Marker.ADD
    assert "inconsistent" in label.text
    assert (lead.color.r, lead.color.g, lead.color.b) == pytest.approx((0.85, 0.0, 0.85))


def test_link_frame_mode_poses_bodies_in_their_links(panda):
    kin = panda.kinematics(np.zeros(panda.nv))
    scene = inertia_scene(panda, panda.theta_nominal, None, kin, base_frame=False)
    markers = by_key(scene_markers(scene, "truth", panda.n_bodies, "panda_link0", Time(),
                                   body_frames=panda.body_names))
    lead = markers[("truth/lead", 6)]
    assert lead.header.frame_id == "panda_link7"
    com = panda.theta_nominal[6, 1:4] / panda.theta_nominal[6, 0]
    p = lead.pose.position
    np.testing.assert_allclose([p.x, p.y, p.z], com, atol=1e-12)
    assert markers[("truth/skeleton", 0)].header.frame_id == "panda_link0"


def test_a_store_refills_its_messages_and_deletes_only_what_it_drew(panda):
    """Arrays from one MarkerStore equal fresh ones, minus the DELETEs of undrawn markers."""
    from robot_tv_dynamics.ros.markers import MarkerStore

    store = MarkerStore()
    theta = np.array(panda.theta_nominal)
    bad = theta.copy()
    bad[6] = phi_from_mass_com_inertia(1.0, [0.0, 0.0, 0.1], np.diag([1.0, 0.1, 0.1]))

    def arrays(theta, q, sources=("truth",)):
        scene = inertia_scene(panda, theta, None, panda.kinematics(q))
        fresh = [m for s in sources for m in scene_markers(scene, s, panda.n_bodies,
                                                           "panda_link0", Time())]
        kept = store.array([m for s in sources for m in scene_markers(
            scene, s, panda.n_bodies, "panda_link0", Time(), store=store)])
        return by_key(fresh), by_key(kept.markers)

    def same(a, b):
        assert (a.type, a.action, a.text, a.header.frame_id) == (
            b.type, b.action, b.text, b.header.frame_id)
        for field in ("position", "orientation"):
            x, y = getattr(a.pose, field), getattr(b.pose, field)
            assert [x.x, x.y, x.z] == pytest.approx([y.x, y.y, y.z], abs=1e-15)
        assert (a.scale.x, a.scale.y, a.scale.z) == (b.scale.x, b.scale.y, b.scale.z)
        assert [(p.x, p.y, p.z) for p in a.points] == [(p.x, p.y, p.z) for p in b.points]

    fresh, kept = arrays(theta, np.zeros(panda.nv), ("truth", "estimates/a"))
    assert all(m.action == Marker.ADD for m in kept.values())  # nothing drawn before
    assert {k for k, m in fresh.items() if m.action == Marker.ADD} == set(kept)
    for q, th in ((np.full(panda.nv, 0.4), bad), (np.full(panda.nv, -0.3), theta)):
        fresh, kept = arrays(th, q)
        for key, marker in kept.items():
            if marker.action == Marker.ADD:
                same(marker, fresh[key])
        deleted = {k for k, m in kept.items() if m.action == Marker.DELETE}
        if th is bad:  # the box of body 6 goes, its label comes; source a is gone
            assert ("truth/box", 6) in deleted and kept[("truth/label", 6)].text
            assert {k for k in deleted if k[0].startswith("estimates/a")} == {
                k for k in fresh_first_keys(panda, "estimates/a")}
        else:  # the label goes, the box comes back
            assert deleted == {("truth/label", 6)}
            assert kept[("truth/box", 6)].action == Marker.ADD
    _, kept = arrays(theta, np.zeros(panda.nv))
    assert all(m.action == Marker.ADD for m in kept.values())  # each DELETE sent once


def fresh_first_keys(panda, source):
    scene = inertia_scene(panda, panda.theta_nominal, None, panda.kinematics(np.zeros(panda.nv)))
    return {(m.ns, m.id) for m in scene_markers(scene, source, panda.n_bodies, "panda_link0",
                                                Time()) if m.action == Marker.ADD}
