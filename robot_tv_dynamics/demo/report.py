r"""The demo's ``report.png``: margins, mass-matrix bounds, torque terms and estimates over time.

Every symbol is matplotlib mathtext (:math:`\dot\Theta`, :math:`\dot\Psi`,
:math:`\hat\Theta` keep their accents, which combining Unicode characters lose in the
font), every number has 3 significant digits (:mod:`robot_tv_dynamics.demo.numbers`),
and the legends sit right of the panels, where they overlap neither curves nor tick
labels; the constrained layout keeps every text inside the figure.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.demo.numbers import NONE, mathtext, people
from robot_tv_dynamics.demo.recording import Recording, loading_span
from robot_tv_dynamics.model import RobotModel

#: Legend labels of the terms of eq. (39) (rows of ``generalized_terms``), in mathtext.
TERM_LABELS = {
    "inertia": r"$M(q,\Theta)\,\ddot{q}$",
    "coriolis": r"$C(q,\dot{q},\Theta)\,\dot{q}$",
    "mass_rate": r"$M(q,\dot{\Theta})\,\dot{q}$",
    "gyroscopic": r"$H(q,\Psi)\,\dot{q}$",
    "gravity": r"$G(q,\Theta)$",
    "psi_dot": r"$J^{\top} Q_0\,\dot{\Psi}$",
}
#: Colour and legend text of each momentum observer (report panel 4).
OBSERVER_COLORS = {"generalized": "tab:blue", "classical": "tab:red"}
OBSERVER_MODELS = {"generalized": r"$\Theta(t), \Psi(t)$",
                   "classical": r"$\Theta(0)$ held"}
COLORS = {"classical": "tab:red", "projected": "tab:blue", "geometric": "tab:green",
          "controller": "tab:purple", "truth": "black"}
ESTIMATE = r"$\hat{\Theta}(t)$"
TRUE = r"$\Theta(t)$"
TITLE = {"fontsize": 10, "pad": 9}
LEGEND = {"loc": "upper left", "bbox_to_anchor": (1.01, 1.0), "fontsize": 8,
          "borderaxespad": 0.0}


def _plain(text: str) -> str:
    """Text from the outside (a scenario description) with ``$`` escaped."""
    return text.replace("$", r"\$")


def _symlog(ax: Any, linthresh: float, low: float, high: float) -> None:
    """A symlog y axis whose tick labels never crowd.

    The linear range ends at a power of ten 10^k₀ ≤ ``linthresh``; the ticks are 0 and
    ±10^k for k = k₀, k₀ + s, … up to the data's largest decade, on the sides that have
    data, with the smallest step s that keeps at most 13 labels (so no tick falls inside
    the linear range, where labels would pile up on 0).
    """
    from matplotlib.ticker import FixedLocator, NullLocator

    k0 = math.floor(math.log10(linthresh))
    ax.set_yscale("symlog", linthresh=10.0 ** k0)
    top = math.ceil(math.log10(max(abs(low), abs(high), 10.0 ** k0)))
    sides = (high > 0) + (low < 0)
    step = 1
    while 1 + sides * (len(range(k0, top + 1, step))) > 13:
        step += 1
    powers = [10.0 ** k for k in range(k0, top + 1, step)]
    ticks = [0.0] + (powers if high > 0 else []) + ([-p for p in powers] if low < 0 else [])
    ax.yaxis.set_major_locator(FixedLocator(sorted(ticks)))
    ax.yaxis.set_minor_locator(NullLocator())


def report_figure(rec: Recording, result: dict[str, Any], model: RobotModel,
                  summary_data: dict[str, Any]) -> Any:
    """The report as a matplotlib Figure (Agg): five panels sharing the time axis.

    (1) μ of the payload body, (2) the terms of eq. (39), (3) λ_min(M(q, Θ̂)), (4) the
    momentum observers' ‖r‖∞ with the contact threshold, (5) the tracking error; the
    loading window (gold) and the collision window (purple) shaded in every panel.
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    body = result["body"]
    fig = plt.figure(figsize=(12.5, 19.0), layout="constrained")
    axes = fig.subplots(5, 1, sharex=True)
    _suptitle(fig, rec, summary_data, model.body_names[body])
    _shade(axes, loading_span(rec, body), result.get("collision_span"))
    _margin_panel(axes[0], result, model.body_names[body])
    _terms_panel(axes[1], rec)
    _mass_matrix_panel(axes[2], result, summary_data)
    _observer_panel(axes[3], result, summary_data)
    _tracking_panel(axes[4], rec, result)
    return fig


