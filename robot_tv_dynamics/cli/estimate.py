"""``robot-tv-dynamics estimate``: the live payload estimator replayed over a recorded bag.

Reads joint_states (with effort) from a rosbag2 (:func:`~robot_tv_dynamics.observer.replay.
read_observer_bag`), feeds every sample to the estimator_node's pipeline
(:class:`~robot_tv_dynamics.estimation.OnlineLoadEstimator`, same defaults as the node's
parameters) and prints a summary, or with ``--json`` one object ``{"method", "link", "t",
"mass", "com", "margin", "raw_margin", "changes", "skipped", "final": {"mass", "com",
"inertia": {ixx, ixy, ixz, iyy, iyz, izz}}}`` for the **load**, always a physical body
(mass ≥ 0, inertia about its COM satisfying the triangle inequalities): ``t`` in seconds
from the bag's first sample, COM and inertia in ``frame`` (``--payload-frame``: by default
the URDF's flange frame ``tool0``/``flange``/``panda_link8``/``fr3_link8`` when it sits on
the load's body, else the link), inertia about the COM;
``margin`` is λ_min(f) of the load's body (base share + reported load), ``raw_margin``
that of the estimator's own state (the classical RLS is unconstrained), ``changes`` the
confirmed load changes (``change_times`` when each was declared, ``change_alarms`` all
declared, ``changes_withdrawn`` those not confirmed, ``changes_continued`` those confirmed
within 1.5 s of the change before them: its continuation, not counted again),
``contact_holds`` the updates held because their torques were no load's (a push) and
``contact_spans`` when [start, end], ``skipped`` the failed updates by reason.
``--model DIR`` takes identify's ``--out`` folder (identified URDF, friction, per-joint
fit RMS as noise levels, locked joints); a ``--urdf``/``--friction`` inside such a folder
uses its summary the same way (one line on stderr says so).
With ``--batch`` one constant load is fitted to the recording (or the ``--start``/
``--end`` window) by SDP instead (:mod:`robot_tv_dynamics.estimation.batch`); ``--json``
then prints ``{"mass", "com": [x, y, z], "inertia": {...}, "interval": {"mass": [lo, hi],
"com": [[lo, hi], ×3]}, ...}`` (95 % intervals) and ``--set-load-out DIR`` writes
``franka_set_load.yaml`` and ``ur_set_load.yaml``.
Exit codes: 0, 2 bad input (unreadable URDF or bag, unknown link, friction for other
joints).
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import dataclass
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
from robot_tv_dynamics.estimation import (
    METHODS,
    ExcitationConfig,
    LoadEstimatorSettings,
    OnlineLoadEstimator,
)
from robot_tv_dynamics.estimation.online import load_estimate
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.friction import FrictionParameters, load_friction_file
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.model.frames import load_in_frame, payload_frame_for
from robot_tv_dynamics.observer.replay import ObserverRecording, read_observer_bag


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``estimate`` to ``parser``."""
    defaults = LoadEstimatorSettings()
    parser.add_argument("--model", metavar="DIR",
                        help="the --out folder of robot-tv-dynamics identify: its "
                             "identified.urdf, friction.yaml, per-joint fit RMS (noise levels) "
                             "and locked joints")
    parser.add_argument("--urdf", help="the arm's URDF (or identified URDF); required "
                                       "without --model")
    add_lock_argument(parser)
    add_effort_arguments(parser)
    parser.add_argument("--friction", metavar="FILE",
                        help="friction YAML of the model's joints; τ_f is subtracted")
    parser.add_argument("--data", required=True, metavar="BAG",
                        help="rosbag2: a directory with metadata.yaml or one .mcap/.db3 file")
    parser.add_argument("--link", required=True, help="URDF link carrying the load")
    parser.add_argument("--payload-frame", default="", metavar="FRAME",
                        help="frame the load is reported in (JSON, --set-load-out): a link "
                             "of the load's body; default: the URDF's flange frame (tool0, "
                             "flange, panda_link8, fr3_link8) when it is on that body, else "
                             "--link")
    parser.add_argument("--method", choices=METHODS, default="geometric",
                        help="estimator (default: %(default)s)")
    parser.add_argument("--joint-topic", default="/joint_states",
                        help="the JointState topic (default: %(default)s)")
    parser.add_argument("--noise-std", type=positive_numbers, default=None, metavar="N·m",
                        help="each joint's residual noise level, one value or one per joint "
                             "(default: identify's per-joint fit RMS when the model comes "
                             f"from an identify folder, else {DEFAULT_NOISE})")
    parser.add_argument("--summary", metavar="summary.json",
                        help="identify's summary.json: per-joint fit RMS as noise levels")
    parser.add_argument("--memory", type=float, default=defaults.memory, metavar="S",
                        help="time constant of the forgetting [s] (default: %(default)s)")
    parser.add_argument("--huber", type=float, default=defaults.huber,
                        help="Huber k on normalized innovations, 0 = off "
                             "(default: %(default)s)")
    parser.add_argument("--false-alarm-rate", type=float, default=defaults.false_alarm_rate,
                        metavar="1/S",
                        help="load-change detector: target rate of false changes per second "
                             "of motion, 0 = off (default: %(default).4g, one per 10 min)")
    parser.add_argument("--change-confirm", type=float, default=defaults.change_confirm,
                        metavar="S",
                        help="a declared load change is confirmed or withdrawn this long "
                             "after it (default: %(default)s)")
    parser.add_argument("--offset-memory", type=float, default=defaults.offset_memory,
                        metavar="S",
                        help="time constant of each joint's estimated torque offset (held at "
                             "rest and while a load change or contact is suspected), 0 = no "
                             "offsets (default: %(default)s)")
    parser.add_argument("--margin-fraction", type=float, default=defaults.margin_fraction,
                        help="ε = this × λ_min(f) of the body's base share "
                             "(default: %(default)s)")
    parser.add_argument("--acceleration-cutoff", type=float,
                        default=defaults.acceleration_cutoff,
                        help="q̈ filter corner [Hz] (default: %(default)s)")
    parser.add_argument("--excitation-threshold", type=float,
                        default=defaults.excitation.threshold,
                        help="hold below this excitation (default: %(default)s)")
    parser.add_argument("--decimation", type=int, default=1,
                        help="update on every k-th sample (default: %(default)s)")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--plot", metavar="OUT.png", help="plot mass, COM and margin")
    add_batch_arguments(parser)


