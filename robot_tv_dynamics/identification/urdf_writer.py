r"""Writing identified Θ back: ``<inertial>`` elements of a URDF, and ``theta.yaml``.

A body of :class:`~robot_tv_dynamics.model.RobotModel` merges several URDF links: the
child link of its joint (the *main link*, whose frame is the body frame) and every link
fixed to it, through fixed joints or locked joints (a Panda's hand and fingers merge
into ``panda_link7``). Only the sum Φ_l is identifiable, so the writer decides where it
goes:

1. **delta into the main link** (preferred): the main link takes Φ_l minus the URDF
   inertias of the other merged links (moved into the body frame); the other links
   keep their CAD inertia, so the file is still sensible if a locked joint is
   unlocked. Used when the main link's part is itself physically realizable
   (f ⪰ 0, m > 0).
2. **collapse** (otherwise): the main link takes all of Φ_l and the other merged links
   lose their ``<inertial>`` (massless).

Either way ``RobotModel.from_urdf(identified.urdf, same locked joints).theta_nominal``
equals Θ (to rounding; Φ maps linearly under the fixed transforms). The inertia is
written about the COM in link axes (``rpy = 0``), numbers with 17 significant digits.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.exceptions import InvalidInputError, URDFError
from robot_tv_dynamics.inertia import (
    Array,
    mass_com_inertia_from_phi,
    pseudo_inertia,
    transform_phi,
)
from robot_tv_dynamics.model import RobotModel

#: Φ entry names in eq. (7) order, for theta.yaml comments.
PHI_NAMES = ("m", "h1", "h2", "h3", "I11", "I22", "I33", "I12", "I23", "I13")


@dataclass(frozen=True)
class BodyWriteback:
    """Where one body's Φ went.

    Attributes:
        body: the body (main link) name.
        link: the link whose ``<inertial>`` was rewritten.
        mode: ``"delta"`` or ``"collapse"`` (module docstring).
        other_links: the other merged links (kept in ``delta``, cleared in ``collapse``).
    """

    body: str
    link: str
    mode: str
    other_links: tuple[str, ...]


def _links_by_body(model: RobotModel) -> list[list[str]]:
    owned: list[list[str]] = [[] for _ in range(model.n_bodies)]
    for link in model.link_names:
        try:
            attachment = model.link_attachment(link)
        except InvalidInputError:  # fixed to the base: no dynamics
            continue
        owned[attachment.body].append(link)
    return owned


def _urdf_number(value: float) -> str:
    """A URDF attribute value: the shortest repr that reads back exactly, "0" for zero."""
    return repr(float(value)) if value != 0 else "0"


def _set_inertial(link_element: ET.Element, phi_link: Array, source: str, name: str) -> None:
    mass, com, inertia = mass_com_inertia_from_phi(phi_link)
    inertial = link_element.find("inertial")
    if inertial is None:
        inertial = ET.SubElement(link_element, "inertial")
    for child in list(inertial):
        inertial.remove(child)
    inertial.text = "\n      "
    origin = ET.SubElement(inertial, "origin", {"xyz": " ".join(map(_urdf_number, com)),
                                                "rpy": "0 0 0"})
    origin.tail = "\n      "
    ET.SubElement(inertial, "mass", {"value": _urdf_number(mass)}).tail = "\n      "
    keys = {"ixx": inertia[0, 0], "ixy": inertia[0, 1], "ixz": inertia[0, 2],
            "iyy": inertia[1, 1], "iyz": inertia[1, 2], "izz": inertia[2, 2]}
    ET.SubElement(inertial, "inertia",
                  {k: _urdf_number(v) for k, v in keys.items()}).tail = "\n    "
    if not np.isfinite(mass) or mass <= 0:
        raise URDFError(source, f'link "{name}": identified mass {mass} is not positive')


def identified_urdf(
    xml: str, model: RobotModel, theta: npt.ArrayLike, source: str = "<string>"
) -> tuple[str, list[BodyWriteback]]:
    """The URDF text with identified ``<inertial>`` elements (module docstring).

    Args:
        xml: the URDF the model was built from.
        model: the model (same locked joints as the identification).
        theta: identified Θ (N, 10), every body with m > 0.
        source: name for error messages.

    Returns:
        (new URDF text, one :class:`BodyWriteback` per body).

    Raises:
        URDFError: malformed XML, a link missing from the XML, a non-positive mass.
    """
    theta = model.check_theta(theta)
    parser = ET.XMLParser(target=ET.TreeBuilder(insert_comments=True))
    try:
        root = ET.fromstring(xml, parser=parser)
    except ET.ParseError as error:
        raise URDFError(source, f"malformed XML ({error})") from None
    elements = {link.get("name"): link for link in root.iter("link")}
    owned = _links_by_body(model)
    out: list[BodyWriteback] = []
    for l, links in enumerate(owned):
        main = model.body_names[l] if model.body_names[l] in links else links[0]
        others = tuple(link for link in links if link != main)
        moved = {link: model.link_phi_in_body(link, model.urdf_link_phi(link))[1]
                 for link in others}
        phi_main = theta[l] - sum(moved.values(), np.zeros(10))
        delta = phi_main[0] > 0 and np.linalg.eigvalsh(pseudo_inertia(phi_main))[0] >= 0
        if not delta:
            phi_main = theta[l]
            for link in others:
                inertial = elements[link].find("inertial")
                if inertial is not None:
                    elements[link].remove(inertial)
        attachment = model.link_attachment(main)
        rotation_t = attachment.rotation.T
        phi_link = transform_phi(phi_main, rotation_t, -rotation_t @ attachment.translation)
        if main not in elements:
            raise URDFError(source, f'link "{main}" is not in the XML')
        _set_inertial(elements[main], phi_link, source, main)
        out.append(BodyWriteback(model.body_names[l], main, "delta" if delta else "collapse",
                                 others))
    text = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" ?>\n' + text + "\n", out


def theta_dict(model: RobotModel, theta: npt.ArrayLike) -> dict[str, list[float]]:
    """``theta.yaml`` content: body name → Φ (10 floats, eq. (7) order)."""
    theta = model.check_theta(theta)
    return {name: [float(v) for v in theta[l]] for l, name in enumerate(model.body_names)}


def write_theta_yaml(path: str | Path, model: RobotModel, theta: npt.ArrayLike) -> None:
    """Write ``theta.yaml`` with a header naming the order and units."""
    import yaml

    header = ("# Identified inertial parameters, body name -> Phi in eq. (7) order\n"
              f"# ({', '.join(PHI_NAMES)}) about the body frame origin [kg, kg*m, kg*m^2]\n")
    if model.locked_joints:
        header += "# locked joints: " + ", ".join(
            f"{name}={position:g}" for name, position in model.locked_joints.items()) + "\n"
    Path(path).write_text(header + yaml.safe_dump(theta_dict(model, theta), sort_keys=False),
                          encoding="utf-8")
