r"""The ``adapt`` runs: one scenario, and the suite controllers × scenarios × plants × arms.

A *scenario* is :data:`~robot_tv_dynamics.control.setups.CONSTANT` (no load, Θ constant),
:data:`~robot_tv_dynamics.control.setups.WRONG_ESTIMATE` (no load, the controller
starting from a badly wrong estimate), a built-in loading process (config/loading/:
fill, drain, grasp, timeline, release, ...) or a loading-process YAML file. Without a
load the generalized and the classical plant are the same (Θ̇ = Ψ = 0), so the suite
runs those scenarios once, on the generalized plant.

The suite's rows carry the columns of :data:`COLUMNS`; :func:`natural_definiteness`
checks the claim the suite exists for: the natural laws' Ĵ stayed positive definite at
every step of every run.
"""

from __future__ import annotations

import csv
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.bounds.extremes import JacobianExtremes
from robot_tv_dynamics.bounds.search import jacobian_extremes
from robot_tv_dynamics.control.gains import (
    ADAPTATION_TIME,
    excitation_matrix,
    unobservable_fraction,
)
from robot_tv_dynamics.control.natural import band_budget
from robot_tv_dynamics.control.run import AdaptiveRun, run_adaptive
from robot_tv_dynamics.control.setups import (
    CONSTANT,
    EXCITATIONS,
    WRONG_ESTIMATE,
    adaptation_gains,
    damping,
    initial_estimate,
    make_controller,
    reference_for,
    unknown_truth,
)
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import consistency_margin
from robot_tv_dynamics.loading import LoadingProcess, load_loading_process
from robot_tv_dynamics.model import RobotModel

#: Scenarios without a load (one plant suffices).
UNLOADED = (CONSTANT, WRONG_ESTIMATE)
#: The suite's default scenarios.
SUITE_SCENARIOS = (CONSTANT, "fill", "drain", "grasp", "timeline", WRONG_ESTIMATE, "release")
#: Controllers with a pseudo-inertia Ĵ (the natural log-det law and its projection).
NATURAL_LAWS = ("natural", "projected")
#: The laws whose estimate adapts (computed torque's never does).
ADAPTIVE_LAWS = ("slotine-li", *NATURAL_LAWS)
#: The plants, as ``--plants`` names them.
PLANTS = ("generalized", "classical")
#: Suite columns (Markdown and CSV).
COLUMNS = ("arm", "scenario", "plant", "excitation", "controller", "tracking_rms_rad",
           "tracking_max_rad", "tau_rms", "inf_margin_every_step", "inf_lambda_min_M_hat",
           "time_to_tolerance_load_mass_s", "consistency_violations", "first_violation_s",
           "min_eig_J_hat", "diverged_at_s", "gamma", "final_load_mass_error_kg",
           "final_load_mass_relative_error", "load_mass_settle_s",
           "load_mass_unobservable_fraction", "final_theta_error",
           "final_theta_error_max_body", "final_visible_error_W",
           "visible_error_final_over_peak", "band_budget", "disturbance")
#: Samples of the joint box for γ, δ of α₁, α₂ (searched once per arm and process).
EXTREMES_SAMPLES = 256


@dataclass(frozen=True)
class SuiteCase:
    """One run of the suite.

    Attributes:
        arm: ``"panda"`` or ``"ur5"``.
        scenario: a scenario (module docstring).
        plant: ``"generalized"`` or ``"classical"``.
        controller: one of :data:`~robot_tv_dynamics.control.setups.CONTROLLERS`.
        excitation: one of :data:`~robot_tv_dynamics.control.setups.EXCITATIONS`.
    """

    arm: str
    scenario: str
    plant: str
    controller: str
    excitation: str = "persistent"


def arm_urdf(arm: str) -> str:
    """The URDF of ``"panda"`` or ``"ur5"`` (example-robot-data).

    Raises:
        InvalidInputError: another arm.
    """
    from robot_tv_dynamics.paths import example_robot_urdf

    if arm == "panda":
        return str(example_robot_urdf())
    if arm == "ur5":
        return str(example_robot_urdf("ur_description/urdf/ur5_robot.urdf"))
    raise InvalidInputError("arms", f"panda or ur5, got {arm!r}")


@lru_cache(maxsize=4)
def _extremes(urdf: str) -> JacobianExtremes:
    return jacobian_extremes(RobotModel.from_urdf(urdf), samples=EXTREMES_SAMPLES)