#: Noise level per joint when nothing better is known [N·m or N].
DEFAULT_NOISE = 0.5


@dataclass(frozen=True)
class ModelFiles:
    """Where the model comes from: URDF, friction, summary, locked joints, and a note."""

    urdf: str
    friction: str | None
    summary: str | None
    lock: list[str]
    note: str


def _identify_folder(path: Path) -> Path | None:
    """The identify --out folder ``path`` is in (summary.json beside it), else None."""
    folder = path if path.is_dir() else path.parent
    return folder if (folder / "summary.json").is_file() else None


def model_files(args: argparse.Namespace) -> ModelFiles:
    """Resolve --model / --urdf / --friction / --summary / --lock.

    Raises:
        InvalidInputError: neither --model nor --urdf; a --model folder without the
            identified model.
    """
    lock = list(args.lock)
    if args.model:
        folder = Path(args.model)
        urdf = folder / "identified.urdf"
        if not urdf.is_file() or not (folder / "summary.json").is_file():
            raise InvalidInputError("--model", f'"{folder}" has no identified.urdf and '
                                    "summary.json (the --out folder of identify)")
        friction = folder / "friction.yaml"
        summary = str(folder / "summary.json")
        if not lock:
            lock = _summary_lock(summary)
        return ModelFiles(args.urdf or str(urdf), args.friction or (
            str(friction) if friction.is_file() else None), args.summary or summary, lock,
            f"model from identify folder {folder}: identified URDF, friction, per-joint fit "
            "RMS as noise levels" + (f", locked {lock}" if lock else ""))
    if not args.urdf:
        raise InvalidInputError("--urdf", "is required without --model")
    summary, note = args.summary, ""
    if summary is None and args.noise_std is None:
        for given in (args.urdf, args.friction):
            found = _identify_folder(Path(given)) if given else None
            if found is not None:
                folder = found
                summary = str(folder / "summary.json")
                note = (f"{given} is in identify folder {folder}: its per-joint fit RMS "
                        "are the noise levels")
                if not lock:
                    lock = _summary_lock(summary)
                break
    return ModelFiles(args.urdf, args.friction, summary, lock, note)


