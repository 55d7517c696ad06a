"""The figures of ``adapt``: one run's report and the suite's comparison."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.control.run import AdaptiveRun
from robot_tv_dynamics.numbers import float_or_nan


def run_figure(run: AdaptiveRun, title: str, path: Path) -> None:
    """report.png: tracking, τ, Θ̂ error, margins, M(q, Θ̂) against α₁/α₂, V, convergence.

    The last row: the load body's m̂ − m relative to m(t) with the ±10 % band, and
    ‖Θ̂_i − Θ_i‖/‖Θ_i‖ per adapted body.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(4, 2, figsize=(12, 13), sharex=True)
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
    _convergence_panels(run, axes[3, 0], axes[3, 1])
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def _convergence_panels(run: AdaptiveRun, mass_ax: Any, body_ax: Any) -> None:
    """The load mass relative error with its ±10 % band; the per-body normalised error."""
    from robot_tv_dynamics.control.run import LOAD_MASS_TOLERANCE

    t = run.t
    if run.load_body is not None:
        relative = run.load_mass_error / np.maximum(np.abs(run.load_mass), 1e-12)
        mass_ax.plot(t, 100 * relative, label="(m̂ − m)/m(t), load body")
        mass_ax.axhspan(-100 * LOAD_MASS_TOLERANCE, 100 * LOAD_MASS_TOLERANCE, color="tab:green",
                        alpha=0.2, label="±10 %")
        mass_ax.legend(fontsize=8)
    else:
        mass_ax.text(0.5, 0.5, "no load", ha="center", transform=mass_ax.transAxes)
    mass_ax.set_ylabel("load mass error [%]")
    mass_ax.set_xlabel("t [s]")
    for body in np.flatnonzero(run.adapted):
        body_ax.semilogy(t, np.maximum(run.theta_error_per_body[:, body], 1e-12), lw=0.8,
                         label=f"body {body}")
    body_ax.set_ylabel("‖Θ̂_i − Θ_i‖ / ‖Θ_i‖")
    body_ax.set_xlabel("t [s]")
    body_ax.legend(fontsize=7, ncol=2)


def suite_figure(rows: list[dict[str, Any]], path: Path) -> None:
    """One figure: per arm and excitation, scenario × plant against controller, five quantities.

    Panels (one row per arm and excitation): tracking RMS [rad], inf μ(Θ̂) over every
    control step (``inf_margin_every_step``; rows without it: ``inf_margin``) [kg·m²],
    inf λ_min(M(q, Θ̂)) [kg·m²], the load body's final relative mass error and the
    torque-visible estimate error at the end over its peak; each
    cell shows the number, red where μ or λ_min ≤ 0 (an inconsistent estimate, an
    indefinite M̂) or the run diverged, shaded by log₁₀ of the value otherwise. CSV rows
    (strings) work as well as the suite's dicts.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    arms = list(dict.fromkeys((r["arm"], r.get("excitation", "persistent")) for r in rows))
    controllers = list(dict.fromkeys(r["controller"] for r in rows))
    metrics = (("tracking_rms_rad", "tracking RMS [rad]"),
               ("inf_margin_every_step", r"inf μ($\hat\Theta$) over adapted bodies [kg·m²]"),
               ("inf_lambda_min_M_hat", r"inf $\lambda_{min}$(M(q, $\hat\Theta$)) [kg·m²]"),
               ("final_load_mass_relative_error", r"load body |$\hat m$ − m|/m at the end"),
               ("visible_error_final_over_peak",
                r"torque-visible $\|\hat\Theta - \Theta\|_R$: end / peak"))
    cases = {arm: list(dict.fromkeys((r["scenario"], r["plant"]) for r in rows
                                     if (r["arm"], r.get("excitation", "persistent")) == arm))
             for arm in arms}
    height = sum(0.32 * len(c) + 1.2 for c in cases.values()) + 0.8
    fig, axes = plt.subplots(len(arms), len(metrics), squeeze=False,
                             figsize=(4.2 * len(metrics) + 2.0, height),
                             gridspec_kw={"height_ratios": [len(cases[a]) for a in arms]})
    table = {(r["arm"], r.get("excitation", "persistent"), r["scenario"], r["plant"],
              r["controller"]): r for r in rows}
    for i, arm in enumerate(arms):
        for j, (key, title) in enumerate(metrics):
            ax = axes[i, j]
            values = np.full((len(cases[arm]), len(controllers)), np.nan)
            diverged = np.zeros_like(values, dtype=bool)
            for a, (scenario, plant) in enumerate(cases[arm]):
                for b, controller in enumerate(controllers):
                    row = table.get((*arm, scenario, plant, controller))
                    if row is not None:
                        fallback = row.get("inf_margin") if key.startswith("inf_margin") else None
                        values[a, b] = float_or_nan(row.get(key, fallback))
                        diverged[a, b] = math.isfinite(float_or_nan(row.get("diverged_at_s")))
            bad = (values <= 0.0) | diverged
            shade = np.where(bad | ~np.isfinite(values), np.nan,
                             np.log10(np.abs(np.where(values == 0, 1.0, values))))
            cmap = matplotlib.colormaps["Greens" if key.startswith("inf_") else "Blues"]
            ax.imshow(shade, cmap=cmap, aspect="auto", alpha=0.6)
            for a in range(values.shape[0]):
                for b in range(values.shape[1]):
                    text = "—" if not math.isfinite(values[a, b]) else f"{values[a, b]:.2g}"
                    if diverged[a, b]:
                        text += "\n(diverged)"
                    if bad[a, b]:
                        ax.add_patch(plt.Rectangle((b - 0.5, a - 0.5), 1, 1, color="tab:red",
                                                   alpha=0.45))
                    ax.text(b, a, text, ha="center", va="center", fontsize=7)
            ax.set_xticks(range(len(controllers)), controllers, fontsize=8)
            ax.set_yticks(range(len(cases[arm])),
                          [f"{s} ({p[:3]})" for s, p in cases[arm]] if j == 0 else [],
                          fontsize=8)
            ax.set_title(f"{arm[0]}, {arm[1]}: {title}", fontsize=9)
    fig.suptitle(r"adapt --suite (red: ≤ 0, i.e. $\hat\Theta$ inconsistent / "
                 r"M(q, $\hat\Theta$) not positive definite, or the arm diverged)", fontsize=10)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)
