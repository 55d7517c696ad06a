"""The numbers the README and docs quote from runs: run the commands, rewrite the fragments.

Usage (in the package's environment, with ``source scripts/ros_env.sh`` for the demo)::

    python scripts/docs_numbers.py [NAME ...]      # run NAME's commands, rewrite its fragments
    python scripts/docs_numbers.py --render        # rewrite the fragments from the kept data
    python scripts/docs_numbers.py --figures       # redraw the figures from the kept data
    python scripts/docs_numbers.py --list

Each number sits in a fragment of a Markdown page, between ``<!-- numbers: NAME -->`` and
``<!-- /numbers -->``, with the date and the machine it was measured on (cores, load
average, µs per ``pin.rnea`` on the Panda: the speed of the machine class). The data of
NAME is kept in ``docs/numbers/NAME.json``; the fragments are rendered from it, so that
the pages and the data never disagree (``test/test_docs_numbers.py`` checks that, and
re-runs the deterministic ones against the data).

NAME:

* ``demo``: ``robot-tv-dynamics demo`` (8 s, fill) on the Panda and on the UR5 over DDS,
  read from each run's ``summary.json`` (README and docs/demo.md). Deterministic in
  simulated time: the test re-runs the simulator's closed loop without ROS.
* ``retime``: the ``retime`` example of docs/retiming.md (its text output). Deterministic
  but for the runtime: the test re-runs it.
* ``max_payload``: the exact and MoveIt's static maximum payload of the ``evaluate``
  examples (docs/cli.md). Deterministic: the test re-runs them.
* ``retime_cases``: the measured cases, the playback check and the smoothing example of
  docs/retiming.md, on the curved paths of test/retiming/test_retime.py. Deterministic
  but for the runtimes: the test re-runs them.
* ``identification``: the accuracy table of docs/identification.md, what
  test/identification/test_identification_accuracy.py measures (seeded): that test
  compares its own run with the data.
* ``collision``: the momentum observers in three demos (fill_collision on both arms, fill
  on the Panda; docs/demo.md). Over DDS only: test/demo/ asserts what the text claims.
* ``simulation``: what the controller-in-the-loop example of docs/simulation.md prints.
  Deterministic (seeded noise): the test re-runs it.
* ``generalized_fill``: the classical vs the generalized measurement and the live
  estimates on the simulated fill of test/estimation/test_generalized.py
  (docs/estimation.md). Seeded: the test re-runs the measurement and one live method.
* ``observer_noise``: the momentum observer's noise floor σ_r per gain, empty and loaded
  (``observer.tuning.residual_noise_std``, docs/observer.md). Deterministic: the test
  recomputes it.
* ``realistic_seeds``: the 20-seed study of the live estimators on realistic recordings
  (``scripts/realistic_seeds.py``, docs/estimation.md); the test re-runs one seed.
* ``realistic_terms``: three of those seeds again with one model-error term left out at a
  time (which term a goal is missed by).
* ``real_payload``: ``benchmarks/bench_real_payload.py`` on the real Panda recording
  beside the repository (``../shared/data/panda_exciting_traj.npz``; docs/estimation.md):
  identify on its first half, the live estimators on its second, no load. Deterministic;
  test/estimation/test_real_recording.py asserts the goals where the recording is.
* ``batch_seeds``: the seed studies of ``estimate --batch`` (``scripts/
  batch_payload_seeds.py``, docs/estimation.md; ≈ 30 min of CPU). Seeded: the test re-runs
  one seed.
* ``bench_dynamics``, ``bench_observer``, ``bench_sim``, ``bench_estimator``: what
  ``benchmarks/bench_dynamics.py``, ``bench_observer.py``, ``bench_sim.py`` and
  ``bench_estimator.py --samples 2000`` print (docs/cli.md, docs/observer.md,
  docs/simulation.md, docs/estimation.md). Speed figures: dated and stamped, never
  checked by a test.
* ``bench_estimator_node``, ``bench_ready``: ``bench_estimator.py --node`` for each method
  (docs/estimation.md) and ``bench_ready.py --repeat 3``, with the package's discovery
  profile and with ``--dds-defaults`` (docs/cli.md). Speed figures.
* ``bench_bringup``: ``bench_bringup.py --cycles 20``, 20 bring-up start/stop cycles by
  group SIGINT (docs/ros_interface.md). Exit codes and stop times of a shared machine.
* ``bench_bounds``, ``bench_bounds_workers``: ``bench_bounds.py`` on the UR5, the Panda
  and the locked-finger Panda (≈ 10 min: certified searches read at 1 and 3 min) and
  ``bench_bounds.py --workers`` (1 vs 2 Dask workers; docs/concepts.md). Gaps reached in
  a wall-time budget on a shared machine: dated and stamped, never checked by a test.

* ``weighted_bounds``: the paper's, the scalar-weighted, the COM-block-weighted and the
  sampled true extremes of M(q, Θ) over the joint box, nominal Θ, UR5 and Panda (fingers
  free and locked; docs/concepts.md). Deterministic (seeded Sobol points and local
  refinement): the test re-runs it.

* ``weighted_certified``: ``bounds --certified --time-limit 30 --json`` on the same three
  arms (docs/concepts.md): certified brackets of the weighted and exact extremes. Budgeted
  by wall time on a shared machine, so dated and stamped, not re-run by a test.

* ``adaptive_60s``: the 60 s ``adapt --suite`` runs of docs/adaptive.md (hours of CPU;
  the kept data are the rows of their suite.csv, read by :func:`read_suites`). Not
  re-run by a test; test/control/ checks the claims they rest on.
* ``adaptive_5s``: the four 5 s ``adapt --suite`` runs of docs/adaptive.md (≈ 30 min of
  CPU; the kept data are the rows of their suite.csv). Not re-run by a test;
  test/test_docs_numbers.py checks the page's claims against the kept rows. The figure
  docs/adaptive_suite.png is drawn from the same rows (``--figures`` redraws it).
* ``adaptive_matched``: the 10 s ``adapt --suite`` of docs/adaptive.md at the matched gains
  (T_a = 1 s; ≈ 40 min of wall time on a loaded 2-core machine; the kept data are the rows
  of its suite.csv). ``--add-adaptive-matched FOLDER`` keeps the rows of a suite already
  run into FOLDER with that command. Not re-run by a test; test/test_docs_numbers.py
  checks the page's claims against the kept rows. docs/adaptive_matched.png is drawn
  from them.
* ``bench_demo``: ``benchmarks/bench_demo.py --runs 3`` on both arms (docs/demo.md). Speed
  figures of a shared machine: dated and stamped, never checked by a test.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import timeit
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "docs" / "numbers"
#: A fragment: its name, then everything up to the closing mark.
FRAGMENT = re.compile(r"(<!-- numbers: (\w+) -->\n)(.*?)(<!-- /numbers -->)", flags=re.S)
UR5 = "ur_description/urdf/ur5_robot.urdf"


# ------------------------------------------------------------------------ the machine
def machine() -> dict[str, Any]:
    """Date, cores, load average and the µs of one ``pin.rnea`` call on the Panda."""
    import numpy as np
    import pinocchio as pin

    from robot_tv_dynamics.paths import example_robot_urdf

    model = pin.buildModelFromUrdf(str(example_robot_urdf()))
    data = model.createData()
    rng = np.random.default_rng(0)
    q = pin.randomConfiguration(model)
    v, a = rng.standard_normal(model.nv), rng.standard_normal(model.nv)
    calls = 2000
    best = min(timeit.repeat(lambda: pin.rnea(model, data, q, v, a), number=calls, repeat=7))
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d"),
            "cores": os.cpu_count(), "load_average": round(os.getloadavg()[0], 1),
            "rnea_us": round(1e6 * best / calls, 2), "python": sys.version.split()[0],
            "pinocchio": pin.__version__}


def stamp(info: dict[str, Any], command: str) -> str:
    """The line that says where and when a fragment's numbers were measured."""
    return f"Generated by `{command}` on {machine_text(info)}"


def machine_text(info: dict[str, Any]) -> str:
    """When and on what: the date, cores, load, ``pin.rnea`` time and versions."""
    return (f"{info['date']}: {info['cores']} cores (load average {info['load_average']:g}), "
            f"{info['rnea_us']:g} µs per `pin.rnea` (Panda), Python {info['python']}, "
            f"pin {info['pinocchio']}.")


def example_urdf(name: str = "") -> str:
    """An example-robot-data URDF (the Panda by default)."""
    from robot_tv_dynamics.paths import example_robot_urdf

    return str(example_robot_urdf(name) if name else example_robot_urdf())


def people(value: float | None, digits: int = 2) -> str:
    """``value`` with ``digits`` significant digits, as the demo prints it."""
    from robot_tv_dynamics.demo.numbers import people as text

    return text(value, digits)


# ------------------------------------------------------------------------ demo
#: What the agreement test allows between the stated values and a fresh closed loop.
DEMO_TOLERANCES = {"time_s": 0.021, "relative": 0.02}
#: The demo's default run [simulated s].
DEMO_DURATION = 8.0


def run_demo() -> dict[str, Any]:
    """Both arms' 8 s fill demo over DDS; what the tables quote from summary.json."""
    arms = {}
    for arm, urdf in (("panda", example_urdf()), ("ur5", example_urdf(UR5))):
        out = Path(tempfile.mkdtemp(prefix=f"docs_numbers_{arm}_"))
        env = {**os.environ, "ROS_DOMAIN_ID": os.environ.get("ROS_DOMAIN_ID", "77")}
        start = time.monotonic()
        subprocess.run([sys.executable, "-m", "robot_tv_dynamics.demo", "--out", str(out),
                        "--duration", f"{DEMO_DURATION:g}", "--overwrite", "--no-progress",
                        *(["--urdf", urdf] if arm == "ur5" else [])],
                       env=env, check=True, capture_output=True, text=True, timeout=900)
        wall = time.monotonic() - start
        arms[arm] = demo_numbers(json.loads((out / "summary.json").read_text()), wall)
        shutil.rmtree(out, ignore_errors=True)
    return {"duration_s": DEMO_DURATION, "arms": arms, "tolerances": DEMO_TOLERANCES}


def demo_numbers(summary: dict[str, Any], wall: float | None = None) -> dict[str, Any]:
    """The quoted subset of one demo's summary.json."""
    classical = summary["estimators"]["classical"]
    projected = summary["estimators"]["projected"]
    load = summary["load"]
    first = classical["alarms"][0] if classical["alarms"] else None
    return {
        "duration_s": summary["duration_s"], "payload_body": summary["payload_body"],
        "link": load.get("link"), "link_source": load.get("link_source"),
        "tilt_file_deg": load.get("file_container_tilt_deg"),
        "classical_alarm_t": None if first is None else first["t"],
        "classical_alarm_phase": None if first is None else first.get("phase"),
        "classical_inf_mu": classical["inf_mu_payload"],
        "classical_min_lambda": classical["min_lambda_min_M_hat"],
        "classical_crossing_t": classical["first_nonpositive_lambda_min_M_hat_t"],
        "classical_lead_s": classical["lead_time_s"],
        "projected_alarms": len(projected["alarms"]),
        "projected_min_lambda": projected["min_lambda_min_M_hat"],
        "projected_alpha1": projected["alpha1"],
        "gamma": summary["gamma_inf_lambda_min_JtJ"], "gamma_method": summary["gamma_method"],
        "tracking_rms_rad": summary["tracking_rms_rad"],
        "real_time_factor": summary["real_time_factor"],
        "wall_s": None if wall is None else round(wall, 1)}


def _alarm(arm: dict[str, Any]) -> str:
    if arm["classical_alarm_t"] is None:
        return "none"
    phase = arm["classical_alarm_phase"] or ""
    return f"{arm['classical_alarm_t']:.2f} s" + (", during loading" if phase.startswith(
        "during") else f", {phase}" if phase else "")


def _load(arm: dict[str, Any]) -> str:
    source = {"scenario": "the file's link", "tool flange": "the tool flange"}.get(
        arm["link_source"], arm["link_source"])
    tilt = arm["tilt_file_deg"]
    turned = "" if tilt is None else f"; cup tilted {tilt:.1f}° at the start pose, turned upright"
    return f"`{arm['link']}` ({source}{turned})"


