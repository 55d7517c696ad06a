"""A simulated fill of the Panda's hand and the load estimates of it, classical and generalized.

The hand's load grows from 0 to 1 kg in 1 s (its Φ scaled uniformly, Θ̇ = ṡ Φ_L) while the
arm follows an exciting motion; the efforts are eq. (39) with Θ̇ (``RobotModel.torque``)
plus white noise. test/estimation/test_generalized.py asserts on it;
``scripts/docs_numbers.py generalized_fill`` quotes it in docs/estimation.md.
"""

from __future__ import annotations

import numpy as np

from robot_tv_dynamics.estimation import LoadEstimatorSettings, OnlineLoadEstimator
from robot_tv_dynamics.inertia import phi_from_mass_com_inertia
from support.excited import LINK, exciting_trajectory

START, DURATION, MASS = 4.0, 1.0, 1.0  # [s], [s], [kg]
RATE, NOISE = 500.0, 0.02


def _fill(panda):
    trajectory = exciting_trajectory(panda.nv, amplitude=0.5)
    load = phi_from_mass_com_inertia(MASS, np.array([0.0, 0.0, 0.1]), np.diag([2e-3] * 3))
    body = panda.link_attachment(LINK).body
    base = panda.theta_nominal
    delta = panda.theta_with_link_inertia(base, LINK, panda.urdf_link_phi(LINK) + load)[body] \
        - base[body]
    t = np.arange(0.0, 8.0, 1.0 / RATE)
    q, qd, qdd = trajectory.evaluate(t)
    s = np.clip((t - START) / DURATION, 0.0, 1.0)
    ds = np.where((t > START) & (t < START + DURATION), 1.0 / DURATION, 0.0)
    rng = np.random.default_rng(3)
    rows = []
    for k in range(t.size):
        theta = base.copy()
        theta[body] += s[k] * delta
        rate = np.zeros_like(base)
        rate[body] = ds[k] * delta
        tau = panda.torque(q[k], qd[k], qdd[k], theta, rate) + rng.normal(0, NOISE, panda.nv)
        rows.append((t[k], q[k], qd[k], tau, rate))
    return rows, MASS * s


def measurement_errors(panda) -> dict[str, list[float]]:
    """|mass error| per 0.1 s window during loading, of the classical and generalized rows.

    The measurement alone (true q̈, no estimator dynamics): the load's scale s fitted by
    least squares in each window, y − R_b Φ_b⁰ = s R_b ΔΦ (docs/estimation.md quotes it).
    """
    rows, truth = _fill(panda)
    est = OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(noise_std=(NOISE,)))
    measurement = est.measurement
    delta = est.measurement.transform @ np.array(
        phi_from_mass_com_inertia(MASS, np.array([0.0, 0.0, 0.1]), np.diag([2e-3] * 3)))
    trajectory = exciting_trajectory(panda.nv, amplitude=0.5)
    t = np.array([r[0] for r in rows])
    _, _, qdd = trajectory.evaluate(t)
    errors: dict[str, list[float]] = {"classical": [], "generalized": []}
    for start in np.arange(START + 0.1, START + DURATION - 0.1 + 1e-9, 0.1):
        window = np.flatnonzero((t >= start) & (t < start + 0.1))
        for kind in errors:
            a, b = [], []
            for k in window:
                _, q, qd, tau, rate = rows[k]
                m = measurement.measure(q, qd, qdd[k], tau,
                                        rate if kind == "generalized" else None)
                a.append(m.regressor @ delta)
                b.append(m.y - m.regressor @ measurement.phi_base)
            a, b = np.concatenate(a), np.concatenate(b)
            scale = float(a @ b / (a @ a))
            errors[kind].append(abs(MASS * scale - truth[window].mean()))
    return errors


def live_errors(panda, method: str) -> tuple[dict[str, np.ndarray], dict[str, float]]:
    """The live estimate (memory 0.5 s) fed either rows: |mass error| during loading, final mass."""
    rows, truth = _fill(panda)
    errors, final = {}, {}
    for kind in ("classical", "generalized"):
        est = OnlineLoadEstimator(panda, LINK, LoadEstimatorSettings(
            method=method, noise_std=(NOISE,), memory=0.5))
        mass = []
        for t, q, qd, tau, rate in rows:
            est.add_sample(1.0 + t, q, qd, tau, rate if kind == "generalized" else None)
            mass.append(est.load.mass)
        t = np.array([r[0] for r in rows])
        loading = (t > START + 0.2) & (t < START + DURATION)
        errors[kind] = np.abs(np.array(mass) - truth)[loading]
        final[kind] = float(mass[-1])
    return errors, final
