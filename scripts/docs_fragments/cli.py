"""The command line of ``python scripts/docs_numbers.py``: run, render, draw, add."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from .adaptive_60s import add_adaptive_60s
from .adaptive_matched import add_adaptive_matched
from .common import DATA, REPO, machine
from .registry import FIGURES, SECTIONS, draw_figures, fragments, render_pages

#: What the command does, in one line (its ``--help``).
DESCRIPTION = ("The numbers the README and docs quote from runs: run the commands, rewrite "
               "the fragments.")


def parser() -> argparse.ArgumentParser:
    """The options: NAMEs to run, or ``--render``, ``--list``, ``--figures``, ``--add-…``."""
    parser = argparse.ArgumentParser(description=DESCRIPTION)
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"one of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--render", action="store_true",
                        help="only rewrite the fragments from docs/numbers/*.json")
    parser.add_argument("--list", action="store_true", help="list the fragments and exit")
    parser.add_argument("--figures", action="store_true",
                        help=f"only redraw the figures ({', '.join(FIGURES)}) from the kept "
                             "data")
    parser.add_argument("--add-adaptive-60s", nargs=1, metavar="FOLDER", type=Path,
                        help="keep the rows of the 60 s suite run into FOLDER "
                             "(adaptive_60s.ADAPTIVE_COMMAND), then render")
    parser.add_argument("--add-adaptive-matched", metavar="FOLDER", type=Path,
                        help="keep the rows of the matched-speed suite run into FOLDER "
                             "(ADAPTIVE_MATCHED_COMMAND --out FOLDER), draw, then render")
    return parser


def run_sections(names: list[str]) -> None:
    """Run each named section, keep its data with the machine, redraw its figures."""
    DATA.mkdir(parents=True, exist_ok=True)
    for name in names:
        print(f"running {name} …", flush=True)
        data = SECTIONS[name].run()
        record = {"machine": machine(), "data": data}
        (DATA / f"{name}.json").write_text(json.dumps(record, indent=1,
                                                      ensure_ascii=False) + "\n",
                                           encoding="utf-8")
    draw_figures(names)


def main(argv: list[str] | None = None) -> int:
    """Run the named sections (all by default), keep their data, rewrite the pages."""
    options = parser()
    args = options.parse_args(argv)
    if args.add_adaptive_matched:
        add_adaptive_matched(args.add_adaptive_matched)
        draw_figures(["adaptive_matched"])
        args.render = True
    if args.add_adaptive_60s:
        add_adaptive_60s(args.add_adaptive_60s)
        args.render = True
    unknown = [name for name in args.names if name not in SECTIONS]
    if unknown:
        options.error(f"unknown {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    if args.list:
        for page, name, _ in fragments():
            print(f"{page.relative_to(REPO)}: {name}")
        return 0
    if args.figures:
        draw_figures(args.names or list(FIGURES))
        return 0
    if not args.render:
        run_sections(args.names or list(SECTIONS))
    for page in render_pages():
        print(f"rewrote {page.relative_to(REPO)}")
    return 0
