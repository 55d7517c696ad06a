r"""Loading processes from YAML: one builder per kind in a registry (:data:`BUILDERS`).

A file names its kind with ``process:`` (:data:`KINDS`), the ``link`` and the kind's
parameters (``config/loading/*.yaml``); an unknown key is an error naming the file.

A scenario file may also carry a ``collision:`` block (:func:`collision_from_dict`,
:func:`load_collision`: an :class:`~robot_tv_dynamics.observer.ExternalWrench`): an
external force (and moment) on a link of the arm over a time window, which the
simulator applies to the plant and which is not part of the load. The loading process
ignores the block.
"""

from __future__ import annotations

import csv
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import (
    Array,
    check_finite,
    phi_from_mass_com_inertia,
    rpy_to_rotation,
)
from robot_tv_dynamics.loading.drain import DrainProcess
from robot_tv_dynamics.loading.fill import FillProcess
from robot_tv_dynamics.loading.geometry import (
    Container,
    Placement,
)
from robot_tv_dynamics.loading.grasp import GraspProcess
from robot_tv_dynamics.loading.state import (
    STANDARD_GRAVITY,
    LoadingProcess,
    finite_scalar,
    nonnegative_scalar,
    positive_scalar,
)
from robot_tv_dynamics.loading.timeline import TimelineProcess
from robot_tv_dynamics.observer.wrench import ExternalWrench


class _Section:
    """A mapping of config values with typed getters and an unknown-key check."""

    def __init__(self, data: Any, where: str) -> None:
        if not isinstance(data, Mapping):
            raise InvalidInputError(where, f"expected a mapping, got {type(data).__name__}")
        self.data = dict(data)
        self.where = where
        self.used: set[str] = set()

    def name(self, key: str) -> str:
        return f"{self.where}.{key}"

    def get(self, key: str, default: Any = None, *, required: bool = False) -> Any:
        self.used.add(key)
        if key not in self.data:
            if required:
                raise InvalidInputError(self.where, f'missing key "{key}"')
            return default
        return self.data[key]

    def number(self, key: str, default: float | None = None) -> float:
        value = self.get(key, default, required=default is None)
        return finite_scalar(value, self.name(key))

    def vector(self, key: str, size: int, default: Sequence[float] | None = None) -> Array:
        value = self.get(key, default, required=default is None)
        return check_finite(value, self.name(key), (size,))

    def section(self, key: str) -> _Section:
        return _Section(self.get(key, required=True), self.name(key))

    def done(self) -> None:
        unknown = sorted(set(self.data) - self.used)
        if unknown:
            raise InvalidInputError(
                self.where, f"unknown key(s) {unknown}; known: {sorted(self.used)}")


def _placement(section: _Section | None) -> Placement:
    if section is None:
        return Placement.identity()
    placement = Placement(rpy_to_rotation(section.vector("rpy", 3, (0.0, 0.0, 0.0)).tolist()),
                          section.vector("xyz", 3, (0.0, 0.0, 0.0)))
    section.done()
    return placement


def _container(config: _Section) -> Container:
    section = config.section("container")
    origin = section.get("origin")
    container = Container(
        radius=positive_scalar(section.number("radius"), section.name("radius")),
        height=positive_scalar(section.number("height"), section.name("height")),
        mass=positive_scalar(section.number("mass"), section.name("mass")),
        placement=_placement(None if origin is None else _Section(origin, section.name("origin"))),
    )
    section.done()
    return container


def _inertia_matrix(value: Any, name: str) -> Array:
    """3×3, or the 6 entries (ixx, ixy, ixz, iyy, iyz, izz) of geometry_msgs/Inertia."""
    array = np.asarray(value, dtype=np.float64) if value is not None else np.zeros(0)
    if array.shape == (6,):
        ixx, ixy, ixz, iyy, iyz, izz = array
        array = np.array([[ixx, ixy, ixz], [ixy, iyy, iyz], [ixz, iyz, izz]])
    return check_finite(array, name, (3, 3))