def _summary_lock(path: str) -> list[str]:
    """The --lock entries identify recorded in its summary (none when not recorded)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    locked = data.get("locked_joints") if isinstance(data, dict) else None
    return [str(item) for item in locked] if isinstance(locked, list) else []


def _noise(args: argparse.Namespace, summary: str | None,
           joint_names: list[str]) -> tuple[float, ...]:
    if args.noise_std is not None:
        return tuple(args.noise_std)
    if not summary:
        return (DEFAULT_NOISE,)
    try:
        data = json.loads(Path(summary).read_text(encoding="utf-8"))
        rms = data["rms"]["identified"]["fit"]
        return tuple(float(rms[name]) for name in joint_names)
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise InvalidInputError("--summary", f'"{summary}": no per-joint '
                                f"rms.identified.fit ({type(error).__name__}: {error})") from None


def run(args: argparse.Namespace) -> int:
    """Replay the bag through the estimator; print the summary or the JSON object."""
    if args.batch:
        return run_batch(args)
    files, model, friction = _model_and_friction(args)
    settings = LoadEstimatorSettings(
        method=args.method, noise_std=_noise(args, files.summary, model.joint_names),
        memory=args.memory, huber=args.huber, false_alarm_rate=args.false_alarm_rate,
        change_confirm=args.change_confirm, offset_memory=args.offset_memory,
        margin_fraction=args.margin_fraction,
        acceleration_cutoff=args.acceleration_cutoff, decimation=args.decimation,
        excitation=ExcitationConfig(threshold=args.excitation_threshold))
    estimator = OnlineLoadEstimator(model, args.link, settings, friction)
    frame = payload_frame_for(model, args.link, args.payload_frame)
    efforts = effort_option(args, model.joint_names)
    recording = read_observer_bag(args.data, model, args.joint_topic, efforts)
    origin = 1.0  # stamps must be non-zero: the bag's first sample is t = 0
    series = _replay(estimator, recording, model, args.link, frame, origin)
    final = load_estimate(load_in_frame(model, estimator.load.phi, args.link, frame))
    i = final.inertia
    filt = estimator.estimator
    data: dict[str, Any] = {
        "method": args.method, "link": args.link, "frame": frame,
        "efforts": efforts.describe(), "body": model.body_names[
            estimator.measurement.body],
        **series,
        "epsilon": estimator.epsilon, "updates": filt.updates,
        "held": estimator.held, "partial": estimator.partial,
        "settling": estimator.settling,
        "samples": int(recording.t.size),
        "noise_std": [float(v) for v in estimator.noise_std],
        "changes": filt.changes,
        "change_times": [stamp - origin for stamp in estimator.change_stamps],
        "change_alarms": filt.alarms, "changes_withdrawn": filt.withdrawn,
        "changes_continued": filt.continued,
        "contact_holds": filt.contacts,
        "contact_spans": [[start - origin, None if end is None else end - origin]
                          for start, end in estimator.contact_spans],
        "projections": filt.projections,
        "skipped": dict(filt.skipped),
        "final": {"mass": final.mass, "com": [float(v) for v in final.com],
                  "inertia": {"ixx": float(i[0, 0]), "ixy": float(i[0, 1]),
                              "ixz": float(i[0, 2]), "iyy": float(i[1, 1]),
                              "iyz": float(i[1, 2]), "izz": float(i[2, 2])}},
        "dropped": recording.dropped, "notes": recording.notes,
    }
    if args.plot:
        plot(Path(args.plot), data)
    if args.json:
        json.dump(data, sys.stdout)
        sys.stdout.write("\n")
        return 0
    _print_summary(data, estimator)
    return 0


def _model_and_friction(args: argparse.Namespace
                        ) -> tuple[ModelFiles, RobotModel, FrictionParameters | None]:
    """The model files (:func:`model_files`), the arm and its friction; the note on stderr."""
    files = model_files(args)
    model = load_model(files.urdf, lock_option(files.lock))
    friction = (load_friction_file(files.friction, model.joint_names)
                if files.friction else None)
    if files.note:
        print(f"estimate: {files.note}", file=sys.stderr)
    return files, model, friction


def _replay(estimator: OnlineLoadEstimator, recording: ObserverRecording, model: RobotModel,
            link: str, frame: str, origin: float) -> dict[str, list[Any]]:
    """Feed every sample to the estimator; the load and margins after each, as JSON series.

    Keys ``t`` [s from the first sample], ``mass`` [kg], ``com`` [m, in ``frame``],
    ``margin`` and ``raw_margin`` [kg·m²]; a sample's stamp is ``origin`` + t [s].
    """
    t_out: list[float] = []
    mass: list[float] = []
    com: list[list[float]] = []
    margin: list[float] = []
    raw_margin: list[float] = []
    load = load_estimate(load_in_frame(model, estimator.load.phi, link, frame))
    for k in range(recording.t.size):
        t = float(recording.t[k])
        if estimator.add_sample(origin + t, recording.q[k], recording.qd[k],
                                recording.effort[k]):
            load = load_estimate(load_in_frame(model, estimator.load.phi, link, frame))
        t_out.append(t)
        mass.append(load.mass)
        com.append([float(v) for v in load.com])
        margin.append(estimator.margin)
        raw_margin.append(estimator.raw_margin)
    return {"t": t_out, "mass": mass, "com": com, "margin": margin, "raw_margin": raw_margin}


def _print_summary(data: dict[str, Any], estimator: OnlineLoadEstimator) -> None:
    """The replay's summary: counts, the final load, the body's margin."""
    filt, f, frame = estimator.estimator, data["final"], data["frame"]
    print(f"{data['method']} estimate of the load on {data['link']} over {data['samples']} "
          f"samples ({data['updates']} updates, {data['held']} held as poorly excited, "
          f"{sum(filt.skipped.values())} skipped, {filt.changes} changes detected)")
    print(f"mass {f['mass']:.4g} kg, COM {np.round(f['com'], 4).tolist()} m (frame {frame})")
    print(f"inertia about the COM, axes of {frame} [kg·m²]: " + ", ".join(
        f"{key} {value:.3g}" for key, value in f["inertia"].items()))
    lowest = min(data["margin"]) if data["margin"] else math.nan
    print(f"margin λ_min(f) of {data['body']}: final {estimator.margin:.4g}, lowest "
          f"{lowest:.4g}, ε = {estimator.epsilon:.4g}")


def add_batch_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of the offline payload fit (``--batch``)."""
    group = parser.add_argument_group(
        "offline payload fit", "--batch fits one constant load to the whole recording (or "
        "the --start/--end window) by SDP, with 95 % intervals of mass and COM")
    group.add_argument("--batch", action="store_true",
                       help="offline SDP fit of the load instead of the live replay")
    group.add_argument("--start", type=float, default=None, metavar="S",
                       help="window start [s from the bag's first sample]")
    group.add_argument("--end", type=float, default=None, metavar="S",
                       help="window end [s from the bag's first sample]")
    group.add_argument("--reference", metavar="BAG",
                       help="a recording of the same arm WITHOUT the load (e.g. the one "
                            "identify ran on): its fit is subtracted as a tare, cancelling "
                            "the base model's error in the load body")
    group.add_argument("--set-load-out", metavar="DIR",
                       help="write franka_set_load.yaml and ur_set_load.yaml into DIR")


