r"""The demo's ``report.png``: margins, mass-matrix bounds, torque terms and estimates over time."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.demo.recording import Recording
from robot_tv_dynamics.demo.scenario import (
    ESTIMATORS,
)
from robot_tv_dynamics.model import RobotModel


def report(path: Path, rec: Recording, result: dict[str, Any], model: RobotModel,
           summary_data: dict[str, Any]) -> None:
    """Write report.png (matplotlib Agg): four panels sharing the time axis."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    body = result["body"]
    body_name = model.body_names[body]
    process = rec.info.get("process") or {}
    colors = {"classical": "tab:red", "projected": "tab:blue", "truth": "black"}
    fig, axes = plt.subplots(4, 1, figsize=(12, 15), sharex=True)
    title = (f"robot_tv_dynamics demo — {summary_data['scenario']}: "
             f"{process.get('description', '')}\n"
             f"payload body {body_name}; RLS with forgetting on its 10 parameters, classical "
             "(unconstrained) vs projected onto {εI ⪯ f(Φ) ⪯ βI}")
    fig.suptitle(title, fontsize=11)
    t_end = float(rec.t[-1]) if rec.t.size else 1.0
    # loading phase shading
    t_theta, theta = rec.theta
    mass = theta[:, body, 0] if len(theta) else np.zeros(0)
    changing = (np.flatnonzero(np.abs(np.diff(mass)) > 1e-9) if mass.size > 1
                else np.zeros(0, dtype=np.intp))
    span = (float(t_theta[changing[0]]), float(t_theta[changing[-1] + 1])) if len(changing) \
        else None
    for ax in axes:
        if span is not None:
            ax.axvspan(*span, color="gold", alpha=0.15, lw=0)
        ax.grid(True, alpha=0.3)

    # (1) consistency margin of the payload body
    ax = axes[0]
    ax.plot(result["t_theta"], result["mu_true"][:, body], color=colors["truth"],
            label="true Θ(t)")
    for name in ESTIMATORS:
        est = result["estimators"][name]
        ax.plot(est["t"], est["mu"][:, body], color=colors[name], label=f"{name} Θ̂(t)")
    eps = result["estimators"]["classical"]["epsilon"][body]
    ax.axhline(eps, color="tab:orange", ls="--", label=f"ε = {eps:.2g} (monitor)")
    ax.axhline(0.0, color="gray", lw=0.8)
    for name in ESTIMATORS:
        alarms = result["estimators"][name]["alarms"]
        for alarm in alarms:
            ax.axvline(alarm["t"], color=colors[name], ls=":", lw=1.2)
        if alarms:
            ax.annotate(f"first ALARM ({name} estimate, {alarms[0]['body']}) at "
                        f"{alarms[0]['t']:.2f} s", (alarms[0]["t"], eps), xytext=(-250, 25),
                        textcoords="offset points", color=colors[name], fontsize=9,
                        arrowprops={"arrowstyle": "->", "color": colors[name]})
    ax.set_yscale("symlog", linthresh=max(abs(eps) / 2, 1e-9))
    ax.set_ylabel("μ = λ_min(f(Φ)) [kg·m²]\n(symlog)")
    ax.set_title(f"Physical consistency margin of {body_name} (Theorem 1: consistent ⇔ μ > 0; "
                 "Definition 3: uniform ⇔ inf μ > 0). Shaded: loading.", fontsize=10)
    ax.legend(loc="lower left", fontsize=8, ncol=2)

    # (2) terms of eq. (39)
    ax = axes[1]
    t_terms, terms = rec.terms
    labels = ("inertia", "coriolis", "mass_rate", "gyroscopic", "gravity", "psi_dot")
    names = {"inertia": "M(q,Θ) q̈", "coriolis": "C(q,q̇,Θ) q̇", "mass_rate": "M(q,Θ̇) q̇",
             "gyroscopic": "H(q,Ψ) q̇", "gravity": "G(q,Θ)", "psi_dot": "Jᵀ Q₀ Ψ̇"}
    if len(terms):
        for k, label in enumerate(labels):
            ax.plot(t_terms, np.linalg.norm(terms[:, k, :], axis=1), label=names[label], lw=1.2)
        ax.set_yscale("log")
        ax.set_ylim(bottom=1e-4)
    ax.set_ylabel("‖term‖ over joints\n[N·m]")
    ax.set_title("Generalized robotics equation (39), term by term (dynamics_node, true Θ(t)); "
                 "the last three are absent from the classical model", fontsize=10)
    ax.legend(loc="lower left", fontsize=8, ncol=3)

    # (3) λ_min(M(q, Θ̂)) vs α₁
    ax = axes[2]
    ax.plot(result["t_theta"], result["lam_true"], color=colors["truth"], label="true Θ(t)")
    lin = 1e-4
    for name in ESTIMATORS:
        est = result["estimators"][name]
        ax.plot(est["t"], est["lam"], color=colors[name], label=f"{name} Θ̂(t)")
        if est["alpha1"] is not None and est["alpha1"] > 0:
            method = summary_data["gamma_method"]
            gamma = summary_data["gamma_inf_lambda_min_JtJ"]
            ax.axhline(est["alpha1"], color=colors[name], ls="--", lw=1,
                       label=f"α₁ ({name}) = {est['alpha1']:.2g} (γ ≥ {gamma:.3g}: "
                             f"lower end of the {method} bracket)")
            lin = min(lin, est["alpha1"])
        crossing = est["first_nonpositive_lambda_min_M_hat_t"]
        if est["alarms"]:
            ax.axvline(est["alarms"][0]["t"], color=colors[name], ls=":", lw=1.2)
        if crossing is not None:
            ax.axvline(crossing, color=colors[name], lw=1.5)
            lead = est["lead_time_s"]
            ax.annotate(f"λ_min(M̂) ≤ 0 at {crossing:.2f} s"
                        + (f"\nlead time of the alarm: {lead:.2f} s" if lead is not None else ""),
                        (crossing, 0.0), xytext=(6, -30), textcoords="offset points",
                        color=colors[name], fontsize=8)
    ax.axhline(0.0, color="gray", lw=0.8)
    ax.set_yscale("symlog", linthresh=lin)
    ax.set_ylabel("λ_min(M(q, Θ̂))\n[kg·m²] (symlog)")
    ax.set_title("Smallest eigenvalue of the estimated mass matrix along the trajectory; "
                 "Theorem 2: λ_min ≥ α₁ = min_l inf_t μ_l · inf_q λ_min(JᵀJ)", fontsize=10)
    ax.legend(loc="lower left", fontsize=8, ncol=2)

    # (4) tracking error
    ax = axes[3]
    ax.plot(rec.t, np.degrees(result["tracking_error"]), color=colors["projected"])
    ax.set_ylabel("‖q_r − q‖ (arm joints)\n[deg]")
    ax.set_xlabel("simulated time [s]")
    rms = result["tracking_rms"]
    ax.set_title("Tracking error of the computed-torque controller on the projected estimate"
                 + (f" (RMS {np.degrees(rms):.2f}°)" if rms is not None else ""), fontsize=10)
    ax.set_xlim(0.0, t_end)
    fig.tight_layout(rect=(0, 0, 1, 0.96))
    fig.savefig(path, dpi=110)
    plt.close(fig)


# ------------------------------------------------------------------------ main
