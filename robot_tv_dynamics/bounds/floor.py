r"""Per-arm certified lower bounds, searched once and cached: the loading floor, α₁ʷ(z⁰).

**Loading floor.** When a load is a body added to the arm, Θ(t) = Θ₀ + ΔΘ(t) with every
Z(ΔΦ_l(t)) ⪰ 0, and M(q, Θ(t)) = M₀(q) + Σ_l J_lᵀ Z(ΔΦ_l) J_l ⪰ M₀(q) (eq. 31), so

.. math::
    λ_{\min}(M(q, Θ(t))) \ge \inf_q λ_{\min}(M_0(q)) =: \underline{m}_0

for **every consistent loading** of the base arm M₀ = M(q, Θ₀). An inconsistent load
(an estimate with Z(ΔΦ_l) not ⪰ 0) is exactly what breaks it. :func:`loading_floor`
brackets inf_q λ_min(M₀) by the certified branch and bound, its lower end never below
the search-free bound 1/λ_max(K 𝒵₀⁻¹ Kᵀ) of
:func:`~robot_tv_dynamics.bounds.structural.structural_weighted_lower_bound`.

**Weighted reference.** :func:`weighted_reference` certifies β₀ ≤ inf_q λ_min(Σ_l z⁰_l
J_lᵀJ_l) for the nominal z⁰_l = λ_min(Z(Φ₀_l)); for any other z ≥ 0,
Σ z_l J_lᵀJ_l ⪰ (min_l z_l/z⁰_l) Σ z⁰_l J_lᵀJ_l gives α₁ʷ(z) ≥ β₀ min_l z_l/z⁰_l
(:mod:`~robot_tv_dynamics.bounds.live` uses it per sample).

Both are computed once per arm and stored in the bounds cache
(:mod:`~robot_tv_dynamics.bounds.cache`), keyed by a hash of the nominal inertial
parameters, the kinematics (joint placements and axes), the searched joint box and
:data:`ALGORITHM_VERSION`. A cached record is reused when it converged to the asked gap
or was searched at least as long as asked (a certified lower end stays valid whatever
the budget); otherwise, or when the file is corrupt or stale, it is recomputed and
``note`` says why.
"""

from __future__ import annotations

import hashlib
import json
import math
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from robot_tv_dynamics.bounds.bisection import EvaluationFactory
from robot_tv_dynamics.bounds.box import joint_search_box, local_jacobians
from robot_tv_dynamics.bounds.cache import read_record, write_record
from robot_tv_dynamics.bounds.evaluator import relative_gap
from robot_tv_dynamics.bounds.extremes import CERTIFIED, SearchBudget, finite_or_none
from robot_tv_dynamics.bounds.mass import GramExtremes, gram_evaluator, gram_extremes
from robot_tv_dynamics.bounds.structural import (
    structural_left_inverse,
    structural_weighted_lower_bound,
)
from robot_tv_dynamics.bounds.weights import exact_weights, scalar_weights
from robot_tv_dynamics.exceptions import InvalidInputError, RobotTvDynamicsError
from robot_tv_dynamics.inertia import Array, spatial_inertia
from robot_tv_dynamics.model import RobotModel

#: Version of the search behind the cached records: a change of the enclosure, the
#: search or the record makes older files stale (CHANGELOG.md says what each changed).
ALGORITHM_VERSION = 7

#: Record kinds (file name prefixes in the cache folder).
LOADING_FLOOR = "loading_floor"
WEIGHTED_REFERENCE = "weighted_reference"

_LOCKS: dict[str, threading.Lock] = {}
_LOCKS_GUARD = threading.Lock()


