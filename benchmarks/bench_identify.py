"""Benchmark of ``identify``: 20 s of 1 kHz 7-dof data (Panda, fingers locked) in ≤ 10 s.

Run: ``source scripts/ros_env.sh && .venv/bin/python benchmarks/bench_identify.py``
(``--seconds``, ``--rate`` to change the record; ``--out DIR`` keeps the outputs).

Makes the data first (not timed): an exciting trajectory from ``design_excitation``
(two 10 s periods), Θ_true = the URDF with masses, COMs and second moments changed by
20–50 %, τ by eq. (39) (``RobotModel.inverse_dynamics``) + friction + per-joint noise
(0.05 … 0.3 N·m), q̇ with 1e-3 rad/s noise, written to an MCAP with rosbags as
ros/demo.py records. Then times every stage of the command on that file — bag reading,
filtering, regressor stacking, least squares (incl. noise estimate and QR), the SDP,
evaluation, writing the five outputs — and prints the held-out RMS / noise per joint.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "test"))

from support.identification_helpers import (  # noqa: E402
    PANDA_LOCK,
    perturbed_theta,
    random_friction,
    simulate,
    write_joint_state_bag,
)

from robot_tv_dynamics import RobotModel  # noqa: E402
from robot_tv_dynamics.friction import write_friction_file  # noqa: E402
from robot_tv_dynamics.identification.data import load_samples, prepare  # noqa: E402
from robot_tv_dynamics.identification.excitation import design_excitation  # noqa: E402
from robot_tv_dynamics.identification.pipeline import identify  # noqa: E402
from robot_tv_dynamics.identification.report import plot_report, summary  # noqa: E402
from robot_tv_dynamics.identification.urdf_writer import (  # noqa: E402
    identified_urdf,
    write_theta_yaml,
)
from robot_tv_dynamics.simulation import example_robot_urdf  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--rate", type=float, default=1000.0)
    parser.add_argument("--out", default=None)
    args = parser.parse_args()
    urdf = str(example_robot_urdf())
    model = RobotModel.from_urdf(urdf, PANDA_LOCK)
    rng = np.random.default_rng(0)
    start = time.perf_counter()
    design = design_excitation(model, duration=args.seconds, harmonics=5,
                               base_frequency=2.0 / args.seconds)
    design_s = time.perf_counter() - start
    sigma = np.linspace(0.05, 0.3, model.nv)
    start = time.perf_counter()
    sim = simulate(model, perturbed_theta(model, rng), design.trajectory, args.rate,
                   args.seconds, sigma, random_friction(model.nv, rng), rng)
    folder = Path(args.out) if args.out else Path(tempfile.mkdtemp(prefix="bench_identify_"))
    folder.mkdir(parents=True, exist_ok=True)
    pad = np.zeros((sim.t.size, 2))
    bag = write_joint_state_bag(folder / "run.mcap", list(model.joint_names) + PANDA_LOCK,
                                sim.t, np.c_[sim.q, pad], np.c_[sim.qd, pad],
                                np.c_[sim.tau, pad])
    print(f"data (not timed): excitation design {design_s:.2f} s (condition number "
          f"{design.condition_number:.1f}); {sim.t.size} samples × {model.nv} joints "
          f"simulated and written in {time.perf_counter() - start:.2f} s → {bag}")

    stages: dict[str, float] = {}
    total = time.perf_counter()
    start = time.perf_counter()
    samples = load_samples(bag, model)
    stages["read bag"] = time.perf_counter() - start
    start = time.perf_counter()
    prepared = prepare(samples)
    stages["filter"] = time.perf_counter() - start
    start = time.perf_counter()
    result = identify(model, prepared)
    identify_s = time.perf_counter() - start
    stages["regressor stacking"] = result.stage_times_s["regressor_s"]
    stages["least squares (σ, QR, OLS, rank)"] = result.stage_times_s["least_squares_s"]
    stages[f"SDP ({result.solver})"] = result.stage_times_s["sdp_s"]
    stages["evaluation"] = result.stage_times_s["evaluation_s"]
    stages["identify overhead (cvxpy build, ...)"] = identify_s - sum(
        result.stage_times_s.values())
    start = time.perf_counter()
    xml = Path(urdf).read_text(encoding="utf-8")
    text, writeback = identified_urdf(xml, model, result.models["identified"].theta, urdf)
    (folder / "identified.urdf").write_text(text, encoding="utf-8")
    write_theta_yaml(folder / "theta.yaml", model, result.models["identified"].theta)
    write_friction_file(folder / "friction.yaml", result.models["identified"].friction)
    data = summary(result, model, urdf=urdf, data=str(bag), topic=None, rate=prepared.rate,
                   cutoff=prepared.cutoff, n_raw=samples.n_samples, writeback=writeback)
    (folder / "summary.json").write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
    stages["write urdf/yaml/json"] = time.perf_counter() - start
    start = time.perf_counter()
    plot_report(folder / "report.png", result, model)
    stages["report.png"] = time.perf_counter() - start
    total_s = time.perf_counter() - total
    print(f"\nidentify on {samples.n_samples} samples ({args.seconds:g} s at {args.rate:g} Hz), "
          f"{result.n_parameters} unknowns, rank {result.rank}:")
    for name, seconds in stages.items():
        print(f"  {name:<40} {seconds:7.3f} s")
    print(f"  {'total':<40} {total_s:7.3f} s  ({'≤' if total_s <= 10 else '>'} 10 s)")
    rows = np.rint((result.t[result.n_fit:] - samples.t[0]) * args.rate).astype(int)
    noise_rms = np.sqrt(np.mean(sim.noise[rows] ** 2, axis=0))
    ratio = result.models["identified"].rms_holdout / noise_rms
    print("\nheld-out RMS / noise RMS per joint:", np.array2string(ratio, precision=3))
    print(f"min margin λ_min(f(Φ)) identified {result.models['identified'].margins.min():.3g}, "
          f"unconstrained {result.models['unconstrained'].margins.min():.3g}")
    print(f"outputs in {folder}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
