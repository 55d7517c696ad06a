"""Coverage of the batch-means sandwich interval under coloured noise.

A linear model with the structure of the payload fit (per-sample rows of nv equations,
smooth time-varying regressors) and AR(1) noise of ~40 samples correlation: over 300
independent records the 95 % interval must contain the true parameter in 90–99 % of
them; the i.i.d. least-squares interval on the same records covers far less (the test
would catch an interval that ignores the colour).
"""

from __future__ import annotations

import numpy as np
import scipy.signal
import scipy.stats

from robot_tv_dynamics.estimation.batch import DEFAULT_BLOCKS, batch_covariance


def _record(rng, k=2000, n=3, p=4, ar=0.95):
    t = np.linspace(0.0, 20.0, k)
    freq = rng.uniform(0.1, 0.6, (n, p))
    phase = rng.uniform(0, 2 * np.pi, (n, p))
    a = np.sin(2 * np.pi * freq[None] * t[:, None, None] + phase[None])  # (k, n, p)
    white = np.sqrt(1 - ar ** 2) * rng.standard_normal((k, n))
    white[0] = rng.standard_normal(n)  # stationary start
    noise = scipy.signal.lfilter([1.0], [1.0, -ar], white, axis=0)
    beta = np.array([1.0, -0.5, 0.25, 2.0])
    return a, np.einsum("knp,p->kn", a, beta) + noise, beta


def test_batch_means_interval_covers_under_ar1_noise_and_iid_does_not():
    rng = np.random.default_rng(11)
    quantile = scipy.stats.t.ppf(0.975, DEFAULT_BLOCKS - 1)
    hits_batch, hits_iid, trials = 0, 0, 300
    for _ in range(trials):
        a, b, beta = _record(rng)
        flat_a, flat_b = a.reshape(-1, a.shape[2]), b.ravel()
        x = np.linalg.lstsq(flat_a, flat_b, rcond=None)[0]
        residual = b - a @ x
        cov, hessian = batch_covariance(a, residual, DEFAULT_BLOCKS)
        sd = np.sqrt(np.diag(cov))
        hits_batch += np.abs(x[0] - beta[0]) <= quantile * sd[0]
        iid_sd = np.sqrt(np.diag(np.linalg.inv(hessian)) * residual.var())
        hits_iid += np.abs(x[0] - beta[0]) <= 1.96 * iid_sd[0]
    print("coverage batch means", hits_batch / trials, "iid", hits_iid / trials)
    assert 0.90 <= hits_batch / trials <= 0.99
    assert hits_iid / trials < 0.8
