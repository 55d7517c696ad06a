"""Weighted and exact bounds of M(q, Θ): the inequality chain, certified brackets, Dask.

M(q, Θ) comes from Pinocchio's CRBA (``model.dynamics()``), independent of the
row-weighted Jacobians that the bounds search; the paper's α₁, α₂ come from the
Jacobian extremes and the margins.
"""

from __future__ import annotations

import numpy as np
import pytest
from support.bounds_cases import LIMIT, joint, random_consistent_theta, random_q, urdf_arm

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics import bounds as B
from robot_tv_dynamics.bounds.ladder import FLOOR_BATCH
from robot_tv_dynamics.bounds.mass import (
    exact_mass_extremes,
    gram_evaluator,
    gram_extremes,
    lower_weight_candidates,
    upper_weight_candidates,
    weighted_bounds,
)
from robot_tv_dynamics.bounds.parallel import DaskBoxEvaluation, dask_client
from robot_tv_dynamics.bounds.weights import exact_weights, spatial_inertia_extremes
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.inertia import consistency_margin, consistency_size, spatial_inertia


def crba(model: RobotModel, theta: np.ndarray, qs: np.ndarray) -> np.ndarray:
    """Eigenvalues of M(q, Θ) from Pinocchio's CRBA, (K, nv) ascending."""
    rd = model.dynamics()
    rd.set_theta(theta)
    return np.array([np.linalg.eigvalsh(rd.mass_matrix(q)) for q in qs])


def weighted_gram(model: RobotModel, weights: np.ndarray, q: np.ndarray) -> np.ndarray:
    """Σ_l J_lᵀ W_lᵀW_l J_l from the model's own local Jacobians (not the evaluator's)."""
    jac = model.body_jacobians_local(q).reshape(model.n_bodies, 6, model.nv)
    return np.einsum("lri,lrs,lsj->ij", jac, np.swapaxes(weights, 1, 2) @ weights, jac)


def test_weights_bracket_the_spatial_inertia() -> None:
    rng = np.random.default_rng(3)
    theta = random_consistent_theta(40, rng, spread=0.7)
    z = spatial_inertia(theta)
    for _, w in lower_weight_candidates(theta):
        gap = np.linalg.eigvalsh(z - np.swapaxes(w, 1, 2) @ w)[:, 0]
        assert np.all(gap >= -1e-12 * np.linalg.norm(z, axis=(1, 2)))
    for _, w in upper_weight_candidates(theta):
        gap = np.linalg.eigvalsh(np.swapaxes(w, 1, 2) @ w - z)[:, 0]
        assert np.all(gap >= -1e-12 * np.linalg.norm(z, axis=(1, 2)))
    zmin, zmax = spatial_inertia_extremes(theta)
    # the relations to the paper's margins: z_l ≥ μ_l, Z̄_l ≤ 2ν_l
    assert np.all(zmin >= consistency_margin(theta) * (1 - 1e-12))
    assert np.all(zmax <= 2 * consistency_size(theta) * (1 + 1e-12))


@pytest.mark.parametrize("name", ["panda", "ur5", "panda_locked"])
def test_weighted_chain_on_random_q_and_theta(arms: dict[str, RobotModel], name: str) -> None:
    model = arms[name]
    rng = np.random.default_rng(11)
    qs = random_q(model, rng, 40)
    for trial in range(2):
        theta = random_consistent_theta(model.n_bodies, rng, spread=0.5)
        lam_m = crba(model, theta, qs)
        margins = consistency_margin(theta)
        jtj = np.array([np.linalg.eigvalsh(j.T @ j)
                        for j in map(model.body_jacobians_local, qs)])
        zmin, zmax = spatial_inertia_extremes(theta)
        for (label, low), (_, up) in zip(lower_weight_candidates(theta),
                                         upper_weight_candidates(theta), strict=False):
            for q, lm, lj in zip(qs, lam_m, jtj, strict=True):
                wl = np.linalg.eigvalsh(weighted_gram(model, low, q))
                wu = np.linalg.eigvalsh(weighted_gram(model, up, q))
                tol = 1e-9 * lm[-1]
                # λ_min(M) ≥ λ_min(Σ L J J) and λ_max(M) ≤ λ_max(Σ U J J), pointwise
                assert lm[0] >= wl[0] - tol, (label, trial)
                assert lm[-1] <= wu[-1] + tol, (label, trial)
                if label == "scalar":
                    # ≥ min z · λ_min(JᵀJ) ≥ min μ · λ_min(JᵀJ): the paper's chain
                    assert wl[0] >= np.min(zmin) * lj[0] - tol
                    assert np.min(zmin) >= np.min(margins) * (1 - 1e-12)
                    assert wu[-1] <= np.max(zmax) * lj[-1] + tol
                    assert np.max(zmax) <= 2 * np.max(consistency_size(theta)) * (1 + 1e-12)


