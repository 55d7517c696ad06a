"""The figures of ``adapt``: one run's report and the suite's comparison."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.control.run import AdaptiveRun


def run_figure(run: AdaptiveRun, title: str, path: Path) -> None:
    """report.png: tracking, τ, Θ̂ error, margins, M(q, Θ̂) against α₁/α₂, V."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(3, 2, figsize=(12, 10), sharex=True)
    t = run.t
    ax = axes[0, 0]
    ax.semilogy(t, np.maximum(run.q_error, 1e-12), label="‖q − q_d‖")
    ax.set_ylabel("tracking error [rad]")
    ax.legend()
    ax = axes[0, 1]
    ax.plot(t, run.tau, lw=0.8)
    ax.set_ylabel("τ [N·m]")
    ax = axes[1, 0]
    ax.plot(t, run.theta_error, label="‖Θ̂ − Θ‖")
    ax.plot(t, run.load_mass_error, label="m̂ − m, load body [kg]")
    ax.set_ylabel("estimate error")
    ax.legend()
    ax = axes[1, 1]
    for body in np.flatnonzero(run.adapted):
        ax.plot(t, run.margins[:, body], lw=0.8)
    ax.axhline(0.0, color="k", lw=0.8)
    ax.set_yscale("symlog", linthresh=1e-4)
    ax.set_ylabel("μ(Θ̂) per body [kg·m²]")
    ax = axes[2, 0]
    ax.semilogy(t, np.abs(run.lambda_min), label="|λ_min(M(q, Θ̂))|")
    ax.semilogy(t, run.lambda_max, label="λ_max(M(q, Θ̂))")
    ax.semilogy(t, run.alpha1, "--", label="α₁(Θ̂(t)), Theorem 2")
    ax.semilogy(t, run.alpha2, "--", label="α₂(Θ̂(t)), Theorem 3")
    if np.any(run.lambda_min <= 0):
        ax.plot(t[run.lambda_min <= 0], np.abs(run.lambda_min[run.lambda_min <= 0]), "rx",
                label="λ_min ≤ 0")
    ax.set_ylabel("M(q, Θ̂) [kg·m²]")
    ax.set_xlabel("t [s]")
    ax.legend(fontsize=8)
    ax = axes[2, 1]
    if np.all(np.isfinite(run.lyapunov)):
        ax.plot(t, run.lyapunov, label="V(t)")
        ax.plot(t, run.lyapunov[0] - run.dissipated, "--", label="V(0) − ∫sᵀK_D s dt")
        ax.legend()
    else:
        ax.text(0.5, 0.5, "no Lyapunov function for this law", ha="center",
                transform=ax.transAxes)
    ax.set_ylabel("V [J]")
    ax.set_xlabel("t [s]")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def suite_figure(rows: list[dict[str, Any]], path: Path) -> None:
    """One figure: inf μ(Θ̂) and inf λ_min(M̂) and tracking RMS per run, grouped."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{r['arm']} {r['scenario']} {r['plant'][:3]} {r['controller']}" for r in rows]
    fig, axes = plt.subplots(1, 3, figsize=(15, max(4, 0.28 * len(rows) + 1.5)), sharey=True)
    y = np.arange(len(rows))
    for ax, key, name in zip(axes, ("tracking_rms_rad", "inf_margin", "inf_lambda_min_M_hat"),
                             ("tracking RMS [rad]", "inf μ(Θ̂) [kg·m²]",
                              "inf λ_min(M(q, Θ̂)) [kg·m²]"), strict=True):
        values = np.array([r[key] for r in rows], dtype=float)
        colours = ["tab:red" if v <= 0 else "tab:blue" for v in values]
        ax.barh(y, values, color=colours)
        ax.set_xscale("symlog", linthresh=1e-8)  # the Panda's smallest margin: 3.75e-7
        ax.axvline(0.0, color="k", lw=0.8)
        ax.set_xlabel(name)
    axes[0].set_yticks(y, labels, fontsize=7)
    axes[0].invert_yaxis()
    fig.suptitle("adapt --suite: red = ≤ 0 (inconsistent estimate / M̂ not positive definite)")
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
