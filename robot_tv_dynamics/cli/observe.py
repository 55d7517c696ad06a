"""``robot-tv-dynamics observe``: the momentum observer over a recorded rosbag2.

Reads joint_states (with effort) and, when the bag has them, Θ(t) and Ψ(t) from
``inertial_parameters`` and ``psi`` (:mod:`~robot_tv_dynamics.observer.replay` states the
matching rule), runs the generalized or classical observer and the contact detector,
and prints a summary, or with ``--json`` one object ``{"model", "t", "external_torque",
"contacts", ...}`` (``t`` seconds from the first joint_states sample, rows of
``external_torque`` in ``joint_names`` order). Relative paths resolve against the
current directory. Exit codes: 0 (also when contacts were found), 2 bad input.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.cli.common import (
    add_effort_arguments,
    add_lock_argument,
    effort_option,
    load_model,
    lock_option,
    positive_numbers,
)
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.friction import load_friction_file as load_friction
from robot_tv_dynamics.observer.contact import MODES, ContactDetector
from robot_tv_dynamics.observer.observer import KINDS, TORQUE_RULES, ObserverConfig
from robot_tv_dynamics.observer.replay import (
    Observation,
    ObserverRecording,
    observe,
    read_observer_bag,
)

#: Contacts listed in the text summary (``--json`` has all).
MAX_LISTED = 20


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``observe`` to ``parser``."""
    parser.add_argument("--urdf", required=True, help="the arm's URDF file")
    add_lock_argument(parser)
    add_effort_arguments(parser)
    parser.add_argument("--friction", metavar="FILE",
                        help="YAML joint → {viscous, coulomb, offset, coulomb_velocity}; "
                             "τ_f is subtracted from the measured effort")
    parser.add_argument("--data", required=True, metavar="BAG",
                        help="rosbag2: a directory with metadata.yaml or one .mcap/.db3 file")
    parser.add_argument("--model", choices=KINDS, default="generalized",
                        help="generalized: Θ(t), Ψ(t) from the bag; classical: Θ of the "
                             "first sample (URDF when the bag has none), Ψ = 0 "
                             "(default: %(default)s)")
    parser.add_argument("--gain", type=positive_numbers, default=[50.0], metavar="K_O",
                        help="observer gain [1/s], one value or one per joint "
                             "(comma-separated); time constant 1/K_O (default: 50)")
    parser.add_argument("--threshold", type=positive_numbers, default=[1.0], metavar="N·m",
                        help="contact threshold on |r_i|, one value or one per joint "
                             "(default: 1.0)")
    parser.add_argument("--contact-mode", choices=MODES, default="joint",
                        help="joint: |r_i| > threshold_i per joint; norm: ||r|| > threshold "
                             "(one value) (default: %(default)s)")
    parser.add_argument("--release", type=float, default=0.5,
                        help="a contact ends below release × threshold (default: 0.5)")
    parser.add_argument("--torque-rule", choices=TORQUE_RULES, default="trapezoidal",
                        help="quadrature of the measured torque over a sample "
                             "(default: %(default)s)")
    parser.add_argument("--joint-topic", default="/joint_states",
                        help="the JointState topic (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--plot", metavar="OUT.png", help="plot the residuals to this file")