def _suptitle(fig: Any, rec: Recording, summary_data: dict[str, Any], body_name: str) -> None:
    """The scenario, its collisions and the estimators compared, above the panels."""
    process = rec.info.get("process") or {}
    pushes = "".join(
        f"; collision: {people(float(np.linalg.norm(c['force'])))} N on {c['link']} from "
        f"{people(c['start'])} s to {people(c['end'])} s"
        for c in rec.info.get("collisions") or [])
    description = textwrap.fill(
        f"robot_tv_dynamics demo — {summary_data['scenario']}: "
        f"{process.get('description', '')}{pushes}", 125)
    fig.suptitle(
        _plain(description) + f"\npayload body {body_name}; RLS with forgetting on its 10 "
        "parameters: classical (unconstrained) vs projected onto "
        r"$\{\varepsilon I \preceq f(\Phi) \preceq \beta I\}$"
        "\ngeometric: EKF on log-Cholesky parameters of "
        r"$f(\Phi) - \varepsilon I$ (consistent by construction)", fontsize=11)


def _shade(axes: Any, span: tuple[float, float] | None,
           collision: tuple[float, float] | None) -> None:
    """The loading and collision windows shaded, and a grid, in every panel."""
    for ax in axes:
        labelled = ax is axes[0] or ax is axes[3]
        if span is not None:
            ax.axvspan(*span, color="gold", alpha=0.15, lw=0,
                       label="loading" if labelled else None)
        if collision is not None:
            ax.axvspan(*collision, color="tab:purple", alpha=0.15, lw=0,
                       label="collision (sim_node)" if labelled else None)
        ax.grid(True, alpha=0.3)


def _margin_panel(ax: Any, result: dict[str, Any], body_name: str) -> None:
    """Panel 1: the consistency margin μ of the payload body, true and estimated, alarms."""
    body = result["body"]
    mu_true = result["mu_true"][:, body]
    ax.plot(result["t_theta"], mu_true, color=COLORS["truth"], label=f"true {TRUE}")
    values = [mu_true]
    for name, est in result["estimators"].items():
        ax.plot(est["t"], est["mu"][:, body], color=COLORS[name], label=f"{name} {ESTIMATE}")
        values.append(est["mu"][:, body])
    eps = float(next(iter(result["estimators"].values()))["epsilon"][body])
    ax.axhline(eps, color="tab:orange", ls="--",
               label=rf"$\varepsilon$ = {mathtext(eps)} kg·m² (monitor)")
    ax.axhline(0.0, color="gray", lw=0.8)
    for name, est in result["estimators"].items():
        alarms = est["alarms"]
        for k, alarm in enumerate(alarms):
            ax.axvline(alarm["t"], color=COLORS[name], ls=":", lw=1.2, label=(
                f"ALARM ({name}, {alarm['body']}): first at {people(alarm['t'])} s"
                if k == 0 else None))
    every = np.concatenate([np.ravel(v) for v in values]) if values else np.zeros(1)
    _symlog(ax, max(abs(eps) / 2, 1e-9), float(every.min(initial=0)), float(every.max(initial=0)))
    ax.set_ylabel(r"$\mu = \lambda_{\min}(f(\Phi))$ [kg·m²]" + "\n(symlog)")
    ax.set_title(
        f"Physical consistency margin of {body_name}: Theorem 1, consistent "
        r"$\Leftrightarrow\ \mu > 0$; Definition 3, uniformly $\Leftrightarrow\ "
        r"\inf_t\,\mu > 0$", **TITLE)
    ax.legend(**LEGEND)


def _terms_panel(ax: Any, rec: Recording) -> None:
    """Panel 2: the terms of eq. (39) for the true Θ(t), each as its 2-norm over the joints."""
    t_terms, terms = rec.terms
    if len(terms):
        for k, label in enumerate(TERM_LABELS):
            ax.plot(t_terms, np.linalg.norm(terms[:, k, :], axis=1), label=TERM_LABELS[label],
                    lw=1.2)
        ax.set_yscale("log")
        ax.set_ylim(bottom=1e-4)
    ax.set_ylabel(r"$\|\mathrm{term}\|_2$ over the joints" + "\n[N·m]")
    ax.set_title(
        r"Eq. (39) term by term for the true $\Theta(t)$ (dynamics_node); "
        r"$M(q,\dot{\Theta})\,\dot{q}$, $H(q,\Psi)\,\dot{q}$ and $J^{\top}Q_0\,\dot{\Psi}$ "
        "are absent from the classical model", **TITLE)
    ax.legend(**LEGEND)


