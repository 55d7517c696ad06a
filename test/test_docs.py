"""The documentation: the API reference builds without a warning, links resolve, examples run."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
DOCS = REPO / "docs"
#: Markdown pages whose links must resolve: the landing page and every docs page.
PAGES = [REPO / "README.md", *sorted(DOCS.glob("*.md"))]
LINK = re.compile(r"(?<!\!)\[[^\]]*\]\(([^)\s]+)\)")


def github_slug(heading: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    text = heading.strip().lower()
    text = "".join(c for c in text if c in " -_" or unicodedata.category(c)[0] in "LN")
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    in_code = False
    for line in page.read_text().splitlines():
        if line.startswith("```"):
            in_code = not in_code
        elif not in_code and line.startswith("#"):
            slug = github_slug(line.lstrip("#"))
            base, k = slug, 1
            while slug in found:
                slug, k = f"{base}-{k}", k + 1
            found.add(slug)
    return found


def links(page: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
    text = re.sub(r"`[^`\n]*`", "", text)
    return LINK.findall(text)


def test_the_slug_rule_matches_githubs():
    slug = github_slug(" Locked joints (e.g. gripper fingers)")
    assert slug == "locked-joints-eg-gripper-fingers"
    assert github_slug("ε in the demo and in the nodes") == "ε-in-the-demo-and-in-the-nodes"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_relative_link_and_anchor_resolves(page):
    problems = []
    for target in links(page):
        if re.match(r"[a-z]+://|mailto:", target):
            continue
        path, _, anchor = target.partition("#")
        file = (page.parent / path).resolve() if path else page
        if not file.exists():
            problems.append(f"{target}: {file} does not exist")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file):
            problems.append(f"{target}: no heading #{anchor} in {file.name}")
    assert not problems, "\n".join(problems)


def test_the_readme_is_a_landing_page():
    text = (REPO / "README.md").read_text()
    assert len(text.splitlines()) <= 260
    for needed in ("Kaufmann", "Reger", "2025", "## Code map", "docs/ros_interface.md",
                   "docs/cli.md", "docs/simulation.md", "docs/demo.md", "docs/concepts.md",
                   "example-robot-data"):
        assert needed in text, needed
    for command in ("demo", "bounds", "evaluate", "retime", "excite", "identify", "observe"):
        assert re.search(rf"robot-tv-dynamics {command}\b", text), command


def test_the_interface_sections_live_whole_in_one_docs_page():
    text = (DOCS / "ros_interface.md").read_text()
    for heading in ("## ROS 2 interface", "### Bad input", "### Parameters", "#### sim_node",
                    "### QoS", "### Performance"):
        assert re.search(rf"^{re.escape(heading)}", text, flags=re.M), heading


def test_the_simulation_example_in_the_docs_runs():
    text = (DOCS / "simulation.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "docs/simulation.md has no python example"
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    result = subprocess.run([sys.executable, "-c", blocks[0]], capture_output=True, text=True,
                            env=env, timeout=120, cwd=REPO)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "load body mass: true" in result.stdout


def test_the_python_example_in_the_readme_runs_as_pasted(tmp_path):
    text = (REPO / "README.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) == 1, "the README has one python example"
    result = subprocess.run([sys.executable, "-c", blocks[0]], capture_output=True, text=True,
                            timeout=120, cwd=tmp_path)  # an empty folder, nothing defined
    assert result.returncode == 0, result.stderr[-3000:]
    assert float(result.stdout.split()[-1]) < 1e-9  # the forward/inverse round trip


#: The mark before a fenced block that the generic docs test does not run as pasted.
MARK = re.compile(r"<!-- docs-test: (skip|own test): (.+?) -->\n$")
#: Fenced code blocks: language, body.
FENCE = re.compile(r"^```(\w*)\n(.*?)^```", flags=re.S | re.M)


def code_blocks() -> list[tuple[str, int, str, str, re.Match[str] | None]]:
    """Every bash/python block of the README and docs: page, line, language, body, mark."""
    found = []
    for page in PAGES:
        text = page.read_text()
        for block in FENCE.finditer(text):
            if block.group(1) not in ("bash", "python"):
                continue
            before = text[:block.start()]
            mark = MARK.search(before[before.rfind("\n", 0, len(before) - 1) + 1:])
            found.append((page.relative_to(REPO).as_posix(), before.count("\n") + 1,
                          block.group(1), block.group(2), mark))
    return found


BLOCKS = code_blocks()


def block_id(page: str, line: int, language: str, mark: re.Match[str] | None) -> str:
    """The test id of a block: where it is, and whether it runs here (``pytest -v`` lists them)."""
    status = "run" if mark is None else mark.group(1).replace(" ", "-")
    return f"{page}:{line}:{language}:{status}"


@pytest.mark.parametrize("page,line,language,body,mark", BLOCKS,
                         ids=[block_id(b[0], b[1], b[2], b[4]) for b in BLOCKS])
def test_every_docs_code_block_runs_as_pasted_or_says_why_not(page, line, language, body,
                                                               mark, tmp_path):
    if mark is not None:
        kind, reason = mark.groups()
        if kind == "own test":
            assert reason in globals() and reason.startswith("test_"), (
                f"{page}:{line} names {reason}, which is not a test of this file")
        print(f"{page}:{line} [{language}] not run here ({kind}: {reason})")
        return
    print(f"{page}:{line} [{language}] run as pasted in an empty folder")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    command = ([sys.executable, "-c", body] if language == "python"
               else ["bash", "-euo", "pipefail", "-c", body])
    result = subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, text=True,
                            timeout=300)
    assert result.returncode == 0, f"{page}:{line}\n{result.stderr[-3000:]}"


#: The first word of a shell or Python line: what an indented block must not start with,
#: since the block test above reads only fenced ``bash``/``python`` blocks.
COMMAND = re.compile(r"(robot-tv-dynamics|ros2|python3?|pip|bash|source|cd|export|cp|mkdir|"
                     r"import|from|\$) ")


def indented_code_blocks(text: str) -> list[tuple[int, str]]:
    """(line, first line) of each indented code block: 4 spaces after a blank line, outside
    fences, list items and their continuation lines."""
    found, fenced, previous = [], False, ""
    for number, line in enumerate(text.splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and line.startswith("    ") and line.strip() and not previous.strip():
            before = text.splitlines()[:number - 1]
            last = next((b for b in reversed(before) if b.strip()), "")
            if not re.match(r"\s*([-*+]|\d+\.)\s|  ", last):  # not a list's continuation
                found.append((number, line.strip()))
        previous = line
    return found


def test_no_indented_block_holds_a_command_the_block_test_would_not_run():
    found = [f"{page.relative_to(REPO)}:{number}: {first[:80]}" for page in PAGES
             for number, first in indented_code_blocks(page.read_text())
             if COMMAND.match(first)]
    assert not found, ("indented code blocks with commands: make each a ```bash or "
                       "```python block, with a docs-test mark if it cannot run:\n"
                       + "\n".join(found))


def test_the_indented_block_finder_sees_a_command_and_skips_list_continuations():
    text = "text\n\n    robot-tv-dynamics bounds\n\n* item\n\n    python x.py\n"
    assert indented_code_blocks(text) == [(3, "robot-tv-dynamics bounds")]
    assert COMMAND.match("robot-tv-dynamics bounds") and not COMMAND.match("σ_r = K_O h")


def readme_example_block() -> str:
    """The README's "One example per command" shell block."""
    text = (REPO / "README.md").read_text()
    section = text[text.index("## One example per command"):]
    return re.search(r"```bash\n(.*?)```", section, flags=re.S).group(1)


