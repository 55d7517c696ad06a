"""``robot-tv-dynamics adapt``: an adaptive controller on the simulated arm (docs/adaptive.md)."""

from __future__ import annotations

import argparse
import json
import tempfile
from pathlib import Path
from typing import Any

from robot_tv_dynamics.cli.common import finite_float, load_model, positive_float, positive_int
from robot_tv_dynamics.control.gains import ADAPTATION_TIME
from robot_tv_dynamics.control.report import run_figure, suite_figure
from robot_tv_dynamics.control.setups import CONSTANT, CONTROLLERS, EXCITATIONS, WRONG_ESTIMATE
from robot_tv_dynamics.control.suite import (
    COLUMNS,
    PLANTS,
    SUITE_SCENARIOS,
    SuiteCase,
    natural_definiteness,
    projection_line,
    run_scenario,
    run_suite,
    suite_cases,
    write_suite_table,
)
from robot_tv_dynamics.demo import SCENARIOS
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.paths import example_robot_urdf

DESCRIPTION = ("Runs one controller on the simulated arm whose Θ is unknown to it (the URDF's "
               "Θ perturbed), under a loading process or none, on the generalized or classical "
               "plant; writes report.png and summary.json (--bag: the run as an MCAP). --suite "
               "runs controllers × scenarios × plants on the Panda and the UR5 and writes "
               "suite.md, suite.csv, suite.png.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``adapt`` options."""
    parser.add_argument("--controller", choices=CONTROLLERS, default="natural")
    parser.add_argument("--scenario", default=CONSTANT,
                        help=f"{CONSTANT} (no load), {WRONG_ESTIMATE} (no load, the controller "
                             f"starting from a badly wrong estimate), one of "
                             f"{', '.join(SCENARIOS)} or a loading-process YAML file")
    parser.add_argument("--urdf", default="", help="URDF (default: the Panda)")
    parser.add_argument("--plant", choices=("generalized", "classical"), default="generalized")
    parser.add_argument("--excitation", default="persistent",
                        help=f"{' or '.join(EXCITATIONS)}: every revolute joint at its own "
                             "frequency (0.3 rad), or the demo's slow four-joint motion "
                             "(docs/adaptive.md); the suite takes a comma-separated list, "
                             "e.g. persistent,poor")
    parser.add_argument("--duration", type=positive_float, default=5.0, metavar="S")
    parser.add_argument("--adaptation-time", type=positive_float, default=ADAPTATION_TIME,
                        metavar="S",
                        help="T_a: each adaptive law's gain γ is set so that its estimate "
                             "covers 90 %% of the load's step (no load: 30 %% of the tool's "
                             "body) in this time, in the averaged model of docs/adaptive.md; "
                             "the gains are in summary.json (suite: column gamma)")
    parser.add_argument("--disturbance", type=finite_float, default=0.0, metavar="W",
                        help="w of eq. (39): a constant torque (N·m; N on a prismatic joint) "
                             "added at the plant to every joint, unknown to the controller "
                             "(default 0; suite: every run; column disturbance)")
    parser.add_argument("--out", default="adapt_output", help="output directory")
    parser.add_argument("--bag", default="", metavar="PATH",
                        help="also write the run as an MCAP (a .mcap file or a folder): "
                             "joint_states (effort = τ), reference_joint_states, the true "
                             "inertial_parameters_stamped and the controller's Θ̂ on "
                             "estimates/controller/inertial_parameters_stamped")
    parser.add_argument("--json", action="store_true",
                        help="one run: print the summary's table columns as one JSON object "
                             "instead of the text summary")
    parser.add_argument("--suite", action="store_true",
                        help="controllers × scenarios × plants on the Panda and the UR5")
    parser.add_argument("--arms", default="panda,ur5", help="suite: arms (panda,ur5)")
    parser.add_argument("--scenarios", default=",".join(SUITE_SCENARIOS),
                        help="suite: scenarios, comma separated")
    parser.add_argument("--controllers", default=",".join(CONTROLLERS),
                        help="suite: controllers, comma separated")
    parser.add_argument("--plants", default=",".join(PLANTS),
                        help="suite: plants, comma separated (generalized,classical)")
    parser.add_argument("--workers", type=positive_int, default=1,
                        help="suite: runs in parallel on a Dask LocalCluster of this many "
                             "worker processes")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="suite: a running Dask scheduler instead of the local cluster")