def tool_body(model: RobotModel, urdf: str) -> int:
    """The body that carries the URDF's tool flange (where the scenarios put a load)."""
    from robot_tv_dynamics.demo.scenario import tool_link

    return int(model.link_attachment(tool_link(Path(urdf).read_text())).body)


def scenario_process(scenario: str, model: RobotModel, urdf: str, duration: float,
                     work: Path) -> LoadingProcess | None:
    """The loading process of ``scenario`` placed on the arm (None without a load).

    Raises:
        InvalidInputError: neither a scenario name nor a file.
        RobotTvDynamicsError: the file is not a valid loading process.
    """
    from robot_tv_dynamics.demo.scenario import scenario_file

    if scenario in UNLOADED:
        return None
    setup = scenario_file(scenario, "", work, model, Path(urdf).read_text(), duration)
    return load_loading_process(setup.path)


def run_scenario(urdf: str, controller: str, scenario: str, plant: str, excitation: str,
                 duration: float, work: Path, *, model: RobotModel | None = None,
                 extremes: JacobianExtremes | None = None,
                 adaptation_time: float = ADAPTATION_TIME, disturbance: float = 0.0,
                 ) -> tuple[dict[str, Any], AdaptiveRun]:
    """One ``adapt`` run: (summary, the recorded run).

    The plant's Θ is :func:`~robot_tv_dynamics.control.setups.unknown_truth` under the
    scenario's load; the controller starts from :func:`~robot_tv_dynamics.control.
    setups.initial_estimate` (the wrong one in :data:`WRONG_ESTIMATE`) with the per-body
    gains of :func:`~robot_tv_dynamics.control.setups.adaptation_gains` for
    ``adaptation_time`` [s] (the summary's ``adaptation_gains``). ``disturbance``: eq.
    (39)'s w, a constant torque (or force) on every joint at the plant that the
    controller does not know [N·m or N] (the summary's ``disturbance``).

    Raises:
        InvalidInputError: an unknown scenario, controller, plant or excitation.
    """
    if plant not in ("generalized", "classical"):
        raise InvalidInputError("plant", f"generalized or classical, got {plant!r}")
    model = model if model is not None else RobotModel.from_urdf(urdf)
    process = scenario_process(scenario, model, urdf, duration, work)
    theta_hat0 = initial_estimate(model, process, wrong=scenario == WRONG_ESTIMATE)
    reference = reference_for(model, excitation)
    gains = adaptation_gains(model, theta_hat0, reference, process, tool_body(model, urdf),
                             adaptation_time=adaptation_time, duration=duration)
    ctrl = make_controller(controller, model, theta_hat0, gains=gains)
    result = run_adaptive(model, ctrl, reference, unknown_truth(model),
                          process=process, classical=plant == "classical", duration=duration,
                          extremes=extremes, extremes_samples=EXTREMES_SAMPLES,
                          disturbance=np.full(model.nv, disturbance) if disturbance else None)
    law_gains = gains.as_dict(model.body_names)
    body = result.load_body
    information = excitation_matrix(model, reference, damping(model))
    unobservable = None if body is None else unobservable_fraction(information, 10 * body)
    summary = {"controller": controller, "plant": plant, "scenario": scenario,
               "excitation": excitation, "duration_s": duration, "urdf": urdf,
               **result.summary(), "load_mass_unobservable_fraction": unobservable,
               "band_budget": _band_budget(ctrl, theta_hat0), "disturbance": disturbance,
               **visible_error(result, information),
               "adaptation_gains": (None if controller not in ADAPTIVE_LAWS else {
                   "adaptation_time_s": adaptation_time,
                   "rule": "gamma: 90 % of the calibration body's step in T_a "
                           "(control/gains.py, docs/adaptive.md)",
                   **{k: v for k, v in law_gains.items()
                      if not k.startswith("natural" if controller == "slotine-li"
                                          else "gradient")}})}
    return summary, result


