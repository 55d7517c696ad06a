"""visualization_msgs/MarkerArray of an :class:`~robot_tv_dynamics.visualization.InertiaScene`.

Pure message building (no node). Per body l of a source (``truth``, or
``estimates/<name>``) and namespace ``<source>/<kind>``, id l:

- ``lead``: SPHERE at the COM, diameter 2r of the lead ball (lead grey; magenta when Φ
  is inconsistent);
- ``box``: CUBE at the COM, oriented along the principal axes, the equivalent uniform
  box, coloured by the monitor's level (DELETE when Φ has no box);
- ``label``: TEXT_VIEW_FACING "<body>: inconsistent, no box" (DELETE otherwise);

and per source ``skeleton`` (LINE_LIST joint origin → child joint origin), ``joints``
(SPHERE_LIST of the joint origins) and ``title`` (the source's name), ids 0. A body
without mass gets DELETE for its ``lead``/``box``/``label``: no marker is drawn for
it, and one drawn before disappears. Every marker has ``frame_locked`` false and no
lifetime: it stays until the next array replaces it.

A publisher sending an array many times a second passes one :class:`MarkerStore` to
every :func:`scene_markers` call: each (namespace, id) then refills its message of the
previous array instead of building a new one, and a DELETE is sent only for a marker
the previous array drew (:meth:`MarkerStore.array` adds one for every drawn marker an
array no longer has, e.g. a source or body gone).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pinocchio as pin
from builtin_interfaces.msg import Duration, Time
from geometry_msgs.msg import Point
from std_msgs.msg import ColorRGBA
from visualization_msgs.msg import Marker, MarkerArray

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.visualization import BodyVisual, InertiaScene, Skeleton
from robot_tv_dynamics.visualization.look import RGBA, SKELETON_COLOR

#: Smallest side drawn [m]: a box on the boundary (a plate, a rod) keeps a visible side.
MIN_SIDE = 1e-4
#: Line width of the skeleton, diameter of its joint dots, height of text [m].
LINE_WIDTH = 0.008
JOINT_DIAMETER = 0.025
TEXT_HEIGHT = 0.04
#: Per-body marker kinds, in id order of the namespaces.
BODY_KINDS = ("lead", "box", "label")


def _color(rgba: RGBA) -> ColorRGBA:
    return ColorRGBA(r=float(rgba[0]), g=float(rgba[1]), b=float(rgba[2]), a=float(rgba[3]))


def _quaternion(rotation: np.ndarray) -> tuple[float, float, float, float]:
    """(x, y, z, w) of a proper rotation matrix."""
    x, y, z, w = (float(v) for v in pin.Quaternion(np.asarray(rotation)).normalized().coeffs())
    return x, y, z, w


def _marker(ns: str, marker_id: int, kind: int, frame_id: str, stamp: Time) -> Marker:
    marker = Marker()
    marker.ns = ns
    marker.id = marker_id
    marker.lifetime = Duration()
    marker.frame_locked = False
    return _refill(marker, kind, frame_id, stamp)


def _refill(marker: Marker, kind: int, frame_id: str, stamp: Time) -> Marker:
    """``marker`` as an ADD of ``kind`` with an identity orientation (the rest is the caller's)."""
    marker.header.frame_id = frame_id
    marker.header.stamp = stamp
    marker.type = kind
    marker.action = Marker.ADD
    o = marker.pose.orientation
    o.x = o.y = o.z = 0.0
    o.w = 1.0
    return marker


def _delete(ns: str, marker_id: int, frame_id: str, stamp: Time) -> Marker:
    marker = _marker(ns, marker_id, Marker.SPHERE, frame_id, stamp)
    marker.action = Marker.DELETE
    return marker


class MarkerStore:
    """The messages of one publisher's arrays, kept from one array to the next.

    Filling a kept message costs a fraction of building a new ``Marker`` (each builds a
    header, a pose, a texture and more), and a DELETE for a marker that is not drawn is
    left out: an array is then mostly the markers it draws.
    """

    def __init__(self) -> None:
        """An empty store: its first array is all new messages and sends no DELETE."""
        self._messages: dict[tuple[str, int], Marker] = {}
        self._drawn: set[tuple[str, int]] = set()  # ADDed by the previous array

    def marker(self, ns: str, marker_id: int, kind: int, frame_id: str,
               stamp: Time) -> Marker:
        """The kept message of (ns, id), refilled as :func:`_marker` makes a new one."""
        marker = self._messages.get((ns, marker_id))
        if marker is None:
            marker = self._messages[(ns, marker_id)] = _marker(
                ns, marker_id, kind, frame_id, stamp)
            return marker
        return _refill(marker, kind, frame_id, stamp)

    def delete(self, ns: str, marker_id: int, frame_id: str, stamp: Time) -> Marker | None:
        """A DELETE of (ns, id) if the previous array drew it, else None (nothing to do)."""
        if (ns, marker_id) not in self._drawn:
            return None
        marker = self.marker(ns, marker_id, Marker.SPHERE, frame_id, stamp)
        marker.action = Marker.DELETE
        return marker

    def array(self, markers: Sequence[Marker]) -> MarkerArray:
        """The array of ``markers`` plus a DELETE of every marker drawn before and not now.

        The messages are reused by the next array: publish (serialize) this one first.
        """
        markers = list(markers)
        listed = {(m.ns, m.id) for m in markers}
        for key in sorted(self._drawn - listed):
            gone = self._messages[key]
            gone.action = Marker.DELETE
            markers.append(gone)
        self._drawn = {(m.ns, m.id) for m in markers if m.action == Marker.ADD}
        return MarkerArray(markers=markers)


def _place(marker: Marker, position: np.ndarray, rotation: np.ndarray | None = None) -> None:
    marker.pose.position.x, marker.pose.position.y, marker.pose.position.z = (
        float(v) for v in position)
    if rotation is not None:
        o = marker.pose.orientation
        o.x, o.y, o.z, o.w = _quaternion(rotation)


def scene_markers(
    scene: InertiaScene,
    source: str,
    n_bodies: int,
    frame_id: str,
    stamp: Time,
    offset: Sequence[float] = (0.0, 0.0, 0.0),
    body_frames: Sequence[str] | None = None,
    title: str | None = None,
    store: MarkerStore | None = None,
) -> list[Marker]:
    """The markers of one source's scene (see the module docstring).

    Args:
        scene: the scene (base-frame poses, or body-frame poses when ``body_frames``).
        source: namespace prefix, e.g. ``"truth"`` or ``"estimates/classical"``.
        n_bodies: N, so that bodies missing from the scene (no mass) get DELETE.
        frame_id: the base frame (the skeleton's, and every marker's with base poses).
        stamp: header stamp (the joint_states sample the poses come from).
        offset: added to every base-frame position [m] (draws an estimate beside the
            true Θ); not applied to body-frame poses.
        body_frames: per body the frame of its poses (the link names) when the scene
            is in body frames; None for base-frame poses.
        title: text drawn under the base (None: ``source``; "": none).
        store: the publisher's kept messages (None: new messages, every DELETE sent);
            publish its :meth:`MarkerStore.array` of the markers.

    Returns:
        The markers, body markers first.
    """
    make = _Maker(store, stamp)
    shift = np.asarray(offset, dtype=np.float64) if scene.in_base_frame else np.zeros(3)
    if body_frames is None and not scene.in_base_frame:
        raise InvalidInputError("body_frames", "a scene in body frames needs the link names")
    markers: list[Marker] = []
    drawn = {body.index: body for body in scene.bodies}
    for l in range(n_bodies):
        frame = frame_id if body_frames is None else body_frames[l]
        body = drawn.get(l)
        if body is None:
            for kind in BODY_KINDS:
                markers += make.deleted(f"{source}/{kind}", l, frame)
            continue
        markers += _body_markers(make, source, body, frame, shift)
    if scene.skeleton is not None:
        markers += _skeleton_markers(make, source, scene.skeleton, frame_id, shift)
    text = source if title is None else title
    if text:
        caption = make.new(f"{source}/title", 0, Marker.TEXT_VIEW_FACING, frame_id)
        _place(caption, shift + np.array([0.0, 0.0, -0.12]))
        caption.scale.z = 1.5 * TEXT_HEIGHT
        caption.color = _color(SKELETON_COLOR)
        caption.text = text
        markers.append(caption)
    return markers


class _Maker:
    """The messages of one array: new ones, or the ``store``'s kept ones; all at ``stamp``."""

    def __init__(self, store: MarkerStore | None, stamp: Time) -> None:
        """Make new messages (``store`` None) or refill the store's."""
        self.store, self.stamp = store, stamp

    def new(self, ns: str, marker_id: int, kind: int, frame_id: str) -> Marker:
        """An ADD of ``kind`` for (ns, id) (:func:`_marker`, or the kept message refilled)."""
        if self.store is None:
            return _marker(ns, marker_id, kind, frame_id, self.stamp)
        return self.store.marker(ns, marker_id, kind, frame_id, self.stamp)

    def deleted(self, ns: str, marker_id: int, frame_id: str) -> list[Marker]:
        """A DELETE of (ns, id), or none when the store knows it is not drawn."""
        if self.store is None:
            return [_delete(ns, marker_id, frame_id, self.stamp)]
        gone = self.store.delete(ns, marker_id, frame_id, self.stamp)
        return [] if gone is None else [gone]


def _body_markers(make: _Maker, source: str, body: BodyVisual, frame: str,
                  shift: np.ndarray) -> list[Marker]:
    """One body's ``lead``, ``box`` and ``label`` (a DELETE for a box or label it lacks).

    Positions are the body's COM plus ``shift`` [m], in ``frame``.
    """
    l, geometry, look = body.index, body.geometry, body.look
    markers: list[Marker] = []
    lead = make.new(f"{source}/lead", l, Marker.SPHERE, frame)
    _place(lead, body.com + shift)
    diameter = max(2.0 * geometry.lead_radius, MIN_SIDE)
    lead.scale.x = lead.scale.y = lead.scale.z = diameter
    lead.color = _color(look.ball)
    markers.append(lead)
    if geometry.box is not None:
        box = make.new(f"{source}/box", l, Marker.CUBE, frame)
        _place(box, body.com + shift, body.rotation)
        sides = np.maximum(np.asarray(geometry.box.dimensions), MIN_SIDE)
        box.scale.x, box.scale.y, box.scale.z = (float(v) for v in sides)
        box.color = _color(look.box)
        markers.append(box)
    else:
        markers += make.deleted(f"{source}/box", l, frame)
    if look.label:
        label = make.new(f"{source}/label", l, Marker.TEXT_VIEW_FACING, frame)
        _place(label, body.com + shift + np.array([0.0, 0.0, diameter + TEXT_HEIGHT]))
        label.scale.z = TEXT_HEIGHT
        label.color = _color(look.ball)
        label.text = look.label
        markers.append(label)
    else:
        markers += make.deleted(f"{source}/label", l, frame)
    return markers


def _skeleton_markers(make: _Maker, source: str, bones: Skeleton, frame_id: str,
                      shift: np.ndarray) -> list[Marker]:
    """The ``skeleton`` (LINE_LIST) and ``joints`` (SPHERE_LIST) of the base-frame joints."""
    lines = make.new(f"{source}/skeleton", 0, Marker.LINE_LIST, frame_id)
    lines.scale.x = LINE_WIDTH
    lines.color = _color(SKELETON_COLOR)
    lines.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
                    for p in bones.segment_points().reshape(-1, 3) + shift]
    joints = make.new(f"{source}/joints", 0, Marker.SPHERE_LIST, frame_id)
    joints.scale.x = joints.scale.y = joints.scale.z = JOINT_DIAMETER
    joints.color = _color(SKELETON_COLOR)
    joints.points = [Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))
                     for p in bones.points + shift]
    return [lines, joints]


def marker_array(markers: Sequence[Marker]) -> MarkerArray:
    """A MarkerArray of ``markers``."""
    return MarkerArray(markers=list(markers))
