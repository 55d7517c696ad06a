r"""Mass-matrix bounds of section 4 of the paper: Theorems 2–4, Lemmas 1–3, Definitions 2–3.

The uniform bounds :math:`α_1 I ⪯ M(q, Θ(t)) ⪯ α_2 I` factor into a kinematic part and
an inertial part:

.. math::
    α_1 = \min_l \inf_t μ_l(t) \cdot γ, \qquad
    α_2 = 2 \max_l \sup_t ν_l(t) \cdot δ                             \quad (45), (46)

with the per-body margin :math:`μ_l = λ_{\min}(f(Φ_l))`, size
:math:`ν_l = λ_{\max}(f(Φ_l))` (eq. 9, Definition 3; :mod:`robot_tv_dynamics.consistency`)
and the Jacobian extremes

.. math::
    γ = \inf_q λ_{\min}(J(q)^\top J(q)), \qquad δ = \sup_q σ_{\max}(J(q))^2

where J is the stacked LOCAL body Jacobian of eq. (17) and q runs over the URDF
joint-limit box (continuous joints: one period).

**Sampled vs certified.** γ and δ are computed two ways, and every record, table and
JSON object says which: ``"sampled"`` (:mod:`~robot_tv_dynamics.bounds.sampled`, an
estimate: a sampled inf is only an *upper* bound on γ) and ``"certified"``
(:mod:`~robot_tv_dynamics.bounds.certified`, branch and bound with a rigorous
enclosure: brackets valid whenever it stops).

One module per concept, imported in this order (each imports only those above it):

- :mod:`~robot_tv_dynamics.bounds.extremes`: the :class:`JacobianExtremes` record, the
  method labels, :class:`Assessment`, :class:`SearchProgress`;
- :mod:`~robot_tv_dynamics.bounds.box`: the reduced joint box J depends on;
- :mod:`~robot_tv_dynamics.bounds.interval`: interval matrices and eigenvalue enclosures;
- :mod:`~robot_tv_dynamics.bounds.evaluator`: batched kinematics and box enclosures;
- :mod:`~robot_tv_dynamics.bounds.structural`: structural bounds, verdicts, the record
  builder;
- :mod:`~robot_tv_dynamics.bounds.sampled`, :mod:`~robot_tv_dynamics.bounds.certified`:
  the two searches; :mod:`~robot_tv_dynamics.bounds.search` picks one by name;
- :mod:`~robot_tv_dynamics.bounds.bisection`: what the branch and bounds share (box
  sources, box maps, bisection);
- :mod:`~robot_tv_dynamics.bounds.theorems`: Theorems 2–4, Lemma 3, the URDF report;
- :mod:`~robot_tv_dynamics.bounds.cache`: the on-disk bounds cache (one folder,
  :func:`default_cache_dir`);
- :mod:`~robot_tv_dynamics.bounds.running`: the bounds a live node publishes per sample
  (:class:`RunningBounds`: running μ/ν statistics of Θ(t), α₁/α₂, the entries of
  :data:`BOUND_LABELS`) and γ, δ at its start-up;
- :mod:`~robot_tv_dynamics.bounds.weights`: per-body weights L_l ⪯ Z(Φ_l) ⪯ U_l
  (scalar, 2×2 block, exact);
- :mod:`~robot_tv_dynamics.bounds.local_inverse`: the lower bound of
  λ_min(Σ J_lᵀL_lJ_l) from a left inverse of J that reads each joint from the bodies of
  a window of joints around it, at points and over boxes;
- :mod:`~robot_tv_dynamics.bounds.ladder`: its certified floor over the joint box, a
  branch and bound up a ladder of windows;
- :mod:`~robot_tv_dynamics.bounds.mass`: the weighted α₁ʷ, α₂ʷ and the exact extremes
  of M(q, Θ) (sampled or certified), proved in docs/concepts.md;
- :mod:`~robot_tv_dynamics.bounds.floor`: per-arm certified lower bounds searched once
  and cached (the loading floor inf_q λ_min(M₀), the weighted reference);
- :mod:`~robot_tv_dynamics.bounds.live`: certified lower bounds of λ_min(M) per Θ
  sample (the weighted α₁ʷ(t), the loading floor and whether a load breaks it);
- :mod:`~robot_tv_dynamics.bounds.parallel`: the certified search on Dask.

The public names are re-exported here.
"""

