"""τ of eq. (39) with Θ paired by stamp equals τ with the exact Θ(t), under jitter and reordering.

In process (no DDS): Θ(t) of a payload filling at a constant rate is published at every
joint sample's stamp, and each message is delivered 0–20 ms late at random, joint_states
first or second. ModelInputs with PendingSamples (the stamp rule) must give τ equal, to
1e-9 relative, to the contraction backend's eq. (39) evaluated with the exact Θ(t) and
Θ̇ at each stamp, with and without published rates; the arrival rule (the latest Θ when
the joint sample arrives, Θ̇ filtered over receive times) is off by a measured amount.
"""

from __future__ import annotations

import numpy as np
import pytest

from robot_tv_dynamics import dynamics
from robot_tv_dynamics.inertia import phi_from_mass_com_inertia
from robot_tv_dynamics.inputs import InputRules, ModelInputs, PendingSamples, TimelineRules
from robot_tv_dynamics.inputs.timeline import EMPTY

N_SAMPLES = 400
DT = 1e-3
T0 = 5.0


def scenario(model, seed):
    """Joint samples, Θ(t) = Θ₀ + D (t − T0) (0.8 kg/s into the last body) and arrivals."""
    rng = np.random.default_rng(seed)
    t = T0 + DT * np.arange(N_SAMPLES)
    limits = model.joint_limits
    mid = 0.5 * (limits.lower + limits.upper)
    q = mid + 0.3 * np.sin(3.0 * (t[:, None] - T0) + np.arange(model.nv))
    qd = 0.9 * np.cos(3.0 * (t[:, None] - T0) + np.arange(model.nv))
    rate = np.zeros((model.n_bodies, 10))
    rate[-1] = phi_from_mass_com_inertia(0.8, np.array([0.0, 0.0, 0.05]), np.zeros((3, 3)))
    theta0 = np.array(model.theta_nominal)
    events = []  # (arrival, order, kind, k)
    for k in range(N_SAMPLES):
        first = rng.integers(2)  # joint_states first or second
        events.append((t[k] + 1e-4, first, "joint", k))
        events.append((t[k] + rng.uniform(0.0, 0.02), 1 - first, "theta", k))
    events.sort()
    return t, q, qd, theta0, rate, events


def exact_tau(model, q, qd, qdd, theta, theta_dot):
    gamma = np.zeros((model.n_bodies, 6))
    return dynamics.generalized_terms(model.kinematics(q), qd, qdd, theta, theta_dot,
                                      gamma, gamma).tau


def run(model, seed, rates, rule):
    t, q, qd, theta0, rate, events = scenario(model, seed)
    inputs = ModelInputs(model, InputRules(timeline=TimelineRules(window=0.05)))
    pending: PendingSamples[int] = PendingSamples(window=0.05)
    backend = model.dynamics()
    errors, late, before = [], 0, []

    def answer(k):
        state = inputs.sample(t[k], q[k], qd[k], now=events_time[0])
        backend.set_loads(state.theta, state.theta_dot, state.gamma, state.gamma_dot)
        tau = backend.inverse_dynamics(q[k], qd[k], state.qdd)
        want_rate = rate if (rates or k > 0) else np.zeros_like(rate)
        want = exact_tau(model, q[k], qd[k], state.qdd, theta0 + rate * (t[k] - T0),
                         want_rate)
        if rule == "stamp" and inputs.theta_status == EMPTY:
            before.append(k)  # answered before any Θ arrived: the URDF's Θ, by the rule
            return
        errors.append(np.abs(tau - want).max() / np.abs(want).max())

    events_time = [0.0]
    for arrival, _, kind, k in events:
        events_time[0] = arrival
        if kind == "theta":
            theta = theta0 + rate * (t[k] - T0)
            if rule == "stamp":
                inputs.set_theta_stamped(t[k], theta, rate if rates else None)
            else:
                inputs.set_theta(theta, arrival)
                if rates:
                    inputs.set_theta_rates(rate, arrival)
        elif rule == "stamp":
            assert t[k] > pending.newest  # a queued sample's stamp is checked on arrival
            pending.push(t[k], k)
        else:
            answer(k)
            continue
        if rule == "stamp":
            for _, j, _on_time in pending.release([inputs.theta_series]):
                answer(j)
    if rule == "stamp":
        for _, j, _on_time in pending.release([inputs.theta_series], flush=True):
            answer(j)
        late = pending.late
    return np.array(errors), late, before


@pytest.mark.parametrize("rates", [True, False], ids=["rates", "no-rates"])
def test_tau_by_stamp_equals_eq39_with_the_exact_theta(panda, rates):
    errors, late, before = run(panda, seed=4, rates=rates, rule="stamp")
    # only the samples that arrived before the first Θ message at all used the URDF's Θ
    assert before == list(range(len(before))) and len(before) <= 20
    assert errors.size == N_SAMPLES - len(before) and late == 0
    print(f"stamp rule ({'with' if rates else 'without'} rates): max relative τ error "
          f"{errors.max():.2e}")
    assert errors.max() <= 1e-9


@pytest.mark.parametrize("rates", [True, False], ids=["rates", "no-rates"])
def test_the_arrival_rule_under_the_same_jitter_is_off(panda, rates):
    errors, _, _ = run(panda, seed=4, rates=rates, rule="arrival")
    errors = errors[20:]  # past the start, as above
    print(f"arrival rule ({'with' if rates else 'without'} rates): max relative τ error "
          f"{errors.max():.2e}, median {np.median(errors):.2e}")
    assert errors.max() > 1e-4
