"""Every module a package docstring names (:mod:`.x` or :mod:`robot_tv_dynamics.x`) exists."""

from __future__ import annotations

import importlib
import importlib.util
import re
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "robot_tv_dynamics"
INITS = sorted(p for p in PACKAGE.rglob("__init__.py") if "ros" not in p.parts)
REFERENCE = re.compile(r":mod:`~?([\w.]+)`")


def package_of(path: Path) -> str:
    return ".".join(path.parent.relative_to(PACKAGE.parent).parts)


@pytest.mark.parametrize("path", INITS, ids=package_of)
def test_package_docstrings_name_existing_modules(path):
    package = package_of(path)
    doc = importlib.import_module(package).__doc__ or ""
    missing = []
    for name in REFERENCE.findall(doc):
        full = package + name if name.startswith(".") else name
        if importlib.util.find_spec(full) is None:
            missing.append(full)
    assert not missing, f"{package} names modules that do not exist: {missing}"
