"""The ``retime_cases`` fragment of ``scripts/docs_numbers.py``.

The measured cases, the playback check and the smoothing example of docs/retiming.md, on
the curved paths of test/support/retime_paths.py (those test/retiming/test_retime.py
retimes). Deterministic but for the runtimes: test/test_docs_numbers.py re-runs them.
"""

from __future__ import annotations

from typing import Any

from .common import UR5, Fragment, example_urdf, stamp, test_support

#: What the agreement test allows on durations [s] and ratios (absolute).
RETIME_CASES_TOLERANCE = {"duration_s": 2e-3, "ratio": 2e-3, "relative": 0.02}


def retime_test_paths() -> Any:
    """test/support/retime_paths.py: the retiming tests' curved rest-to-rest paths and loads."""
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


#: What the registry lists of this module.
FRAGMENTS = (Fragment("retime_cases", run_retime_cases, render_retime_cases),)
