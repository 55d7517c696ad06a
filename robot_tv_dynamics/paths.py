"""Where the package's data files are: ``config/`` in the source tree or the install."""

from __future__ import annotations

from pathlib import Path

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
