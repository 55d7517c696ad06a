r"""On-disk cache of Jacobian extremes, keyed by the URDF text, locked joints and settings."""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from robot_tv_dynamics.bounds.extremes import (
    SAMPLED,
    JacobianExtremes,
)
from robot_tv_dynamics.bounds.search import jacobian_extremes
from robot_tv_dynamics.exceptions import BoundsCacheError, InvalidInputError
from robot_tv_dynamics.model import RobotModel

# ---------------------------------------------------------------------------- cache
_CACHE_VERSION = 1


def extremes_cache_key(model: RobotModel, method: str, settings: Mapping[str, Any]) -> str:
    """Cache key of Jacobian extremes: URDF hash + method + settings (hex sha256)."""
    from robot_tv_dynamics import __version__

    payload = json.dumps({"version": _CACHE_VERSION, "package": __version__,
                          "urdf_sha256": model.urdf_sha256,
                          "method": method, "settings": dict(settings)}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _cache_path(directory: str | Path, key: str) -> Path:
    return Path(directory) / f"jacobian_extremes_{key[:32]}.json"


def load_cached_extremes(directory: str | Path, key: str) -> JacobianExtremes | None:
    """The cached extremes for ``key``, or None (missing, unreadable or stale file)."""
    path = _cache_path(directory, key)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        if data.get("key") != key:
            return None
        return JacobianExtremes.from_dict(data["extremes"])
    except (OSError, ValueError, KeyError, TypeError, AttributeError, InvalidInputError):
        return None


def store_cached_extremes(directory: str | Path, key: str, extremes: JacobianExtremes) -> Path:
    """Write ``extremes`` under ``key`` in ``directory`` (atomically) and return the path.

    Raises:
        BoundsCacheError: the directory cannot be created or written.
    """
    path = _cache_path(directory, key)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".extremes-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            json.dump({"key": key, "extremes": extremes.to_dict()}, stream, indent=1)
        os.replace(tmp, path)
    except OSError as error:
        raise BoundsCacheError(str(path), str(error)) from None
    return path


def cached_jacobian_extremes(
    model: RobotModel, directory: str | Path, method: str = SAMPLED, **settings: Any
) -> JacobianExtremes:
    """:func:`jacobian_extremes` through an on-disk cache keyed by URDF hash and settings.

    Args:
        model: the arm.
        directory: cache directory (created on demand).
        method: ``"sampled"`` or ``"certified"``.
        **settings: keyword arguments of :func:`jacobian_extremes` (``progress`` is not
            part of the key).

    Returns:
        The cached or freshly computed extremes.
    """
    progress = settings.pop("progress", None)
    key = extremes_cache_key(model, method, settings)
    cached = load_cached_extremes(directory, key)
    if cached is not None:
        return cached
    extremes = jacobian_extremes(model, method, progress=progress, **settings)
    store_cached_extremes(directory, key, extremes)
    return extremes
