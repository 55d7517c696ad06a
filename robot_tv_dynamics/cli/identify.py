"""``robot-tv-dynamics identify``: Θ and friction from measured joint data.

Reads a rosbag2 or CSV of joint states with efforts, fits constant Θ + friction by least
squares subject to f(Φ_l) ⪰ εI for every body (see robot_tv_dynamics.identification),
and writes ``identified.urdf``, ``theta.yaml``, ``friction.yaml``, ``report.png`` and
``summary.json`` into ``--out``. Relative paths resolve against the current directory.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from robot_tv_dynamics.cli.common import (
    add_effort_arguments,
    add_lock_argument,
    add_progress_arguments,
    checked_number,
    effort_option,
    load_model,
    lock_option,
    positive_float,
)
from robot_tv_dynamics.evaluation.io import load_payload
from robot_tv_dynamics.evaluation.payload import Payload
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.friction import (
    DEFAULT_COULOMB_VELOCITY,
    FRICTION_TERMS,
    write_friction_file,
)
from robot_tv_dynamics.identification.data import (
    DEFAULT_CUTOFF_HZ,
    JointSamples,
    PreparedData,
    load_samples,
    prepare,
)
from robot_tv_dynamics.identification.gains import (
    GainAnchor,
    GainFit,
    fit_effort_scale,
    require_identifiable,
)
from robot_tv_dynamics.identification.pipeline import IdentifyOptions, identify
from robot_tv_dynamics.identification.progress import Progress
from robot_tv_dynamics.identification.report import format_table, plot_report, summary
from robot_tv_dynamics.identification.solve import DEFAULT_MARGIN, DEFAULT_PRIOR_WEIGHT
from robot_tv_dynamics.identification.urdf_writer import identified_urdf, write_theta_yaml
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.urdf import read_urdf_file

DESCRIPTION = (
    "Least squares on the regressor of eq. (39) (constant Θ) plus per-joint friction "
    "(viscous·q̇ + coulomb·tanh(q̇/v_c) + offset), subject to f(Φ_l) ⪰ εI for every body "
    "(an SDP: Clarabel, SCS fallback), with directions the data cannot excite held at the "
    "URDF prior. Writes identified.urdf, theta.yaml, friction.yaml, report.png and "
    "summary.json into --out. CSV columns: time, <joint>.position, <joint>.effort and "
    "optionally <joint>.velocity.")

#: Files written into ``--out``.
OUTPUTS = ("identified.urdf", "theta.yaml", "friction.yaml", "report.png", "summary.json")


def _fraction(text: str) -> float:
    return checked_number(text, float, lambda v: 0.0 <= v <= 0.9, "in [0, 0.9]")


def _non_negative(text: str) -> float:
    return checked_number(text, float, lambda v: v >= 0, "a non-negative number")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``identify``."""
    parser.description = DESCRIPTION
    parser.add_argument("--urdf", required=True, help="path of the URDF file (the prior)")
    add_lock_argument(parser)
    add_effort_arguments(parser)
    parser.add_argument("--data", required=True, metavar="FILE",
                        help="rosbag2 (.mcap file, MCAP or sqlite3 bag folder) with "
                             "sensor_msgs/JointState incl. effort, or a .csv")
    parser.add_argument("--topic", default=None, metavar="NAME",
                        help="JointState topic (default: the only one, else /joint_states)")
    parser.add_argument("--friction", choices=list(FRICTION_TERMS), default="full",
                        help="friction terms: none; viscous; coulomb (= viscous + Coulomb); "
                             "full (= viscous + Coulomb + offset) (default full)")
    parser.add_argument("--coulomb-velocity", type=positive_float, default=DEFAULT_COULOMB_VELOCITY,
                        metavar="V", help="smoothing velocity v_c of tanh(q̇/v_c) [rad/s] "
                        f"(default {DEFAULT_COULOMB_VELOCITY:g})")
    parser.add_argument("--margin", type=positive_float, default=DEFAULT_MARGIN, metavar="EPS",
                        help=f"ε of f(Φ_l) ⪰ εI [kg·m²] (default {DEFAULT_MARGIN:g})")
    parser.add_argument("--prior-weight", type=_non_negative, default=DEFAULT_PRIOR_WEIGHT,
                        metavar="W", help="weight of the URDF prior term (default "
                        f"{DEFAULT_PRIOR_WEIGHT:g}; 0 = none)")
    parser.add_argument("--holdout", type=_fraction, default=0.2, metavar="FRACTION",
                        help="fraction of the record (its tail) held out (default 0.2)")
    parser.add_argument("--cutoff", type=positive_float, default=DEFAULT_CUTOFF_HZ, metavar="HZ",
                        help="zero-phase Butterworth cut-off for q, q̇ [Hz] "
                             f"(default {DEFAULT_CUTOFF_HZ:g})")
    anchor = parser.add_argument_group(
        "effort gains", "fit a gain correction per joint (effort unit → N·m), when the "
        "--effort-* gains are not trusted: a second record of the same arm holding a payload "
        "you know decides them (no record of the arm alone can); summary.json gets the gains "
        "to pass as --effort-gain (docs/identification.md#effort-gains)")
    anchor.add_argument("--anchor-data", default=None, metavar="FILE",
                        help="the second record (same topic and --effort-* options), the "
                             "payload held throughout")
    anchor.add_argument("--anchor-payload", default=None, metavar="YAML",
                        help="that payload: link, mass, com, inertia (as franka set_load / "
                             "UR set_payload take it)")
    parser.add_argument("--out", default="identification", metavar="DIR",
                        help="output directory (default ./identification)")
    parser.add_argument("--json", action="store_true",
                        help="print the summary as one JSON object on stdout")
    add_progress_arguments(parser, "progress bars")


