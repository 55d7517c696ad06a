"""Where files are: the package's ``config/`` (source tree, ament share or package data).

``config/`` (parameter files, loading processes, examples, the Foxglove layout) is found
in this order:

1. the source tree: ``<repo>/config`` beside ``package.xml``, when the package is
   imported from a checkout (``PYTHONPATH`` = the repo root, or ``pip install -e .``);
2. the ament share directory ``share/robot_tv_dynamics/config`` of a colcon build
   (looked up through ``AMENT_PREFIX_PATH``);
3. the package data ``robot_tv_dynamics/config`` of a ``pip install`` (setup.py maps
   the repo's ``config/`` onto it, so the wheel carries the same files).

The example URDFs come from the example-robot-data wheel (:func:`example_robot_urdf`).
"""

from __future__ import annotations

import os
import site
import sysconfig
from pathlib import Path

from robot_tv_dynamics.exceptions import InvalidInputError

PACKAGE = "robot_tv_dynamics"
#: A file every complete ``config/`` holds (the nodes' parameter file).
_MARKER = "tv_dynamics.yaml"


def _source_config_dir() -> Path | None:
    root = Path(__file__).resolve().parents[1]
    config = root / "config"
    if (root / "package.xml").is_file() and (config / _MARKER).is_file():
        return config
    return None


def source_root() -> Path | None:
    """The source tree the package is imported from (``package.xml`` beside it), or None."""
    root = Path(__file__).resolve().parents[1]
    return root if (root / "package.xml").is_file() else None


def _ament_config_dir() -> Path | None:
    if not os.environ.get("AMENT_PREFIX_PATH"):
        return None
    try:
        from ament_index_python.packages import get_package_share_directory

        config = Path(get_package_share_directory(PACKAGE)) / "config"
    except Exception:  # any lookup failure means "not installed there"
        return None
    return config if (config / _MARKER).is_file() else None


def _package_data_config_dir() -> Path | None:
    config = Path(__file__).resolve().parent / "config"
    return config if (config / _MARKER).is_file() else None


def config_dir_candidates() -> list[tuple[str, Path]]:
    """Every ``config/`` found, as (where, path), in the lookup order of this module."""
    found = [("source tree", _source_config_dir()), ("ament share", _ament_config_dir()),
             ("package data", _package_data_config_dir())]
    return [(where, path) for where, path in found if path is not None]


def package_config_dir() -> Path:
    """``config/`` of the package: the source tree, else the ament share, else package data.

    Raises:
        InvalidInputError: none of the three holds the files (a broken install).
    """
    candidates = config_dir_candidates()
    if not candidates:
        raise InvalidInputError(
            "config", f"the {PACKAGE} config files were found neither in a source tree, "
            "nor in an ament share directory, nor as package data: reinstall the package "
            "from its source tree (pip install PATH_TO_THE_CHECKOUT, or colcon build)")
    return candidates[0][1]


def config_file(relative: str) -> Path:
    """A file of the package's ``config/``, e.g. ``"loading/fill.yaml"``."""
    return package_config_dir() / relative


def example_robot_urdf(relative: str = "panda_description/urdf/panda.urdf") -> Path:
    """A URDF shipped by the example-robot-data wheel (default: the Panda).

    The wheel installs its data under ``<site-packages>/cmeel.prefix/share/
    example-robot-data/robots``; there is no importable module to ask. The UR5 is
    ``"ur_description/urdf/ur5_robot.urdf"``.

    Raises:
        InvalidInputError: the file is not installed.
    """
    for robots in example_robot_dirs():
        path = robots / relative
        if path.is_file():
            return path
    raise InvalidInputError(
        "urdf", f"example-robot-data's {relative} is not installed (pip install "
        "example-robot-data), and no URDF was given")


def example_robot_dirs() -> list[Path]:
    """The ``robots`` folders of installed example-robot-data wheels (usually one)."""
    roots = [sysconfig.get_paths().get(key) for key in ("purelib", "platlib")]
    try:
        roots += site.getsitepackages()
    except AttributeError:  # pragma: no cover - old virtualenv
        pass
    dirs = []
    for root in dict.fromkeys(r for r in roots if r):
        robots = Path(root) / "cmeel.prefix" / "share" / "example-robot-data" / "robots"
        if robots.is_dir():
            dirs.append(robots)
    return dirs