@pytest.mark.parametrize("name", ["ur5", "panda_locked"])
def test_certified_weighted_and_exact_order(arms: dict[str, RobotModel], name: str) -> None:
    """Certified: paper α₁ ≤ α₁ʷ ≤ every sampled λ_min(M); α₂ ≥ α₂ʷ ≥ every λ_max(M)."""
    model = arms[name]
    rng = np.random.default_rng(5)
    theta = random_consistent_theta(model.n_bodies, rng, spread=0.5)
    ext = B.certified_jacobian_extremes(model, time_limit=60.0, max_boxes=64, samples=64)
    paper = B.bounds_report(model, ext, theta).bounds
    w = weighted_bounds(model, theta, B.CERTIFIED, paper_alpha1=paper.alpha1,
                        paper_alpha2=paper.alpha2, samples=64, max_boxes=64,
                        time_limit=60.0)
    lam = crba(model, theta, random_q(model, rng, 200))
    assert paper.alpha1 <= w.alpha1 <= np.min(lam[:, 0]) * (1 + 1e-9)
    assert paper.alpha2 >= w.alpha2 >= np.max(lam[:, -1]) * (1 - 1e-9)
    exact = exact_mass_extremes(model, theta, samples=64, max_boxes=64, time_limit=60.0,
                                floor=w.alpha1, ceiling=w.alpha2)
    lo, hi = exact.lambda_min_bracket
    assert w.alpha1 <= lo <= np.min(lam[:, 0]) * (1 + 1e-9)
    assert exact.lambda_max_bracket[1] >= np.max(lam[:, -1]) * (1 - 1e-9)
    # the certified α₂ʷ is a ceiling of the exact search (Z(Φ_l) ⪯ U_l)
    assert exact.lambda_max_bracket[1] <= w.alpha2


def test_one_box_encloses_the_ur5s_lambda_min_only_while_it_is_small(
        arms: dict[str, RobotModel]) -> None:
    """docs/concepts.md's reason the lower side's boxes must shrink in every joint.

    One box around the UR5's sampled minimiser of λ_min(M(q)) (wrist 2 at the end of its
    searched range), half-width r in each of the 5 searched joints: the enclosure is within
    1.5 % of λ_min at the centre for r = 0.3 rad and says nothing (0) for r = 0.4 rad. If
    the enclosure improves, the page's numbers go too.
    """
    model = arms["ur5"]
    sampled = exact_mass_extremes(model, method="sampled")
    ev = gram_evaluator(model, exact_weights(model.theta_nominal))
    x = np.asarray(sampled.argmin_q)[ev.active]
    found = {}
    assert ev.d == 5
    for r in (0.3, 0.4):
        lo = np.clip(x - r, ev.lower, ev.upper)[None]
        hi = np.clip(x + r, ev.lower, ev.upper)[None]
        out = ev.boxes(lo, hi)
        found[r] = (float(out["gamma_lo"][0]), float(out["lam_min"][0]))
    lower, centre = found[0.3]
    assert 0.985 * centre <= lower <= centre
    assert found[0.4][0] == 0.0
    # λ_min(M) is flat over the whole box: between 1.58 and 1.72·10⁻² kg·m²
    rng = np.random.default_rng(0)
    points = ev.lower + rng.random((4000, ev.d)) * (ev.upper - ev.lower)
    lam_min, _ = ev.values(ev.full(points))
    assert 0.0158 <= lam_min.min() and lam_min.max() <= 0.0172