def run_batch(args: argparse.Namespace) -> int:
    """``estimate --batch``: the offline fit (:mod:`robot_tv_dynamics.estimation.batch`)."""
    import yaml

    from robot_tv_dynamics.estimation.batch import estimate_in_frame, fit_load, set_load_files
    from robot_tv_dynamics.identification.data import load_samples
    from robot_tv_dynamics.model.frames import frame_change_matrix

    # --model DIR or --urdf/--friction, as the live estimate
    _, model, friction = _model_and_friction(args)
    efforts = effort_option(args, model.joint_names)
    samples = load_samples(args.data, model, args.joint_topic, efforts=efforts)
    reference = (load_samples(args.reference, model, args.joint_topic, efforts=efforts)
                 if args.reference else None)
    estimate = fit_load(model, args.link, samples, friction, start=args.start, end=args.end,
                        margin_fraction=args.margin_fraction, reference=reference)
    frame = payload_frame_for(model, args.link, args.payload_frame)
    estimate = estimate_in_frame(estimate, frame_change_matrix(model, args.link, frame))
    data = {"method": "batch", "link": args.link, "frame": frame,
            "efforts": efforts.describe(), **estimate.to_dict()}
    if args.set_load_out:
        out = Path(args.set_load_out)
        out.mkdir(parents=True, exist_ok=True)
        for arm, content in set_load_files(estimate, frame).items():
            (out / f"{arm}_set_load.yaml").write_text(
                yaml.safe_dump(content, sort_keys=False), encoding="utf-8")
    if args.json:
        json.dump(data, sys.stdout)
        sys.stdout.write("\n")
        return 0
    lo, hi = estimate.mass_interval
    print(f"batch fit of the load on {args.link} over {estimate.samples} samples "
          f"({estimate.window[0]:.3g}–{estimate.window[1]:.3g} s, solver {estimate.solver})")
    print(f"mass {estimate.mass:.4g} kg (95 %: {lo:.4g} … {hi:.4g})")
    print(f"COM [m] (frame {frame}): " + ", ".join(
        f"{name} {c:.4f} ({a:.4f} … {b:.4f})"
        for name, c, (a, b) in zip("xyz", estimate.com, estimate.com_interval, strict=True)))
    print(f"inertia about the COM, axes of {frame} [kg·m²]: " + ", ".join(
        f"{key} {value:.3g}" for key, value in data["inertia"].items()))
    print(f"margin λ_min(f) of the body {estimate.margin:.4g} ≥ ε = {estimate.epsilon:.4g}"
          + (" (tare from --reference subtracted)" if estimate.tare else ""))
    return 0