def visible_error(run: AdaptiveRun, excitation: Any) -> dict[str, float]:
    """The torque-visible part of the estimate error, ‖Θ̂ − Θ‖_R = √(θ̃ᵀRθ̃), over the run.

    With s ≈ K_D⁻¹Yθ̃ (docs/adaptive.md), θ̃ᵀRθ̃ is the mean power sᵀK_D s an error θ̃
    causes along the reference [W]: the part of Θ̂ − Θ the torques show, which adaptation
    can remove (the rest lies in R's null space). ``final_visible_error_W`` is its root at
    the end [√W]; ``visible_error_final_over_peak`` the end over the run's largest value
    (1: never reduced; computed torque stays at 1 unless the truth moves toward Θ̂).
    """
    error = (run.theta_hat - run.theta).reshape(run.t.size, -1)
    visible = np.sqrt(np.maximum(np.einsum("ki,ij,kj->k", error, excitation, error), 0.0))
    peak = float(np.max(visible))
    return {"final_visible_error_W": float(visible[-1]),
            "visible_error_final_over_peak": float(visible[-1] / peak) if peak > 0 else 0.0}


def _band_budget(controller: object, theta_hat0: Any) -> float | None:
    """The largest band budget over the adapted bodies (natural laws; None otherwise)."""
    integral = getattr(controller, "gradient_integral", None)
    if integral is None:
        return None
    adapted = controller.adapted  # type: ignore[attr-defined]
    budget = band_budget(controller.gamma, np.atleast_1d(  # type: ignore[attr-defined]
        consistency_margin(theta_hat0)), integral)
    return float(np.max(budget[adapted]))


def suite_cases(arms: Sequence[str], scenarios: Sequence[str], controllers: Sequence[str],
                excitations: Sequence[str] = ("persistent",),
                plants: Sequence[str] = PLANTS) -> list[SuiteCase]:
    """Every excitation × arm × scenario × plant × controller, in that order.

    Unloaded scenarios run on the generalized plant only (both plants are the same
    there); with ``plants`` = (``"classical"``,) they are left out.

    Raises:
        InvalidInputError: an unknown plant or excitation, or an empty list.
    """
    for name, values, allowed in (("plants", plants, PLANTS),
                                  ("excitation", excitations, EXCITATIONS)):
        bad = [v for v in values if v not in allowed]
        if bad or not values:
            raise InvalidInputError(name, f"comma-separated values of {allowed}, got "
                                    f"{','.join(values) or 'nothing'}")
    return [SuiteCase(arm, scenario, plant, controller, excitation)
            for excitation in excitations for arm in arms for scenario in scenarios
            for plant in (tuple(p for p in plants if p == "generalized")
                          if scenario in UNLOADED else tuple(plants))
            for controller in controllers]


def run_case(case: SuiteCase, duration: float, work: str,
             adaptation_time: float = ADAPTATION_TIME,
             disturbance: float = 0.0) -> dict[str, Any]:
    """The suite row of one case (the Jacobian extremes searched once per arm and process).

    Adds ``cpu_s``: the process CPU time the case took [s]; the adaptive laws' gains are
    those of ``adaptation_time`` [s]; ``disturbance`` as :func:`run_scenario`'s.
    """
    started = time.process_time()
    urdf = arm_urdf(case.arm)
    Path(work).mkdir(parents=True, exist_ok=True)
    summary, _ = run_scenario(urdf, case.controller, case.scenario, case.plant,
                              case.excitation, duration, Path(work), extremes=_extremes(urdf),
                              adaptation_time=adaptation_time, disturbance=disturbance)
    gains = summary.get("adaptation_gains") or {}
    gamma = gains.get("gradient_gamma", gains.get("natural_gamma"))
    return {"arm": case.arm, **summary, "gamma": gamma, "cpu_s": time.process_time() - started}


Progress = Callable[[SuiteCase, dict[str, Any]], None]


def run_suite(cases: Sequence[SuiteCase], duration: float, work: Path, workers: int = 1,
              progress: Progress | None = None, scheduler: str | None = None,
              adaptation_time: float = ADAPTATION_TIME,
              disturbance: float = 0.0) -> list[dict[str, Any]]:
    """The rows of ``cases`` in their order: here (``workers`` 1), else on Dask.

    With ``workers`` > 1 (or a ``scheduler`` address) the cases are tasks on a
    ``dask.distributed`` cluster (a LocalCluster of ``workers`` single-threaded
    processes by default), started in the order of ``cases``.

    Args:
        cases: the runs (:func:`suite_cases`).
        duration: simulated time of each run [s].
        work: a scratch directory (the scenarios' loading-process files).
        workers: local worker processes.
        progress: ``progress(case, row)`` as each case finishes (in finishing order).
        scheduler: address of a running Dask scheduler instead of a local cluster.
        adaptation_time: T_a of the adaptive laws' gains [s].
        disturbance: w on every joint [N·m or N] (:func:`run_scenario`).
    """
    if workers <= 1 and scheduler is None:
        rows = []
        for case in cases:
            rows.append(run_case(case, duration, str(work), adaptation_time, disturbance))
            if progress is not None:
                progress(case, rows[-1])
        return rows
    from distributed import as_completed

    from robot_tv_dynamics.bounds.parallel import dask_client

    with dask_client(workers, scheduler) as client:
        futures = [client.submit(run_case, case, duration, str(work / f"case{k}"),
                                 adaptation_time, disturbance, pure=False,
                                 priority=len(cases) - k)
                   for k, case in enumerate(cases)]
        index = {future.key: k for k, future in enumerate(futures)}
        out: list[dict[str, Any] | None] = [None] * len(cases)
        for future in as_completed(futures):
            k = index[future.key]
            out[k] = future.result()
            if progress is not None:
                progress(cases[k], out[k])  # type: ignore[arg-type]
        return [row for row in out if row is not None]