def run(args: argparse.Namespace) -> int:
    """Run ``adapt`` (one run, or the suite)."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.bag and not args.suite and Path(args.bag).exists():  # before minutes of running
        raise InvalidInputError("--bag", f"{args.bag} exists; remove it or choose another name")
    excitations = [e for e in args.excitation.split(",") if e]
    bad = [e for e in excitations if e not in EXCITATIONS]
    if bad or not excitations or (not args.suite and len(excitations) != 1):
        raise InvalidInputError("--excitation", f"{'one' if not args.suite else 'a list'} of "
                                f"{', '.join(EXCITATIONS)}, got {args.excitation!r}")
    if not args.suite:
        urdf = args.urdf or str(example_robot_urdf())
        model = load_model(urdf)
        summary, result = run_scenario(urdf, args.controller, args.scenario, args.plant,
                                       args.excitation, args.duration, out, model=model,
                                       adaptation_time=args.adaptation_time,
                                       disturbance=args.disturbance)
        (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
        run_figure(result, f"{args.controller} on the {args.plant} plant, scenario "
                   f"{args.scenario}, {Path(urdf).name}", out / "report.png")
        if args.bag:
            from robot_tv_dynamics.control.bag import write_run_bag

            write_run_bag(args.bag, result, model)
        if args.json:
            print(json.dumps({k: summary[k] for k in COLUMNS[COLUMNS.index("controller") + 1:]
                              if k in summary}))
        else:
            written = [out / "summary.json", out / "report.png", *([args.bag] if args.bag else [])]
            print(summary_text(summary, Path(urdf).name, [str(w) for w in written]))
        return 0
    if args.bag:
        print("adapt: --bag writes one run; it is ignored with --suite")
    if args.json:
        print("adapt: --json prints one run; it is ignored with --suite (suite.csv has the rows)")
    arms, scenarios = args.arms.split(","), args.scenarios.split(",")
    controllers = args.controllers.split(",")
    cases = suite_cases(arms, scenarios, controllers, excitations, args.plants.split(","))
    done: dict[int, dict[str, Any]] = {}
    order = {case: k for k, case in enumerate(cases)}

    def progress(case: SuiteCase, row: dict[str, Any]) -> None:
        # the table so far, after every run: a long suite cut short keeps what it ran
        done[order[case]] = row
        partial = [done[k] for k in sorted(done)]
        write_suite_table(partial, out, note=_note(partial, len(cases), args.duration))
        print(case.excitation, case.arm, case.scenario, case.plant, case.controller,
              f"done ({len(done)}/{len(cases)}, {row['cpu_s']:.0f} CPU s)", flush=True)

    # started scenario by scenario, each on every arm and excitation: a suite cut short
    # has covered its first scenarios everywhere; the table keeps the grid's order
    start = sorted(cases, key=lambda c: (
        scenarios.index(c.scenario), c.plant, controllers.index(c.controller),
        excitations.index(c.excitation), arms.index(c.arm)))
    with tempfile.TemporaryDirectory() as work:
        started = run_suite(start, args.duration, Path(work), args.workers, progress=progress,
                            scheduler=args.scheduler, adaptation_time=args.adaptation_time,
                            disturbance=args.disturbance)
    rows = [row for _, row in sorted(zip((order[c] for c in start), started, strict=True),
                                     key=lambda pair: pair[0])]
    definite, _ = natural_definiteness(rows)
    write_suite_table(rows, out, note=_note(rows, len(cases), args.duration))
    suite_figure(rows, out / "suite.png")
    print((out / "suite.md").read_text())
    return 0 if definite else 1


def _value(value: float | None, unit: str, digits: int = 3, none: str = "none") -> str:
    return none if value is None else f"{value:.{digits}g} {unit}"


def summary_text(summary: dict[str, Any], urdf_name: str, written: list[str]) -> str:
    """One run's summary.json as a few labelled lines (``--json``: the table columns)."""
    violations = summary["consistency_violations"]
    first = summary.get("first_violation_s")
    lines = [
        f"adapt: {summary['controller']} on the {summary['plant']} plant, scenario "
        f"{summary['scenario']}, {summary['excitation']} excitation, {urdf_name}, "
        f"{summary['duration_s']:g} s simulated"
        + (f", disturbance w = {summary['disturbance']:g} N·m on every joint"
           if summary.get("disturbance") else ""),
        f"tracking error: RMS {_value(summary['tracking_rms_rad'], 'rad')} (all joints), "
        f"largest {_value(summary['tracking_max_rad'], 'rad')} (one joint); "
        f"τ RMS {_value(summary['tau_rms'], 'N·m')}",
        f"consistency: inf μ(Θ̂) over every step {_value(summary['inf_margin_every_step'], 'kg·m²')}"
        f"; {violations} of {summary['samples']} samples (50 Hz) with μ ≤ 0"
        + ("" if first is None else f", the first step with μ ≤ 0 at {first:.3f} s"),
        f"mass matrix: inf λ_min(M(q, Θ̂)) {_value(summary['inf_lambda_min_M_hat'], 'kg·m²')} "
        "(50 Hz samples)",
    ]
    if summary.get("min_eig_J_hat") is not None:
        definite = "positive definite" if summary.get("j_hat_positive_definite") else (
            "NOT positive definite")
        lines.append(f"pseudo-inertias: smallest eigenvalue of any Ĵ_i at any step "
                     f"{_value(summary['min_eig_J_hat'], 'kg·m²')} ({definite} at every step)")
    if summary.get("final_load_mass_error_kg") is not None:
        settled = summary.get("time_to_tolerance_load_mass_s")
        lines.append(f"load mass: final error {_value(summary['final_load_mass_error_kg'], 'kg')}"
                     f" ({100 * summary['final_load_mass_relative_error']:.3g} % of m); "
                     "within 10 % " + ("not at the end" if settled is None
                                       else f"from {settled:.3f} s")
                     + f"; {100 * summary['load_mass_unobservable_fraction']:.3g} % of the load "
                     "body's mass direction is invisible in the torques")
    gains = summary.get("adaptation_gains")
    if gains:
        gamma = gains.get("gradient_gamma", gains.get("natural_gamma"))
        capped = gains.get("gradient_capped", gains.get("natural_capped"))
        lines.append(f"gain: γ {gamma:.4g} for T_a {gains['adaptation_time_s']:g} s on "
                     f"{gains['calibration_body']} ({gains['calibration_step']})"
                     + (", capped (t₉₀ > T_a)" if capped else ""))
    if summary.get("diverged_at_s") is not None:
        lines.append(f"diverged: at {summary['diverged_at_s']:.3f} s (the numbers are up to "
                     "there)")
    lines.append(f"wrote: {', '.join(written)} (--json: the table columns as JSON)")
    return "\n".join(lines)


def _note(rows: list[dict[str, Any]], planned: int, duration: float) -> str:
    """The line below the suite table: what ran, the statistics' grids, the Ĵ claim."""
    excitations = ", ".join(dict.fromkeys(r["excitation"] for r in rows))
    ran = f"{len(rows)} runs" if len(rows) == planned else f"{len(rows)} of {planned} runs"
    _, line = natural_definiteness(rows)
    return (f"{ran} of {duration:g} s simulated, {excitations} excitation. "
            "inf_margin_every_step and min_eig_J_hat: over every control step (1 kHz); "
            "inf_lambda_min_M_hat, consistency_violations and the tracking columns: over "
            f"the samples recorded at 50 Hz. {line}. {projection_line(rows)}.")