_PHI_COLUMNS = ("m", "h1", "h2", "h3", "I11", "I22", "I33", "I12", "I23", "I13")
_MCI_COLUMNS = ("mass", "com_x", "com_y", "com_z", "ixx", "ixy", "ixz", "iyy", "iyz", "izz")


def _row_phi(row: Mapping[str, Any], where: str) -> Array:
    """Φ of one timeline row: ``phi`` (10), or ``mass``/``com``/``inertia`` (about the COM)."""
    if "phi" in row:
        return check_finite(row["phi"], f"{where}.phi", (10,))
    if "mass" in row:
        return phi_from_mass_com_inertia(
            nonnegative_scalar(row["mass"], f"{where}.mass"),
            check_finite(row.get("com", (0.0, 0.0, 0.0)), f"{where}.com", (3,)),
            _inertia_matrix(row.get("inertia", np.zeros(6)), f"{where}.inertia"), what=where)
    raise InvalidInputError(where, 'a row needs "phi" (10 numbers) or "mass" (+ "com", "inertia")')


def _read_timeline_csv(path: Path) -> tuple[list[float], list[Array]]:
    """Rows of a CSV with header t + Φ columns or t + mass/COM/inertia columns."""
    try:
        with path.open(newline="") as stream:
            reader = csv.DictReader(line for line in stream if not line.lstrip().startswith("#"))
            rows = list(reader)
            header = [name.strip() for name in (reader.fieldnames or [])]
    except OSError as error:
        raise InvalidInputError("timeline.file", f"cannot read {path}: {error}") from None
    times, phis = [], []
    for k, raw in enumerate(rows):
        row = {key.strip(): value for key, value in raw.items() if key is not None}
        where = f"{path.name} row {k + 1}"
        if "t" not in header:
            raise InvalidInputError(str(path), f'CSV header needs "t"; got {header}')
        times.append(finite_scalar(row["t"], f"{where}.t"))
        if all(c in header for c in _PHI_COLUMNS):
            phis.append(np.array([finite_scalar(row[c], f"{where}.{c}") for c in _PHI_COLUMNS]))
        elif all(c in header for c in _MCI_COLUMNS):
            values = [finite_scalar(row[c], f"{where}.{c}") for c in _MCI_COLUMNS]
            phis.append(_row_phi({"mass": values[0], "com": values[1:4],
                                  "inertia": values[4:]}, where))
        else:
            raise InvalidInputError(
                str(path), f"CSV header must be t + {list(_PHI_COLUMNS)} or t + "
                f"{list(_MCI_COLUMNS)}; got {header}")
    return times, phis


def _timeline(config: _Section, base_dir: Path | None) -> TimelineProcess:
    link = str(config.get("link", required=True))
    rows, file = config.get("rows"), config.get("file")
    if (rows is None) == (file is None):
        raise InvalidInputError("timeline", 'give exactly one of "rows" (a list) or "file" (CSV)')
    if file is not None:
        path = Path(str(file))
        if not path.is_absolute() and base_dir is not None:
            path = base_dir / path
        times, phis = _read_timeline_csv(path)
    else:
        if not isinstance(rows, Sequence) or isinstance(rows, str):
            raise InvalidInputError("timeline.rows", "expected a list of rows")
        times, phis = [], []
        for k, row in enumerate(rows):
            if not isinstance(row, Mapping):
                raise InvalidInputError(f"timeline.rows[{k}]", "expected a mapping")
            times.append(finite_scalar(row.get("t"), f"timeline.rows[{k}].t"))
            phis.append(_row_phi(row, f"timeline.rows[{k}]"))
    return TimelineProcess(link, times, np.array(phis).reshape(-1, 10))


