"""The identification summary (``summary.json``, ``--json``, the table) and ``report.png``."""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.identification.pipeline import MODELS, IdentificationResult
from robot_tv_dynamics.identification.urdf_writer import BodyWriteback
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel

#: Plot colours per model.
COLORS = {"urdf": "tab:orange", "unconstrained": "tab:red", "identified": "tab:blue"}


def _num(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _per(names: Sequence[str], values: Array) -> dict[str, float | None]:
    return {name: _num(float(v)) for name, v in zip(names, values, strict=True)}


def summary(
    result: IdentificationResult, model: RobotModel, *, urdf: str, data: str,
    topic: str | None, rate: float, cutoff: float, n_raw: int,
    writeback: Sequence[BodyWriteback] = (),
) -> dict[str, Any]:
    """The JSON summary of one identification (every number the report states)."""
    joints, bodies = model.joint_names, model.body_names
    rms: dict[str, Any] = {}
    for name in MODELS:
        fit = result.models[name]
        rms[name] = {"fit": _per(joints, fit.rms_fit), "holdout": _per(joints, fit.rms_holdout),
                     "fit_overall": _num(float(np.sqrt(np.mean(fit.rms_fit ** 2)))),
                     "holdout_overall": _num(float(np.sqrt(np.mean(fit.rms_holdout ** 2))))}
    return {
        "urdf": urdf,
        "data": data,
        "topic": topic,
        "locked_joints": dict(model.locked_joints),
        "joint_names": list(joints),
        "body_names": list(bodies),
        "friction_model": result.options.friction,
        "coulomb_velocity": result.options.coulomb_velocity,
        "margin_epsilon": result.margin,
        "prior_weight": result.options.prior_weight,
        "samples": {"raw": n_raw, "fit": result.n_fit, "holdout": result.n_holdout,
                    "holdout_fraction": result.options.holdout, "rate_hz": rate,
                    "filter_cutoff_hz": cutoff,
                    "duration_s": float(result.t[-1] - result.t[0]) if result.t.size else 0.0},
        "n_parameters": result.n_parameters,
        "rank": result.rank,
        "condition_number": _num(result.condition_number),
        "noise_sigma": _per(joints, result.noise_sigma),
        "rms": rms,
        "margins": {name: _per(bodies, result.models[name].margins) for name in MODELS},
        "consistent": {name: bool(np.all(result.models[name].margins > 0)) for name in MODELS},
        "uniformly_consistent_identified": bool(
            np.all(result.models["identified"].margins >= result.margin * (1 - 1e-9))),
        "solver": {"name": result.solver, "status": result.solver_status,
                   "accurate": result.solver_accurate, "margin_repair": result.margin_repair,
                   "time_s": result.solver_time_s},
        "warnings": list(result.warnings),
        "stage_times_s": dict(result.stage_times_s),
        "friction": result.models["identified"].friction.as_dict(),
        "urdf_writeback": [{"body": w.body, "link": w.link, "mode": w.mode,
                            "other_links": list(w.other_links)} for w in writeback],
        "notes": list(result.notes),
    }


def format_table(data: dict[str, Any]) -> str:
    """Human-readable summary (the default output of ``identify``)."""
    lines = [f"identify: {data['urdf']} ← {data['data']}",
             f"  samples: {data['samples']['fit']} fit + {data['samples']['holdout']} held out "
             f"at {data['samples']['rate_hz']:.6g} Hz "
             f"(filter {data['samples']['filter_cutoff_hz']:g} Hz); "
             f"{data['n_parameters']} unknowns, {data['rank']} identifiable, "
             f"condition number {data['condition_number']:.4g}",
             f"  solver {data['solver']['name']} ({data['solver']['status']}, "
             f"{data['solver']['time_s']:.3f} s); friction model {data['friction_model']}",
             "", f"  {'joint':<24} {'noise σ':>9} " + " ".join(
                 f"{m + ' fit/held-out':>28}" for m in MODELS)]
    for joint in data["joint_names"]:
        cells = []
        for name in MODELS:
            fit, hold = data["rms"][name]["fit"][joint], data["rms"][name]["holdout"][joint]
            cells.append(f"{_fmt(fit):>13} /{_fmt(hold):>13}")
        lines.append(f"  {joint:<24} {_fmt(data['noise_sigma'][joint]):>9} " + " ".join(cells))
    lines += ["", f"  {'body':<24} " + " ".join(f"{'λmin f(Φ) ' + m:>26}" for m in MODELS)]
    for body in data["body_names"]:
        lines.append(f"  {body:<24} " + " ".join(
            f"{_fmt(data['margins'][name][body]):>26}" for name in MODELS))
    lines.append(f"  every identified body has f(Φ) ⪰ {data['margin_epsilon']:g}·I: "
                 f"{'yes' if data['uniformly_consistent_identified'] else 'NO'}")
    for note in data["notes"]:
        lines.append(f"  note: {note}")
    for warning in data["warnings"]:
        lines.append(f"  WARNING: {warning}")
    return "\n".join(lines) + "\n"


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def plot_report(path: str | Path, result: IdentificationResult, model: RobotModel) -> None:
    """Write report.png: measured vs predicted effort per joint, residuals, margins."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = model.nv
    cols = 3
    rows = int(math.ceil((n + 2) / cols))
    fig, axes = plt.subplots(rows, cols, figsize=(16, 3.2 * rows), squeeze=False)
    flat = axes.ravel()
    t = result.t - result.t[0]
    stride = max(1, t.size // 1500)
    split = float(t[result.n_fit]) if result.n_holdout else None
    for i in range(n):
        ax = flat[i]
        ax.plot(t[::stride], result.tau_measured[::stride, i], color="black", lw=0.5,
                alpha=0.45, label="measured")
        for name in ("urdf", "identified"):
            fit = result.models[name]
            ax.plot(t[::stride], fit.prediction[::stride, i], color=COLORS[name], lw=1.0,
                    label=f"{name} (held-out RMS {fit.rms_holdout[i]:.3g})")
        if split is not None:
            ax.axvspan(split, float(t[-1]), color="gold", alpha=0.15, lw=0)
        ax.set_title(model.joint_names[i], fontsize=9)
        ax.set_ylabel("effort [N·m or N]", fontsize=8)
        ax.set_xlabel("time from the first sample [s]", fontsize=8)
        ax.tick_params(labelsize=7)
        ax.legend(fontsize=7, loc="best", framealpha=0.6)
        ax.grid(True, alpha=0.3)
    ax = flat[n]
    for name in MODELS:
        fit = result.models[name]
        hold = slice(result.n_fit, None) if result.n_holdout else slice(None)
        residual = ((result.tau_measured - fit.prediction)[hold] / result.noise_sigma).ravel()
        ax.hist(np.clip(residual, -8, 8), bins=80, range=(-8, 8), histtype="step",
                color=COLORS[name], label=name, density=True)
    grid = np.linspace(-8, 8, 200)
    ax.plot(grid, np.exp(-0.5 * grid ** 2) / math.sqrt(2 * math.pi), color="black", ls=":",
            label="N(0, 1)")
    ax.set_title("held-out residual / noise σ per joint (clipped at ±8)", fontsize=9)
    ax.legend(fontsize=7)
    ax.tick_params(labelsize=7)
    ax = flat[n + 1]
    x = np.arange(model.n_bodies)
    width = 0.27
    for k, name in enumerate(MODELS):
        ax.bar(x + (k - 1) * width, result.models[name].margins, width, color=COLORS[name],
               label=name)
    ax.axhline(result.margin, color="tab:green", ls="--", lw=1, label=f"ε = {result.margin:g}")
    ax.axhline(0.0, color="black", lw=0.6)
    ax.set_yscale("symlog", linthresh=max(result.margin, 1e-9))
    every = np.concatenate([result.models[name].margins for name in MODELS])
    top = max(float(every.max()), result.margin) * 10.0
    bottom = float(every.min()) * 10.0 if every.min() < 0 else -result.margin
    ax.set_ylim(bottom, top)  # symlog autoscaling can hide the small positive bars
    ax.set_xticks(x)
    ax.set_xticklabels(model.body_names, rotation=30, ha="right", fontsize=7)
    ax.set_title("margin λ_min(f(Φ_l)) per body (Theorem 1: consistent ⇔ > 0)", fontsize=9)
    ax.legend(fontsize=7)
    for ax in flat[n + 2:]:
        ax.axis("off")
    hold_text = (f"; shaded: held-out tail ({result.n_holdout} samples)"
                 if result.n_holdout else "")
    fig.suptitle(f"identify: measured vs predicted effort, friction model "
                 f"{result.options.friction}, condition number {result.condition_number:.3g}"
                 f"{hold_text}", fontsize=11)
    fig.tight_layout(rect=(0, 0, 1, 0.97))
    fig.savefig(path, dpi=100)
    plt.close(fig)
