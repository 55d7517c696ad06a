"""Where files are: the package's ``config/`` (source tree or install), the example URDFs."""

from __future__ import annotations

import site
import sysconfig
from pathlib import Path

from robot_tv_dynamics.exceptions import InvalidInputError

PACKAGE = "robot_tv_dynamics"


def package_config_dir() -> Path:
    """``config/`` of the package: the source tree, else the ament share directory."""
    source = Path(__file__).resolve().parents[1] / "config"
    if source.is_dir():
        return source
    try:
        from ament_index_python.packages import get_package_share_directory

        return Path(get_package_share_directory(PACKAGE)) / "config"
    except Exception:  # any lookup failure means "not installed"
        return source


def example_robot_urdf(relative: str = "panda_description/urdf/panda.urdf") -> Path:
    """A URDF shipped by the example-robot-data wheel (default: the Panda).

    The wheel installs its data under ``<site-packages>/cmeel.prefix/share/
    example-robot-data/robots``; there is no importable module to ask.

    Raises:
        InvalidInputError: the file is not installed.
    """
    roots = [sysconfig.get_paths().get(key) for key in ("purelib", "platlib")]
    try:
        roots += site.getsitepackages()
    except AttributeError:  # pragma: no cover - old virtualenv
        pass
    for root in dict.fromkeys(r for r in roots if r):
        path = Path(root) / "cmeel.prefix" / "share" / "example-robot-data" / "robots" / relative
        if path.is_file():
            return path
    raise InvalidInputError(
        "urdf", f"example-robot-data's {relative} is not installed (pip install "
        "example-robot-data), and no URDF was given")