def _fill(config: _Section, base_dir: Path | None) -> LoadingProcess:
    return FillProcess(
        str(config.get("link", required=True)), _container(config),
        mass_flow=config.number("mass_flow"), fill_time=config.number("fill_time"),
        inlet_height=config.number("inlet_height"),
        inlet_speed=config.number("inlet_speed", 0.0),
        fluid_density=config.number("fluid_density", 1000.0),
        stream_acceleration=config.number("stream_acceleration", STANDARD_GRAVITY),
        start=config.number("start", 0.0))


def _drain(config: _Section, base_dir: Path | None) -> LoadingProcess:
    return DrainProcess(
        str(config.get("link", required=True)), _container(config),
        initial_level=config.number("initial_level"),
        orifice_diameter=config.number("orifice_diameter", 0.0),
        discharge_coefficient=config.number("discharge_coefficient", 0.62),
        law=str(config.get("law", "torricelli")),
        volume_flow=config.number("volume_flow", 0.0),
        fluid_density=config.number("fluid_density", 1000.0),
        gravity=config.number("gravity", STANDARD_GRAVITY),
        start=config.number("start", 0.0),
        opening_time=config.number("opening_time", 0.05))


def _grasp(config: _Section, base_dir: Path | None) -> LoadingProcess:
    return GraspProcess(
        str(config.get("link", required=True)), config.number("mass"),
        config.vector("com", 3), _inertia_matrix(config.get("inertia", required=True),
                                                 config.name("inertia")),
        ramp_time=config.number("ramp_time"),
        approach=config.vector("approach", 3, (0.0, 0.0, 0.0)),
        start=config.number("start", 0.0))


#: Kind (the ``process:`` key) → builder from the file's section and its directory. A new
#: kind of process registers here; every builder reads its keys through ``_Section``, so
#: :meth:`_Section.done` can refuse the keys nobody read.
BUILDERS: dict[str, Callable[[_Section, Path | None], LoadingProcess]] = {
    "fill": _fill,
    "drain": _drain,
    "grasp": _grasp,
    "timeline": _timeline,
}
#: The kinds of loading process a config can name.
KINDS = tuple(BUILDERS)


def _build(kind: str, config: _Section, base_dir: Path | None) -> LoadingProcess:
    builder = BUILDERS.get(kind)
    if builder is None:
        raise InvalidInputError("process", f'"{kind}" is not one of {list(KINDS)}')
    process = builder(config, base_dir)
    config.done()
    return process


def loading_process_from_dict(
    config: Mapping[str, Any], base_dir: str | Path | None = None
) -> LoadingProcess:
    """Build a loading process from the contents of a YAML file.

    Args:
        config: mapping with ``process`` (one of :data:`KINDS`), ``link`` and the kind's
            parameters (see ``config/loading/*.yaml``); an optional ``description`` and
            ``collision`` (:func:`collision_from_dict`) are ignored.
        base_dir: directory that a relative timeline ``file`` is resolved against.

    Returns:
        The process.

    Raises:
        InvalidInputError: unknown kind or key, missing or out-of-range value.
        PhysicalConsistencyError: a given inertia that no non-negative density has.
    """
    section = _Section(config, "loading")
    kind = section.get("process", required=True)
    section.get("description")
    section.get("collision")  # not part of the load: collision_from_dict reads it
    section.where = str(kind)
    if not isinstance(kind, str):
        raise InvalidInputError("process", f"expected one of {list(KINDS)}, got {kind!r}")
    return _build(kind, section, None if base_dir is None else Path(base_dir))


def _read_yaml(path: Path) -> Any:
    """The contents of a YAML file.

    Raises:
        InvalidInputError: unreadable file or malformed YAML (naming the file).
    """
    import yaml

    try:
        return yaml.safe_load(path.read_text())
    except OSError as error:
        raise InvalidInputError("loading file", f"cannot read {path}: {error}") from None
    except yaml.YAMLError as error:
        raise InvalidInputError("loading file", f"{path} is not valid YAML: {error}") from None