from robot_tv_dynamics.bounds.box import MAX_PRISMATIC_RANGE, JointSearchBox, joint_search_box
from robot_tv_dynamics.bounds.cache import (
    CACHE_DIR_AUTO,
    cached_jacobian_extremes,
    default_cache_dir,
    extremes_cache_key,
    load_cached_extremes,
    resolve_cache_dir,
    store_cached_extremes,
)
from robot_tv_dynamics.bounds.certified import certified_jacobian_extremes, jacobian_extremes_at
from robot_tv_dynamics.bounds.extremes import (
    CERTIFIED,
    METHODS,
    SAMPLED,
    STRUCTURAL,
    Assessment,
    JacobianExtremes,
    ProgressCallback,
    SearchBudget,
    SearchProgress,
)
from robot_tv_dynamics.bounds.floor import (
    LOADING_FLOOR,
    WEIGHTED_REFERENCE,
    CertifiedLowerBound,
    cached_lower_bound,
)
from robot_tv_dynamics.bounds.ladder import (
    LADDER,
    LocalInverseFloor,
    WindowRung,
    local_inverse_floor,
)
from robot_tv_dynamics.bounds.live import LIVE_LABELS, LiveLowerBounds, LiveSample
from robot_tv_dynamics.bounds.local_inverse import LocalInverse
from robot_tv_dynamics.bounds.mass import (
    GramExtremes,
    WeightedBounds,
    exact_mass_extremes,
    gram_extremes,
    weighted_bounds,
)
from robot_tv_dynamics.bounds.parallel import DaskBoxEvaluation, dask_client
from robot_tv_dynamics.bounds.running import (
    BOUND_LABELS,
    UNAVAILABLE,
    RunningBounds,
    StartupExtremes,
    cached_startup_extremes,
    extremes_summary,
    startup_jacobian_extremes,
)
from robot_tv_dynamics.bounds.sampled import sampled_jacobian_extremes
from robot_tv_dynamics.bounds.search import jacobian_extremes
from robot_tv_dynamics.bounds.structural import (
    structural_gamma_lower_bound,
    structural_left_inverse,
    structural_weighted_lower_bound,
)
from robot_tv_dynamics.bounds.theorems import (
    LEMMA3_BOUND,
    BoundsReport,
    InstantaneousBounds,
    UniformMassMatrixBounds,
    bounds_report,
    instantaneous_bounds,
    lemma3_sigma_max_q0,
    mass_rate_bound,
    rate_spatial_inertia_norm,
    rate_spatial_inertia_norm_entrywise,
    theorem_bounds,
    uniform_mass_matrix_bounds,
)
from robot_tv_dynamics.exceptions import BoundsCacheError

__all__ = [
    "BOUND_LABELS",
    "CACHE_DIR_AUTO",
    "CERTIFIED",
    "LIVE_LABELS",
    "LOADING_FLOOR",
    "WEIGHTED_REFERENCE",
    "CertifiedLowerBound",
    "LiveLowerBounds",
    "LiveSample",
    "cached_lower_bound",
    "default_cache_dir",
    "resolve_cache_dir",
    "structural_left_inverse",
    "structural_weighted_lower_bound",
    "LEMMA3_BOUND",
    "MAX_PRISMATIC_RANGE",
    "METHODS",
    "SAMPLED",
    "STRUCTURAL",
    "UNAVAILABLE",
    "BoundsCacheError",
    "BoundsReport",
    "DaskBoxEvaluation",
    "GramExtremes",
    "InstantaneousBounds",
    "JacobianExtremes",
    "JointSearchBox",
    "LADDER",
    "LocalInverse",
    "LocalInverseFloor",
    "ProgressCallback",
    "RunningBounds",
    "SearchBudget",
    "SearchProgress",
    "StartupExtremes",
    "UniformMassMatrixBounds",
    "Assessment",
    "WeightedBounds",
    "WindowRung",
    "bounds_report",
    "cached_jacobian_extremes",
    "cached_startup_extremes",
    "certified_jacobian_extremes",
    "dask_client",
    "exact_mass_extremes",
    "extremes_cache_key",
    "extremes_summary",
    "gram_extremes",
    "instantaneous_bounds",
    "jacobian_extremes",
    "jacobian_extremes_at",
    "joint_search_box",
    "lemma3_sigma_max_q0",
    "local_inverse_floor",
    "load_cached_extremes",
    "mass_rate_bound",
    "rate_spatial_inertia_norm",
    "rate_spatial_inertia_norm_entrywise",
    "sampled_jacobian_extremes",
    "startup_jacobian_extremes",
    "store_cached_extremes",
    "structural_gamma_lower_bound",
    "theorem_bounds",
    "uniform_mass_matrix_bounds",
    "weighted_bounds",
]
