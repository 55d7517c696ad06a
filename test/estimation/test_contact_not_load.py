"""A push on the arm is not a load: the fill_collision recording with the live estimator as
the momentum observer's Θ source.

The recording is config/loading/fill_collision.yaml played offline (``simulate_recording``,
the ``record`` command's path): a cup on the Panda hand filled with 0.5 kg from 2 s to
4 s while the arm moves, and a 30 N push on the forearm (``panda_link5``) from 5.0 s to
5.25 s that the motors did not make (it is missing from the efforts, as on a real arm).
On a real cell the observer's Θ comes from the estimator, so a push taken for payload
would hide the collision: the observer must report it at once and the estimate must not
move while it lasts.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.examples import LOADING_CONFIG

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.estimation import LoadEstimatorSettings, OnlineLoadEstimator
from robot_tv_dynamics.evaluation.trajectory import Trajectory
from robot_tv_dynamics.identification.excitation import design_excitation
from robot_tv_dynamics.loading import load_collision, load_loading_process
from robot_tv_dynamics.observer import MomentumObserver, ObserverConfig, ObserverLoads
from robot_tv_dynamics.observer.contact import ContactDetector
from robot_tv_dynamics.paths import example_robot_urdf
from robot_tv_dynamics.simulation.recording import simulate_recording

SCENARIO = LOADING_CONFIG / "fill_collision.yaml"
LOCK = ["panda_finger_joint1", "panda_finger_joint2"]
DURATION = 8.0     # [s]
NOISE = 0.2        # [N·m] coloured torque noise (the record command's correlation time)
PUSH = (5.0, 5.25)  # [s] the scenario's collision window
#: the demo's observer: K_O = 50 1/s, a contact above 1 N·m (docs/demo.md)
GAIN, THRESHOLD = 50.0, 1.0


@pytest.fixture(scope="module")
def recording():
    model = RobotModel.from_urdf(example_robot_urdf(), LOCK)
    design = design_excitation(model, duration=DURATION, harmonics=3,
                               base_frequency=1.0 / DURATION, candidates=4, iterations=6)
    t = np.arange(0.0, DURATION, 1e-3)
    q, qd, qdd = design.trajectory.evaluate(t)
    push = load_collision(SCENARIO)
    assert push is not None and (push.t_start, push.t_end) == PUSH
    data = simulate_recording(
        model, Trajectory(tuple(model.joint_names), t, q, qd, qdd),
        load=load_loading_process(SCENARIO), wrenches=[push], noise_std=NOISE,
        rng=np.random.default_rng(3))
    # the push is in the plant and not in the efforts: joints 1-4 only (downstream of
    # the forearm nothing moves it)
    pushed = np.abs(data.external_torque).max(axis=0)
    assert np.all(pushed[:4] > 5.0) and np.all(pushed[4:] == 0.0), pushed
    return model, data


@pytest.fixture(scope="module", params=["classical", "projected", "geometric"])
def run(request, recording):
    """The estimator over the recording, its Θ̂ feeding the observer sample by sample."""
    model, data = recording
    est = OnlineLoadEstimator(model, "panda_hand", LoadEstimatorSettings(
        method=request.param, noise_std=(NOISE,)))
    observer = MomentumObserver(model, ObserverConfig(gain=GAIN, kind="generalized"))
    detector = ContactDetector(model.joint_names, THRESHOLD, release=0.5)
    no_flow = np.zeros((model.n_bodies, 12))
    stamps = data.t + 1.0  # stamps must be non-zero
    mass = np.empty(stamps.size)
    for k, t in enumerate(stamps):
        est.add_sample(float(t), data.q[k], data.qd[k], data.effort[k])
        mass[k] = est.load.mass
        residual = observer.update(float(t), data.q[k], data.qd[k], data.effort[k],
                                   ObserverLoads(est.theta_hat, no_flow))
        detector.update(float(t), residual)
    return request.param, est, detector, data.t, mass, data.payload_mass


def test_the_push_is_a_contact_reported_within_50_ms(run):
    method, _, detector, *_ = run
    starts = [event.t_start - 1.0 for event in detector.events
              if PUSH[0] - 0.1 <= event.t_start - 1.0 <= PUSH[1]]
    assert starts, (method, [(e.joint, e.t_start - 1.0) for e in detector.events])
    assert PUSH[0] <= min(starts) <= PUSH[0] + 0.05, (method, min(starts))


def test_the_load_estimate_moves_at_most_50_g_during_the_push(run):
    method, est, _, t, mass, truth = run
    during = (t >= PUSH[0]) & (t <= PUSH[1] + 0.3)  # and while its torques fade from the windows
    before = mass[np.searchsorted(t, PUSH[0])]
    assert np.max(np.abs(mass[during] - before)) <= 0.05, (method, mass[during].min(),
                                                           mass[during].max(), before)
    # the estimator held its updates as a contact: once, over the push (the q̈ filter's
    # delay and the window's fading after it), and at no other time (the fill is a load)
    spans = [(start - 1.0, None if end is None else end - 1.0)
             for start, end in est.contact_spans]
    assert len(spans) == 1, (method, spans)
    start, end = spans[0]
    assert PUSH[0] <= start <= PUSH[0] + 0.05 and end is not None and end <= PUSH[1] + 0.5, \
        (method, spans)
    # the fill was followed, and the push left the estimate where it was
    assert abs(before - truth[np.searchsorted(t, PUSH[0])]) <= 0.05, (method, before)
    assert abs(mass[-1] - truth[-1]) <= 0.05, (method, mass[-1], truth[-1])