@pytest.mark.slow
def test_the_ur5s_certified_lower_end_reaches_half_of_lambda_min_by_search(
        arms: dict[str, RobotModel]) -> None:
    """Bisecting the lower side's boxes along their widest joint shrinks them evenly, so the
    search's own lower end of inf λ_min(M) passes half of the sampled λ_min (a relative
    gap of 0.45) within a box budget; the earlier split left it at 6.66·10⁻³ after 60 s.
    M depends on wrist 3, which the search keeps; its axis-symmetric bound drops it again
    (it did not pass 6.66·10⁻³ in 600 000 boxes with wrist 3 searched)."""
    model = arms["ur5"]
    exact = exact_mass_extremes(model, sides=("min",), target_gap=0.45, time_limit=600.0,
                                samples=256, max_boxes=150_000)
    lam = crba(model, model.theta_nominal, random_q(model, np.random.default_rng(3), 500))
    lo, hi = exact.lambda_min_bracket
    assert exact.converged, (exact.lambda_min_bracket, exact.boxes)
    assert 0.5 * np.min(lam[:, 0]) <= lo <= np.min(lam[:, 0]) * (1 + 1e-9)
    assert lo > 0.0067  # above where the earlier split stayed


def test_the_lower_side_is_bisected_along_the_widest_joint(arms: dict[str, RobotModel]) -> None:
    model = arms["panda_locked"]
    ev = gram_evaluator(model, exact_weights(model.theta_nominal))
    lo = np.repeat(ev.lower[None], 3, axis=0)
    hi = lo + 0.1 * (ev.upper - ev.lower)
    for k in range(3):  # one joint at a time twice as wide (relative to the searched box)
        hi[k, k + 1] = lo[k, k + 1] + 0.2 * (ev.upper[k + 1] - ev.lower[k + 1])
    assert ev.boxes(lo, hi)["split_min"].tolist() == [1, 2, 3]


def test_exact_bracket_contains_sampled_nominal(arms: dict[str, RobotModel]) -> None:
    model = arms["ur5"]
    exact = exact_mass_extremes(model, samples=128, max_boxes=2000, time_limit=120.0)
    lam = crba(model, model.theta_nominal, random_q(model, np.random.default_rng(2), 500))
    lo, hi = exact.lambda_min_bracket
    assert 0.0 <= lo <= np.min(lam[:, 0]) * (1 + 1e-9)
    assert hi >= lo
    mlo, mhi = exact.lambda_max_bracket
    assert mlo <= mhi and mhi >= np.max(lam[:, -1]) * (1 - 1e-9)


#: A heavy body whose centre of mass is 0.3 m off its own (x) joint axis, at the end of a
#: z joint: M₁₁ and M₁₂ change with the last joint although the last body has no child.
OFF_AXIS = ('<link name="a"><inertial><mass value="0.01"/><inertia ixx="1e-4" iyy="1e-4" '
            'izz="1e-4" ixy="0" ixz="0" iyz="0"/></inertial></link>'
            '<link name="b"><inertial><origin xyz="0 0.3 0"/><mass value="1"/><inertia '
            'ixx="1e-3" iyy="1e-3" izz="1e-3" ixy="0" ixz="0" iyz="0"/></inertial></link>')


def test_a_childless_joint_is_searched_when_its_body_is_not_symmetric_about_it() -> None:
    """λ_min(M) of the off-axis arm falls from 0.09 (at the last joint's mid-range, where a
    search that drops that joint evaluates it) to ~0.03 at its limits: the exact search
    keeps the joint and its certified bracket contains every CRBA value; JᵀJ and a scalar
    weight do not depend on the joint, and their box still drops it."""
    model = urdf_arm(OFF_AXIS, joint("j1", "revolute", "base", "a"),
                     joint("j2", "revolute", "a", "b", axis="1 0 0", xyz="0.5 0 0",
                           limit=LIMIT.format(lo=-1, hi=1)))
    weights = exact_weights(model.theta_nominal)
    assert B.joint_search_box(model).active.tolist() == [False, False]
    gram = np.swapaxes(weights, 1, 2) @ weights
    assert B.joint_search_box(model, gram).active.tolist() == [False, True]
    assert B.joint_search_box(model, np.repeat(2.0 * np.eye(6)[None], 2, axis=0)
                              ).active.tolist() == [False, False]
    qs = np.column_stack([np.zeros(201), np.linspace(-1.0, 1.0, 201)])
    lam = crba(model, model.theta_nominal, qs)[:, 0]
    assert lam[100] > 2.5 * lam.min()  # the joint matters
    exact = exact_mass_extremes(model, samples=64, time_limit=60.0, target_gap=0.01)
    lo, hi = exact.lambda_min_bracket
    assert lo <= lam.min() * (1 + 1e-9) and hi >= lam.min() * (1 - 0.02)
    assert exact.lambda_max_bracket[1] >= crba(model, model.theta_nominal, qs)[:, -1].max()