def render_demo(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The table of both arms, its stamp and what the agreement test allows."""
    panda, ur5 = data["arms"]["panda"], data["arms"]["ur5"]
    tol = data["tolerances"]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> str:
        return f"| {label} | {cell(panda)} | {cell(ur5)} |"

    def crossing(a: dict[str, Any]) -> str:
        t = a["classical_crossing_t"]
        return (f"{people(a['classical_inf_mu'])}, **{people(a['classical_min_lambda'])} "
                f"kg·m²**" + ("" if t is None else f" (≤ 0 from {t:.2f} s)"))

    def projected(a: dict[str, Any]) -> str:
        alarms = "none" if a["projected_alarms"] == 0 else f"{a['projected_alarms']} alarms"
        return (f"{alarms}, {people(a['projected_min_lambda'])} kg·m², "
                f"{people(a['projected_alpha1'])} kg·m²")

    lines = [
        "| 8 s, scenario fill (0.5 kg from t = 2 s) | Panda (default) | UR5 (`--urdf $UR5`, "
        "nothing else) |",
        "|---|---|---|",
        row("load on", _load),
        row("classical alarms (μ̂ < ε)", _alarm),
        row("classical: inf μ̂ of the load body, min λ_min(M(q, Θ̂))", crossing),
        row("lead time alarm → λ_min(M̂) ≤ 0",
            lambda a: "—" if a["classical_lead_s"] is None else f"{a['classical_lead_s']:.2f} s"),
        row("projected: alarms, min λ_min(M(q, Θ̂)), α₁", projected),
        row("γ in α₁ = min_l inf_t μ̂_l · γ", lambda a: f"{a['gamma']:.3f} ({a['gamma_method']}"
            ": the safe end of its bracket)"),
        row("tracking RMS (projected loop)", lambda a: f"{people(a['tracking_rms_rad'])} rad"),
        row("wall time of the run, real-time factor",
            lambda a: f"{a['wall_s']:.0f} s, {a['real_time_factor']:.2f}"),
        "",
        stamp(info, "python scripts/docs_numbers.py demo") + " Each column is one run's "
        "`summary.json`. The simulation is deterministic in simulated time (fixed 1 ms steps, "
        "seeded noise), so `test/test_docs_numbers.py` re-runs both arms' closed loop without "
        "ROS and requires these values within "
        f"{tol['time_s'] * 1e3:.0f} ms (times) and {100 * tol['relative']:g} % (the rest); "
        "only the wall time and the real-time factor depend on the machine and its load.",
    ]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ collision
COLLISION_RUNS = (("panda_fill_collision", "", "fill_collision"),
                  ("ur5_fill_collision", UR5, "fill_collision"), ("panda_fill", "", "fill"))


def run_collision() -> dict[str, Any]:
    """The momentum observers' numbers of three 8 s demos (summary.json → observers)."""
    runs = {}
    for name, urdf, scenario in COLLISION_RUNS:
        out = Path(tempfile.mkdtemp(prefix=f"docs_numbers_{name}_"))
        env = {**os.environ, "ROS_DOMAIN_ID": os.environ.get("ROS_DOMAIN_ID", "77")}
        subprocess.run([sys.executable, "-m", "robot_tv_dynamics.demo", "--out", str(out),
                        "--duration", f"{DEMO_DURATION:g}", "--scenario", scenario,
                        "--publish-rate", "50", "--overwrite", "--no-progress",
                        *(["--urdf", example_urdf(urdf)] if urdf else [])],
                       env=env, check=True, capture_output=True, text=True, timeout=900)
        summary = json.loads((out / "summary.json").read_text())
        runs[name] = {"observers": summary["observers"],
                      "collision_window_s": summary["collision_window_s"],
                      "loading_window_s": summary["loading_window_s"]}
        shutil.rmtree(out, ignore_errors=True)
    return {"runs": runs}


def _joint(name: str) -> str:
    digits = re.findall(r"\d+$", name)
    return f"joint {digits[0]}" if name.startswith("panda_joint") and digits else name


def _contacts(contacts: list[dict[str, Any]]) -> str:
    if not contacts:
        return "no contact"
    spans = [f"{_joint(c['joint'])} {c['t_start']:.2f}–"
             + ("end" if c["t_end"] is None else f"{c['t_end']:.2f} s") for c in contacts]
    return ", ".join(spans)


def render_collision(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The observers' table of the three runs, and its stamp."""
    runs = data["runs"]
    names = [name for name, _, _ in COLLISION_RUNS]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> str:
        return f"| {label} | " + " | ".join(cell(runs[name]) for name in names) + " |"

    def loading(kind: str) -> Callable[[dict[str, Any]], str]:
        def cell(run: dict[str, Any]) -> str:
            obs = run["observers"][kind]
            peak = obs["peak_during_loading"]
            false = [c for c in obs["contacts"] if c["phase"] != "collision"]
            head = ("—" if peak is None else
                    f"{people(peak['value'])} N·m ({_joint(peak['joint'])})")
            return f"{head}; {'false contacts: ' if false else ''}{_contacts(false)}"
        return cell

    def push(run: dict[str, Any]) -> str:
        peaks = [run["observers"][kind]["peak_during_collision"]
                 for kind in ("generalized", "classical")]
        if any(p is None for p in peaks):
            return "—"
        hits = sorted({_joint(c["joint"]) for c in run["observers"]["generalized"]["contacts"]
                       if c["phase"] == "collision"})
        return (f"{people(peaks[0]['value'], 3)} / {people(peaks[1]['value'], 3)} N·m "
                f"(generalized contacts: {', '.join(hits) or 'none'})")

    def delay(run: dict[str, Any]) -> str:
        values = [run["observers"][kind]["detection_delay_s"]
                  for kind in ("generalized", "classical")]
        if all(v is None for v in values):
            return "—"
        return " / ".join("—" if v is None else f"{1e3 * v:.0f} ms" for v in values)

    lines = [
        "| 8 s, `--publish-rate 50` | Panda, fill_collision | UR5, fill_collision | Panda, fill |",
        "|---|---|---|---|",
        row("generalized: peak ‖r‖∞ during loading; contacts outside the push",
            loading("generalized")),
        row("classical: peak ‖r‖∞ during loading; contacts outside the push",
            loading("classical")),
        row("push: peak ‖r‖∞ (generalized / classical)", push),
        row("detection delay after the push starts (generalized / classical)", delay),
        "",
        stamp(info, "python scripts/docs_numbers.py collision") + " Each column is one "
        "run's `summary.json`. The residuals come from dynamics_node over DDS, so no test "
        "re-runs them here; `test/demo/test_demo_collision.py` asserts what the text says of "
        "them (no generalized contact outside the push, classical false contacts during the "
        "fill, the delay, `observe` reproducing the node).",
    ]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ max_payload
#: The examples of docs/cli.md: (arm, URDF, trajectory, payload) in config/examples/.
MAX_PAYLOAD_CASES = (("UR5", UR5, "ur5_trajectory.yaml", "ur5_payload.yaml"),
                     ("Panda", "", "panda_trajectory.yaml", "panda_payload.yaml"))
#: What the agreement test allows (relative; the solve is exact, so only round-off).
MAX_PAYLOAD_TOLERANCE = 1e-6


def max_payload_outputs() -> dict[str, dict[str, Any]]:
    """``evaluate --json`` on each example: the exact and MoveIt's static maximum payload.

    The command runs in this process (``robot_tv_dynamics.cli.main``, its stdout caught):
    what the shell command prints, without two more interpreter start-ups.
    """
    import contextlib
    import io

    from robot_tv_dynamics.cli import main as cli
    from robot_tv_dynamics.paths import package_config_dir

    examples = package_config_dir() / "examples"
    outputs = {}
    for arm, urdf, trajectory, payload in MAX_PAYLOAD_CASES:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = cli(["evaluate", "--urdf", example_urdf(urdf), "--trajectory",
                        str(examples / trajectory), "--payload", str(examples / payload),
                        "--json"])
        if code not in (0, 1):
            raise RuntimeError(f"evaluate {trajectory}: exit {code}")
        report = json.loads(printed.getvalue())
        outputs[arm] = {key: report[key] for key in (
            "max_payload_mass", "max_payload_joint", "max_payload_t",
            "moveit_static_max_payload_mass", "moveit_static_max_payload_joint")}
    return outputs


def run_max_payload() -> dict[str, Any]:
    """The maximum payloads of the evaluate examples."""
    return {"cases": [[arm, trajectory, payload]
                      for arm, _, trajectory, payload in MAX_PAYLOAD_CASES],
            "outputs": max_payload_outputs(), "tolerance": MAX_PAYLOAD_TOLERANCE}


def render_max_payload(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One row per example: exact, static, by how much the static one overstates."""
    lines = ["| `evaluate` example (`config/examples/`) | exact maximum payload (saturating "
             "joint, time) | MoveIt's static estimate | static overstates by |",
             "|---|---|---|---|"]
    for arm, trajectory, payload in data["cases"]:
        out = data["outputs"][arm]
        exact, static = out["max_payload_mass"], out["moveit_static_max_payload_mass"]
        lines.append(f"| {arm}: `{trajectory}`, `{payload}` | {exact:.2f} kg "
                     f"(`{out['max_payload_joint']}` at {out['max_payload_t']:.2f} s) | "
                     f"{static:.2f} kg | {100 * (static / exact - 1):.1f} % |")
    lines += ["", stamp(info, "python scripts/docs_numbers.py max_payload") + " The payload "
              "shape (COM, inertia per kg) is the example's. `test/test_docs_numbers.py` "
              "re-runs `evaluate --json` on both and requires these masses within "
              f"{data['tolerance']:g} (relative), the same joints and times."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ retime
RETIME_COMMANDS = (
    ["retime", "--urdf", "ur5_robot.urdf", "--trajectory", "ur5_fast_trajectory.yaml",
     "--payload", "ur5_payload_6kg.yaml", "--out", "retimed.yaml"],
    ["evaluate", "--urdf", "ur5_robot.urdf", "--trajectory", "retimed.yaml", "--payload",
     "ur5_payload_6kg.yaml"],
)
#: What the agreement test allows: printed numbers (4 decimals) and the runtime (wall time).
RETIME_TOLERANCE = 2e-3


def retime_outputs() -> list[str]:
    """The stdout of the retiming example's two commands, run in a fresh folder."""
    from robot_tv_dynamics.paths import package_config_dir

    work = Path(tempfile.mkdtemp(prefix="docs_numbers_retime_"))
    for name in ("ur5_fast_trajectory.yaml", "ur5_payload_6kg.yaml"):
        shutil.copy(package_config_dir() / "examples" / name, work / name)
    shutil.copy(example_urdf(UR5), work / "ur5_robot.urdf")
    outputs = []
    for argv in RETIME_COMMANDS:
        result = subprocess.run([sys.executable, "-m", "robot_tv_dynamics.cli", *argv],
                                cwd=work, capture_output=True, text=True, timeout=600)
        if result.returncode not in (0, 1):
            raise RuntimeError(f"{' '.join(argv)}: exit {result.returncode}\n{result.stderr}")
        outputs.append(result.stdout.replace(str(work) + os.sep, ""))
    shutil.rmtree(work, ignore_errors=True)
    return outputs


def run_retime() -> dict[str, Any]:
    """The retiming example's commands and their outputs."""
    return {"commands": [" ".join(argv) for argv in RETIME_COMMANDS],
            "outputs": retime_outputs(), "tolerance": RETIME_TOLERANCE}


def render_retime(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The example as a terminal session, and its stamp."""
    retime_out, evaluate_out = data["outputs"]
    verdict = [line for line in evaluate_out.splitlines() if line.startswith("violations")]
    first, second = data["commands"]
    lines = ["```", f"$ robot-tv-dynamics {_wrap(first)}", retime_out.rstrip("\n"),
             f"$ robot-tv-dynamics {second}", "...", *verdict, "```", "",
             stamp(info, "python scripts/docs_numbers.py retime") + " "
             "`test/test_docs_numbers.py` re-runs the command and requires every printed "
             f"number within {data['tolerance']:g} of these, except the runtime (wall time)."]
    return "\n".join(lines) + "\n"


def _wrap(command: str) -> str:
    head, sep, tail = command.partition(" --payload")
    return f"{head} \\\n      --payload{tail}" if sep else command


# ------------------------------------------------------------------------ retime_cases
#: What the agreement test allows on durations [s] and ratios (absolute).
RETIME_CASES_TOLERANCE = {"duration_s": 2e-3, "ratio": 2e-3, "relative": 0.02}


def load_module(name: str, path: str, *folders: str) -> Any:
    """The Python file REPO/``path`` imported as module ``name`` (a test or a script).

    REPO/``folders`` go first on sys.path, for the file's own imports.
    """
    import importlib.util

    for folder in folders:
        sys.path.insert(0, str(REPO / folder))
    spec = importlib.util.spec_from_file_location(name, REPO / path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_support(name: str) -> Any:
    """``test/support/NAME``: a case the tests assert on and a fragment quotes.

    REPO/test goes first on sys.path, where the tests' ``support`` package is.
    """
    import importlib

    if str(REPO / "test") not in sys.path:
        sys.path.insert(0, str(REPO / "test"))
    return importlib.import_module(f"support.{name}")


def retime_test_paths() -> Any:
    """The curved rest-to-rest test paths and loads of the retiming tests (test/support)."""
    return test_support("retime_paths")


def _retime_row(result: Any) -> dict[str, Any]:
    import numpy as np

    binding = result.binding_constraint
    return {"before_s": result.duration_before, "after_s": result.duration_after,
            "uniform_s": None if result.uniform is None else result.uniform.duration,
            "peak_before": float(np.nanmax(result.peak_ratio_before)),
            "peak_after": float(np.nanmax(result.peak_ratio_after)),
            "peak_played": float(np.nanmax(result.peak_ratio_playback)),
            "velocity_after": float(np.nanmax(result.peak_velocity_ratio_after)),
            "binding": f"{binding.kind} {binding.joint}".strip(),
            "binding_fraction": binding.fraction,
            "solves": result.iterations, "runtime_s": round(result.runtime, 2)}


def retime_case_rows(labels: tuple[str, ...] | None = None) -> dict[str, dict[str, Any]]:
    """The retiming page's table: one ``retime`` (waypoint output) per case (all by default)."""
    from robot_tv_dynamics import RobotModel
    from robot_tv_dynamics.retiming import retime

    paths = retime_test_paths()
    ur5 = RobotModel.from_urdf(example_urdf(UR5))
    panda = RobotModel.from_urdf(example_urdf(), list(paths.FINGERS))
    ur5_path = (paths.UR5_JOINTS, paths.UR5_START, paths.UR5_GOAL, paths.UR5_BULGE)
    panda_path = (paths.PANDA_ARM, paths.PANDA_START, paths.PANDA_GOAL, paths.PANDA_BULGE)
    cases = {"UR5, 8 kg on tool0": (ur5, ur5_path, 1.0, paths.ur5_heavy),
             "Panda (fingers locked), 3 kg on link8": (panda, panda_path, 0.5,
                                                       paths.panda_heavy),
             "Panda, no payload": (panda, panda_path, 6.0, lambda: None),
             "Panda, fill 1.5 kg/s during the motion": (panda, panda_path, 0.6,
                                                        paths.fill_process)}
    rows = {}
    for label in labels or tuple(cases):
        model, path, duration, load = cases[label]
        rows[label] = _retime_row(retime(model, paths.curved_move(*path, duration, 41), load()))
    return rows


def retime_playback(outputs: tuple[str, ...] = ("waypoints", "rate_250"),
                    played: bool = True) -> dict[str, dict[str, Any]]:
    """The playback check: the UR5 with 9 kg, as written and as a quintic Hermite plays it.

    The written file is read back as a controller gets it, the quintic through (q, q̇, q̈)
    resampled at 20 kHz and measured by ``evaluate`` (``played=False``: not, the costly
    part); output at the waypoints and at 250 Hz.
    """
    import numpy as np

    from robot_tv_dynamics import RobotModel
    from robot_tv_dynamics.cli.retime import trajectory_to_dict
    from robot_tv_dynamics.evaluation import evaluate, trajectory_from_dict
    from robot_tv_dynamics.retiming import retime

    paths = retime_test_paths()
    ur5 = RobotModel.from_urdf(example_urdf(UR5))
    load = paths.ur5_nine_kg()
    move = paths.curved_move(paths.UR5_JOINTS, paths.UR5_START, paths.UR5_GOAL,
                             paths.UR5_BULGE, 1.0, 41)

    def ratios(trajectory: Any) -> tuple[float, float]:
        result = evaluate(ur5, trajectory, load, compute_max_payload=False)
        return (float(np.nanmax(result.effort_ratio)),
                float(np.max(np.abs(result.velocities) / ur5.joint_limits.velocity)))

    def acceleration_excess(out: Any) -> float:
        t, qd, qdd = out.time_from_start, out.velocities, out.accelerations
        slope = np.diff(qd, axis=0) / np.diff(t)[:, None]
        low, high = np.minimum(slope[:-1], slope[1:]), np.maximum(slope[:-1], slope[1:])
        excess = np.maximum(0.0, np.maximum(low - qdd[1:-1], qdd[1:-1] - high))
        return float(np.max(excess) / np.max(np.abs(qdd)))

    playback = {}
    for key in outputs:
        rate = {"waypoints": None, "rate_250": 250.0}[key]
        result = retime(ur5, move, load, sample_rate=rate, compare_uniform=False)
        out = trajectory_from_dict(trajectory_to_dict(result.trajectory))
        quintic, quintic_velocity = (ratios(paths.hermite_resample(out, 20000.0)) if played
                                     else (None, None))
        factors = np.asarray(result.effort_factor)
        tight = int(np.nanargmin(factors))
        playback[key] = {"points": out.n_points, "written": ratios(out)[0],
                         "played": quintic, "played_velocity": quintic_velocity,
                         "acceleration_excess": acceleration_excess(out),
                         "effort_factor": float(factors[tight]),
                         "effort_factor_joint": ur5.joint_names[tight],
                         "after_s": result.duration_after}
    return playback


def retime_smoothing() -> dict[str, dict[str, Any]]:
    """The Panda with 3 kg, output at 1 kHz, without and with a 30 ms moving average."""
    import numpy as np

    from robot_tv_dynamics import RobotModel
    from robot_tv_dynamics.retiming import retime

    paths = retime_test_paths()
    panda = RobotModel.from_urdf(example_urdf(), list(paths.FINGERS))
    move = paths.curved_move(paths.PANDA_ARM, paths.PANDA_START, paths.PANDA_GOAL,
                             paths.PANDA_BULGE, 0.5, 41)
    smoothing = {}
    for key, window in (("raw", 0.0), ("smoothed", 0.03)):
        result = retime(panda, move, paths.panda_heavy(), sample_rate=1000.0,
                        compare_uniform=False, verify_playback=False, smoothing=window)
        out = result.trajectory
        jerk = np.max(np.abs(np.diff(out.accelerations, axis=0))
                      / np.diff(out.time_from_start)[:, None])
        smoothing[key] = {"window_s": window, "jerk": float(jerk),
                          "after_s": result.duration_after}
    return smoothing


def run_retime_cases() -> dict[str, Any]:
    """The retiming page's measured cases, its playback check and its smoothing example."""
    return {"rows": retime_case_rows(), "playback": retime_playback(),
            "smoothing": retime_smoothing(), "tolerance": RETIME_CASES_TOLERANCE}


def render_retime_cases(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The cases' table, the playback and smoothing lines, and the stamp."""
    tol = data["tolerance"]
    lines = ["| case | before | peak \\|τ\\|/τ_max before | after | uniform slowdown | "
             "peak \\|τ\\|/τ_max after (played); \\|q̇\\|/q̇_max | binding (share of the "
             "motion) | solves | runtime |", "|---|---|---|---|---|---|---|---|---|"]
    for label, row in data["rows"].items():
        uniform = "—" if row["uniform_s"] is None else f"{row['uniform_s']:.3f} s"
        kind, _, joint = row["binding"].partition(" ")
        lines.append(
            f"| {label} | {row['before_s']:.3f} s | {row['peak_before']:.3f} | "
            f"{row['after_s']:.3f} s | {uniform} | {row['peak_after']:.3f} "
            f"({row['peak_played']:.3f}); {row['velocity_after']:.3f} | {kind} `{joint}` "
            f"({100 * row['binding_fraction']:.0f} %) | {row['solves']} | "
            f"{row['runtime_s']:.2f} s |")
    way, dense = data["playback"]["waypoints"], data["playback"]["rate_250"]
    raw, smooth = data["smoothing"]["raw"], data["smoothing"]["smoothed"]
    lines += [
        "",
        f"Playback, the UR5 with 9 kg on `tool0` along the same path, output at the "
        f"waypoints ({way['points']} points with the switches): every written point ≤ "
        f"{way['written']:.4f} of the effort limit, the quintic between them (resampled at "
        f"20 kHz) ≤ {way['played']:.4f} and ≤ {way['played_velocity']:.4f} of the velocity "
        f"limits; the written accelerations lie between the backward and forward velocity "
        f"differences up to {way['acceleration_excess']:.1e} of max \\|q̈\\| "
        f"({dense['acceleration_excess']:.1e} with `--rate 250`). The price of the playback "
        f"check: `effort_factor` {way['effort_factor']:.3f} on `{way['effort_factor_joint']}`.",
        "",
        f"Smoothing, the Panda with 3 kg, output at 1 kHz: max \\|Δq̈/Δt\\| "
        f"{raw['jerk']:.0f} rad/s³ without, {smooth['jerk']:.0f} rad/s³ with w = "
        f"{1e3 * smooth['window_s']:.0f} ms; duration {raw['after_s']:.3f} s → "
        f"{smooth['after_s']:.3f} s.",
        "",
        stamp(info, "python scripts/docs_numbers.py retime_cases") + " The paths and loads "
        "are those of `test/retiming/test_retime.py` (41 waypoints, quintic time law). "
        "`test/test_docs_numbers.py` re-runs the table's cases, the smoothing example and "
        "the playback case without its 20 kHz resampling (the costly part, whose bound "
        "`test/retiming/test_retime.py` asserts), and requires the durations within "
        f"{tol['duration_s'] * 1e3:g} ms, the ratios within {tol['ratio']:g}, the jerks "
        f"within {100 * tol['relative']:g} %, the same binding constraints, solves and "
        "point counts; the runtimes (wall time of one `retime` with its verification and "
        "the uniform comparison) depend on the machine and its load and are not checked.",
    ]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ identification
#: What the agreement test allows: held-out ratios (absolute), the rest relative, and
#: friction errors also absolute [N·m·s/rad, N·m] (they are small differences).
IDENTIFICATION_TOLERANCE = {"ratio": 5e-3, "relative": 0.05, "friction": 2e-3}


def run_identification() -> dict[str, Any]:
    """``measure`` of the identification-accuracy case (test/support) on both arms."""
    module = test_support("identification_accuracy")
    from support.particle_lagrangian import find_example_robot_urdf

    arms = {arm: module.measure(module.make_case(arm, find_example_robot_urdf(arm)))
            for arm in ("panda", "ur5")}
    return {"arms": arms, "tolerance": IDENTIFICATION_TOLERANCE}


def render_identification(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The accuracy table of both arms, and its stamp."""
    panda, ur5 = data["arms"]["panda"], data["arms"]["ur5"]
    tol = data["tolerance"]

    def row(label: str, cell: Callable[[dict[str, Any]], str]) -> str:
        return f"| {label} | {cell(panda)} | {cell(ur5)} |"

    def percent(value: float) -> str:
        return f"{100 * value:.2g} %"

    def margins(arm: dict[str, Any]) -> str:
        low = sorted(arm["margins"])[:2]
        active = all(value < 1.01 * arm["epsilon"] for value in low)
        return ", ".join(f"{value:.5g}" for value in low) + (" (active)" if active else "")

    lines = [
        "| | Panda (fingers locked) | UR5 |", "|---|---|---|",
        row("held-out RMS / noise RMS, per joint", lambda a: f"{min(a['held_out_ratio']):.3f}"
            f" … {max(a['held_out_ratio']):.3f}"),
        row("relative torque error of Θ̂ vs Θ_true on held-out states",
            lambda a: percent(a["torque_error_held_out"])),
        row("… at 200 random states of the joint box (URDF prior in brackets)",
            lambda a: f"{percent(a['torque_error_random'])} "
                      f"({percent(a['prior_torque_error_random'])})"),
        row("relative error of Θ̂'s projection on the identifiable row space (SVD of the "
            "eq. (44) regressor; its rank; URDF prior in brackets)",
            lambda a: f"{percent(a['projection_error'])}; rank {a['rank']} "
                      f"({percent(a['prior_projection_error'])})"),
        row("max friction error viscous / Coulomb / offset [N·m·s/rad, N·m]",
            lambda a: " / ".join(f"{a['friction_error'][k]:.3f}"
                                 for k in ("viscous", "coulomb", "offset"))),
        row(f"λ_min(f(Φ_l)) identified, smallest two (ε = {panda['epsilon']:g})", margins),
        "",
        stamp(info, "python scripts/docs_numbers.py identification") + " Seeded "
        "simulation, so `test/identification/test_identification_accuracy.py` (the same "
        "run) requires these values: the held-out ratios within "
        f"{tol['ratio']:g}, the rank exactly, the rest within {100 * tol['relative']:g} % "
        f"(friction errors also within {tol['friction']:g} absolute).",
    ]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ simulation
#: What the agreement test allows on the example's printed numbers (relative).
SIMULATION_TOLERANCE = 1e-3


def simulation_example() -> str:
    """The first python block of docs/simulation.md (the controller-in-the-loop example)."""
    text = (REPO / "docs" / "simulation.md").read_text(encoding="utf-8")
    found = re.search(r"```python\n(.*?)```", text, flags=re.S)
    if found is None:
        raise RuntimeError("docs/simulation.md has no python block")
    return found.group(1)


def simulation_output() -> tuple[str, float]:
    """(stdout, wall time [s]) of the example, run in an empty folder."""
    start = time.monotonic()
    result = subprocess.run([sys.executable, "-c", simulation_example()], capture_output=True,
                            text=True, check=True, timeout=600, cwd=tempfile.mkdtemp())
    return result.stdout, time.monotonic() - start


def run_simulation() -> dict[str, Any]:
    """The example's printed line and its wall time."""
    output, wall = simulation_output()
    return {"output": output, "wall_s": round(wall, 1), "tolerance": SIMULATION_TOLERANCE}


def render_simulation(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The printed line as an indented block, and its stamp."""
    lines = [f"Printed ({data['wall_s']:g} s of wall time, Python start-up included, for 4 s "
             "of simulated time):", "",
             *(f"    {line}" for line in data["output"].rstrip("\n").splitlines()), "",
             stamp(info, "python scripts/docs_numbers.py simulation") + " "
             "`test/test_docs_numbers.py` re-runs the block and requires every printed "
             f"number within {data['tolerance']:g} (relative) of these; the wall time "
             "depends on the machine."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ generalized_fill
#: What the agreement test allows on the mass errors [kg] (absolute): seeded, so only
#: round-off and solver tolerances move them.
GENERALIZED_FILL_TOLERANCE = 2e-4
#: The live estimators the page quotes; the agreement test re-runs the first.
GENERALIZED_FILL_METHODS = ("geometric", "projected")


def generalized_fill_module() -> Any:
    """``test/support/generalized_fill.py``: the simulated fill and what it measures."""
    return test_support("generalized_fill")


def generalized_fill_numbers(methods: tuple[str, ...] = GENERALIZED_FILL_METHODS
                             ) -> dict[str, Any]:
    """Mean and max |mass error| during the fill: the measurement alone, each live method."""
    import numpy as np

    from robot_tv_dynamics import RobotModel

    module = generalized_fill_module()
    panda = RobotModel.from_urdf(example_urdf())

    def stats(errors: Any) -> dict[str, float]:
        return {"mean": float(np.mean(errors)), "max": float(np.max(errors))}

    measured = {kind: stats(e) for kind, e in module.measurement_errors(panda).items()}
    live = {}
    for method in methods:
        errors, final = module.live_errors(panda, method)
        live[method] = {kind: {**stats(e), "final": final[kind]} for kind, e in errors.items()}
    return {"measurement": measured, "live": live}


def run_generalized_fill() -> dict[str, Any]:
    """The fill of test/estimation/test_generalized.py, both rows, every live method."""
    return {**generalized_fill_numbers(), "tolerance": GENERALIZED_FILL_TOLERANCE}


def render_generalized_fill(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One row per estimate: the mass error with the classical and with the generalized rows."""
    def cell(record: dict[str, float]) -> str:
        return f"{record['mean']:.4f} kg ({record['max']:.4f} kg)"

    lines = ["| mass error during loading: mean (max) | classical rows | generalized rows |",
             "|---|---|---|",
             "| the measurement alone (0.1 s least-squares windows, true q̈) | "
             + " | ".join(cell(data["measurement"][k]) for k in ("classical", "generalized"))
             + " |"]
    for method, record in data["live"].items():
        lines.append(f"| live {method} estimate (memory 0.5 s; final mass) | " + " | ".join(
            f"{cell(record[k])}; {record[k]['final']:.3f} kg"
            for k in ("classical", "generalized")) + " |")
    first = next(iter(data["live"]))
    lines += ["", stamp(info, "python scripts/docs_numbers.py generalized_fill") + " Seeded "
              "noise, so `test/test_docs_numbers.py` re-runs the measurement and the live "
              f"{first} estimate and requires these errors within "
              f"{data['tolerance']:g} kg; `test/estimation/test_generalized.py` asserts "
              "the generalized measurement's max below 0.01 kg, the classical one's mean "
              "above 5× the generalized one's, and both live estimates within 0.05 kg of "
              "the filled load at the end."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ observer_noise
#: The configuration and noise of docs/observer.md's noise-floor table (Panda, fingers
#: locked): q [rad], h [s], σ_q̇ [rad/s], σ_τ [N·m], the gains K_O [1/s], the joints shown.
OBSERVER_NOISE_CASE = {"q": [0.0, -0.3, 0.0, -2.0, 0.0, 1.8, 0.8], "dt": 1e-3,
                       "velocity_noise_std": 1e-3, "torque_noise_std": 0.02,
                       "gains": [10.0, 50.0, 200.0], "joints": 4,
                       "load": {"link": "panda_hand", "mass": 2.0, "com": [0.0, 0.0, 0.1]}}
#: What the agreement test allows on σ_r [N·m] (absolute; the table prints 3 decimals).
OBSERVER_NOISE_TOLERANCE = 5e-4


def observer_noise_table(case: dict[str, Any] = OBSERVER_NOISE_CASE) -> dict[str, Any]:
    """σ_r per gain and joint, empty and with the load (``observer.tuning.residual_noise_std``)."""
    import numpy as np

    from robot_tv_dynamics import RobotModel
    from robot_tv_dynamics.inertia import phi_from_mass_com_inertia
    from robot_tv_dynamics.observer.tuning import residual_noise_std

    model = RobotModel.from_urdf(example_urdf(), ["panda_finger_joint1", "panda_finger_joint2"])
    q = np.array(case["q"])
    load = case["load"]
    extra = phi_from_mass_com_inertia(load["mass"], np.array(load["com"]), np.zeros((3, 3)))
    thetas = {"empty": model.theta_nominal,
              "loaded": model.theta_with_link_inertia(
                  model.theta_nominal, load["link"], model.urdf_link_phi(load["link"]) + extra)}
    sigma = {}
    for name, theta in thetas.items():
        mass = model.mass_matrix(q, theta)
        sigma[name] = [residual_noise_std(mass, gain, case["dt"], case["velocity_noise_std"],
                                          case["torque_noise_std"])[:case["joints"]].tolist()
                       for gain in case["gains"]]
    return sigma


def run_observer_noise() -> dict[str, Any]:
    """The noise-floor table of docs/observer.md."""
    return {"case": OBSERVER_NOISE_CASE, "sigma": observer_noise_table(),
            "tolerance": OBSERVER_NOISE_TOLERANCE}


def render_observer_noise(data: dict[str, Any], info: dict[str, Any]) -> str:
    """σ_r of joints 1–n per gain, empty and loaded, and the stamp."""
    case, sigma = data["case"], data["sigma"]
    load, n = case["load"], case["joints"]
    com = ", ".join(f"{c:g}" for c in load["com"])
    lines = [f"| K_O [1/s] | σ_r joints 1–{n}, empty [N·m] | σ_r joints 1–{n}, "
             f"{load['mass']:g} kg on the hand [N·m] |", "|---|---|---|"]
    for k, gain in enumerate(case["gains"]):
        lines.append(f"| {gain:g} | " + " | ".join(
            " ".join(f"{v:.3f}" for v in sigma[name][k]) for name in ("empty", "loaded"))
            + " |")
    lines += ["", f"The load: a {load['mass']:g} kg point mass at ({com}) m in "
              f"`{load['link']}`. " + stamp(info, "python scripts/docs_numbers.py "
                                                  "observer_noise")
              + " `test/test_docs_numbers.py` recomputes the table and requires every "
              f"σ_r within {data['tolerance']:g} N·m, the velocity part growing with K_O "
              "and the loaded arm's floor above the empty one's; "
              "`test/observer/test_observer_simulated.py` checks the formula against a "
              "Monte Carlo run of the observer."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ batch_seeds
#: The seed studies of docs/estimation.md's offline fit: (label, seeds, identify [s],
#: loaded [s]), each seed one ``scripts/batch_payload_seeds.py`` row.
BATCH_STUDIES = (("**40 s + 40 s (the test's length)**", (1, 20), 40.0, 40.0),
                 ("40 s + 40 s (the test's seeds)", (101, 103), 40.0, 40.0),
                 ("8 s + 16 s (shorter)", (1, 40), 8.0, 16.0))
#: What the agreement test allows on one re-run seed: mass [kg], COM [m] (absolute).
BATCH_TOLERANCE = {"mass": 2e-3, "com": 5e-4, "half_width": 5e-4}
#: The seed the agreement test re-runs (of the first study).
BATCH_CHECK_SEED = 1


def batch_seeds_module() -> Any:
    """``scripts/batch_payload_seeds.py`` (its ``run_seed`` and the recording's constants)."""
    return load_module("batch_payload_seeds", "scripts/batch_payload_seeds.py")


def batch_seed_row(seed: int, identify_s: float, loaded_s: float) -> dict[str, Any]:
    """One seed's fit: mass, COM error, 95 % half-widths, which intervals hold the truth."""
    return dict(batch_seeds_module().run_seed(seed, identify_s, loaded_s, True))


def run_batch_seeds() -> dict[str, Any]:
    """Every seed of every study (≈ 15–40 s of CPU per 40 s + 40 s seed)."""
    module = batch_seeds_module()
    studies = []
    for label, (first, last), identify_s, loaded_s in BATCH_STUDIES:
        rows = []
        for seed in range(first, last + 1):
            print(f"  {label}: seed {seed}", flush=True)
            rows.append(dict(module.run_seed(seed, identify_s, loaded_s, True)))
        studies.append({"label": label, "seeds": [first, last], "identify_s": identify_s,
                        "loaded_s": loaded_s, "rows": rows})
    return {"studies": studies, "blocks": 20, "tolerance": BATCH_TOLERANCE,
            "check_seed": BATCH_CHECK_SEED}


def batch_summary(rows: list[dict[str, Any]], blocks: int) -> dict[str, Any]:
    """A study's summary: errors [mm], σ (the 95 % half-width over its t quantile), z-scores."""
    import numpy as np
    import scipy.stats

    quantile = float(scipy.stats.t.ppf(0.975, blocks - 1))
    error = 1e3 * np.array([r["com_error"] for r in rows])
    sigma = 1e3 * np.array([r["half_width"] for r in rows]) / quantile
    mass = np.array([r["mass"] for r in rows])
    mass_sigma = np.array([r["mass_half_width"] for r in rows]) / quantile
    inside = np.array([r["inside"] for r in rows], dtype=bool)
    norms = np.linalg.norm(error, axis=1)
    z = np.column_stack([error / sigma, (mass - 1.0) / mass_sigma])
    return {"n": len(rows), "max_mass_error": float(np.abs(mass - 1.0).max()),
            "max_com_error": float(norms.max()),
            "above_1cm": [r["seed"] for r, e in zip(rows, norms, strict=True) if e > 10.0],
            "rms": np.sqrt((error ** 2).mean(axis=0)).tolist(),
            "mean_sigma": sigma.mean(axis=0).tolist(), "inside": int(inside.sum()),
            "inside_mass": int(inside[:, 0].sum()), "inside_com": int(inside[:, 1:].sum()),
            "all_four": int(inside.all(axis=1).sum()),
            "misses": [{"seed": r["seed"], "z": float(zk[np.argmax(np.abs(zk[:3]))])}
                       for r, ok, zk in zip(rows, inside.all(axis=1), z, strict=True)
                       if not ok],
            "z_std": z.std(axis=0, ddof=1).tolist(), "quantile": quantile}


def render_batch_seeds(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The seed studies' table, the first study's seeds one by one, the z-scores, the stamp."""
    def mm(values: list[float]) -> str:
        return ", ".join(f"{v:.1f}".replace("-", "−") for v in values)

    lines = ["| recording | seeds | max \\|m − 1\\| | max COM error | seeds > 1 cm | RMS COM "
             "error [mm] | mean σ_c [mm] | intervals containing the truth | all four on |",
             "|---|---|---|---|---|---|---|---|---|"]
    summaries = []
    for study in data["studies"]:
        s = batch_summary(study["rows"], data["blocks"])
        summaries.append(s)
        first, last = study["seeds"]
        above = f"{len(s['above_1cm'])}" + (
            f" (seeds {', '.join(map(str, s['above_1cm']))})" if s["above_1cm"] else "")
        misses = "; ".join(f"seed {m['seed']}: z-score " + f"{m['z']:+.2f}".replace("-", "−")
                           for m in s["misses"])
        lines.append(
            f"| {study['label']} | {first}–{last} | {100 * s['max_mass_error']:.1f} % | "
            f"{s['max_com_error']:.1f} mm | {above} | {mm(s['rms'])} | {mm(s['mean_sigma'])} "
            f"| {s['inside']}/{4 * s['n']} = {100 * s['inside'] / (4 * s['n']):.1f} % (mass "
            f"{s['inside_mass']}/{s['n']}, COM {s['inside_com']}/{3 * s['n']}) | "
            f"{s['all_four']}/{s['n']} seeds" + (f" ({misses})" if misses else "") + " |")
    main = data["studies"][0]
    seeds = [f"{r['seed']} ({mm([1e3 * e for e in r['com_error']])})" for r in main["rows"]]
    first, last = main["seeds"]
    lines += ["", f"Per seed, {main['identify_s']:g} s + {main['loaded_s']:g} s, seeds "
              f"{first}–{last} (COM error [mm]): " + "; ".join(seeds) + ".", ""]
    z = "; ".join(f"{study['identify_s']:g} s + {study['loaded_s']:g} s, seeds "
                  f"{study['seeds'][0]}–{study['seeds'][1]}: "
                  f"{', '.join(f'{v:.2f}' for v in s['z_std'][:3])} "
                  f"(mass {s['z_std'][3]:.2f})"
                  for study, s in zip(data["studies"], summaries, strict=True) if s["n"] >= 10)
    lines += [f"Standard deviations of the errors' z-scores against the intervals' σ (COM x, "
              f"y, z): {z}. σ is the 95 % half-width over the t quantile "
              f"{summaries[0]['quantile']:.3f} ({data['blocks'] - 1} degrees of freedom).", "",
              stamp(info, "python scripts/docs_numbers.py batch_seeds") + " Each row is "
              "one `scripts/batch_payload_seeds.py` seed (its recording, `identify`, "
              "`estimate --batch` with the unloaded part as `--reference`). Seeded, so "
              f"`test/test_docs_numbers.py` re-runs seed {data['check_seed']} of the first "
              f"study and requires its mass within {data['tolerance']['mass']:g} kg and its "
              f"COM error and half-widths within {1e3 * data['tolerance']['com']:g} mm; "
              "`test/estimation/test_batch_estimate.py` asserts the goals on seeds "
              "101–103."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ bench_demo
def run_bench_demo() -> dict[str, Any]:
    """``benchmarks/bench_demo.py --runs 3`` on the Panda and the UR5: its printed lines."""
    outputs = {}
    for arm, extra in (("panda", []), ("ur5", ["--urdf", example_urdf(UR5)])):
        result = subprocess.run(
            [sys.executable, str(REPO / "benchmarks" / "bench_demo.py"), "--runs", "3",
             *extra], capture_output=True, text=True, check=True, timeout=3600)
        outputs[arm] = [line for line in result.stdout.splitlines()
                        if not line.startswith("load average after")]
    return {"outputs": outputs}


def render_bench_demo(data: dict[str, Any], info: dict[str, Any]) -> str:
    """bench_demo's printed lines, and the stamp."""
    lines = ["```", "$ python benchmarks/bench_demo.py --runs 3", *data["outputs"]["panda"],
             "$ python benchmarks/bench_demo.py --runs 3 --urdf $UR5",
             *data["outputs"]["ur5"], "```", "",
             stamp(info, "python scripts/docs_numbers.py bench_demo") + " Speed figures of "
             "a machine shared with other jobs: dated and stamped here, not checked by any "
             "test (a test cannot assert a speed)."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ benchmarks
#: Speed benchmarks quoted whole: NAME → (script in benchmarks/, arguments), or a list of
#: such pairs run one after the other (their outputs quoted in turn).
BENCHMARKS: dict[str, Any] = {
    "bench_dynamics": ("bench_dynamics.py", ()),
    "bench_observer": ("bench_observer.py", ()),
    "bench_sim": ("bench_sim.py", ()),
    "bench_estimator": ("bench_estimator.py", ("--samples", "2000")),
    "bench_estimator_node": [("bench_estimator.py", ("--node", "--method", method))
                             for method in ("geometric", "classical", "projected")],
    "bench_ready": [("bench_ready.py", ("--repeat", "3")),
                    ("bench_ready.py", ("--repeat", "3", "--dds-defaults"))],
    "bench_bringup": ("bench_bringup.py", ("--cycles", "20")),
    "bench_bounds": ("bench_bounds.py", ("--checkpoints", "60", "180", "--robots", "ur5",
                                         "panda", "panda-locked")),
    "bench_bounds_workers": ("bench_bounds.py", ("--workers", "--robots", "panda-locked",
                                                 "panda")),
}


def run_benchmark(name: str) -> dict[str, Any]:
    """What ``benchmarks/<script>`` prints, and the load average when it started."""
    spec = BENCHMARKS[name]
    before = round(os.getloadavg()[0], 1)
    runs = []
    for script, argv in (spec if isinstance(spec, list) else [spec]):
        result = subprocess.run([sys.executable, str(REPO / "benchmarks" / script), *argv],
                                capture_output=True, text=True, check=True, timeout=7200)
        runs.append({"command": " ".join(["python", f"benchmarks/{script}", *argv]),
                     "output": result.stdout.rstrip("\n").splitlines()})
    if not isinstance(spec, list):
        return {**runs[0], "load_average_before": before}
    return {"runs": runs, "load_average_before": before}


def render_benchmark(name: str) -> Callable[[dict[str, Any], dict[str, Any]], str]:
    """The benchmark's printed lines and the stamp: a speed, never checked by a test."""
    def render(data: dict[str, Any], info: dict[str, Any]) -> str:
        runs = data.get("runs", [data])
        session = [line for run in runs for line in (f"$ {run['command']}", *run["output"])]
        commands = "`, `".join(run["command"] for run in runs)
        lines = ["```", *session, "```", "",
                 stamp(info, f"python scripts/docs_numbers.py {name}") + " Load average "
                 f"{data['load_average_before']:g} when the run started, the one above "
                 "when it ended. Speed figures of a machine shared with other jobs: dated "
                 "and stamped here, not checked by any test (a test cannot assert a speed); "
                 f"`{commands}` prints them for yours."]
        return "\n".join(lines) + "\n"
    return render

# ------------------------------------------------------------------------ adaptive_60s
#: The 60 s suites of docs/adaptive.md, in the order they were run (each a suite.csv).
ADAPTIVE_COMMON = ["adapt", "--suite", "--arms", "ur5,panda", "--excitation",
                   "persistent,poor", "--duration", "60", "--workers", "2", "--plants",
                   "generalized"]
ADAPTIVE_COMMANDS = (
    [*ADAPTIVE_COMMON, "--scenarios", "constant,wrong_estimate", "--controllers",
     "natural,slotine-li"],
    [*ADAPTIVE_COMMON, "--scenarios", "constant", "--controllers", "projected"],
    [*ADAPTIVE_COMMON, "--scenarios", "release,fill,drain,grasp,timeline", "--controllers",
     "natural,slotine-li"],
    # the last suite stopped at a gradient-law run whose Θ̂ blew up (fixed since): its
    # four remaining runs
    [*ADAPTIVE_COMMON, "--scenarios", "timeline", "--controllers", "slotine-li"],
    # run later (``--add-adaptive-60s``): the projected law on every other scenario
    [*ADAPTIVE_COMMON, "--scenarios", "release,fill,drain,grasp,timeline,wrong_estimate",
     "--controllers", "projected"],
)
#: The first suite predates the first_violation_s column: its gradient-law rows take it
#: from these 1 s runs (deterministic and the same as the 60 s runs' first second).
ADAPTIVE_FIRST_VIOLATION = [
    "adapt", "--suite", "--arms", "ur5,panda", "--scenarios", "constant,wrong_estimate",
    "--controllers", "slotine-li", "--excitation", "persistent,poor", "--plants",
    "generalized", "--duration", "1"]
#: The table's columns: (suite.csv column or derived key, header).
ADAPTIVE_TABLE = (
    ("arm", "arm"), ("scenario", "scenario"), ("excitation", "excitation"),
    ("controller", "law"), ("initial_margin", "μ(Θ̂₀)"),
    ("inf_margin_every_step", "inf_t μ(Θ̂(t)), every step"),
    ("margin_ratio", "inf μ / μ(Θ̂₀)"),
    ("inf_lambda_min_M_hat", "inf λ_min(M(q,Θ̂)), 50 Hz"),
    ("consistency_violations", "50 Hz samples with μ ≤ 0 (of 3001)"),
    ("first_violation_s", "first step with μ ≤ 0 [s]"),
    ("min_eig_J_hat", "min eig Ĵ, every step"),
    ("tracking_rms_rad", "tracking RMS [rad]"), ("diverged_at_s", "diverged at [s]"))


def initial_margin(arm: str, scenario: str, duration: float) -> float:
    """The smallest μ(Θ̂₀) over the adapted bodies (the controllers' start, as the suite sets it)."""
    import numpy as np

    from robot_tv_dynamics.control.setups import WRONG_ESTIMATE, initial_estimate
    from robot_tv_dynamics.control.suite import arm_urdf, scenario_process
    from robot_tv_dynamics.inertia import consistency_margin
    from robot_tv_dynamics.model import RobotModel

    urdf = arm_urdf(arm)
    model = RobotModel.from_urdf(urdf)
    with tempfile.TemporaryDirectory() as work:
        process = scenario_process(scenario, model, urdf, duration, Path(work))
        theta0 = initial_estimate(model, process, wrong=scenario == WRONG_ESTIMATE)
    mu = np.atleast_1d(consistency_margin(theta0))
    return float(mu[mu > 0.0].min())


def _suite_rows(folder: Path) -> list[dict[str, str]]:
    import csv

    with (folder / "suite.csv").open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def read_suites(folders: list[Path], first: Path | None = None) -> dict[str, Any]:
    """The rows of each folder's suite.csv (and the line under its suite.md table).

    ``first``: the :data:`ADAPTIVE_FIRST_VIOLATION` suite, for rows without
    ``first_violation_s`` ("not recorded" when it has no such row).
    """
    rows, notes = [], []
    for folder in folders:
        rows += _suite_rows(folder)
        notes.append((folder / "suite.md").read_text(encoding="utf-8").strip().splitlines()[-1])
    keys = ("arm", "scenario", "plant", "excitation", "controller")
    early = {tuple(r[k] for k in keys): r for r in (_suite_rows(first) if first else [])}
    for row in rows:
        if "first_violation_s" not in row:
            match = early.get(tuple(row[k] for k in keys))
            row["first_violation_s"] = (
                match["first_violation_s"] if match and match["first_violation_s"]
                else "" if int(row["consistency_violations"]) == 0
                and float(row["inf_margin_every_step"]) > 0 else "not recorded")
    margins: dict[tuple[str, str], float] = {}
    for row in rows:
        key = (row["arm"], row["scenario"])
        if key not in margins:
            margins[key] = initial_margin(*key, 60.0)
        row["initial_margin"] = f"{margins[key]:.6g}"
    return {"commands": [" ".join(argv) for argv in ADAPTIVE_COMMANDS], "rows": rows,
            "notes": notes}


def run_adaptive_60s() -> dict[str, Any]:
    """Run the 60 s suites (hours of CPU on a shared 2-core machine) and read them."""
    work = Path(tempfile.mkdtemp(prefix="docs_numbers_adaptive_"))
    folders = []
    for k, argv in enumerate([*ADAPTIVE_COMMANDS, ADAPTIVE_FIRST_VIOLATION]):
        folders.append(work / f"suite{k}")
        subprocess.run(["nice", "-n", "19", sys.executable, "-m", "robot_tv_dynamics.cli",
                        *argv, "--out", str(folders[-1])], check=False, timeout=6 * 3600)
    return read_suites(folders[:-1], folders[-1])


def add_adaptive_60s(folders: list[Path]) -> None:
    """Add the suites in ``folders`` to the kept adaptive_60s record without re-running it.

    The folders are the ``--out`` of the :data:`ADAPTIVE_COMMANDS` after those the record
    holds, in order (each suite takes hours of CPU: the record grows suite by suite). Each
    added suite keeps the machine it ran on (its line in the fragment says so).
    """
    record = load("adaptive_60s")
    data = record["data"]
    start = len(data["commands"])
    commands = [" ".join(argv) for argv in ADAPTIVE_COMMANDS[start:start + len(folders)]]
    if len(commands) != len(folders):
        raise SystemExit(f"the record holds {start} of {len(ADAPTIVE_COMMANDS)} suites: "
                         f"{len(folders)} folder(s) given, {len(ADAPTIVE_COMMANDS) - start} "
                         "to add")
    added = read_suites(folders)
    info = machine()
    data["rows"] += added["rows"]
    data["notes"] += added["notes"]
    data["commands"] += commands
    data.setdefault("added", []).extend({"command": c, "machine": info} for c in commands)
    (DATA / "adaptive_60s.json").write_text(json.dumps(record, indent=1, ensure_ascii=False)
                                            + "\n", encoding="utf-8")


def _adaptive_cell(row: dict[str, str], key: str) -> str:
    if key == "margin_ratio":  # only for an estimate that stayed consistent
        inf, start = row.get("inf_margin_every_step"), row.get("initial_margin")
        if not inf or not start:
            return "—"
        return f"{float(inf) / float(start):.3g}" if float(inf) > 0 else "< 0"
    value = row.get(key, "")
    if value in ("", None):
        return "—"
    try:
        return value if key == "consistency_violations" else f"{float(value):.3g}"
    except ValueError:
        return value


def render_adaptive_60s(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One table of every 60 s run (from the suites' suite.csv), the commands, the stamp."""
    lines = ["| " + " | ".join(h for _, h in ADAPTIVE_TABLE) + " |",
             "|" + "---|" * len(ADAPTIVE_TABLE)]
    order = {"natural": 0, "projected": 1, "slotine-li": 2, "computed-torque": 3}
    rows = sorted(data["rows"], key=lambda r: (r["arm"], r["scenario"], r["excitation"],
                                               order.get(r["controller"], 9)))
    for row in rows:
        lines.append("| " + " | ".join(_adaptive_cell(row, k) for k, _ in ADAPTIVE_TABLE)
                     + " |")
    lines += ["", "The suites, in the order they ran (each ends with the line of its "
              "suite.md):", ""]
    for command, note in zip(data["commands"], data["notes"], strict=False):
        lines += [f"* `robot-tv-dynamics {command}`: {note}"]
    lines += ["", stamp(info, "python scripts/docs_numbers.py adaptive_60s") + " Each row "
              "is one 60 s run (60 000 control steps at 1 kHz); μ(Θ̂₀) is the smallest "
              "margin of the controllers' start Θ̂₀ over the adapted bodies."]
    for added in data.get("added", []):
        lines += ["", f"Added later by `python scripts/docs_numbers.py --add-adaptive-60s "
                  f"FOLDER` (the `--out` of `robot-tv-dynamics {added['command']}`), run on "
                  + machine_text(added["machine"])]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ adaptive_5s
#: The 5 s suites of docs/adaptive.md ("What was run first"): persistent excitation,
#: every scenario, both plants; the projected law in suites of its own.
ADAPTIVE_5S_COMMANDS = tuple(
    ["adapt", "--suite", "--arms", arm, "--controllers", controllers, "--duration", "5"]
    for controllers in ("slotine-li,natural,computed-torque", "projected")
    for arm in ("ur5", "panda"))
#: The table's columns (suite.csv), in its order.
ADAPTIVE_5S_TABLE = ("arm", "scenario", "plant", "controller", "tracking_rms_rad",
                     "tracking_max_rad", "tau_rms", "inf_margin_every_step",
                     "inf_lambda_min_M_hat", "time_to_tolerance_load_mass_s",
                     "consistency_violations", "first_violation_s", "min_eig_J_hat",
                     "diverged_at_s")


def run_adaptive_5s() -> dict[str, Any]:
    """Run the four 5 s suites (tens of minutes of CPU) and keep their rows and notes."""
    work = Path(tempfile.mkdtemp(prefix="docs_numbers_adaptive5_"))
    rows, notes = [], []
    for k, argv in enumerate(ADAPTIVE_5S_COMMANDS):
        folder = work / f"suite{k}"
        subprocess.run(["nice", "-n", "19", sys.executable, "-m", "robot_tv_dynamics.cli",
                        *argv, "--out", str(folder)], check=False, timeout=4 * 3600,
                       capture_output=True)
        rows += _suite_rows(folder)
        notes.append((folder / "suite.md").read_text(encoding="utf-8").strip()
                     .splitlines()[-1])
    return {"commands": [" ".join(argv) for argv in ADAPTIVE_5S_COMMANDS], "rows": rows,
            "notes": notes}


def render_adaptive_5s(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One table of every 5 s run (the suites' suite.csv rows), the suites' lines, the stamp."""
    lines = ["| " + " | ".join(ADAPTIVE_5S_TABLE) + " |", "|" + "---|" * len(ADAPTIVE_5S_TABLE)]
    order = {"slotine-li": 0, "natural": 1, "projected": 2, "computed-torque": 3}
    arms = {"ur5": 0, "panda": 1}
    scenarios = {"constant": 0, "fill": 1, "drain": 2, "grasp": 3, "timeline": 4,
                 "wrong_estimate": 5, "release": 6}
    rows = sorted(data["rows"], key=lambda r: (
        arms.get(r["arm"], 9), scenarios.get(r["scenario"], 9), r["plant"] != "generalized",
        order.get(r["controller"], 9)))
    for row in rows:
        lines.append("| " + " | ".join(_adaptive_cell(row, k) for k in ADAPTIVE_5S_TABLE)
                     + " |")
    lines += ["", "The suites (each ends with the line of its suite.md):", ""]
    for command, note in zip(data["commands"], data["notes"], strict=False):
        lines += [f"* `robot-tv-dynamics {command}`: {note}"]
    lines += ["", stamp(info, "python scripts/docs_numbers.py adaptive_5s") + " Each row "
              "is one 5 s run (5000 control steps at 1 kHz), persistent excitation. Not "
              "re-run by a test (tens of minutes of CPU); `test/test_docs_numbers.py` checks "
              "the claims the text below makes of these rows."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ adaptive_matched
#: The suite at matched adaptation speed (docs/adaptive.md): every scenario, both arms,
#: the generalized plant, persistent excitation, 10 s, every law's γ from T_a = 1 s.
ADAPTIVE_MATCHED_COMMAND = ("adapt", "--suite", "--arms", "ur5,panda", "--plants",
                            "generalized", "--duration", "10", "--adaptation-time", "1")
#: The table's columns (suite.csv keys) and headings.
ADAPTIVE_MATCHED_TABLE = (
    ("arm", "arm"), ("scenario", "scenario"), ("controller", "law"), ("gamma", "γ"),
    ("tracking_rms_rad", "tracking RMS [rad]"),
    ("inf_margin_every_step", "inf μ(Θ̂), every step"),
    ("final_load_mass_error_kg", "m̂ − m at 10 s [kg]"),
    ("final_load_mass_relative_error", "(m̂ − m)/m at 10 s"),
    ("time_to_tolerance_load_mass_s", "within 10 % from [s]"),
    ("load_mass_unobservable_fraction", "load mass unobservable"),
    ("final_theta_error", "‖Θ̂ − Θ‖ at 10 s"),
    ("final_visible_error_W", "‖Θ̂ − Θ‖_R at 10 s [√W]"),
    ("visible_error_final_over_peak", "‖Θ̂ − Θ‖_R: end / peak"),
    ("band_budget", "band budget"), ("diverged_at_s", "diverged at [s]"))


def _read_matched(folder: Path) -> dict[str, Any]:
    return {"command": " ".join(ADAPTIVE_MATCHED_COMMAND), "rows": _suite_rows(folder),
            "note": (folder / "suite.md").read_text(encoding="utf-8").strip()
            .splitlines()[-1]}


def run_adaptive_matched() -> dict[str, Any]:
    """Run the matched-speed suite (≈ 10 min of CPU) and keep its rows and its line."""
    folder = Path(tempfile.mkdtemp(prefix="docs_numbers_matched_"))
    subprocess.run(["nice", "-n", "19", sys.executable, "-m", "robot_tv_dynamics.cli",
                    *ADAPTIVE_MATCHED_COMMAND, "--out", str(folder)], check=False,
                   timeout=4 * 3600, capture_output=True)
    return _read_matched(folder)


def add_adaptive_matched(folder: Path) -> None:
    """Keep the rows of the matched-speed suite already run into ``folder``."""
    record = {"machine": machine(), "data": _read_matched(folder)}
    DATA.mkdir(parents=True, exist_ok=True)
    (DATA / "adaptive_matched.json").write_text(json.dumps(record, indent=1,
                                                           ensure_ascii=False) + "\n",
                                                encoding="utf-8")


def render_adaptive_matched(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The matched-speed suite's table (its suite.csv rows), its line, the stamp."""
    lines = ["| " + " | ".join(h for _, h in ADAPTIVE_MATCHED_TABLE) + " |",
             "|" + "---|" * len(ADAPTIVE_MATCHED_TABLE)]
    for row in data["rows"]:
        lines.append("| " + " | ".join(_adaptive_cell(row, k) for k, _ in
                                       ADAPTIVE_MATCHED_TABLE) + " |")
    lines += ["", f"`robot-tv-dynamics {data['command']}`: {data['note']}", "",
              stamp(info, "python scripts/docs_numbers.py adaptive_matched") + " Each row is "
              "one 10 s run (10 000 control steps at 1 kHz), persistent excitation, "
              "generalized plant; γ is each law's gain from T_a = 1 s (computed torque: —)."]
    return "\n".join(lines) + "\n"


def figure_adaptive_matched(data: dict[str, Any], path: Path) -> None:
    """docs/adaptive_matched.png: the matched-speed suite, as ``adapt --suite`` draws it."""
    sys.path.insert(0, str(REPO))
    from robot_tv_dynamics.control.report import suite_figure

    suite_figure(data["rows"], path)


# ------------------------------------------------------------------------ weighted bounds
#: The arms of the weighted-bounds table: label, URDF (:func:`example_urdf`), locked joints.
WEIGHTED_ARMS = (
    ("UR5", UR5, {}),
    ("Panda, fingers free", "", {}),
    ("Panda, fingers locked", "", {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
)
#: Sobol points of each sampled search (plus its local refinement), and the seed.
WEIGHTED_SAMPLES = 2048
#: What the agreement test allows on every value (relative): the searches are seeded.
WEIGHTED_TOLERANCE = 1e-6


def weighted_row(urdf: str, locked: dict[str, float]) -> dict[str, Any]:
    """One arm's sampled paper α₁/α₂, scalar and COM-block weighted, and true extremes."""
    import numpy as np

    from robot_tv_dynamics import RobotModel, bounds
    from robot_tv_dynamics.bounds.mass import exact_mass_extremes, gram_extremes
    from robot_tv_dynamics.bounds.weights import (
        com_block_lower,
        com_block_upper,
        scalar_weights,
        spatial_inertia_extremes,
    )

    model = RobotModel.from_urdf(example_urdf(urdf), locked_joints=locked or None)
    search = {"samples": WEIGHTED_SAMPLES, "seed": 0, "time_limit": 600.0}
    start = time.monotonic()
    extremes = bounds.jacobian_extremes(model, bounds.SAMPLED, **search)
    paper = bounds.bounds_report(model, extremes).bounds
    theta = model.theta_nominal
    zmin, zmax = spatial_inertia_extremes(theta)

    def low(weights: Any, label: str) -> float:
        return gram_extremes(model, weights, label, bounds.SAMPLED, **search
                             ).lambda_min_bracket[1]

    def high(weights: Any, label: str) -> float:
        return gram_extremes(model, weights, label, bounds.SAMPLED, **search
                             ).lambda_max_bracket[0]

    exact = exact_mass_extremes(model, theta, bounds.SAMPLED, **search)
    return {
        "paper_alpha1": paper.alpha1_estimate, "paper_alpha2": paper.alpha2_estimate,
        "scalar_alpha1": low(scalar_weights(np.maximum(zmin, 0.0) * (1 - 1e-9)), "scalar"),
        "scalar_alpha2": high(scalar_weights(zmax * (1 + 1e-9)), "scalar"),
        "block_alpha1": low(com_block_lower(theta), "com block"),
        "block_alpha2": high(com_block_upper(theta), "com block"),
        "true_alpha1": exact.lambda_min_bracket[1], "true_alpha2": exact.lambda_max_bracket[0],
        "elapsed_s": time.monotonic() - start,
    }


def run_weighted_bounds() -> dict[str, Any]:
    """The weighted-bounds table of docs/concepts.md, one row per arm."""
    return {"rows": {label: weighted_row(name, locked) for label, name, locked in WEIGHTED_ARMS},
            "samples": WEIGHTED_SAMPLES, "tolerance": WEIGHTED_TOLERANCE}


def _sci(value: float, digits: int = 3) -> str:
    """``digits`` significant digits, powers of ten as the docs write them (4.39·10⁻³)."""
    mantissa, exponent = f"{value:.{digits - 1}e}".split("e")
    power = int(exponent)
    if -1 <= power <= 2:
        return f"{value:#.{digits}g}".rstrip(".")
    digits = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")
    return f"{mantissa}·10{str(power).translate(digits)}"


def _ratio(value: float) -> str:
    """A ratio: 3 decimals near 1, powers of ten far from it."""
    return f"{value:.3f}" if 0.01 <= value < 100 else _sci(value)


def render_weighted_bounds(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The paper / scalar / COM block / true table with the ratios, and the stamp."""
    lines = ["| arm | side | paper | scalar weighted | COM block weighted | sampled true | "
             "scalar / true | block / true | block / paper |",
             "|---|---|---|---|---|---|---|---|---|"]
    for label, row in data["rows"].items():
        for side, key in (("α₁ (inf λ_min)", "alpha1"), ("α₂ (sup λ_max)", "alpha2")):
            paper, scalar = row[f"paper_{key}"], row[f"scalar_{key}"]
            block, true = row[f"block_{key}"], row[f"true_{key}"]
            lines.append(f"| {label} | {side} | {_sci(paper)} | {_sci(scalar)} | "
                         f"{_sci(block)} | {_sci(true)} | {_ratio(scalar / true)} | "
                         f"{_ratio(block / true)} | {_sci(block / paper)} |")
    lines += ["", stamp(info, "python scripts/docs_numbers.py weighted_bounds") + " Nominal "
              f"URDF Θ; every column is a sampled search over the joint box ({data['samples']}"
              " scrambled Sobol points, seed 0, plus local refinement): the smallest λ_min "
              "and the largest λ_max found, estimates of the infimum and supremum, not "
              "bounds (the paper's column uses the sampled γ̂, δ̂: min μ · γ̂ and 2 max ν · δ̂). "
              "`test/test_docs_numbers.py` re-runs the searches and requires every value "
              f"within {data['tolerance']:g} (relative)."]
    return "\n".join(lines) + "\n"


#: The certified table's budget per search [s].
CERTIFIED_TIME_LIMIT = 30.0


def certified_row(urdf: str, locked: dict[str, float]) -> dict[str, Any]:
    """``bounds --certified --json`` on one arm: the brackets the certified table quotes."""
    import contextlib
    import io

    from robot_tv_dynamics.cli import main as cli

    argv = ["bounds", "--urdf", example_urdf(urdf), "--certified", "--time-limit",
            f"{CERTIFIED_TIME_LIMIT:g}", "--json", "--cache-dir", "", "--no-progress"]
    for joint, position in locked.items():
        argv += ["--lock", f"{joint}={position:g}"]
    printed = io.StringIO()
    start = time.monotonic()
    with contextlib.redirect_stdout(printed):
        code = cli(argv)
    if code != 0:
        raise RuntimeError(f"bounds {urdf or 'panda'}: exit {code}")
    mmb = json.loads(printed.getvalue())["mass_matrix_bounds"]
    weighted, exact = mmb["weighted"], mmb["exact"]
    return {
        "paper_alpha1": mmb["alpha1"], "paper_alpha2": mmb["alpha2"],
        "alpha1": weighted["alpha1"], "alpha2": weighted["alpha2"],
        "lower_weights": weighted["lower"]["weights"],
        "upper_weights": weighted["upper"]["weights"],
        "lower_bracket": weighted["lower"]["lambda_min_bracket"],
        "upper_bracket": weighted["upper"]["lambda_max_bracket"],
        "lower_s": weighted["lower"]["elapsed_s"], "upper_s": weighted["upper"]["elapsed_s"],
        "exact_min": exact["lambda_min_bracket"], "exact_max": exact["lambda_max_bracket"],
        "exact_s": exact["elapsed_s"], "exact_boxes": exact["boxes"],
        "wall_s": time.monotonic() - start,
    }


def run_weighted_certified() -> dict[str, Any]:
    """The certified table of docs/concepts.md, one ``bounds --certified`` run per arm."""
    return {"rows": {label: certified_row(urdf, locked)
                     for label, urdf, locked in WEIGHTED_ARMS},
            "time_limit": CERTIFIED_TIME_LIMIT}


def render_weighted_certified(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The certified brackets: paper, weighted (COM block), exact, with the ratios."""
    lines = ["| arm | paper α₁ / α₂ | certified α₁ʷ (weights; its λ_min bracket, time) | "
             "exact inf λ_min(M) bracket (time) | α₁ʷ / paper α₁ | α₁ʷ / exact bracket | "
             "certified α₂ʷ (its λ_max bracket, time) | exact sup λ_max(M) bracket |",
             "|---|---|---|---|---|---|---|---|"]
    for label, row in data["rows"].items():
        lo, hi = row["lower_bracket"]
        mlo, mhi = row["exact_min"]
        ulo, uhi = row["upper_bracket"]
        xlo, xhi = row["exact_max"]
        lines.append(
            f"| {label} | {_sci(row['paper_alpha1'])} / {_sci(row['paper_alpha2'])} | "
            f"{_sci(row['alpha1'])} ({row['lower_weights']}; [{_sci(lo)}, {_sci(hi)}], "
            f"{row['lower_s']:.0f} s) | [{_sci(mlo)}, {_sci(mhi)}] ({row['exact_s']:.0f} s, "
            f"{row['exact_boxes']} boxes) | {_sci(row['alpha1'] / row['paper_alpha1'])} | "
            f"{_ratio(row['alpha1'] / mlo)} – {_ratio(row['alpha1'] / mhi)} | "
            f"{_sci(row['alpha2'], 4)} ([{_sci(ulo, 4)}, {_sci(uhi, 4)}], "
            f"{row['upper_s']:.0f} s) | [{_sci(xlo, 4)}, {_sci(xhi, 4)}] |")
    lines += ["", stamp(info, "python scripts/docs_numbers.py weighted_certified") + " Each "
              f"search up to {data['time_limit']:g} s, serial; nominal URDF Θ. Every entry is "
              "a bound; α₁ʷ / exact bracket is against the exact bracket's lower and upper "
              "end. The budget is wall time on a shared machine: not re-run by a test."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ real_payload
#: The real recording, relative to the repository's root (never copied into it).
REAL_RECORDING = "../shared/data/panda_exciting_traj.npz"


def real_payload_module() -> Any:
    """benchmarks/bench_real_payload.py."""
    return load_module("bench_real_payload", "benchmarks/bench_real_payload.py")


def run_real_payload() -> dict[str, Any]:
    """The benchmark's result on the real recording (≈ 1 min)."""
    result = subprocess.run(
        [sys.executable, "benchmarks/bench_real_payload.py", REAL_RECORDING, "--json"],
        cwd=REPO, capture_output=True, text=True, check=True, timeout=3600)
    return dict(json.loads(result.stdout))


def render_real_payload(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The benchmark's table, the identification's fit, and the stamp."""
    fit = ", ".join(f"{v:g}" for v in data["fit_rms"].values())
    hold = ", ".join(f"{v:g}" for v in data["holdout_rms"].values())
    lines = [real_payload_module().table(data), "",
             f"{data['samples']} samples over {data['duration_s']:g} s; `identify` on the "
             f"first {data['split_s']:g} s (fit RMS per joint {fit} N·m; held-out "
             f"{hold} N·m), `estimate --model` on the rest, every sample updating. "
             + stamp(info, "python scripts/docs_numbers.py real_payload") + " It runs "
             f"`python benchmarks/bench_real_payload.py {REAL_RECORDING}`; "
             "`test/estimation/test_real_recording.py` asserts 0 changes and |m̂| ≤ 0.1 kg "
             "where the recording is."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ realistic_seeds
#: The seed study of docs/estimation.md: seeds, the updates' decimation (the test's), and
#: the seed the agreement test re-runs (the one that misses a goal).
REALISTIC_SEEDS = (1, 20)
REALISTIC_DECIMATION = 4
REALISTIC_CHECK_SEED = 2
#: How close a fresh run of a kept seed must come (seeded data; the solvers are the same
#: code: a fresh run on the same machine reproduced every number exactly).
REALISTIC_TOLERANCE = {"mass": 0.002, "com_error": 0.0005, "change_times": 0.005}


def realistic_module() -> Any:
    """scripts/realistic_seeds.py (and through it test/support/realistic.py)."""
    return load_module("realistic_seeds", "scripts/realistic_seeds.py")


def realistic_seed(seed: int) -> dict[str, dict[str, Any]]:
    """One seed of the study: method → its goal quantities and the goals it misses."""
    study = realistic_module()
    rows = study.run_seed(seed, REALISTIC_DECIMATION)
    return {method: {**m, "missed": study.R.failed_goals(m)} for method, m in rows.items()}


def run_realistic_seeds() -> dict[str, Any]:
    """Seeds 1–20 of ``realistic.generate_real``, three methods each (≈ 20 CPU s per seed)."""
    first, last = REALISTIC_SEEDS
    return {"decimation": REALISTIC_DECIMATION, "check_seed": REALISTIC_CHECK_SEED,
            "tolerance": REALISTIC_TOLERANCE,
            "seeds": {str(seed): realistic_seed(seed) for seed in range(first, last + 1)}}


def realistic_summary(data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Per method, over the seeds: false changes, delays, worst errors, the seeds' misses."""
    import numpy as np

    methods = list(next(iter(data["seeds"].values())))
    summary = {}
    for method in methods:
        runs = {int(seed): rows[method] for seed, rows in data["seeds"].items()}
        delays = [[m["delays"][i] for m in runs.values()] for i in range(2)]
        found = [[d for d in column if d is not None] for column in delays]
        summary[method] = {
            "n": len(runs), "met": sum(not m["missed"] for m in runs.values()),
            "false": [(seed, t) for seed, m in sorted(runs.items()) for t in m["false"]],
            "detected": [len(column) for column in found],
            "delay_max": [max(column) if column else None for column in found],
            "delay_median": [float(np.median(column)) if column else None
                             for column in found],
            "mass_error": [max(m["mass_errors"][i] for m in runs.values()) for i in range(2)],
            "mass_ratio": [max(m["mass_ratios"][i] for m in runs.values()) for i in range(2)],
            "com_error": max(m["com_error"] for m in runs.values()),
            "pre": max(m["pre"] for m in runs.values()),
            "min_margin": min(m["min_margin"] for m in runs.values()),
            "withdrawn": sum(m["withdrawn"] for m in runs.values()),
            "skipped": sum(bool(m["skipped"]) for m in runs.values()),
            "missed": [(seed, m["missed"]) for seed, m in sorted(runs.items()) if m["missed"]],
        }
    return summary


def _false_change(m: dict[str, Any], t: float) -> str:
    """A false change's time and where it fell: after which true change's start."""
    truth = m["truth"]
    starts = [(name, truth[name]) for name in ("grasp", "release") if truth[name] <= t]
    if not starts:
        return f"{t:.2f} s, before the grasp"
    name, start = starts[-1]
    return f"{t:.2f} s, {t - start:.2f} s after the {name}'s start"


def _goal_value(m: dict[str, Any], goal: str) -> str:
    """The quantity behind a missed goal of ``realistic.failed_goals``, with its unit."""
    names = ("grasp", "release")
    truth = m["truth"]
    if goal == "detection":
        return ", ".join(f"{names[i]} not declared within 0.3 s" for i, d in
                         enumerate(m["delays"]) if d is None)
    if goal == "false changes":
        return "at " + "; ".join(_false_change(m, t) for t in m["false"])
    if goal == "mass":
        bounds = (max(0.15, 0.3 * truth["mass"]), 0.15)
        return ", ".join(f"{names[i]}: {m['mass_errors'][i]:.3f} kg > {bounds[i]:.3f} kg"
                         for i in range(2) if m["mass_ratios"][i] > 1.0)
    if goal == "COM":
        return f"{1e3 * m['com_error']:.1f} mm"
    return ""


def render_realistic_seeds(data: dict[str, Any], info: dict[str, Any]) -> str:
    """The per-method table against the goals, each miss, and the stamp."""
    import numpy as np

    lines = ["| method | seeds meeting all goals | false changes, all runs (goal ≤ 1) | "
             "changes declared within 0.3 s (grasp, release) | delay median / max "
             "(grasp; release) | worst \\|m̂ − m\\| from 1.5 s, loaded (share of its bound) "
             "| worst \\|m̂\\| from 1.5 s after the release | worst COM error before the "
             "release (goal ≤ 10 mm) |", "|---|---|---|---|---|---|---|---|"]
    summary = realistic_summary(data)

    def delay(w: dict[str, Any], i: int) -> str:
        if w["delay_max"][i] is None:
            return "—"
        return f"{w['delay_median'][i]:.2f} / {w['delay_max'][i]:.2f} s"

    for method, w in summary.items():
        false = len(w["false"])
        where = (" (" + "; ".join(
            f"seed {seed} at {_false_change(data['seeds'][str(seed)][method], t)}"
            for seed, t in w["false"]) + ")" if w["false"] else "")
        lines.append(
            f"| {method} | {w['met']}/{w['n']} | {false}{where} | {w['detected'][0]}/{w['n']}, "
            f"{w['detected'][1]}/{w['n']} | {delay(w, 0)}; {delay(w, 1)} | "
            f"{w['mass_error'][0]:.3f} kg ({100 * w['mass_ratio'][0]:.0f} %) | "
            f"{w['mass_error'][1]:.3f} kg | {1e3 * w['com_error']:.1f} mm |")
    runs = data["seeds"]
    misses = [f"seed {seed}, {method}: " + ", ".join(
        f"{goal} ({_goal_value(runs[str(seed)][method], goal)})" for goal in missed)
        for method, w in summary.items() for seed, missed in w["missed"]]
    skipped = sum(w["skipped"] for w in summary.values())
    loads = [rows[next(iter(rows))]["truth"] for rows in runs.values()]
    masses = [truth["mass"] for truth in loads]
    off = [100 * float(np.hypot(*truth["com"][:2])) for truth in loads]
    lines += ["", "Goals missed: " + ("; ".join(misses) if misses else "none") + ". "
              f"Loads {min(masses):.2f}–{max(masses):.2f} kg, COM {min(off):.1f}–"
              f"{max(off):.1f} cm off the flange axis. Worst pre-grasp \\|m̂\\| (from "
              "1.5 s): " + ", ".join(f"{method} {w['pre']:.3f} kg"
                                    for method, w in summary.items())
              + "; declared changes withdrawn as unconfirmed: "
              + ", ".join(f"{method} {w['withdrawn']}" for method, w in summary.items())
              + "; smallest margin of any run: "
              + f"{min(w['min_margin'] for w in summary.values()):.3g} kg·m²; runs with "
              f"skipped updates: {skipped}.", "",
              stamp(info, "python scripts/docs_numbers.py realistic_seeds") + " Each seed is "
              "one `python scripts/realistic_seeds.py SEED SEED` (its recording, `identify`, "
              f"`estimate --model` per method, every {data['decimation']}th sample updating). "
              "Seeded: `test/test_docs_numbers.py` re-runs seed "
              f"{data['check_seed']} and requires its masses within "
              f"{data['tolerance']['mass']:g} kg, COM errors within "
              f"{1e3 * data['tolerance']['com_error']:g} mm and change times within "
              f"{data['tolerance']['change_times']:g} s of the kept ones."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ realistic_terms
#: Which term of the realistic model error a goal is missed by: the study's seeds with
#: the two largest COM misses (4, 9) and its lightest load (18), classical, each term left
#: out in turn, then all of them.
REALISTIC_TERMS_SEEDS = (4, 9, 18)


def run_realistic_terms() -> dict[str, Any]:
    """The realistic seeds again, one model-error term left out at a time (classical)."""
    study = realistic_module()
    terms = list(study.R.TERMS)
    rows = []
    for seed in REALISTIC_TERMS_SEEDS:
        for without in [[], *([term] for term in terms), terms]:
            m = study.run_seed(seed, REALISTIC_DECIMATION, without=tuple(without),
                               methods=("classical",))["classical"]
            rows.append({"seed": seed, "without": without, **m,
                         "missed": study.R.failed_goals(m)})
    return {"decimation": REALISTIC_DECIMATION, "terms": terms, "rows": rows}


def render_realistic_terms(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One row per seed and term left out."""
    lines = ["| seed (load) | left out | declared after (grasp, release) | false changes at "
             "| max \\|m̂ − m\\| from 1.5 s (loaded, released) | COM error before the "
             "release | goals missed |", "|---|---|---|---|---|---|---|"]
    for row in data["rows"]:
        without = row["without"]
        left = ("nothing" if not without else "all" if without == data["terms"]
                else without[0])
        delays = ", ".join("—" if d is None else f"{d:.2f} s" for d in row["delays"])
        lines.append(
            f"| {row['seed']} ({row['truth']['mass']:.2f} kg) | {left} | {delays} | "
            f"{', '.join(f'{t:.2f} s' for t in row['false']) or '—'} | "
            f"{row['mass_errors'][0]:.3f}, {row['mass_errors'][1]:.3f} kg | "
            f"{1e3 * row['com_error']:.1f} mm | {', '.join(row['missed']) or '—'} |")
    lines += ["", "Terms: noise (AR(1) with spikes), acceleration (the residual ∝ inertial "
              "torque), lugre (Stribeck + hysteresis; left out, identify's Coulomb model "
              "takes its place), drift (the offset's random walk), elasticity, stop (the "
              "hard stop). " + stamp(info, "python scripts/docs_numbers.py realistic_terms")
              + " Each row is `realistic_seeds.run_seed(SEED, "
              f"{data['decimation']}, without=TERMS, methods=(\"classical\",))`."]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------ the pages
#: name → (run, render)
SECTIONS: dict[str, tuple[Callable[[], dict[str, Any]],
                          Callable[[dict[str, Any], dict[str, Any]], str]]] = {
    "demo": (run_demo, render_demo),
    "retime": (run_retime, render_retime),
    "max_payload": (run_max_payload, render_max_payload),
    "retime_cases": (run_retime_cases, render_retime_cases),
    "identification": (run_identification, render_identification),
    "collision": (run_collision, render_collision),
    "simulation": (run_simulation, render_simulation),
    "generalized_fill": (run_generalized_fill, render_generalized_fill),
    "observer_noise": (run_observer_noise, render_observer_noise),
    "batch_seeds": (run_batch_seeds, render_batch_seeds),
    "realistic_seeds": (run_realistic_seeds, render_realistic_seeds),
    "realistic_terms": (run_realistic_terms, render_realistic_terms),
    "real_payload": (run_real_payload, render_real_payload),
    "bench_demo": (run_bench_demo, render_bench_demo),
    "weighted_bounds": (run_weighted_bounds, render_weighted_bounds),
    "weighted_certified": (run_weighted_certified, render_weighted_certified),
    **{name: (lambda name=name: run_benchmark(name), render_benchmark(name))
       for name in BENCHMARKS},

    "adaptive_60s": (run_adaptive_60s, render_adaptive_60s),
    "adaptive_5s": (run_adaptive_5s, render_adaptive_5s),
    "adaptive_matched": (run_adaptive_matched, render_adaptive_matched),
}


def figure_adaptive_5s(data: dict[str, Any], path: Path) -> None:
    """docs/adaptive_suite.png: every 5 s run of the kept rows, as ``adapt --suite`` draws it."""
    sys.path.insert(0, str(REPO))
    from robot_tv_dynamics.control.report import suite_figure

    suite_figure(data["rows"], path)


#: The figures drawn from a section's kept data: name → (file, drawing function).
FIGURES: dict[str, tuple[Path, Callable[[dict[str, Any], Path], None]]] = {
    "adaptive_5s": (REPO / "docs" / "adaptive_suite.png", figure_adaptive_5s),
    "adaptive_matched": (REPO / "docs" / "adaptive_matched.png", figure_adaptive_matched),
}


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


def load(name: str) -> dict[str, Any]:
    """The kept record of NAME: ``machine`` and ``data``."""
    return json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))


def rendered(name: str) -> str:
    """The fragment NAME as its kept data renders it."""
    kept = load(name)
    return SECTIONS[name][1](kept["data"], kept["machine"])


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


def main(argv: list[str] | None = None) -> int:
    """Run the named sections (all by default), keep their data, rewrite the pages."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"one of {', '.join(SECTIONS)} (default: all)")
    parser.add_argument("--render", action="store_true",
                        help="only rewrite the fragments from docs/numbers/*.json")
    parser.add_argument("--list", action="store_true", help="list the fragments and exit")
    parser.add_argument("--figures", action="store_true",
                        help=f"only redraw the figures ({', '.join(FIGURES)}) from the kept "
                             "data")
    parser.add_argument("--add-adaptive-60s", nargs="+", metavar="FOLDER", type=Path,
                        help="add these 60 s suites' --out folders (the ADAPTIVE_COMMANDS "
                             "after those kept, in order) to adaptive_60s, then render")
    parser.add_argument("--add-adaptive-matched", metavar="FOLDER", type=Path,
                        help="keep the rows of the matched-speed suite run into FOLDER "
                             "(ADAPTIVE_MATCHED_COMMAND --out FOLDER), draw, then render")
    args = parser.parse_args(argv)
    if args.add_adaptive_matched:
        add_adaptive_matched(args.add_adaptive_matched)
        draw_figures(["adaptive_matched"])
        args.render = True
    if args.add_adaptive_60s:
        add_adaptive_60s(args.add_adaptive_60s)
        args.render = True
    unknown = [name for name in args.names if name not in SECTIONS]
    if unknown:
        parser.error(f"unknown {', '.join(unknown)}; choose from {', '.join(SECTIONS)}")
    if args.list:
        for page, name, _ in fragments():
            print(f"{page.relative_to(REPO)}: {name}")
        return 0
    if args.figures:
        draw_figures(args.names or list(FIGURES))
        return 0
    if not args.render:
        DATA.mkdir(parents=True, exist_ok=True)
        for name in args.names or list(SECTIONS):
            print(f"running {name} …", flush=True)
            data = SECTIONS[name][0]()
            record = {"machine": machine(), "data": data}
            (DATA / f"{name}.json").write_text(json.dumps(record, indent=1,
                                                          ensure_ascii=False) + "\n",
                                               encoding="utf-8")
        draw_figures(args.names or list(SECTIONS))
    for page in render_pages():
        print(f"rewrote {page.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