def natural_definiteness(rows: Sequence[dict[str, Any]]) -> tuple[bool, str]:
    """Whether every natural-law row kept Ĵ ≻ 0 at every step, and one line saying so."""
    natural = [r for r in rows if r["controller"] in NATURAL_LAWS]
    if not natural:
        return True, "no natural-law run in this suite"
    bad = [r for r in natural if not r.get("j_hat_positive_definite")]
    smallest = min((r["min_eig_J_hat"] for r in natural if r.get("min_eig_J_hat") is not None),
                   default=math.nan)
    if bad:
        names = ", ".join(f"{r['arm']} {r['scenario']} {r['plant']} {r['controller']}"
                          for r in bad)
        return False, f"natural laws: Ĵ NOT positive definite at every step in: {names}"
    return True, (f"natural laws: Ĵ positive definite at every step of all {len(natural)} "
                  f"runs (smallest eigenvalue of any Ĵ_i at any step: {smallest:.3g})")


#: The summary figures compared to say whether a projected run is its natural run.
_SAME_FIGURES = ("tracking_rms_rad", "tracking_max_rad", "tau_rms", "inf_margin_every_step",
                 "inf_lambda_min_M_hat", "final_theta_error", "min_eig_J_hat")


def projection_line(rows: Sequence[dict[str, Any]]) -> str:
    """Where the projected law's runs are the natural law's, number for number, and why.

    A projected run whose Ĵ_i never reached its band ε_i I ⪯ Ĵ_i ⪯ β_i I (ε_i = ¼ μ(Θ̂₀_i))
    is the natural run of the same case bit for bit; one that did differs from it.
    """
    natural = {(r["arm"], r["scenario"], r["plant"], r.get("excitation")): r for r in rows
               if r["controller"] == "natural"}
    pairs = [(r, natural[key]) for r in rows if r["controller"] == "projected"
             and (key := (r["arm"], r["scenario"], r["plant"], r.get("excitation"))) in natural]
    if not pairs:
        return "no projected run with its natural run in this suite"
    differ = [p for p, n in pairs if any(p.get(k) != n.get(k) for k in _SAME_FIGURES)]
    same = len(pairs) - len(differ)
    line = f"projected = natural, every figure equal, in {same} of {len(pairs)} cases"
    if same:
        line += " (the band ε_i = ¼ μ(Θ̂₀_i) never reached: a Ĵ_i inside it is left as it is)"
    if differ:
        line += "; they differ in: " + ", ".join(
            f"{p['arm']} {p['scenario']} {p['plant']} (inf μ: projected "
            f"{_cell(p.get('inf_margin_every_step'))}, natural "
            f"{_cell(n.get('inf_margin_every_step'))})" for p, n in pairs if p in differ)
    return line


def write_suite_table(rows: Sequence[dict[str, Any]], out: Path, note: str = "") -> None:
    """suite.csv and suite.md (:data:`COLUMNS`; ``note`` below the Markdown table)."""
    with (out / "suite.csv").open("w", newline="") as handle:
        writer = csv.DictWriter(handle, COLUMNS, extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    lines = ["| " + " | ".join(COLUMNS) + " |", "|" + "---|" * len(COLUMNS)]
    for row in rows:
        lines.append("| " + " | ".join(_cell(row.get(k)) for k in COLUMNS) + " |")
    if note:
        lines += ["", note]
    (out / "suite.md").write_text("\n".join(lines) + "\n")


def _cell(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.3g}"
    return "—" if value is None else str(value)