@pytest.mark.parametrize("name", ["ur5", "panda_locked"])
def test_the_exact_lower_end_stays_below_a_refined_minimum_for_random_theta(
        arms: dict[str, RobotModel], name: str) -> None:
    """Random consistent Θ: the certified lower end of inf λ_min(M) is below λ_min at the
    best of 3000 samples refined by Nelder–Mead over the whole joint box (the last joint
    included: a random body is not symmetric about its axis). With the locked Panda's
    joint 7 left out of the box the second Θ's lower end rose above the refined 2.13."""
    from scipy.optimize import minimize

    model = arms[name]
    rng = np.random.default_rng(1)
    limits = model.joint_limits
    for _ in range(2):
        theta = random_consistent_theta(model.n_bodies, rng, spread=1.0)
        qs = random_q(model, rng, 3000)
        lam = crba(model, theta, qs)[:, 0]

        def smallest(q: np.ndarray, theta: np.ndarray = theta) -> float:
            return float(crba(model, theta, np.clip(q, limits.lower, limits.upper)[None])[0, 0])

        best = min(minimize(smallest, qs[j], method="Nelder-Mead",
                            options={"maxiter": 1500}).fun for j in np.argsort(lam)[:3])
        exact = exact_mass_extremes(model, theta, sides=("min",), samples=64,
                                    max_boxes=3000, time_limit=60.0)
        assert exact.lambda_min_bracket[0] <= best * (1 + 1e-9)
        assert exact.local_inverse <= best * (1 + 1e-9)


def test_dask_search_identical_to_serial(arms: dict[str, RobotModel]) -> None:
    model = arms["ur5"]
    weights = exact_weights(model.theta_nominal)
    kwargs = {"samples": 64, "max_boxes": 300, "time_limit": 600.0, "batch": 32}
    serial = gram_extremes(model, weights, "exact", B.CERTIFIED, **kwargs)
    from robot_tv_dynamics.bounds.mass import gram_evaluator

    with dask_client(workers=2) as client:
        ev = gram_evaluator(model, weights)
        parallel = gram_extremes(model, weights, "exact", B.CERTIFIED, evaluator=ev,
                                 evaluate=DaskBoxEvaluation(client, ev), **kwargs)
        # a factory: the local-left-inverse floor's boxes go to the workers as well (with
        # the serial floor's batch: on a cluster it takes more boxes per step by default)
        both = gram_extremes(model, weights, "exact", B.CERTIFIED,
                             evaluations=lambda source: DaskBoxEvaluation(client, source),
                             floor_batch=FLOOR_BATCH, **kwargs)
    assert serial.local_inverse > 0.0
    for found in (parallel, both):
        assert found.lambda_min_bracket == serial.lambda_min_bracket
        assert found.lambda_max_bracket == serial.lambda_max_bracket
        assert found.boxes == serial.boxes
        assert found.local_inverse == serial.local_inverse


def test_dask_evaluations_of_equal_sources_in_a_row_keep_their_data(
        arms: dict[str, RobotModel], monkeypatch: pytest.MonkeyPatch) -> None:
    """An evaluation made, used and dropped, then another of an equal source, 60 times:
    each gets its boxes (with content-hashed keys the release of one dropped the next
    one's data, about one time in thirty). The local workers run without Dask's
    MALLOC_TRIM_THRESHOLD_ (it made each box evaluation 2.2 times slower; another local
    cluster of the same process may have left it in the environment, so it is cleared)."""
    import os

    from robot_tv_dynamics.bounds.mass import gram_evaluator

    model = arms["ur5"]
    weights = exact_weights(model.theta_nominal)
    reference = gram_evaluator(model, weights)
    expected = reference.boxes(reference.lower[None], reference.upper[None])
    monkeypatch.delenv("MALLOC_TRIM_THRESHOLD_", raising=False)
    with dask_client(workers=2) as client:
        trim = client.run(lambda: os.environ.get("MALLOC_TRIM_THRESHOLD_"))
        assert list(trim.values()) == [None, None]
        for _ in range(60):
            ev = gram_evaluator(model, weights)
            evaluation = DaskBoxEvaluation(client, ev)
            got = evaluation(ev.lower[None], ev.upper[None])
            for key, value in expected.items():
                np.testing.assert_array_equal(got[key], value)
            del evaluation


def test_inconsistent_theta_is_a_typed_error(arms: dict[str, RobotModel]) -> None:
    model = arms["ur5"]
    theta = np.array(model.theta_nominal)
    theta[2, 0] = -1.0
    with pytest.raises(InvalidInputError, match="inconsistent"):
        exact_mass_extremes(model, theta)
    with pytest.raises(InvalidInputError, match="workers"):
        with dask_client(workers=0):
            pass


