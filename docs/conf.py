"""Sphinx configuration: the API reference of robot_tv_dynamics from its docstrings.

Build (test/test_docs.py runs it with warnings as errors):

    python -m sphinx -W -b html docs docs/_build/html

The Markdown pages beside this file are read on GitHub (linked from the README); this
build covers the Python API only (autodoc + napoleon for the Google-style docstrings).
"""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

project = "robot_tv_dynamics"
author = "robot_tv_dynamics maintainers"
release = "0.1.0"

extensions = ["sphinx.ext.autodoc", "sphinx.ext.napoleon", "sphinx.ext.mathjax"]
napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False
# "Attributes:" as :ivar: fields: no duplicate of the dataclass fields autodoc lists.
napoleon_use_ivar = True
autodoc_member_order = "bysource"
autodoc_typehints = "description"
autodoc_default_options = {"members": True, "undoc-members": False, "show-inheritance": True}
# The ROS layer needs rclpy and the messages: the API reference covers the core only.
autodoc_mock_imports = ["rclpy"]
exclude_patterns = ["_build", "*.md"]
root_doc = "index"
html_theme = "alabaster"
# Type names the docstrings use that are not documented objects of their own.
nitpicky = False
suppress_warnings = ["ref.python"]


def _escape_bars(app, what, name, obj, options, lines):
    """Read ``|x|`` (absolute values, norms) in docstrings as text, not substitutions.

    The docstrings write |τ|, ‖·‖ and |x|ᵀ as a reader expects; reStructuredText would
    take ``|…|`` for a substitution reference. Bars inside ``literals``, :math:`…` roles
    and ``.. math::`` blocks are left alone.
    """
    import re

    in_math, indent = False, 0
    for k, line in enumerate(lines):
        stripped = line.lstrip()
        if in_math:
            if stripped and len(line) - len(stripped) <= indent:
                in_math = False
            else:
                continue
        if stripped.startswith(".. math::"):
            in_math, indent = True, len(line) - len(stripped)
            continue
        parts = re.split(r"(``.*?``|:math:`[^`]*`)", line)
        lines[k] = "".join(p if i % 2 else p.replace("|", r"\|") for i, p in enumerate(parts))


def setup(app):
    """Register the docstring hook."""
    app.connect("autodoc-process-docstring", _escape_bars)
