"""Timing of the Jacobian extremes γ, δ: sampled estimate and certified bracket.

Run: ``python benchmarks/bench_bounds.py [--quick | --checkpoints S …] [--robots ur5 panda
panda-locked]``
and ``python benchmarks/bench_bounds.py --workers [--seconds S] [--robots ...]``.

For each robot (``panda-locked``: the Panda with both fingers locked at 0, the 7-dof arm):
the wall time of the sampled estimate (goal ≤ 5 s), and one certified branch-and-bound
run whose relative gap is read at checkpoints (1 min and 10 min by default; goal: ≤ 5 %
within 10 min on the UR5). ``--quick`` uses 10 s and 30 s. The certified run is
single-threaded numpy; note the machine load in the output.

``--workers``: the certified γ/δ brackets and the exact inf λ_min(M) and sup λ_max(M)
brackets of each robot (default: the locked-finger Panda, the 7-dof arm), each of the
three searches up to S seconds (default 60; the exact extremes searched one side at a
time), with 1 worker (serial) and with 2 local Dask workers.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "test"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from support.particle_lagrangian import find_example_robot_urdf  # noqa: E402

from robot_tv_dynamics import RobotModel  # noqa: E402
from robot_tv_dynamics.bounds import (  # noqa: E402
    SearchProgress,
    certified_jacobian_extremes,
    joint_search_box,
    sampled_jacobian_extremes,
)

#: The robots of the table: name → (example-robot-data URDF, locked joints).
ROBOTS = {
    "ur5": ("ur5", {}),
    "panda": ("panda", {}),
    "panda-locked": ("panda", {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
}


def robot(name: str) -> RobotModel:
    """The robot ``name`` of :data:`ROBOTS`."""
    urdf, locked = ROBOTS[name]
    return RobotModel.from_urdf(find_example_robot_urdf(urdf), locked or None)


def bench(name: str, checkpoints: list[float]) -> dict[str, object]:
    model = robot(name)
    start = time.perf_counter()
    sampled = sampled_jacobian_extremes(model)
    sampled_s = time.perf_counter() - start
    gaps: dict[float, float] = {}
    reached: dict[str, float] = {}
    pending = sorted(checkpoints)

    def progress(p: SearchProgress) -> None:
        while pending and p.elapsed_s >= pending[0]:
            gaps[pending.pop(0)] = p.gap
        if p.gap <= 0.05 and "5%" not in reached:
            reached["5%"] = p.elapsed_s
        if p.gap <= 0.01 and "1%" not in reached:
            reached["1%"] = p.elapsed_s

    certified = certified_jacobian_extremes(
        model, time_limit=max(checkpoints), target_gap=0.0, progress=progress)
    for checkpoint in pending:  # the run ended early (gap 0) or exactly at the limit
        gaps[checkpoint] = certified.gap
    return {
        "robot": name,
        "active": len(joint_search_box(model).active_joints),
        "nv": model.nv,
        "sampled_s": sampled_s,
        "sampled_gamma": sampled.inf_lambda_min_JtJ,
        "sampled_delta": sampled.sup_sigma_max_J_sq,
        "gaps": gaps,
        "reached": reached,
        "gamma": certified.inf_lambda_min_JtJ_bracket,
        "delta": certified.sup_sigma_max_J_sq_bracket,
        "boxes": certified.evaluations,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="checkpoints 10 s and 30 s")
    parser.add_argument("--checkpoints", nargs="+", type=float, metavar="S",
                        help="read the gap at these times [s] (default 60 600)")
    parser.add_argument("--robots", nargs="+", choices=ROBOTS,
                        help="default: ur5 panda; with --workers: panda-locked")
    parser.add_argument("--workers", action="store_true",
                        help="the certified searches with 1 and 2 Dask workers instead")
    parser.add_argument("--seconds", type=float, default=60.0,
                        help="with --workers: the budget of each search [s] (default 60)")
    args = parser.parse_args()
    if args.workers:
        for k, name in enumerate(args.robots or ["panda-locked"]):
            if k:
                print()
            bench_workers(name, seconds=args.seconds)
        return
    args.robots = args.robots or ["ur5", "panda"]
    checkpoints = [10.0, 30.0] if args.quick else (args.checkpoints or [60.0, 600.0])
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"cores {os.cpu_count()}, load average at start {load:.2f}")
    rows = [bench(name, checkpoints) for name in args.robots]
    head = " | ".join(f"gap@{c:g}s" for c in checkpoints)
    print(f"\n| robot | searched/nv | sampled [s] | γ̂ (sampled) | δ̂ (sampled) | {head} "
          "| t(gap≤5%) [s] | γ bracket | δ bracket | boxes |")
    print("|---" * (9 + len(checkpoints)) + "|")
    for row in rows:
        gaps = row["gaps"]
        assert isinstance(gaps, dict)
        reached = row["reached"]
        assert isinstance(reached, dict)
        cells = " | ".join(f"{100 * gaps[c]:.3g} %" for c in checkpoints)
        t5 = f"{reached['5%']:.0f}" if "5%" in reached else "—"
        g_lo, g_hi = row["gamma"]  # type: ignore[misc]
        d_lo, d_hi = row["delta"]  # type: ignore[misc]
        print(f"| {row['robot']} | {row['active']}/{row['nv']} | {row['sampled_s']:.2f} "
              f"| {row['sampled_gamma']:.5g} | {row['sampled_delta']:.5g} | {cells} | {t5} "
              f"| [{g_lo:.5g}, {g_hi:.5g}] | [{d_lo:.5g}, {d_hi:.5g}] | {row['boxes']} |")
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"\nload average at end {load:.2f}")


# ------------------------------------------------------------------- parallel (Dask)
def bench_workers(name: str = "panda-locked", seconds: float = 60.0) -> list[dict[str, object]]:
    """Certified γ/δ and exact λ_min(M), λ_max(M) of one arm, 1 worker (serial) vs 2 (Dask).

    Run: ``python benchmarks/bench_bounds.py --workers [--seconds S]`` (not part of the
    default run; S = the budget of each search, default 60).
    Wall times and gaps reached within ``seconds`` each; on a machine shared with other
    jobs the 2-worker speed-up is bounded by the free cores (``os.getloadavg`` printed).
    """
    from robot_tv_dynamics.bounds.bisection import BoxSource
    from robot_tv_dynamics.bounds.evaluator import relative_gap
    from robot_tv_dynamics.bounds.mass import exact_mass_extremes
    from robot_tv_dynamics.bounds.parallel import DaskBoxEvaluation, dask_client

    model = robot(name)
    load_start = os.getloadavg()[0]
    print(f"cores {os.cpu_count()}, load average at start {load_start:.2f}; {name}, each "
          f"search up to {seconds:g} s (the budget is checked between batches of boxes)",
          flush=True)
    rows: list[dict[str, object]] = []
    for workers in (1, 2):
        with dask_client(workers=workers) as client:
            def factory(source: BoxSource) -> DaskBoxEvaluation:
                return DaskBoxEvaluation(client, source)
            factory_or_none = None if workers == 1 else factory
            start = time.perf_counter()
            ext = certified_jacobian_extremes(model, time_limit=seconds, target_gap=0.01,
                                              evaluations=factory_or_none)
            jac_s = time.perf_counter() - start
            start = time.perf_counter()
            low = exact_mass_extremes(model, time_limit=seconds, target_gap=0.01,
                                      sides=("min",), evaluations=factory_or_none)
            low_s = time.perf_counter() - start
            start = time.perf_counter()
            high = exact_mass_extremes(model, time_limit=seconds, target_gap=0.01,
                                       sides=("max",), evaluations=factory_or_none)
            high_s = time.perf_counter() - start
        rows.append({"workers": workers, "load": os.getloadavg()[0],
                     "gamma": ext.inf_lambda_min_JtJ_bracket,
                     "delta": ext.sup_sigma_max_J_sq_bracket,
                     "jacobian_boxes": ext.evaluations, "jacobian_s": jac_s,
                     "exact_min": low.lambda_min_bracket, "exact_min_gap": low.gap_min,
                     "exact_min_boxes": low.boxes, "exact_min_s": low_s,
                     "exact_max": high.lambda_max_bracket, "exact_max_gap": high.gap_max,
                     "exact_max_boxes": high.boxes, "exact_max_s": high_s})
    print("\n| workers | γ bracket | gap | δ bracket | gap | boxes, wall [s] "
          "| exact λ_min(M) bracket [kg·m²] | gap | boxes, wall [s] "
          "| exact λ_max(M) bracket [kg·m²] | gap | boxes, wall [s] | load average after |")
    print("|---" * 13 + "|")
    for row in rows:
        g_lo, g_hi = row["gamma"]  # type: ignore[misc]
        d_lo, d_hi = row["delta"]  # type: ignore[misc]
        m_lo, m_hi = row["exact_min"]  # type: ignore[misc]
        x_lo, x_hi = row["exact_max"]  # type: ignore[misc]
        print(f"| {row['workers']} | [{g_lo:.5g}, {g_hi:.5g}] "
              f"| {100 * relative_gap(g_lo, g_hi):.3g} % | [{d_lo:.5g}, {d_hi:.5g}] "
              f"| {100 * relative_gap(d_lo, d_hi):.3g} % "
              f"| {row['jacobian_boxes']}, {row['jacobian_s']:.1f} | [{m_lo:.4g}, {m_hi:.4g}] "
              f"| {100 * row['exact_min_gap']:.3g} % "  # type: ignore[operator]
              f"| {row['exact_min_boxes']}, {row['exact_min_s']:.1f} | [{x_lo:.4g}, {x_hi:.4g}] "
              f"| {100 * row['exact_max_gap']:.3g} % "  # type: ignore[operator]
              f"| {row['exact_max_boxes']}, {row['exact_max_s']:.1f} | {row['load']:.2f} |")
    return rows


if __name__ == "__main__":
    main()