def load_loading_process(path: str | Path) -> LoadingProcess:
    """Read a loading process from a YAML file (see :func:`loading_process_from_dict`).

    Raises:
        InvalidInputError: unreadable file, malformed YAML, or a bad configuration
            (the message names the file).
    """
    path = Path(path)
    data = _read_yaml(path)
    try:
        return loading_process_from_dict(data, path.parent)
    except InvalidInputError as error:
        raise InvalidInputError(f"{path}: {error.argument}", error.problem) from None


# ------------------------------------------------------------------------ collision
def _triple(section: _Section, key: str, default: Sequence[float] | None = None
            ) -> tuple[float, float, float]:
    x, y, z = (float(v) for v in section.vector(key, 3, default))
    return x, y, z


def collision_as_dict(wrench: ExternalWrench) -> dict[str, Any]:
    """A wrench as a ``collision:`` block, e.g. for a summary (base-frame pulses only).

    Keys: ``link``, ``force``, ``moment``, ``point``, ``start``, ``duration``.

    Raises:
        InvalidInputError: a wrench in the link frame or with a rise (the block has
            neither).
    """
    if wrench.frame != "world" or wrench.rise != 0.0:
        raise InvalidInputError("collision", "a collision: block is a rectangular pulse in "
                                f"the base frame, got frame {wrench.frame!r}, rise {wrench.rise}")
    return {"link": wrench.link, "force": list(wrench.force), "moment": list(wrench.moment),
            "point": list(wrench.point), "start": wrench.t_start,
            "duration": wrench.t_end - wrench.t_start}


def collision_from_dict(config: Mapping[str, Any]) -> ExternalWrench | None:
    """The ``collision:`` block of a scenario's contents, or None when it has none.

    Keys: ``link`` (a URDF link name), ``force`` (3 numbers, base frame, N), ``start``
    (s, >= 0), ``duration`` (s, > 0); optional ``moment`` (3 numbers, base frame, N·m)
    and ``point`` (3 numbers, link coordinates, m). The result acts over
    [start, start + duration) in the base frame, a rectangular pulse; the link is
    checked against a URDF by whoever has one (``demo.scenario_file``).

    Raises:
        InvalidInputError: the block is not a mapping, a key is missing or unknown, a
            value is not finite, the link is not a non-empty name, the start is
            negative or the duration not positive (the message names the field, e.g.
            ``collision.duration``).
    """
    if not isinstance(config, Mapping):
        raise InvalidInputError("loading", f"expected a mapping, got {type(config).__name__}")
    block = config.get("collision")
    if block is None:
        return None
    section = _Section(block, "collision")
    link = section.get("link", required=True)
    if not isinstance(link, str) or not link.strip():
        raise InvalidInputError(section.name("link"), f"expected a link name, got {link!r}")
    force = _triple(section, "force")
    start = nonnegative_scalar(section.number("start"), section.name("start"))
    duration = positive_scalar(section.number("duration"), section.name("duration"))
    if not start + duration > start:
        raise InvalidInputError(section.name("duration"), f"{duration} is lost in rounding "
                                f"at start {start}")
    collision = ExternalWrench(
        link.strip(), force, start, start + duration,
        moment=_triple(section, "moment", (0.0, 0.0, 0.0)),
        point=_triple(section, "point", (0.0, 0.0, 0.0)))
    section.done()
    return collision


def load_collision(path: str | Path) -> ExternalWrench | None:
    """The ``collision:`` block of a scenario file (see :func:`collision_from_dict`).

    Raises:
        InvalidInputError: unreadable file, malformed YAML, or a bad block (the message
            names the file and the field).
    """
    path = Path(path)
    data = _read_yaml(path)
    try:
        return collision_from_dict(data)
    except InvalidInputError as error:
        raise InvalidInputError(f"{path}: {error.argument}", error.problem) from None
