"""Reading a URDF: parse errors, link inertials, and the Pinocchio model.

The only place that talks to the URDF text; every failure becomes a
:class:`~robot_tv_dynamics.exceptions.URDFError` naming the source and the problem.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import numpy as np
import pinocchio as pin

from robot_tv_dynamics.exceptions import URDFError
from robot_tv_dynamics.inertia import Array, phi_from_urdf_inertial


def read_urdf_file(path: str | Path) -> str:
    """Return the text of a URDF file, or raise URDFError saying why it cannot be read."""
    path = Path(path)
    if not path.exists():
        raise URDFError(str(path), "file does not exist")
    if not path.is_file():
        raise URDFError(str(path), "is not a file")
    try:
        return path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise URDFError(str(path), f"cannot be read ({error})") from None


def _floats(text: str | None, count: int, default: float, where: str, source: str) -> list[float]:
    if text is None:
        return [default] * count
    try:
        values = [float(token) for token in text.split()]
    except ValueError:
        raise URDFError(source, f'{where}: "{text}" is not {count} numbers') from None
    if len(values) != count or not all(np.isfinite(values)):
        raise URDFError(source, f'{where}: "{text}" is not {count} finite numbers')
    return values


def parse_link_inertials(xml: str, source: str) -> dict[str, Array]:
    """Φ of every link's ``<inertial>`` about its own link frame (zeros when absent).

    Args:
        xml: URDF text.
        source: where it came from, for error messages.

    Returns:
        Link name → Φ (10,), eq. (7) order, about the link frame origin.

    Raises:
        URDFError: malformed XML, a root that is not ``<robot>``, or a malformed
            ``<inertial>`` (negative mass, missing or non-numeric values).
    """
    try:
        root = ET.fromstring(xml)
    except ET.ParseError as error:
        raise URDFError(source, f"malformed XML ({error})") from None
    if root.tag != "robot":
        raise URDFError(source, f"root element is <{root.tag}>, expected <robot>")
    inertials: dict[str, Array] = {}
    for link in root.iter("link"):
        name = link.get("name")
        if not name:
            raise URDFError(source, "a <link> has no name")
        inertial = link.find("inertial")
        if inertial is None:
            inertials[name] = np.zeros(10)
            continue
        where = f'link "{name}" <inertial>'
        origin = inertial.find("origin")
        xyz = _floats(origin.get("xyz") if origin is not None else None, 3, 0.0, where, source)
        rpy = _floats(origin.get("rpy") if origin is not None else None, 3, 0.0, where, source)
        mass_element = inertial.find("mass")
        inertia_element = inertial.find("inertia")
        if mass_element is None or inertia_element is None:
            raise URDFError(source, f"{where} needs <mass> and <inertia>")
        (mass,) = _floats(mass_element.get("value"), 1, 0.0, f"{where} <mass>", source)
        if mass < 0:
            raise URDFError(source, f"{where}: mass {mass} kg is negative")
        keys = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
        moments = [
            _floats(inertia_element.get(key), 1, 0.0, f"{where} <inertia {key}>", source)[0]
            for key in keys
        ]
        inertials[name] = phi_from_urdf_inertial(mass, xyz, rpy, *moments, what=f'link "{name}"')
    return inertials


def build_pinocchio_model(xml: str, source: str) -> pin.Model:
    """Build a fixed-base Pinocchio model from URDF text, wrapping Pinocchio's errors."""
    try:
        return pin.buildModelFromXML(xml)
    except (RuntimeError, ValueError) as error:
        raise URDFError(source, f"Pinocchio cannot build a model ({error})") from None
