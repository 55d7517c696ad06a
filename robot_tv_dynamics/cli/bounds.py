"""``robot-tv-dynamics bounds``: mass-matrix bounds of Theorems 2–4 for a URDF."""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from robot_tv_dynamics.cli.common import (
    ProgressBar,
    add_progress_arguments,
    add_urdf_argument,
    load_model,
    lock_option,
    positive_float,
    positive_int,
)
from robot_tv_dynamics.numbers import format_number

if TYPE_CHECKING:  # imported by run(): `bounds --help` does not load SciPy's statistics
    from robot_tv_dynamics import bounds
    from robot_tv_dynamics.bounds.mass import GramExtremes, WeightedBounds

DESCRIPTION = (
    "Per-body consistency margin μ and size ν of the URDF's inertial parameters, "
    "the Jacobian extremes γ = inf λ_min(JᵀJ) and δ = sup σ_max(J)² over the "
    "joint-limit box, α₁ = min μ · γ and α₂ = 2 max ν · δ, and the normality "
    "(Definition 2) and Assumption 2 verdicts, the weighted α₁ʷ/α₂ʷ and the loading "
    "floor inf λ_min(M₀) (a lower bound of λ_min(M) for every consistent load; "
    "--certified searches it once per arm and keeps it in the bounds cache). Sampled "
    "values are estimates; --certified gives rigorous brackets.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the ``bounds`` options."""
    add_urdf_argument(parser)
    parser.add_argument("--certified", action="store_true",
                        help="certified branch and bound instead of sampling")
    parser.add_argument("--time-limit", type=positive_float, default=60.0, metavar="S",
                        help="time limit of the search [s] (default 60)")
    parser.add_argument("--samples", type=positive_int, default=4096, metavar="N",
                        help="number of quasi-random samples (default 4096)")
    parser.add_argument("--target-gap", type=float, default=0.01, metavar="G",
                        help="certified: stop at this relative gap (default 0.01)")
    parser.add_argument("--workers", type=positive_int, default=1, metavar="N",
                        help="certified: search on a local Dask cluster of N worker "
                             "processes (default 1: in this process, no cluster)")
    parser.add_argument("--scheduler", default=None, metavar="ADDRESS",
                        help="certified: search on the Dask cluster of this scheduler "
                             "(e.g. tcp://host:8786) instead")
    parser.add_argument("--cache-dir", default="auto", metavar="DIR",
                        help="bounds cache folder of the loading floor (default auto: "
                             "$XDG_CACHE_HOME/robot_tv_dynamics, else "
                             "~/.cache/robot_tv_dynamics; '' disables it): --certified "
                             "stores the floor there, a sampled run reads it")
    parser.add_argument("--json", action="store_true",
                        help="print one JSON object on stdout instead of a table")
    add_progress_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Run ``bounds``: compute, then print a table or one JSON object."""
    from robot_tv_dynamics import bounds
    from robot_tv_dynamics.bounds import floor as floors
    from robot_tv_dynamics.bounds.mass import exact_mass_extremes, weighted_bounds
    from robot_tv_dynamics.bounds.parallel import DaskBoxEvaluation, dask_client

    model = load_model(args.urdf, lock_option(args.lock))
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    bar = ProgressBar(sys.stderr) if (show and args.certified) else None
    method = bounds.CERTIFIED if args.certified else bounds.SAMPLED
    parallel = args.certified and (args.workers > 1 or args.scheduler is not None)
    with contextlib.ExitStack() as stack:
        factory = None
        if parallel:
            client = stack.enter_context(dask_client(args.workers, args.scheduler))

            def factory(evaluator: Any) -> Any:
                return DaskBoxEvaluation(client, evaluator)
        try:
            extremes = bounds.jacobian_extremes(
                model, method, samples=args.samples, time_limit=args.time_limit,
                target_gap=args.target_gap, progress=bar, evaluations=factory)
        finally:
            if bar is not None:
                bar.close()
        report = bounds.bounds_report(model, extremes)
        search = {"samples": min(args.samples, 2048), "time_limit": args.time_limit,
                  "target_gap": args.target_gap, "evaluations": factory}
        weighted = weighted_bounds(model, None, method, paper_alpha1=report.bounds.alpha1,
                                   paper_alpha2=report.bounds.alpha2, **search)
        # L_l ⪯ Z(Φ_l) ⪯ U_l: a certified weighted α₁ is a floor of the exact inf λ_min
        # and a certified α₂ʷ a ceiling of the exact sup λ_max.
        exact = exact_mass_extremes(model, None, bounds.CERTIFIED, floor=weighted.alpha1,
                                    ceiling=weighted.alpha2, **search) if args.certified else None
    floor, floor_note = _loading_floor(model, args, exact, floors)
    if args.json:
        data = report.to_dict()
        mmb = data["mass_matrix_bounds"]
        mmb["weighted"] = weighted.to_dict()
        if exact is not None:
            mmb["exact"] = exact.to_dict()
            # M(q, Θ₀ + load) ⪰ M₀(q) for any consistent load body: a loading floor.
            mmb["loading_lower_bound"] = exact.lambda_min_bracket[0]
        mmb["loading_floor"] = None if floor is None else floor.to_dict()
        mmb["loading_floor_note"] = floor_note
        data["locked_joints"] = dict(model.locked_joints)
        json.dump(data, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_bounds_table(report, model.locked_joints))
        sys.stdout.write(format_sharper_table(weighted, exact))
        sys.stdout.write(format_floor(floor, floor_note))
    return 0


def _loading_floor(model: Any, args: argparse.Namespace, exact: GramExtremes | None,
                   floors: Any) -> tuple[Any, str]:
    """The base arm's certified loading floor: stored (--certified) or read from the cache."""
    from robot_tv_dynamics.bounds.cache import resolve_cache_dir
    from robot_tv_dynamics.exceptions import RobotTvDynamicsError

    directory = resolve_cache_dir(args.cache_dir)
    if exact is not None:
        if directory is None:
            found = floors.floor_from_search(model, exact, args.time_limit, args.target_gap)
            return found, ""
        try:
            found = floors.store_loading_floor(model, directory, exact, args.time_limit,
                                               args.target_gap)
        except RobotTvDynamicsError as error:
            found = floors.floor_from_search(model, exact, args.time_limit, args.target_gap)
            return found, f"not cached: {error}"
        return found, f"cached in {floors.record_path(directory, model, floors.LOADING_FLOOR)}"
    if directory is None:
        return None, "loading floor: no cache (--cache-dir ''); run with --certified"
    found, problem = floors.read_loading_floor(model, directory)
    if found is None:
        return None, (problem or "loading floor: not searched yet for this arm (run bounds "
                      "--certified once; it is then cached)")
    return found, f"read from {floors.record_path(directory, model, floors.LOADING_FLOOR)}"


def format_bounds_table(
    report: bounds.BoundsReport, locked_joints: Mapping[str, float] | None = None
) -> str:
    """The human-readable ``bounds`` output (``locked_joints``: name → position, if any)."""
    from robot_tv_dynamics.bounds import LEMMA3_BOUND

    ext, mmb = report.extremes, report.bounds
    label = ext.method
    lines = [f"URDF {report.source}", f"  sha256 {report.urdf_sha256[:16]}…"]
    if locked_joints:
        lines.append("  locked joints: " + ", ".join(
            f"{name} = {position:g}" for name, position in locked_joints.items()))
    lines += ["",
              "Per body, nominal Θ (Definition 3; Theorem 1: consistent iff μ > 0):",
              f"  {'body':<28} {'μ = λmin f(Φ)':>15} {'ν = λmax f(Φ)':>15}  consistent"]
    for name, mu, nu in zip(report.body_names, report.margins, report.sizes, strict=True):
        lines.append(f"  {name:<28} {mu:>15.6g} {nu:>15.6g}  {'yes' if mu > 0 else 'NO'}")
    g_lo, g_hi = ext.inf_lambda_min_JtJ_bracket
    d_lo, d_hi = ext.sup_sigma_max_J_sq_bracket
    kind = "certified bracket" if ext.certified else "sampled; only one end is known"
    lines += [
        "",
        f"Jacobian extremes over the joint-limit box [{label}]:",
        f"  searched joints: {', '.join(ext.active_joints) or '(none)'}",
        f"  γ = inf λmin(JᵀJ)  = {format_number(ext.inf_lambda_min_JtJ)}   "
        f"[{format_number(g_lo)}, {format_number(g_hi)}] ({kind})",
        f"  δ = sup σmax(J)²   = {format_number(ext.sup_sigma_max_J_sq)}   "
        f"[{format_number(d_lo)}, {format_number(d_hi)}]",
        f"  relative gap {format_number(100 * ext.gap, 4)} %, {ext.evaluations} evaluations, "
        f"{ext.elapsed_s:.1f} s",
    ]
    if not ext.certified:
        lines.append("  note: a sampled inf only bounds γ from above and a sampled sup only "
                     "bounds δ from below (use --certified for bounds)")
    for note in ext.notes:
        lines.append(f"  dropped: {note}")
    lines += [
        "",
        f"Mass-matrix bounds [{mmb.method}]:",
        f"  α₁ = min μ · γ     = {format_number(mmb.alpha1)}   (Theorem 2, eq. 45; γ = lower end "
        f"{format_number(mmb.gamma)}; with the point estimate: "
        f"{format_number(mmb.alpha1_estimate)})",
        f"  α₂ = 2 max ν · δ   = {format_number(mmb.alpha2)}   (Theorem 3, eq. 46; δ = upper end "
        f"{format_number(mmb.delta)}; with the point estimate: "
        f"{format_number(mmb.alpha2_estimate)})",
        "",
        f"Normality (Definition 2): {_verdict(report.normality)}",
        f"Assumption 2 (Lemma 2):   {_verdict(report.assumption2)}",
        f"Lemma 3: σmax(Q₀) = {report.lemma3_sigma_max_q0:.12g} "
        f"(≤ √2 = {LEMMA3_BOUND:.12g})",
        "",
    ]
    return "\n".join(lines)


def format_sharper_table(weighted: WeightedBounds, exact: GramExtremes | None) -> str:
    """The weighted and (certified) exact bounds, after :func:`format_bounds_table`."""
    low, up = weighted.lower, weighted.upper
    lines = [f"Sharper bounds [{weighted.method}] (docs/concepts.md, Sharper bounds):",
             f"  weighted α₁ʷ = {format_number(weighted.alpha1)}   (lower weight {low.weights}; "
             f"λmin bracket [{format_number(low.lambda_min_bracket[0])}, "
             f"{format_number(low.lambda_min_bracket[1])}])",
             f"  weighted α₂ʷ = {format_number(weighted.alpha2)}   (upper weight {up.weights}; "
             f"λmax bracket [{format_number(up.lambda_max_bracket[0])}, "
             f"{format_number(up.lambda_max_bracket[1])}])"]
    if exact is not None:
        lo, hi = exact.lambda_min_bracket, exact.lambda_max_bracket
        lines += [f"  exact inf λmin(M) ∈ [{format_number(lo[0])}, {format_number(lo[1])}], "
                  f"sup λmax(M) ∈ [{format_number(hi[0])}, {format_number(hi[1])}]  "
                  f"({exact.elapsed_s:.1f} s, {exact.boxes} evaluations)"]
    return "\n".join(lines) + "\n\n"


def format_floor(floor: Any, note: str) -> str:
    """The loading floor lines (the floor record, or None with why it is not known)."""
    if floor is None:
        return f"Loading floor [certified]: not known — {note}\n"
    lo, hi = floor.bracket
    return (f"Loading floor [certified]: λmin(M(q, Θ₀ + load)) ≥ {format_number(floor.value)} for "
            "every q and every consistent load\n"
            f"  inf_q λmin(M₀) ∈ [{format_number(lo)}, {format_number(hi)}], "
            f"searched {floor.elapsed_s:.1f} s"
            f" ({floor.origin}; {note})\n"
            "  an inconsistent load estimate (Z(ΔΦ) not ⪰ 0) is exactly what breaks it\n")


def _verdict(verdict: bounds.Assessment) -> str:
    word = {True: "holds", False: "FAILS", None: "undetermined"}[verdict.holds]
    return f"{word} [{verdict.method}] — {verdict.reason}"