def _json_number(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def result_dict(observation: Observation, recording: ObserverRecording,
                config: ObserverConfig, detector: ContactDetector) -> dict[str, Any]:
    """The ``--json`` object."""
    return {
        "model": observation.kind,
        "joint_names": recording.joint_names,
        "t": [float(t) for t in observation.t],
        "external_torque": [[float(v) for v in row] for row in observation.external_torque],
        "contacts": [event.as_dict() for event in observation.contacts],
        "gain": [float(g) for g in np.broadcast_to(config.gain, (len(recording.joint_names),))],
        "threshold": [float(v) for v in detector.threshold],
        "release": detector.release,
        "contact_mode": detector.mode,
        "torque_rule": config.torque_rule,
        "samples": int(observation.t.size),
        "dropped": recording.dropped,
        "skipped": recording.skipped,
        "notes": recording.notes,
        "peak": [_json_number(float(v)) for v in np.abs(observation.external_torque).max(axis=0)],
    }


def _summary(data: dict[str, Any]) -> str:
    lines = [f"observer: {data['model']}, {data['samples']} samples, K_O = "
             f"{sorted(set(data['gain']))} 1/s, threshold {sorted(set(data['threshold']))} N·m"]
    for reason, count in data["dropped"].items():
        lines.append(f"dropped {count} joint_states samples: {reason}")
    for reason, count in data["skipped"].items():
        lines.append(f"skipped {count} array messages: {reason}")
    lines += [f"note: {note}" for note in data["notes"]]
    width = max(len(n) for n in data["joint_names"])
    lines.append("peak |τ̂_ext| per joint [N·m]:")
    lines += [f"  {name:<{width}}  {peak:.4g}" for name, peak
              in zip(data["joint_names"], data["peak"], strict=True)]
    if not data["contacts"]:
        lines.append("contacts: none")
    for c in data["contacts"][:MAX_LISTED]:
        end = "end of data" if c["t_end"] is None else f"{c['t_end']:.3f} s"
        lines.append(f"contact: {c['joint']} {c['t_start']:.3f} s – {end}, peak "
                     f"{c['peak']:.3f} N·m")
    if len(data["contacts"]) > MAX_LISTED:
        lines.append(f"... {len(data['contacts']) - MAX_LISTED} more contacts (--json lists "
                     "all)")
    return "\n".join(lines)


def plot(path: Path, observation: Observation, joint_names: list[str],
         threshold: np.ndarray) -> None:
    """Residual per joint over time, the thresholds, and the contacts shaded."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(10, 5), layout="constrained")
    for i, name in enumerate(joint_names):
        ax.plot(observation.t, observation.external_torque[:, i], lw=1.0, label=name)
    for value in sorted(set(float(v) for v in threshold)):
        ax.axhline(value, color="k", ls="--", lw=0.8)
        ax.axhline(-value, color="k", ls="--", lw=0.8)
    t_last = float(observation.t[-1])
    for event in observation.contacts:
        ax.axvspan(event.t_start, t_last if event.t_end is None else event.t_end,
                   color="tab:red", alpha=0.12)
    ax.set_xlabel("t [s] (from the first joint_states sample)")
    ax.set_ylabel(r"$\hat{\tau}_{ext} = r$ [N·m]")
    ax.set_title(f"momentum observer ({observation.kind}); dashed: ±threshold, "
                 f"shaded: contacts ({len(observation.contacts)})")
    ax.legend(fontsize=7, ncol=3, loc="upper left")
    ax.grid(alpha=0.3)
    try:
        fig.savefig(path, dpi=110)
    except OSError as error:
        raise InvalidInputError("--plot", f"cannot write {path}: "
                                f"{error.strerror or error}") from None
    finally:
        plt.close(fig)


def run(args: argparse.Namespace) -> int:
    """Run ``observe``; returns the exit code (errors are raised, the CLI prints them)."""
    model = load_model(args.urdf, lock_option(args.lock))
    friction = None if args.friction is None else load_friction(args.friction,
                                                                 model.joint_names)
    gain = args.gain[0] if len(args.gain) == 1 else tuple(args.gain)
    config = ObserverConfig(gain=gain, kind=args.model, torque_rule=args.torque_rule)
    threshold = args.threshold[0] if len(args.threshold) == 1 else args.threshold
    detector = ContactDetector(model.joint_names, threshold, release=args.release,
                               mode=args.contact_mode)
    recording = read_observer_bag(Path(args.data), model, args.joint_topic,
                                  effort_option(args, model.joint_names))
    if args.model == "classical":
        recording.notes.append("classical: Θ of the first sample held, Ψ = 0" if
                               recording.theta is not None else
                               "classical: the URDF's nominal Θ, Ψ = 0")
    observation = observe(model, recording, config, detector, friction)
    data = result_dict(observation, recording, config, detector)
    if args.plot:
        plot(Path(args.plot), observation, model.joint_names, detector.threshold)
    if args.json:
        for note in recording.notes:
            print(f"note: {note}", file=sys.stderr)
        print(json.dumps(data))
    else:
        print(_summary(data))
    return 0
