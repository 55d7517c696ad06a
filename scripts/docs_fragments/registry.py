"""The registry of the fragments, and the pages they sit in.

:data:`SECTIONS` lists every fragment (name → :class:`~docs_fragments.common.Fragment`),
in the order ``python scripts/docs_numbers.py`` runs them when no NAME is given.
"""

from __future__ import annotations

import re
from pathlib import Path
from types import ModuleType

from . import (
    adaptive_5s,
    adaptive_60s,
    adaptive_disturbance,
    adaptive_matched,
    batch_seeds,
    bench_demo,
    benchmarks,
    collision,
    demo,
    generalized_fill,
    identification,
    max_payload,
    observer_noise,
    real_payload,
    realistic_seeds,
    realistic_terms,
    retime,
    retime_cases,
    simulation,
    weighted_bounds,
    weighted_certified,
)
from .common import DATA, REPO, Draw, Fragment, load

#: The fragments' modules, in the order they run; each lists its fragments in FRAGMENTS.
MODULES: tuple[ModuleType, ...] = (
    demo, retime, max_payload, retime_cases, identification, collision, simulation,
    generalized_fill, observer_noise, batch_seeds, realistic_seeds, realistic_terms,
    real_payload, bench_demo, weighted_bounds, weighted_certified, benchmarks, adaptive_60s,
    adaptive_5s, adaptive_matched, adaptive_disturbance)
#: name → fragment
SECTIONS: dict[str, Fragment] = {fragment.name: fragment for module in MODULES
                                 for fragment in module.FRAGMENTS}
#: The figures drawn from a section's kept data: name → (file, drawing function).
FIGURES: dict[str, tuple[Path, Draw]] = {
    name: (fragment.figure, fragment.draw) for name, fragment in SECTIONS.items()
    if fragment.figure is not None and fragment.draw is not None}
#: A fragment: its name, then everything up to the closing mark.
FRAGMENT = re.compile(r"(<!-- numbers: (\w+) -->\n)(.*?)(<!-- /numbers -->)", flags=re.S)


def draw_figures(names: list[str]) -> None:
    """Redraw the figures of ``names`` from their kept data."""
    for name in names:
        if name in FIGURES:
            path, draw = FIGURES[name]
            draw(load(name)["data"], path)
            print(f"drew {path.relative_to(REPO)}")


def pages() -> list[Path]:
    """The Markdown pages that may hold fragments."""
    return [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]


def rendered(name: str) -> str:
    """The fragment NAME as its kept data renders it."""
    kept = load(name)
    return SECTIONS[name].render(kept["data"], kept["machine"])


def fragments() -> list[tuple[Path, str, str]]:
    """Every fragment of every page: (page, name, current text)."""
    return [(page, found.group(2), found.group(3)) for page in pages()
            for found in FRAGMENT.finditer(page.read_text(encoding="utf-8"))]


def render_pages() -> list[Path]:
    """Rewrite every fragment from its data; the pages that changed."""
    changed = []

    def fill(found: re.Match[str]) -> str:
        if not (DATA / f"{found.group(2)}.json").is_file():
            print(f"no data for {found.group(2)} yet: python scripts/docs_numbers.py "
                  f"{found.group(2)}")
            return found.group(0)
        return found.group(1) + rendered(found.group(2)) + found.group(4)

    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = FRAGMENT.sub(fill, text)
        if new != text:
            page.write_text(new, encoding="utf-8")
            changed.append(page)
    return changed