def _mass_matrix_panel(ax: Any, result: dict[str, Any], summary_data: dict[str, Any]) -> None:
    """Panel 3: λ_min(M(q, Θ̂)) of each estimate against its α₁, crossings and alarms."""
    ax.plot(result["t_theta"], result["lam_true"], color=COLORS["truth"], label=f"true {TRUE}")
    lin = 1e-4
    values = [np.asarray(result["lam_true"])]
    method = summary_data.get("gamma_method", "sampled")
    gamma = summary_data.get("gamma_inf_lambda_min_JtJ")
    for name, est in result["estimators"].items():
        ax.plot(est["t"], est["lam"], color=COLORS[name], label=f"{name} {ESTIMATE}")
        values.append(np.asarray(est["lam"]))
        if est["alpha1"] is not None and est["alpha1"] > 0:
            bound = (rf"$\gamma \geq {mathtext(gamma)[1:-1]}$" if gamma is not None
                     else r"$\gamma$ unavailable")
            ax.axhline(est["alpha1"], color=COLORS[name], ls="--", lw=1, label=(
                rf"$\alpha_1$ ({name}) = {mathtext(est['alpha1'])} kg·m²" + "\n"
                f"({bound}: lower end of the {method} bracket)"))
            lin = min(lin, est["alpha1"])
        crossing = est["first_nonpositive_lambda_min_M_hat_t"]
        if crossing is not None:
            lead = est["lead_time_s"]
            ax.axvline(crossing, color=COLORS[name], lw=1.5, label=(
                rf"{name}: $\lambda_{{\min}}(M(q,\hat{{\Theta}})) \leq 0$ at "
                f"{people(crossing)} s\n(lead time of the alarm: "
                f"{people(lead) + ' s' if lead is not None else NONE})"))
        if est["alarms"]:
            ax.axvline(est["alarms"][0]["t"], color=COLORS[name], ls=":", lw=1.2)
    ax.axhline(0.0, color="gray", lw=0.8)
    every = np.concatenate([v.ravel() for v in values if v.size]) if values else np.zeros(1)
    _symlog(ax, lin, float(every.min(initial=0)), float(every.max(initial=0)))
    ax.set_ylabel(r"$\lambda_{\min}(M(q,\hat{\Theta}))$" + "\n[kg·m²] (symlog)")
    ax.set_title(
        r"Smallest eigenvalue of the estimated mass matrix; Theorem 2: $\lambda_{\min} \geq "
        r"\alpha_1 = \min_l \inf_t\,\mu_l \cdot \inf_q \lambda_{\min}(J^{\top}J)$", **TITLE)
    ax.legend(**LEGEND)


def _tracking_panel(ax: Any, rec: Recording, result: dict[str, Any]) -> None:
    """Panel 5: the tracking error of the computed-torque controller over the whole run."""
    ax.plot(rec.t, np.degrees(result["tracking_error"]), color=COLORS["projected"],
            label="projected (controller)")
    ax.set_ylabel(r"$\|q_r - q\|$ (arm joints)" + "\n[deg]")
    ax.set_xlabel("simulated time [s]")
    rms = result["tracking_rms"]
    ax.set_title("Tracking error of the computed-torque controller on the projected estimate"
                 + (f" (RMS {people(np.degrees(rms))}°)" if rms is not None else ""),
                 **TITLE)
    ax.legend(**LEGEND)
    ax.set_xlim(0.0, float(rec.t[-1]) if rec.t.size else 1.0)


