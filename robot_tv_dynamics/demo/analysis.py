r"""The demo's analysis: margins, alarms replayed on the recorded estimates, the summary.

Alarms in the summary are the ERROR transitions of
:class:`~robot_tv_dynamics.consistency.ConsistencyMonitor` replayed on the recorded
estimates with the monitor nodes' settings (deterministic, in simulated time); the alarms
the live monitor nodes raised are listed beside them (``live_alarms``).

Contacts (``observers``) are the events of
:class:`~robot_tv_dynamics.observer.ContactDetector` with the dynamics node's settings
(:data:`~robot_tv_dynamics.demo.scenario.OBSERVER_PARAMETERS`) replayed on the residuals
the node published (``external_torques``, ``external_torques_classical``): the node's
detector sees the same values in the same order, so the events are the node's. Each
observer's residual is summarised by ‖r‖∞ = max_i |r_i|, the quantity the per-joint
threshold is compared with, in the loading window (:func:`loading_span`) and the
collision window [start, start + duration] of the simulator's ``collisions``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from robot_tv_dynamics.bounds import theorem_bounds
from robot_tv_dynamics.consistency import spectral_statistics
from robot_tv_dynamics.consistency.monitor import ConsistencyMonitor, MonitorConfig
from robot_tv_dynamics.demo.annotate import annotate_bag
from robot_tv_dynamics.demo.recording import Recording, loading_span, read_recording
from robot_tv_dynamics.demo.report import report
from robot_tv_dynamics.demo.scenario import OBSERVER_PARAMETERS
from robot_tv_dynamics.inertia import Array
from robot_tv_dynamics.model import RobotModel
from robot_tv_dynamics.observer import ContactDetector
from robot_tv_dynamics.simulation import DEMO_MARGIN_FRACTION
from robot_tv_dynamics.status import Level


def _first(times: Array, mask: npt.NDArray[np.bool_]) -> float | None:
    index = np.flatnonzero(mask)
    return float(times[index[0]]) if index.size else None


def analyse(rec: Recording, model: RobotModel, gamma: float | None,
            loading_start: float | None = None) -> dict[str, Any]:
    """Everything the summary and the report need (see the module docstring).

    An alarm before ``loading_start`` [s] (when known) is marked ``"phase": "before
    loading"``: it is not caused by the loading, and the lead time (alarm → λ_min(M̂) ≤ 0)
    counts only alarms during or after loading.
    """
    q_for = _configuration_at(rec)
    body = int(rec.info.get("payload_body") or 0)
    t_theta, theta = rec.theta
    mu_true, nu_true, _ = spectral_statistics(theta)
    lam_true = np.array([np.linalg.eigvalsh(model.mass_matrix(q_for(t), th))[0]
                         for t, th in zip(t_theta, theta, strict=True)])
    out: dict[str, Any] = {
        "body": body, "t_theta": t_theta, "mu_true": mu_true, "nu_true": nu_true,
        "lam_true": lam_true, "estimators": {
            name: _estimator(model, q_for, t_hat, theta_hat, gamma, loading_start)
            for name, (t_hat, theta_hat) in rec.estimates.items()}}
    out.update(_tracking(rec, model))
    out["loading_span"] = loading_span(rec, body)
    out["collision_span"] = collision_span(rec)
    out["observers"] = {kind: observer_result(t, r, model.joint_names, out["loading_span"],
                                              out["collision_span"])
                        for kind, (t, r) in rec.residuals.items() if len(t)}
    return out


def _configuration_at(rec: Recording) -> Callable[[float], Array]:
    """Q at a time of the recording: the sample at that time, else the nearest one."""
    q_at = {float(round(t, 6)): k for k, t in enumerate(rec.t)}

    def q_for(t: float) -> Array:
        k = q_at.get(float(round(t, 6)))
        if k is None:
            k = int(np.argmin(np.abs(rec.t - t)))
        return np.asarray(rec.q[k])

    return q_for


def _estimator(model: RobotModel, q_for: Callable[[float], Array], t_hat: Array,
               theta_hat: Array, gamma: float | None, loading_start: float | None
               ) -> dict[str, Any]:
    """One estimate Θ̂(t) through the monitor: μ, λ_min(M̂), alarms, α₁ and the lead time."""
    config = MonitorConfig(margin_fraction=DEMO_MARGIN_FRACTION)
    monitor = ConsistencyMonitor(model.body_names, model.theta_nominal, config)
    alarms: list[dict[str, Any]] = []
    warnings: list[dict[str, Any]] = []
    mus, lams = [], []
    for t, th in zip(t_hat, theta_hat, strict=True):
        for transition in monitor.update(float(t), th):
            entry = {"t": round(float(t), 4), "body": transition.name,
                     "kind": "; ".join(transition.reasons) or transition.level.name}
            if loading_start is not None:
                entry["phase"] = ("before loading" if float(t) < loading_start
                                  else "during or after loading")
            if transition.level == Level.ERROR:
                alarms.append(entry)
            elif transition.level == Level.WARN:
                warnings.append(entry)
        mus.append(monitor.mu.copy())
        lams.append(np.linalg.eigvalsh(model.mass_matrix(q_for(t), th))[0])
    mu_hat, lam_hat = np.array(mus), np.array(lams)
    inf_mu = mu_hat.min(axis=0) if len(mu_hat) else np.full(model.n_bodies, np.nan)
    # Theorem 2 gives a bound only for a uniformly consistent estimate (inf μ > 0)
    lower = (math.nan if gamma is None
             else theorem_bounds(float(np.min(inf_mu)), 0.0, gamma, 0.0)[0])
    alpha1 = float(lower) if math.isfinite(lower) else None
    loading_alarms = [a for a in alarms if a.get("phase") != "before loading"]
    first_alarm = loading_alarms[0]["t"] if loading_alarms else None
    crossing = _first(t_hat, lam_hat <= 0.0)
    crossing_before = (crossing is not None and loading_start is not None
                       and crossing < loading_start)
    lead = (None if first_alarm is None or crossing is None or crossing_before
            else round(crossing - float(first_alarm), 4))
    return {
        "t": t_hat, "mu": mu_hat, "lam": lam_hat, "epsilon": monitor.epsilon.copy(),
        "alarms": alarms, "warnings": warnings, "alpha1": alpha1,
        "alarms_before_loading": [a for a in alarms if a.get("phase") == "before loading"],
        "first_nonpositive_lambda_min_M_hat_t": crossing, "lead_time_s": lead,
        "min_lambda_min_M_hat": float(lam_hat.min()) if lam_hat.size else None,
        "inf_mu": inf_mu,
    }


def _tracking(rec: Recording, model: RobotModel) -> dict[str, Any]:
    """The tracking error of the arm (revolute) joints: over time, RMS per joint, RMS."""
    arm = ~np.asarray(model.joint_limits.prismatic)
    if not rec.t_ref.size:
        return {"tracking_error": np.zeros_like(rec.t),
                "tracking_rms_per_joint": np.zeros(int(arm.sum())), "tracking_rms": None}
    q_ref = np.array([np.interp(rec.t, rec.t_ref, rec.q_ref[:, j]) for j in
                      range(model.nv)]).T
    error = (q_ref - rec.q)[:, arm]
    return {"tracking_error": np.linalg.norm(error, axis=1),
            "tracking_rms_per_joint": np.sqrt(np.mean(error**2, axis=0)),
            "tracking_rms": float(np.sqrt(np.mean(error**2)))}


def collision_span(rec: Recording) -> tuple[float, float] | None:
    """[start, end) of the first collision sim_node applied (``simulation_info``), or None."""
    collisions = rec.info.get("collisions") or []
    if not collisions:
        return None
    return float(collisions[0]["start"]), float(collisions[0]["end"])


def _peak(t: Array, norm: Array, r: Array, names: list[str], window: tuple[float, float] | None
          ) -> dict[str, Any] | None:
    """The largest ‖r‖∞ in [window] (inclusive): value, time, joint; None: no window/sample."""
    if window is None:
        return None
    inside = np.flatnonzero((t >= window[0]) & (t <= window[1]))
    if not inside.size:
        return None
    k = int(inside[np.argmax(norm[inside])])
    return {"value": float(norm[k]), "t": round(float(t[k]), 4),
            "joint": names[int(np.argmax(np.abs(r[k])))]}


def observer_result(t: Array, r: Array, joint_names: list[str],
                    loading: tuple[float, float] | None,
                    collision: tuple[float, float] | None) -> dict[str, Any]:
    """One observer's residual summary and the contacts its detector raises.

    Args:
        t: residual sample times [s] (K,).
        r: the residuals (K, nv) [N·m, N].
        joint_names: model joint order (columns of r).
        loading: the loading window [s] or None.
        collision: the collision window [s] or None.

    Returns:
        ``t``, ``norm`` (‖r‖∞ per sample), ``peak``, ``peak_during_loading``,
        ``peak_during_collision`` (value, time, joint), ``contacts`` (t_start, t_end,
        joint, peak, ``phase``: ``"loading"``, ``"collision"`` — starting inside that
        window — or ``"other"``), ``collision_detected`` and ``detection_delay_s`` (the
        first contact starting in the collision window, minus its start; None if none).
    """
    p = OBSERVER_PARAMETERS
    detector = ContactDetector(joint_names, float(p["contact_threshold"]),
                               release=float(p["contact_release"]), mode=str(p["contact_mode"]))
    for tk, rk in zip(t, r, strict=True):
        detector.update(float(tk), rk)
    norm = np.abs(r).max(axis=1) if r.size else np.zeros(len(t))

    def phase(t_start: float) -> str:
        for name, window in (("collision", collision), ("loading", loading)):
            if window is not None and window[0] <= t_start <= window[1]:
                return name
        return "other"

    events = detector.events
    contacts = [{**{key: (round(v, 4) if isinstance(v, float) else v)
                    for key, v in event.as_dict().items()}, "phase": phase(event.t_start)}
                for event in events]
    hits = [e.t_start for e in events if phase(e.t_start) == "collision"]
    delay = (round(hits[0] - collision[0], 4) if hits and collision is not None else None)
    whole = (float(t[0]), float(t[-1])) if len(t) else None
    return {
        "t": t, "norm": norm, "peak": _peak(t, norm, r, joint_names, whole),
        "peak_during_loading": _peak(t, norm, r, joint_names, loading),
        "peak_during_collision": _peak(t, norm, r, joint_names, collision),
        "contacts": contacts, "collision_detected": bool(hits),
        "detection_delay_s": delay}


def _gamma(rec: Recording) -> tuple[float | None, str]:
    """γ = inf_q λ_min(JᵀJ) as the dynamics node computed it, and how (sampled/certified)."""
    times, values, labels = rec.bounds
    if not len(values) or "gamma" not in labels:
        return None, "unavailable"
    last = np.asarray(values[-1]).ravel()
    gamma = float(last[labels.index("gamma")])
    certified = "certified" in labels and last[labels.index("certified")] > 0.5
    return gamma, "certified" if certified else "sampled"


#: What each time in summary.json is measured from (the file says so itself).
TIME_BASES = {
    "simulated": ("loading_window_s, collision_window_s, estimators.*.alarms[].t, "
                  "warnings[].t, first_nonpositive_lambda_min_M_hat_t, observers.*.contacts, "
                  "peaks' t: simulated time [s] since the run's start (a joint_states "
                  "stamp minus simulation_info.epoch)"),
    "received": ("estimators.*.live_alarms[].t: the simulated time of the joint_states "
                 "sample recorded nearest to the monitor's /diagnostics message (its "
                 "receive time, not the stamp of the Θ it judged: it may lead or lag the "
                 "replayed alarms by the pipeline's delay)"),
    "durations": "duration_s, lead_time_s, detection_delay_s: seconds of simulated time",
}

def summary(rec: Recording, result: dict[str, Any], model: RobotModel, scenario: str,
            gamma_method: str, counts: dict[str, int], wall: float,
            setup: dict[str, Any] | None = None) -> dict[str, Any]:
    """The summary.json contents (``setup``: where the load is and when it starts)."""
    duration = float(rec.t[-1] - rec.t[0]) if rec.t.size > 1 else 0.0
    wall = rec.wall_span if rec.wall_span > 0 else wall  # first to last joint_states
    out: dict[str, Any] = {
        "time_bases": dict(TIME_BASES),
        "scenario": scenario,
        "duration_s": round(duration, 4),
        "real_time_factor": round(duration / wall, 3) if wall > 0 else None,
        "process": rec.info.get("process"),
        "load": setup or {},
        "payload_body": model.body_names[result["body"]],
        "gamma_inf_lambda_min_JtJ": None if (g := _gamma(rec)[0]) is None else g,
        "gamma_method": gamma_method,
        "bodies": [
            {"name": name, "inf_mu": float(result["mu_true"][:, l].min()),
             "sup_nu": float(result["nu_true"][:, l].max())}
            for l, name in enumerate(model.body_names)],
        "min_lambda_min_M_true": float(result["lam_true"].min()),
        "estimators": {},
        "tracking_rms_rad": result["tracking_rms"],
        "tracking_rms_per_joint_rad": [float(v) for v in result["tracking_rms_per_joint"]],
        "messages": counts,
        "settings": {key: rec.info.get(key) for key in (
            "rate", "publish_rate", "estimator_rate", "memory", "torque_noise_std",
            "epsilon_projection", "beta_projection")} | {
            "monitor_margin_fraction": DEMO_MARGIN_FRACTION,
            "observer": dict(OBSERVER_PARAMETERS)},
        "loading_window_s": (None if result.get("loading_span") is None
                             else [round(v, 4) for v in result["loading_span"]]),
        "collision_window_s": (None if result.get("collision_span") is None
                               else [round(v, 4) for v in result["collision_span"]]),
        "observers": {kind: {key: value for key, value in obs.items()
                             if key not in ("t", "norm")}
                      for kind, obs in result.get("observers", {}).items()},
    }
    for name, est in result["estimators"].items():
        live = sorted({(round(t, 3), body, message) for t, body, level, message
                       in rec.diagnostics.get(name, []) if level == int(Level.ERROR)})
        first_live: dict[str, tuple[float, str]] = {}
        for t, body, message in live:
            first_live.setdefault(body, (t, message))
        out["estimators"][name] = {
            "alarms": est["alarms"],
            "alarms_before_loading": est["alarms_before_loading"],
            "warnings": est["warnings"],
            "live_alarms": [{"t": t, "body": body, "kind": message}
                            for body, (t, message) in sorted(first_live.items(),
                                                             key=lambda kv: kv[1][0])],
            "min_lambda_min_M_hat": est["min_lambda_min_M_hat"],
            "alpha1": est["alpha1"],
            "alpha1_method": gamma_method,
            "first_nonpositive_lambda_min_M_hat_t": est["first_nonpositive_lambda_min_M_hat_t"],
            "lead_time_s": est["lead_time_s"],
            "inf_mu_payload": float(est["inf_mu"][result["body"]]),
            "epsilon_payload": float(est["epsilon"][result["body"]]),
            "tracking_rms_rad": result["tracking_rms"] if name == "projected" else None,
        }
    return out


def load_run(path: Path, model: RobotModel, loading_start: float | None = None
             ) -> tuple[Recording, dict[str, Any], str]:
    """(recording, :func:`analyse` result, how γ was obtained) of a demo bag ``path``."""
    rec = read_recording(path)
    gamma, method = _gamma(rec)
    return rec, analyse(rec, model, gamma, loading_start), method


def write_results(out: Path, model: RobotModel, scenario: str, counts: dict[str, int],
                  wall: float, setup: dict[str, Any] | None = None) -> dict[str, Any]:
    """Read ``out/run.mcap`` back; write ``out/summary.json`` and ``out/report.png``.

    ``run.mcap`` is rewritten with the ``/analysis/*`` topics added
    (:mod:`robot_tv_dynamics.demo.annotate`).

    Args:
        out: output directory holding run.mcap.
        model: the arm that was simulated.
        scenario: ``--scenario`` as given (named in the summary and the report).
        counts: messages recorded per topic.
        wall: wall-clock duration of the run [s] (used if the bag has no span).
        setup: the load's link, placement and ``loading_start_s`` (summary ``load``);
            alarms before ``loading_start_s`` are reported as such.

    Returns:
        The summary (as written to summary.json).
    """
    start = None if setup is None else setup.get("loading_start_s")
    rec, result, method = load_run(out / "run.mcap", model, start)
    gamma = _gamma(rec)[0]
    data = summary(rec, result, model, scenario, method, counts, wall, setup)
    lower = (math.nan if gamma is None else
             theorem_bounds(float(result["mu_true"].min()), 0.0, gamma, 0.0)[0])
    data["analysis_messages"] = annotate_bag(
        out / "run.mcap", rec, result, float(lower) if math.isfinite(lower) else None, model)
    (out / "summary.json").write_text(json.dumps(data, indent=2) + "\n")
    report(out / "report.png", rec, result, model, data)
    return data


# ------------------------------------------------------------------------ report
