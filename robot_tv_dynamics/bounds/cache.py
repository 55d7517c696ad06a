r"""The on-disk bounds cache: Jacobian extremes, loading floors and weighted references.

One folder holds every cached search result, one JSON file per record:
``jacobian_extremes_<key>.json`` (γ, δ; keyed by the URDF hash, the method and the
search settings) and the per-arm records of :mod:`~robot_tv_dynamics.bounds.floor`
(keyed by a hash of the inertial parameters, the kinematics, the joint box and the
algorithm version). The folder is :func:`default_cache_dir` unless given:
``$XDG_CACHE_HOME/robot_tv_dynamics``, or ``~/.cache/robot_tv_dynamics`` when
``XDG_CACHE_HOME`` is unset or not an absolute path (the XDG Base Directory rule).
A file that cannot be parsed (corrupt) or that belongs to another key or algorithm
version (stale) is recomputed, and :func:`read_record` says why.
"""

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

#: The ``cache_dir`` value (CLI ``--cache-dir``, node parameter) meaning
#: :func:`default_cache_dir`; an empty value disables the cache.
CACHE_DIR_AUTO = "auto"

# ---------------------------------------------------------------------------- cache
#: Version of the Jacobian-extremes records (2: the certified search bisects its lower
#: side along the widest joint; 3: the eigenvalue enclosure bounds each diagonal
#: curvature joint by joint too; 4: γ's lower end from the local left inverse, 0.99 of
#: γ on the locked Panda where the structural bound gave 0.96; older certified brackets
#: are valid but wider; 5: that floor runs on to its goal instead of stopping at its own
#: gap).
_CACHE_VERSION = 5


def default_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/robot_tv_dynamics``, else ``~/.cache/robot_tv_dynamics``.

    A relative ``XDG_CACHE_HOME`` is ignored, as the XDG Base Directory specification
    asks.
    """
    xdg = os.environ.get("XDG_CACHE_HOME", "")
    base = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"
    return base / "robot_tv_dynamics"


def resolve_cache_dir(value: str | Path | None) -> Path | None:
    """The cache folder a ``cache_dir`` setting names: None (disabled) for "" or None.

    ``"auto"`` is :func:`default_cache_dir`; anything else is a path (``~`` expanded).
    """
    if value is None:
        return None
    text = str(value).strip()
    if not text:
        return None
    if text == CACHE_DIR_AUTO:
        return default_cache_dir()
    return Path(os.path.expanduser(text))


def read_record(path: Path, key: str) -> tuple[dict[str, Any] | None, str]:
    """The JSON record stored at ``path`` for ``key``, and why not when it is unusable.

    Returns:
        (record, "") when the file holds ``key``; (None, "") when there is no file;
        (None, reason) when the file is corrupt (not JSON, not an object) or stale (it
        holds another key): the caller recomputes and may print the reason.
    """
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, ""
    except OSError as error:
        return None, f"bounds cache {path} unreadable ({error}): recomputing"
    try:
        data = json.loads(text)
    except ValueError as error:
        return None, f"bounds cache {path} is corrupt ({error}): recomputing"
    if not isinstance(data, dict):
        return None, f"bounds cache {path} is corrupt (not a JSON object): recomputing"
    if data.get("key") != key:
        return None, (f"bounds cache {path} is stale (it holds another model, setting or "
                      "algorithm version): recomputing")
    return data, ""


def write_record(path: Path, record: Mapping[str, Any]) -> Path:
    """Write ``record`` as JSON at ``path`` atomically (the folder created on demand).

    Raises:
        BoundsCacheError: the folder cannot be created or written.
    """
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".bounds-", suffix=".json")
        with os.fdopen(fd, "w", encoding="utf-8") as stream:
            json.dump(dict(record), stream, indent=1, allow_nan=False)
        os.replace(tmp, path)
    except (OSError, ValueError) as error:
        raise BoundsCacheError(str(path), str(error)) from None
    return path


def extremes_cache_key(model: RobotModel, method: str, settings: Mapping[str, Any]) -> str:
    """Cache key of Jacobian extremes: URDF hash + method + settings (hex sha256)."""
    from robot_tv_dynamics import __version__

    payload = json.dumps({"version": _CACHE_VERSION, "package": __version__,
                          "urdf_sha256": model.urdf_sha256,
                          "method": method, "settings": dict(settings)}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def _cache_path(directory: str | Path, key: str) -> Path:
    return Path(directory) / f"jacobian_extremes_{key[:32]}.json"


def read_cached_extremes(directory: str | Path, key: str) -> tuple[JacobianExtremes | None, str]:
    """The cached extremes for ``key`` (or None) and why a file there was not used."""
    path = _cache_path(directory, key)
    data, problem = read_record(path, key)
    if data is None:
        return None, problem
    try:
        return JacobianExtremes.from_dict(data["extremes"]), ""
    except (ValueError, KeyError, TypeError, AttributeError, InvalidInputError) as error:
        return None, f"bounds cache {path} is corrupt ({type(error).__name__}): recomputing"


def load_cached_extremes(directory: str | Path, key: str) -> JacobianExtremes | None:
    """The cached extremes for ``key``, or None (missing, unreadable or stale file)."""
    return read_cached_extremes(directory, key)[0]


def store_cached_extremes(directory: str | Path, key: str, extremes: JacobianExtremes) -> Path:
    """Write ``extremes`` under ``key`` in ``directory`` (atomically) and return the path.

    Raises:
        BoundsCacheError: the directory cannot be created or written.
    """
    return write_record(_cache_path(directory, key), {"key": key, "extremes": extremes.to_dict()})


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