def _observer_panel(ax: Any, result: dict[str, Any], summary_data: dict[str, Any]) -> None:
    """‖r‖∞ of both momentum observers, the contact threshold, the contacts' starts."""
    settings = (summary_data.get("settings") or {}).get("observer") or {}
    threshold = settings.get("contact_threshold")
    observers = result.get("observers") or {}
    floor = 1e-4
    # the classical first: before any loading both curves agree, the generalized on top
    for kind, obs in sorted(observers.items(), key=lambda item: item[0] != "classical"):
        color = OBSERVER_COLORS.get(kind, "gray")
        norm = np.maximum(np.asarray(obs["norm"]), floor)
        peak = (obs.get("peak_during_loading") or {}).get("value")
        ax.plot(obs["t"], norm, color=color, lw=1.2, label=(
            f"{kind} ({OBSERVER_MODELS[kind]})" + "\n" + f"peak during loading "
            f"{people(peak, unit='N·m')}"))
        starts = obs["contacts"]
        if starts:
            times = np.array([c["t_start"] for c in starts])
            values = np.interp(times, obs["t"], norm)
            first_hit = obs.get("detection_delay_s")
            during = sum(c["phase"] == "loading" for c in starts)
            label = (f"{kind}: {len(starts)} contact{'' if len(starts) == 1 else 's'} "
                     f"({during} starting during loading)")
            if result.get("collision_span") is not None:
                label += "\n" + (
                    f"collision detected {people(first_hit * 1e3)} ms after it began"
                    if first_hit is not None else "no contact in the collision window")
            ax.plot(times, values, ls="none", marker="v", ms=7, color=color, label=label)
        else:
            ax.plot([], [], ls="none", marker="v", color=color, label=f"{kind}: no contact")
    if threshold is not None:
        ax.axhline(float(threshold), color="tab:orange", ls="--", label=(
            f"contact threshold θ = {people(float(threshold))} N·m per joint"))
    ax.set_yscale("log")
    ax.set_ylim(bottom=floor)
    ax.set_ylabel(r"$\|r\|_\infty = \max_i |r_i|$" + "\n[N·m]")
    ax.set_title(
        "Momentum observers on the measured joint torques (dynamics_node): a payload "
        "change vs a collision; " + r"$\dot{r} = K_O\,(\tau_{ext} - r)$", **TITLE)
    if not observers:
        ax.text(0.5, 0.5, "no observer residual in the bag", transform=ax.transAxes,
                ha="center", va="center")
    ax.legend(**LEGEND)


def report(path: Path, rec: Recording, result: dict[str, Any], model: RobotModel,
           summary_data: dict[str, Any]) -> None:
    """Write report.png (matplotlib Agg, 110 dpi): :func:`report_figure`."""
    import matplotlib.pyplot as plt

    fig = report_figure(rec, result, model, summary_data)
    fig.savefig(path, dpi=110)
    plt.close(fig)


def console_summary(data: dict[str, Any]) -> list[str]:
    """The lines the demo prints after a run, numbers for people (3 digits, "—" for none).

    Args:
        data: the summary (summary.json).
    """
    lines = []
    for name, est in data["estimators"].items():
        alarms = est["alarms"]
        early = est.get("alarms_before_loading") or []
        first = (f" (first at {people(alarms[0]['t'])} s, {alarms[0]['body']}"
                 f"{', before loading starts' if early and alarms[0] == early[0] else ''})"
                 if alarms else "")
        lines.append(
            f"{name:9s}: {len(alarms)} alarm{'' if len(alarms) == 1 else 's'}{first}, "
            f"min λ_min(M(q,Θ̂)) = {people(est['min_lambda_min_M_hat'], unit='kg·m²')}, "
            f"α₁ = {people(est['alpha1'], unit='kg·m²')}, "
            f"lead time = {people(est['lead_time_s'], unit='s')}")
    for kind, obs in (data.get("observers") or {}).items():
        loading = (obs.get("peak_during_loading") or {}).get("value")
        hit = (obs.get("peak_during_collision") or {}).get("value")
        during = sum(c["phase"] == "loading" for c in obs["contacts"])
        text = (f"{kind} observer: peak ‖r‖∞ {people(loading, unit='N·m')} during loading"
                + (f", {people(hit, unit='N·m')} during the collision" if hit is not None
                   else "")
                + f"; {len(obs['contacts'])} contact{'' if len(obs['contacts']) == 1 else 's'}"
                + f" ({during} during loading)")
        if data.get("collision_window_s") is not None:
            delay = obs.get("detection_delay_s")
            text += (f", collision detected after {people(delay * 1e3)} ms" if delay is not None
                     else ", collision missed")
        lines.append(text)
    start = (data.get("load") or {}).get("loading_start_s")
    if start is not None:
        lines.append(f"loading starts at {people(start)} s; alarms before it are not caused "
                     "by the loading and do not count for the lead time")
    lines.append(f"real-time factor {people(data.get('real_time_factor'))}")
    return lines
