"""``robot-tv-dynamics record``: a bag of joint_states as a real arm would record it.

Plays a trajectory (``excite``'s output, or any JointTrajectory YAML/bag) on a simulated
arm whose inertias differ from the URDF's, with friction the package's model does not
fully capture and coloured torque noise (:mod:`robot_tv_dynamics.simulation.recording`),
optionally under a payload or a loading process (and its ``collision:`` block, a push the
motors did not make: it is missing from the efforts, as on a real arm), and writes
``sensor_msgs/JointState``
with positions, velocities and efforts as a rosbag2 (MCAP): the input ``identify``,
``estimate`` and ``observe`` take. A truth YAML beside it holds what was simulated.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np
import yaml

from robot_tv_dynamics.cli.common import (
    add_effort_arguments,
    add_trajectory_arguments,
    checked_number,
    checked_numbers,
    effort_option,
    held_positions,
    load_model,
    lock_option,
    positive_float,
)
from robot_tv_dynamics.cli.sweep import single
from robot_tv_dynamics.evaluation import load_payload, load_trajectory
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.identification.urdf_writer import theta_dict
from robot_tv_dynamics.loading import collision_as_dict, load_collision
from robot_tv_dynamics.simulation.recording import (
    DEFAULT_NOISE_CORRELATION,
    DEFAULT_NOISE_STD,
    JointStateDialect,
    StribeckFriction,
    perturbed_theta,
    simulate_recording,
    write_joint_states_bag,
)

DESCRIPTION = (
    "Play a trajectory on a simulated arm whose true inertias are the URDF's perturbed "
    "(--perturb-*), with viscous + Coulomb + Stribeck friction (--friction) and AR(1) "
    "coloured torque noise (--noise, --noise-correlation), optionally under a payload or "
    "loading process (--payload), and write sensor_msgs/JointState with positions, "
    "velocities and efforts to a rosbag2 (MCAP). TRUTH.yaml beside the bag (--truth) "
    "holds the simulated Θ, friction and noise.")


def _noise(text: str) -> list[float]:
    return list(checked_numbers(text, lambda v: v >= 0, "finite and ≥ 0 [N·m]"))


def _fraction(text: str) -> float:
    return checked_number(text, float, lambda v: 0.0 <= v < 1.0, "a relative change in [0, 1)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the options of ``record``."""
    add_trajectory_arguments(parser, sweep=False)
    parser.add_argument("--out", required=True, metavar="BAG",
                        help="the bag to write: NAME.mcap (one file) or a folder (rosbag2 "
                             "directory); must not exist")
    parser.add_argument("--truth", metavar="FILE",
                        help="where the truth YAML goes (default: BAG's name + .truth.yaml)")
    parser.add_argument("--payload", metavar="FILE",
                        help="payload YAML (link, mass, com, inertia) or loading-process "
                             "YAML (process: ...) on the simulated arm, with its collision: "
                             "block if it has one; default: none")
    parser.add_argument("--time-offset", type=float, default=0.0, metavar="S",
                        help="loading-process time at the trajectory's start [s]")
    parser.add_argument("--rate", type=positive_float, default=1000.0, metavar="HZ",
                        help="sample rate [Hz] (default 1000)")
    parser.add_argument("--noise", type=_noise, default=[DEFAULT_NOISE_STD], metavar="SIGMA",
                        help="torque noise σ [N·m]: one value, or one per joint "
                             f"comma-separated (default {DEFAULT_NOISE_STD})")
    parser.add_argument("--noise-correlation", type=float, default=DEFAULT_NOISE_CORRELATION,
                        metavar="S", help="correlation time of the torque noise [s] "
                                          f"(default {DEFAULT_NOISE_CORRELATION}; 0: white)")
    parser.add_argument("--velocity-noise", type=float, default=1e-3, metavar="RAD_S",
                        help="white noise σ on the measured velocities (default 1e-3)")
    parser.add_argument("--friction", choices=("random", "none"), default="random",
                        help="random viscous + Coulomb + Stribeck friction per joint "
                             "(default), or none")
    parser.add_argument("--perturb-mass", type=_fraction, default=0.1, metavar="F",
                        help="each body's mass × (1 ± U(0, F)) (default 0.1)")
    parser.add_argument("--perturb-inertia", type=_fraction, default=0.2, metavar="F",
                        help="each principal second moment × (1 ± U(0, F)) (default 0.2)")
    parser.add_argument("--perturb-com", type=float, default=0.01, metavar="M",
                        help="each COM coordinate + U(−M, M) [m] (default 0.01)")
    parser.add_argument("--arm-seed", type=int, default=0,
                        help="seed of the simulated arm: its inertias and friction (default "
                             "0; keep it to record the same arm again)")
    parser.add_argument("--seed", type=int, default=0,
                        help="seed of the measurement noise (default 0)")
    parser.add_argument("--joint-order", metavar="J1,J2,...",
                        help="the joints in the order the messages name them, as a driver "
                             "orders them (default: the model's order)")
    parser.add_argument("--extra-joint", action="append", default=[], metavar="NAME=POSITION",
                        help="a joint the model does not have (a gripper finger), published "
                             "at POSITION with zero velocity and effort (repeatable)")
    add_effort_arguments(parser, role="write")