def _fit_gains(args: argparse.Namespace, model: RobotModel, prepared: PreparedData,
               show: bool) -> GainFit | None:
    """The per-joint gain correction of ``--anchor-data``/``--anchor-payload`` (None: not asked).

    Raises:
        InvalidInputError: one of the two options without the other.
        IdentificationDataError: the anchor unreadable, or a gain the records do not decide.
    """
    if (args.anchor_data is None) != (args.anchor_payload is None):
        raise InvalidInputError("--anchor-data/--anchor-payload", "give both: the record "
                                "and the payload held in it")
    if args.anchor_data is None:
        return None
    payload = load_payload(args.anchor_payload)
    if not isinstance(payload, Payload):
        raise InvalidInputError("--anchor-payload", "must be a constant payload (link, mass, "
                                "com, inertia), not a loading process")
    samples = _read(args, model, args.anchor_data, "reading the anchor", show)
    anchor = GainAnchor(prepare(samples, args.cutoff), payload, args.anchor_data)
    return require_identifiable(fit_effort_scale(
        model, prepared, anchor, args.friction, args.coulomb_velocity))


def _read(args: argparse.Namespace, model: RobotModel, path: str, label: str,
          show: bool) -> JointSamples:
    """One record's samples, as the ``--topic`` and ``--effort-*`` options say, with a bar."""
    bar = Progress(label, show)
    try:
        return load_samples(Path(path), model, args.topic, bar,
                            effort_option(args, model.joint_names))
    finally:
        bar.close()


def _gain_lines(gains: dict[str, Any]) -> str:
    """The fitted gains, and the options that carry them to estimate, observe and the nodes."""
    errors = ", ".join(f"{100 * e:.2g} %" for e in gains["relative_error"])
    values = ",".join(f"{g:.6g}" for g in gains["effort_gain"])
    return (f"  effort gains fitted against {gains['anchor_data']} (standard errors {errors}); "
            f"pass them on: --effort-gain {values} (node parameter effort_gain)\n")


def run(args: argparse.Namespace) -> int:
    """Run ``identify``; returns the exit code (0)."""
    urdf = Path(args.urdf)
    xml = read_urdf_file(urdf)
    model = load_model(str(urdf), lock_option(args.lock))
    show = args.progress if args.progress is not None else sys.stderr.isatty()
    samples = _read(args, model, args.data, "reading data", show)
    prepared = prepare(samples, args.cutoff)
    gains = _fit_gains(args, model, prepared, show)
    if gains is not None:
        prepared = replace(prepared, tau=prepared.tau * gains.scale,
                           tau_measured=prepared.tau_measured * gains.scale)
    options = IdentifyOptions(
        friction=args.friction, margin=args.margin, holdout=args.holdout,
        prior_weight=args.prior_weight, coulomb_velocity=args.coulomb_velocity)
    bars: list[Progress] = []

    def progress(label: str) -> Progress:
        bars.append(Progress(label, show))
        return bars[-1]

    try:
        result = identify(model, prepared, options, progress)
    finally:
        for item in bars:
            item.close()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    identified = result.models["identified"]
    text, writeback = identified_urdf(xml, model, identified.theta, str(urdf))
    (out / "identified.urdf").write_text(text, encoding="utf-8")
    write_theta_yaml(out / "theta.yaml", model, identified.theta)
    write_friction_file(out / "friction.yaml", identified.friction)
    data = summary(result, model, urdf=str(urdf), data=str(args.data), topic=args.topic,
                   rate=prepared.rate, cutoff=prepared.cutoff, n_raw=samples.n_samples
                   + samples.dropped_nonfinite + samples.dropped_duplicate,
                   writeback=writeback)
    data["outputs"] = {name: str(out / name) for name in OUTPUTS}
    if gains is not None:
        data["effort_gains"] = {"anchor_data": args.anchor_data,
                                "anchor_payload": args.anchor_payload,
                                **gains.as_dict(effort_option(args, model.joint_names))}
    data["locked_joints"] = list(args.lock)  # as --lock took them: what estimate --model uses
    plot_report(out / "report.png", result, model)
    (out / "summary.json").write_text(json.dumps(data, indent=2, allow_nan=False) + "\n",
                                      encoding="utf-8")
    for warning in result.warnings:
        sys.stderr.write(f"identify: warning: {warning}\n")
    if args.json:
        json.dump(data, sys.stdout, allow_nan=False)
        sys.stdout.write("\n")
    else:
        sys.stdout.write(format_table(data))
        if gains is not None:
            sys.stdout.write(_gain_lines(data["effort_gains"]))
        sys.stdout.write(f"  wrote {', '.join(str(out / name) for name in OUTPUTS)}\n")
    return 0