@dataclass(frozen=True)
class CertifiedLowerBound:
    """A certified lower bound of one inf_q λ_min, as searched (or read from the cache).

    Attributes:
        kind: :data:`LOADING_FLOOR` (inf_q λ_min(M₀)) or :data:`WEIGHTED_REFERENCE`
            (inf_q λ_min(Σ z⁰_l J_lᵀJ_l)).
        value: the certified lower bound [kg·m², mixed units].
        bracket: (value, best attained λ_min): the infimum lies inside.
        profile: z⁰ (N,) of a weighted reference (empty for the loading floor).
        argmin_q: where the attained value was found, (nv,).
        time_limit: the search budget [s].
        target_gap: the relative gap the search stopped at when reached.
        elapsed_s: search wall time [s].
        boxes: boxes and samples evaluated.
        origin: ``"computed"`` or ``"cache"``.
        note: why a cache file was not used or could not be written ("" if none).
    """

    kind: str
    value: float
    bracket: tuple[float, float]
    profile: Array
    argmin_q: Array
    time_limit: float
    target_gap: float
    elapsed_s: float
    boxes: int
    origin: str = "computed"
    note: str = ""

    @property
    def gap(self) -> float:
        """Relative gap (upper − lower)/upper of the bracket."""
        return relative_gap(*self.bracket)

    @property
    def converged(self) -> bool:
        """Whether the bracket reached the target gap."""
        return self.gap <= self.target_gap

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict (∞ → None)."""
        return {"kind": self.kind, "value": self.value,
                "bracket": [finite_or_none(x) for x in self.bracket],
                "gap": finite_or_none(self.gap), "converged": self.converged,
                "profile": np.asarray(self.profile).tolist(),
                "argmin_q": np.asarray(self.argmin_q).tolist(),
                "time_limit": self.time_limit, "target_gap": self.target_gap,
                "elapsed_s": self.elapsed_s, "boxes": self.boxes, "origin": self.origin}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CertifiedLowerBound:
        """Inverse of :meth:`to_dict` (raises KeyError/TypeError/ValueError when malformed)."""
        lo, hi = data["bracket"]
        value = float(data["value"])
        upper = math.inf if hi is None else float(hi)
        if not (math.isfinite(value) and value >= 0.0 and value <= upper):
            raise ValueError(f"value {value!r} is not a lower end of [{lo}, {hi}]")
        return cls(kind=str(data["kind"]), value=value, bracket=(float(lo), upper),
                   profile=np.asarray(data["profile"], dtype=np.float64),
                   argmin_q=np.asarray(data["argmin_q"], dtype=np.float64),
                   time_limit=float(data["time_limit"]), target_gap=float(data["target_gap"]),
                   elapsed_s=float(data["elapsed_s"]), boxes=int(data["boxes"]),
                   origin="cache")


def arm_hash(model: RobotModel) -> str:
    """Hash of what the per-arm records depend on: nominal Θ, kinematics, joint box.

    The nominal inertial parameters (N, 10), each joint's placement, motion axis and
    parent, and the searched joint box (limits, searched joints, held values): a URDF
    edit that changes none of them (a comment, a visual mesh) keeps the hash.
    """
    pm = model.pinocchio_model
    box = joint_search_box(model)

    def numbers(values: Any) -> list[str]:
        return [float(x).hex() for x in np.ravel(np.asarray(values, dtype=np.float64))]

    payload = {
        "theta": numbers(model.theta_nominal),
        "placements": [numbers(pm.jointPlacements[j].homogeneous) for j in range(1, pm.njoints)],
        "parents": [int(pm.parents[j]) for j in range(1, pm.njoints)],
        "axes": numbers(local_jacobians(model, np.asarray(box.fixed))[
            np.arange(model.nv), :, np.arange(model.nv)]),
        "box": {"lower": numbers(box.lower), "upper": numbers(box.upper),
                "active": [bool(a) for a in box.active], "fixed": numbers(box.fixed)},
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode("utf-8")).hexdigest()


def record_key(model: RobotModel, kind: str) -> str:
    """The cache key of a per-arm record: the arm hash, the kind, the algorithm version."""
    payload = json.dumps({"arm": arm_hash(model), "kind": kind,
                          "algorithm": ALGORITHM_VERSION}, sort_keys=True)
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def record_path(directory: str | Path, model: RobotModel, kind: str) -> Path:
    """The file of ``kind`` for ``model`` in the cache folder (one per arm and kind)."""
    return Path(directory) / f"{kind}_{arm_hash(model)[:32]}.json"


def _nominal_profile(model: RobotModel) -> Array:
    """z⁰_l = λ_min(Z(Φ₀_l)), shrunk by 1e-9 against rounding (N,)."""
    z = np.linalg.eigvalsh(spatial_inertia(model.theta_nominal))[:, 0]
    return np.maximum(z, 0.0) * (1.0 - 1e-9)


def _search(model: RobotModel, kind: str, time_limit: float, target_gap: float,
            evaluations: EvaluationFactory | None) -> CertifiedLowerBound:
    theta = model.theta_nominal
    K = structural_left_inverse(model)
    if kind == LOADING_FLOOR:
        weights = exact_weights(theta)
        profile = np.zeros(0)
        floor = structural_weighted_lower_bound(K, spatial_inertia(theta))
        label = "exact"
    else:
        profile = _nominal_profile(model)
        weights = scalar_weights(profile)
        floor = structural_weighted_lower_bound(K, profile)
        label = "scalar"
    ev = gram_evaluator(model, weights)
    budget = SearchBudget(time_limit=time_limit, target_gap=target_gap)
    found = gram_extremes(model, weights, label, CERTIFIED, budget, sides=("min",),
                          evaluator=ev, floor=floor, evaluations=evaluations)
    return _from_search(kind, found, profile, time_limit, target_gap, floor)


def _from_search(kind: str, found: GramExtremes, profile: Array, time_limit: float,
                 target_gap: float, floor: float) -> CertifiedLowerBound:
    lo, hi = found.lambda_min_bracket
    lo = max(lo, min(floor, hi))
    return CertifiedLowerBound(
        kind=kind, value=float(lo), bracket=(float(lo), float(hi)), profile=profile,
        argmin_q=np.asarray(found.argmin_q), time_limit=float(time_limit),
        target_gap=float(target_gap), elapsed_s=found.elapsed_s, boxes=found.boxes)


def _enough(cached: CertifiedLowerBound, time_limit: float, target_gap: float) -> str:
    """"" when the cached search answers the request, else why not."""
    if cached.gap <= target_gap or cached.time_limit >= time_limit:
        return ""
    return (f"the cached {cached.kind} was searched for {cached.time_limit:g} s (gap "
            f"{100 * cached.gap:.3g} %); {time_limit:g} s asked: recomputing")


def cached_lower_bound(
    model: RobotModel, kind: str, *, cache_dir: str | Path | None,
    time_limit: float = 60.0, target_gap: float = 0.01,
    evaluations: EvaluationFactory | None = None,
    on_compute: Callable[[str], None] | None = None,
) -> CertifiedLowerBound:
    """A per-arm certified lower bound, from the bounds cache or searched and stored.

    Args:
        model: the arm (its nominal Θ is the base arm).
        kind: :data:`LOADING_FLOOR` or :data:`WEIGHTED_REFERENCE`.
        cache_dir: the cache folder (None or "": no cache).
        time_limit: search budget [s] (a search may stop earlier at ``target_gap``).
        target_gap: relative gap to stop at.
        evaluations: optional parallel box map factory (e.g. Dask).
        on_compute: called with a sentence before a search starts.

    Returns:
        The record; ``note`` says why a cache file was not used or not written.

    Raises:
        InvalidInputError: an unknown kind, an unbounded joint box or an inconsistent
            nominal Θ.
    """
    if kind not in (LOADING_FLOOR, WEIGHTED_REFERENCE):
        raise InvalidInputError("kind", f'"{kind}" is not {LOADING_FLOOR} or '
                                f"{WEIGHTED_REFERENCE}")
    directory = str(cache_dir) if cache_dir else ""
    key = record_key(model, kind)
    with _LOCKS_GUARD:
        lock = _LOCKS.setdefault(key, threading.Lock())
    with lock:  # one search per arm and kind in this process; others wait for it
        notes = []
        if directory:
            path = record_path(directory, model, kind)
            data, problem = read_record(path, key)
            if problem:
                notes.append(problem)
            if data is not None:
                try:
                    cached = CertifiedLowerBound.from_dict(data["record"])
                except (KeyError, TypeError, ValueError) as error:
                    notes.append(f"bounds cache {path} is corrupt ({type(error).__name__}: "
                                 f"{error}): recomputing")
                else:
                    reason = _enough(cached, time_limit, target_gap)
                    if not reason:
                        return cached
                    notes.append(reason)
        if on_compute is not None:
            on_compute(f"searching the certified {kind.replace('_', ' ')} (up to "
                       f"{time_limit:g} s, once per arm)")
        found = _search(model, kind, time_limit, target_gap, evaluations)
        if directory:
            try:
                write_record(path, {"key": key, "algorithm": ALGORITHM_VERSION,
                                    "record": found.to_dict()})
            except RobotTvDynamicsError as error:
                notes.append(f"not cached: {error}")
        return replace(found, note="; ".join(notes))


def floor_from_search(model: RobotModel, exact: GramExtremes, time_limit: float,
                      target_gap: float) -> CertifiedLowerBound:
    """The loading floor record of a certified exact search of the nominal Θ (not stored).

    Raises:
        InvalidInputError: a sampled search (no floor follows from it).
    """
    if exact.method != CERTIFIED:
        raise InvalidInputError("exact", "only a certified search gives a floor")
    K = structural_left_inverse(model)
    floor = structural_weighted_lower_bound(K, spatial_inertia(model.theta_nominal))
    return _from_search(LOADING_FLOOR, exact, np.zeros(0), time_limit, target_gap, floor)


def store_loading_floor(model: RobotModel, cache_dir: str | Path, exact: GramExtremes,
                        time_limit: float, target_gap: float) -> CertifiedLowerBound:
    """Store the loading floor from a certified exact search of the nominal Θ already run.

    A better cached one (higher lower end) is kept. Raises BoundsCacheError when the
    folder cannot be written.
    """
    found = floor_from_search(model, exact, time_limit, target_gap)
    key = record_key(model, LOADING_FLOOR)
    path = record_path(cache_dir, model, LOADING_FLOOR)
    data, _ = read_record(path, key)
    if data is not None:
        try:
            cached = CertifiedLowerBound.from_dict(data["record"])
            if cached.value >= found.value:
                return cached
        except (KeyError, TypeError, ValueError):
            pass
    write_record(path, {"key": key, "algorithm": ALGORITHM_VERSION, "record": found.to_dict()})
    return found


def read_cached_lower_bound(model: RobotModel, cache_dir: str | Path,
                            kind: str) -> tuple[CertifiedLowerBound | None, str]:
    """The cached record of ``kind`` for ``model`` (no search), and why not when unusable."""
    path = record_path(cache_dir, model, kind)
    data, problem = read_record(path, record_key(model, kind))
    if data is None:
        return None, problem
    try:
        return CertifiedLowerBound.from_dict(data["record"]), ""
    except (KeyError, TypeError, ValueError) as error:
        return None, f"bounds cache {path} is corrupt ({type(error).__name__}): ignored"


def read_loading_floor(model: RobotModel, cache_dir: str | Path) -> tuple[
        CertifiedLowerBound | None, str]:
    """The cached loading floor of ``model`` (no search), and why not when unusable."""
    return read_cached_lower_bound(model, cache_dir, LOADING_FLOOR)


def structural_loading_floor(model: RobotModel) -> float:
    """The search-free certified floor 1/λ_max(K 𝒵₀⁻¹ Kᵀ) ≤ inf_q λ_min(M₀) (no cache)."""
    return structural_weighted_lower_bound(structural_left_inverse(model),
                                           spatial_inertia(model.theta_nominal))