def run(args: argparse.Namespace) -> int:
    """Run ``record``; 0 on success, 2 on bad input."""
    try:
        out = Path(args.out)
        if out.exists():
            raise InvalidInputError("--out", f"{out} exists; remove it or choose another name")
        truth_path = Path(args.truth) if args.truth else out.with_name(out.stem + ".truth.yaml")
        model = load_model(single(args.urdf, "--urdf"), lock_option(args.lock))
        trajectory = load_trajectory(single(args.trajectory, "--trajectory"), args.topic)
        load = None if args.payload is None else load_payload(args.payload)
        collision = None if args.payload is None else load_collision(args.payload)
        if len(args.noise) not in (1, model.nv):
            raise InvalidInputError(
                "--noise", f"one value or {model.nv} (one per joint), got {len(args.noise)}")
        arm = np.random.default_rng(args.arm_seed)
        theta = perturbed_theta(model, arm, mass=args.perturb_mass,
                                inertia=args.perturb_inertia, com=args.perturb_com)
        friction = StribeckFriction.random(model.nv, arm) if args.friction == "random" else None
        recording = simulate_recording(
            model, trajectory, theta_true=theta, load=load, friction=friction,
            noise_std=np.array(args.noise), noise_correlation=args.noise_correlation,
            velocity_noise_std=args.velocity_noise, rate=args.rate,
            time_offset=args.time_offset, rng=np.random.default_rng(args.seed),
            wrenches=() if collision is None else (collision,))
        dialect = JointStateDialect(
            efforts=effort_option(args, model.joint_names),
            order=tuple(name.strip() for name in (args.joint_order or "").split(",")
                        if name.strip()),
            extra_joints=tuple((held_positions(args.extra_joint, "--extra-joint") or {}).items()))
        write_joint_states_bag(out, recording, dialect=dialect)
    except RobotTvDynamicsError as error:
        print(f"record: error: {error}", file=sys.stderr)
        return 2
    truth = {
        "theta": theta_dict(model, recording.theta_true),
        "friction": None if friction is None else friction.as_dict(model.joint_names),
        "noise": {"std": [float(v) for v in np.broadcast_to(args.noise, (model.nv,))],
                  "correlation_time": args.noise_correlation,
                  "velocity_std": args.velocity_noise},
        "payload": args.payload,
        "collision": None if collision is None else collision_as_dict(collision),
        "arm_seed": args.arm_seed, "noise_seed": args.seed,
        "samples": int(recording.t.size), "rate": args.rate,
        "efforts": dialect.efforts.describe(), "joint_order": [
            model.joint_names[i] for i in dialect.columns(model.joint_names)],
        "extra_joints": dict(dialect.extra_joints),
    }
    truth_path.write_text(yaml.safe_dump(truth, sort_keys=False))
    rms = np.sqrt(np.mean(recording.noise ** 2))
    print(f"record: {recording.t.size} samples over {recording.t[-1]:.3g} s → {out} "
          f"(noise RMS {rms:.3g} N·m; truth: {truth_path})")
    return 0