def readme_example_commands() -> list[str]:
    """The subcommands the README block runs, in order (``demo``, ``demo``, ``bounds``, …)."""
    return [line.split()[1] for line in readme_example_block().splitlines()
            if line.startswith("robot-tv-dynamics ")]


@pytest.mark.slow
@pytest.mark.realtime  # the demo's nodes run live three times
@pytest.mark.parametrize("ran", [readme_example_commands()],
                         ids=["+".join(readme_example_commands())])  # listed by pytest -v
def test_the_readme_one_example_per_command_block_runs_as_a_whole_from_an_empty_folder(
        ran, tmp_path):
    block = readme_example_block()
    print("README block runs:", ", ".join(ran))  # the list of what this test ran
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    result = subprocess.run(["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=1500)
    assert result.returncode == 0, (result.stdout[-2000:], result.stderr[-4000:])
    for output in ("fill/summary.json", "drain/report.png", "collision/run.mcap", "library.csv",
                   "efforts.png", "retimed.yaml", "traj.yaml", "arm.mcap",
                   "ident/identified.urdf", "grasp.mcap", "grasp.json", "held.json",
                   "set_load/franka_set_load.yaml", "adapt/summary.json"):
        assert (tmp_path / output).exists(), output
    assert {"demo", "bounds", "evaluate", "retime", "excite", "record", "identify",
            "estimate", "observe", "adapt"} <= set(ran)


def test_the_api_reference_builds_without_a_warning(tmp_path):
    result = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-q", "-b", "html",
         str(DOCS), str(tmp_path / "html")], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr[-5000:]
    assert (tmp_path / "html" / "api.html").is_file()
    html = (tmp_path / "html" / "api.html").read_text()
    for name in ("RobotModel", "ArmSimulator", "scenario_file", "package_config_dir"):
        assert name in html, name


#: What a user of the repository cannot open: the engineers' own design notes and issue
#: numbers of a tracker that is not public.
UNOPENABLE = re.compile(r"DESIGN\.md|\b[Ii]ssues? #?\d+|\(#\d+\)|\bbefore issue\b")
#: Every text a user reads: docs, README, CHANGELOG, code and its docstrings, scripts.
USER_TEXTS = [*PAGES, REPO / "CHANGELOG.md", *sorted((REPO / "robot_tv_dynamics").rglob("*.py")),
              *sorted((REPO / "benchmarks").glob("*.py")), *sorted((REPO / "launch").glob("*.py")),
              *sorted((REPO / "scripts").glob("*")), *sorted((REPO / "scripts").glob("*/*.py")),
              *sorted((REPO / "config").rglob("*.yaml")),
              REPO / "pyproject.toml", REPO / "setup.py", REPO / "package.xml"]


def test_no_text_refers_to_files_or_issues_a_user_cannot_open():
    found = []
    for path in USER_TEXTS:
        if not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if UNOPENABLE.search(line):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()[:100]}")
    assert not found, "\n".join(found)


#: A path of the repository named in a page: a file under one of its top-level folders
#: (not an installed path such as ``share/robot_tv_dynamics/config/…``, not a glob).
REPO_PATH = re.compile(r"(?<![\w/.*-])((?:robot_tv_dynamics|test|benchmarks|scripts|config|"
                       r"launch|docs|resource|\.ci)/[\w/.-]*[\w/])(?![\w*])")
#: Named paths that a clone does not hold: what a command writes, what a wheel installs.
NOT_IN_A_CLONE = {"docs/_build/html", "robot_tv_dynamics/config"}


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_repository_path_a_page_names_exists(page):
    missing = sorted({found.group(1) for found in REPO_PATH.finditer(page.read_text(
        encoding="utf-8")) if found.group(1).rstrip("/") not in NOT_IN_A_CLONE
        and not (REPO / found.group(1).rstrip("/")).exists()})
    assert not missing, missing