def plot(path: Path, data: dict[str, Any]) -> None:
    """Mass, COM and the body's margin against ε over time."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    figure = Figure(figsize=(9, 7), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots(3, 1, sharex=True)
    t = np.asarray(data["t"])
    axes[0].plot(t, data["mass"], color="tab:blue")
    axes[0].set_ylabel(r"$\hat m$ [kg]")
    axes[0].set_title(f"{data['method']} estimate of the load on {data['link']}")
    com = np.asarray(data["com"]).reshape(-1, 3)
    for k, name in enumerate("xyz"):
        axes[1].plot(t, com[:, k], label=rf"$\hat c_{name}$")
    axes[1].set_ylabel("COM [m]")
    axes[1].legend(loc="upper right")
    axes[2].plot(t, data["margin"], color="tab:green", label=r"$\lambda_{\min}(f(\hat\Phi))$")
    axes[2].axhline(data["epsilon"], color="tab:red", ls="--", label=r"$\varepsilon$")
    axes[2].set_yscale("symlog", linthresh=max(float(data["epsilon"]), 1e-9))
    axes[2].set_ylabel(r"margin [kg$\cdot$m$^2$]")
    axes[2].set_xlabel("t [s]")
    axes[2].legend(loc="upper right")
    figure.savefig(str(path), format="png")