def test_axis_symmetric_bounds_are_below_and_above_and_symmetric() -> None:
    """Random PSD weights and axes: L' ⪯ L ⪯ U' (to the last bit), both commute with the turn
    about the axis (so a childless joint drops out of their box); the UR5's wrist 3 keeps
    its moments 0.01714 (perpendicular, the smaller) and 0.01714 (axial) below, 0.03382
    above."""
    from robot_tv_dynamics.arrays import skew
    from robot_tv_dynamics.bounds.weights import axis_symmetric_bound

    rng = np.random.default_rng(8)
    for _ in range(20):
        factor = rng.normal(size=(6, 6)) * rng.uniform(0.1, 3.0, size=6)
        weight = factor @ factor.T
        axis = rng.normal(size=3)
        motion = np.concatenate([np.zeros(3), axis / np.linalg.norm(axis)])
        ad = np.zeros((6, 6))
        ad[:3, :3] = ad[3:, 3:] = skew(motion[3:])
        lower = axis_symmetric_bound(weight, motion, upper=False)
        upper = axis_symmetric_bound(weight, motion, upper=True)
        scale = np.linalg.norm(weight)
        assert np.linalg.eigvalsh(weight - lower)[0] >= 0.0
        assert np.linalg.eigvalsh(upper - weight)[0] >= 0.0
        assert np.linalg.eigvalsh(lower)[0] >= 0.0
        for bound in (lower, upper):
            assert np.linalg.norm(ad.T @ bound + bound @ ad) <= 1e-12 * scale
    # a coupling far below the rest: cutting E's spectrum at 10⁻¹² of its top once left L'
    # above L by 10⁻⁷ (and U' below U); the δI₆ shift restores the order
    z_axis = np.array([0.0, 0.0, 0.0, 0.0, 0.0, 1.0])
    for top in (False, True):
        weight = np.diag([1e-3, 2.001, 1e-3, 1.0, 1.0, 1.0]) if not top \
            else np.diag([2.001, 1e-3, 1e-3, 1.0, 1.0, 1.0])
        weight[0, 2] = weight[2, 0] = 1e-7
        bound = axis_symmetric_bound(weight, z_axis, upper=top)
        assert np.linalg.eigvalsh(bound - weight if top else weight - bound)[0] >= 0.0
    wrist = np.diag([0.1879, 0.1879, 0.1879, 0.01714, 0.01714, 0.03382])
    y_axis = np.array([0.0, 0.0, 0.0, 0.0, 1.0, 0.0])
    assert np.allclose(axis_symmetric_bound(wrist, y_axis, upper=False),
                       np.diag([0.1879] * 3 + [0.01714] * 3), rtol=1e-8)
    assert np.allclose(axis_symmetric_bound(wrist, y_axis, upper=True),
                       np.diag([0.1879] * 3 + [0.03382, 0.01714, 0.03382]), rtol=1e-8)


def test_the_search_budget_is_one_record_and_keywords_replace_its_fields(
        arms: dict[str, RobotModel]) -> None:
    """SearchBudget(...) and the same settings as keywords run the same search.

    (The sampled search: with a budget far beyond its work it is deterministic.)
    """
    model = arms["ur5"]
    weights = exact_weights(model.theta_nominal)
    budget = B.SearchBudget(samples=64, seed=3, time_limit=600.0)
    record = gram_extremes(model, weights, "exact", B.SAMPLED, budget)
    keywords = gram_extremes(model, weights, "exact", B.SAMPLED, samples=64, seed=3,
                             time_limit=600.0)
    replaced = gram_extremes(model, weights, "exact", B.SAMPLED,
                             B.SearchBudget(samples=8, seed=3, time_limit=600.0), samples=64)
    other_seed = gram_extremes(model, weights, "exact", B.SAMPLED, budget, seed=4)
    assert record.lambda_min_bracket == keywords.lambda_min_bracket == replaced.lambda_min_bracket
    assert record.lambda_max_bracket == keywords.lambda_max_bracket
    assert record.boxes == keywords.boxes == replaced.boxes
    assert other_seed.lambda_min_bracket != record.lambda_min_bracket
    with pytest.raises(TypeError, match="time_budget"):
        gram_extremes(model, weights, "exact", B.SAMPLED, time_budget=1.0)
