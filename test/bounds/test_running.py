"""RunningBounds (bounds/running.py): the mass_matrix_bounds entries against bounds/ and numpy.

The per-sample entries are checked against :func:`bounds.instantaneous_bounds` (its own
M, J and eigen-decompositions), α₁/α₂ against :func:`bounds.uniform_mass_matrix_bounds`
fed with inf/sup margins computed here from Pinocchio's pseudo-inertia, the start-up
extremes against :func:`bounds.jacobian_extremes` called directly.
"""

from __future__ import annotations

import math

import numpy as np
import pinocchio as pin
import pytest

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics import bounds as B
from robot_tv_dynamics.exceptions import InvalidInputError

SETTINGS = {"samples": 64, "time_limit": 10.0}


@pytest.fixture(scope="module")
def extremes(ur5: RobotModel) -> B.JacobianExtremes:
    return B.jacobian_extremes(ur5, B.SAMPLED, **SETTINGS)


def pinocchio_margin_size(theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """λ_min, λ_max of f(Φ_l) per body, from Pinocchio's PseudoInertia (eq. 9)."""
    margins, sizes = [], []
    for m, h1, h2, h3, i11, i22, i33, i12, i23, i13 in theta:
        f = pin.PseudoInertia.FromDynamicParameters(
            np.array([m, h1, h2, h3, i11, i12, i22, i13, i23, i33])).toMatrix()
        eig = np.linalg.eigvalsh(f)
        margins.append(eig[0])
        sizes.append(eig[-1])
    return np.array(margins), np.array(sizes)


def loading_sequence(model: RobotModel) -> list[np.ndarray]:
    """Θ(t) of a load growing then shrinking on the last body."""
    out = []
    for scale in (1.0, 2.5, 0.4, 1.2):
        theta = np.array(model.theta_nominal)
        theta[-1] *= scale
        out.append(theta)
    return out


def values_at(model: RobotModel, running: B.RunningBounds, q, theta, theta_dot
              ) -> dict[str, float]:
    kin = model.kinematics(q)
    values = running.values(kin.stacked_jacobian, model.mass_matrix(q, theta),
                            model.mass_matrix(q, theta_dot),
                            B.rate_spatial_inertia_norm(theta_dot))
    assert values.shape == (len(B.BOUND_LABELS),)
    return dict(zip(B.BOUND_LABELS, values, strict=True))


def test_the_entries_are_the_bounds_of_theorems_2_to_4_at_q(ur5, extremes) -> None:
    running = B.RunningBounds(ur5.n_bodies, extremes)
    sequence = loading_sequence(ur5)
    for theta in sequence:
        running.update(theta)
    theta = sequence[-1]
    rng = np.random.default_rng(3)
    theta_dot = 0.1 * rng.normal(size=theta.shape)
    q = rng.uniform(ur5.joint_limits.lower, ur5.joint_limits.upper)
    got = values_at(ur5, running, q, theta, theta_dot)
    ref = B.instantaneous_bounds(ur5, q, theta, theta_dot)
    for label, expected in (("lambda_min_M", ref.lambda_min_M),
                            ("lambda_max_M", ref.lambda_max_M),
                            ("lower_bound_q", ref.lower_bound), ("upper_bound_q", ref.upper_bound),
                            ("min_margin", ref.min_margin), ("max_size", ref.max_size),
                            ("mass_rate_sigma_max", ref.mass_rate_sigma_max),
                            ("mass_rate_bound", ref.mass_rate_bound)):
        assert got[label] == pytest.approx(expected, rel=1e-9, abs=1e-12), label
    assert got["lower_bound_q"] <= got["lambda_min_M"] <= got["lambda_max_M"] <= got[
        "upper_bound_q"]
    assert got["mass_rate_sigma_max"] <= got["mass_rate_bound"]

    # α₁, α₂ from the inf / sup over the whole sequence, computed here
    margins, sizes = zip(*(pinocchio_margin_size(t) for t in sequence), strict=True)
    inf_margin, sup_size = np.min(margins, axis=0), np.max(sizes, axis=0)
    uniform = B.uniform_mass_matrix_bounds(extremes, inf_margin, sup_size)
    for label, expected in (("alpha1", uniform.alpha1), ("alpha2", uniform.alpha2),
                            ("gamma", uniform.gamma), ("delta", uniform.delta),
                            ("inf_margin", inf_margin.min()), ("sup_size", sup_size.max())):
        assert got[label] == pytest.approx(expected, rel=1e-9), label
    assert got["inf_margin"] < got["min_margin"]  # the 0.4 load was lighter than now
    assert got["certified"] == 0.0 and running.method == B.SAMPLED


def test_zero_theta_rate_gives_zero_rate_entries(ur5, extremes) -> None:
    running = B.RunningBounds(ur5.n_bodies, extremes)
    running.update(ur5.theta_nominal)
    q = np.zeros(ur5.nv)
    values = running.values(ur5.kinematics(q).stacked_jacobian,
                            ur5.mass_matrix(q, ur5.theta_nominal), np.full((ur5.nv, ur5.nv), 7.0),
                            0.0)
    got = dict(zip(B.BOUND_LABELS, values, strict=True))
    assert got["mass_rate_sigma_max"] == 0.0 and got["mass_rate_bound"] == 0.0


def test_a_rejected_theta_leaves_the_statistics_as_they_were(ur5, extremes) -> None:
    running = B.RunningBounds(ur5.n_bodies, extremes)
    running.update(ur5.theta_nominal)
    before = (running.min_margin, running.max_size, running.uniform)
    lighter = np.array(ur5.theta_nominal)
    lighter[-1] *= 0.1
    bad = np.array(ur5.theta_nominal)
    bad[0, 0] = np.nan
    for theta in (lighter, bad):  # the first is valid: the transaction rolls it back too
        with pytest.raises(InvalidInputError), running.transaction():
            running.update(theta)
            if theta is lighter:
                raise InvalidInputError("test", "a later step failed")
    assert (running.min_margin, running.max_size, running.uniform) == before
    running.update(ur5.theta_nominal)  # the tracker was restored too: inf unchanged
    assert running.uniform.min_margin == pytest.approx(before[2].min_margin, rel=1e-12)


def test_without_extremes_the_alphas_are_nan_and_the_method_says_unavailable(ur5) -> None:
    running = B.RunningBounds(ur5.n_bodies, None)
    with pytest.raises(InvalidInputError, match="no Θ yet"):
        running.values(np.eye(6 * ur5.n_bodies, ur5.nv), np.eye(ur5.nv), np.eye(ur5.nv), 0.0)
    running.update(ur5.theta_nominal)
    assert running.method == B.UNAVAILABLE
    assert all(math.isnan(v) for v in (running.uniform.alpha1, running.uniform.alpha2,
                                        running.uniform.gamma, running.uniform.delta))
    margin, _ = pinocchio_margin_size(np.array(ur5.theta_nominal))
    assert running.uniform.min_margin == pytest.approx(margin.min(), rel=1e-9)


def test_startup_extremes_are_computed_once_then_read_from_the_cache(ur5, tmp_path) -> None:
    direct = B.jacobian_extremes(ur5, B.SAMPLED, **SETTINGS)
    methods = []
    first = B.startup_jacobian_extremes(ur5, certified=False, settings=SETTINGS,
                                        cache_dir=tmp_path, on_compute=methods.append)
    assert (first.origin, methods, first.cache_error) == ("computed", [B.SAMPLED], "")
    second = B.startup_jacobian_extremes(ur5, certified=False, settings=SETTINGS,
                                         cache_dir=tmp_path, on_compute=methods.append)
    assert second.origin == "cache" and methods == [B.SAMPLED]
    expected = {k: v for k, v in direct.to_dict().items() if k != "elapsed_s"}
    for found in (first, second):
        assert {k: v for k, v in found.extremes.to_dict().items() if k != "elapsed_s"} == expected


def test_a_cache_that_cannot_be_written_is_reported_not_raised(ur5, tmp_path) -> None:
    blocked = tmp_path / "a_file"
    blocked.write_text("not a directory")
    found = B.startup_jacobian_extremes(ur5, certified=False, settings=SETTINGS,
                                        cache_dir=blocked)
    assert found.origin == "computed" and found.cache_error
    summary = B.extremes_summary(found.extremes)
    low, _ = found.extremes.inf_lambda_min_JtJ_bracket
    assert f"gamma = {low:.6g}" in summary and "sampled" in summary


def test_the_weighted_alpha1_entry_bounds_lambda_min_of_m_of_each_theta(ur5, extremes) -> None:
    live = B.LiveLowerBounds(ur5, gamma=extremes.inf_lambda_min_JtJ_bracket[0])
    running = B.RunningBounds(ur5.n_bodies, extremes, live)
    rng = np.random.default_rng(9)
    qs = rng.uniform(-np.pi, np.pi, (200, ur5.nv))
    zero = np.zeros_like(ur5.theta_nominal)
    for theta in loading_sequence(ur5):
        running.update(theta)
        lam = min(np.linalg.eigvalsh(ur5.mass_matrix(q, theta))[0] for q in qs)
        z = np.array([np.linalg.eigvalsh(pin.Inertia.FromDynamicParameters(
            np.array([m, h1, h2, h3, i11, i12, i22, i13, i23, i33])).matrix())[0]
            for m, h1, h2, h3, i11, i22, i33, i12, i23, i13 in theta])
        weighted = min(np.linalg.eigvalsh(np.einsum(
            "l,lri,lrj->ij", z, *[ur5.body_jacobians_local(q).reshape(-1, 6, ur5.nv)] * 2))[0]
            for q in qs)
        got = values_at(ur5, running, qs[0], theta, zero)
        # within a factor 2 of the sampled inf_q λ_min(Σ z_l J_lᵀJ_l), below λ_min(M)
        assert 0.5 * weighted <= got["weighted_alpha1"] <= min(weighted, lam)
        assert got["weighted_alpha1"] >= got["alpha1"]
    without = B.RunningBounds(ur5.n_bodies, extremes)
    without.update(ur5.theta_nominal)
    assert math.isnan(values_at(ur5, without, qs[0], ur5.theta_nominal, zero)["weighted_alpha1"])


def test_extremes_that_come_later_give_the_alphas_of_the_whole_sequence(ur5, extremes) -> None:
    running = B.RunningBounds(ur5.n_bodies, None)  # a node whose γ, δ are pending
    sequence = loading_sequence(ur5)
    for theta in sequence:
        running.update(theta)
    assert math.isnan(running.uniform.alpha1) and running.method == B.UNAVAILABLE
    live = B.LiveLowerBounds(ur5, gamma=extremes.inf_lambda_min_JtJ_bracket[0])
    running.set_extremes(extremes, live)
    margins, sizes = zip(*(pinocchio_margin_size(t) for t in sequence), strict=True)
    uniform = B.uniform_mass_matrix_bounds(
        extremes, np.min(margins, axis=0), np.max(sizes, axis=0))
    got = values_at(ur5, running, np.zeros(ur5.nv), sequence[-1],
                    np.zeros_like(ur5.theta_nominal))
    assert running.method == B.SAMPLED
    for label, expected in (("alpha1", uniform.alpha1), ("alpha2", uniform.alpha2),
                            ("gamma", uniform.gamma), ("delta", uniform.delta)):
        assert got[label] == pytest.approx(expected, rel=1e-9), label
    # α₁ʷ of the latest Θ, computed although that Θ came before the live bounds did
    assert got["weighted_alpha1"] == pytest.approx(
        live.weighted_alpha1(np.linalg.eigvalsh(
            np.array([pin.Inertia.FromDynamicParameters(
                np.array([m, h1, h2, h3, i11, i12, i22, i13, i23, i33])).matrix()
                for m, h1, h2, h3, i11, i22, i33, i12, i23, i13 in sequence[-1]]))[:, 0]),
        rel=1e-12)


def test_extremes_before_any_theta_wait_for_the_first_update(ur5, extremes) -> None:
    running = B.RunningBounds(ur5.n_bodies, None)
    running.set_extremes(extremes)
    assert running.uniform is None and running.method == B.SAMPLED
    running.update(ur5.theta_nominal)
    assert math.isfinite(running.uniform.alpha1)


def test_cached_startup_extremes_only_read_the_cache(ur5, tmp_path) -> None:
    assert B.cached_startup_extremes(ur5, certified=False, settings=SETTINGS,
                                     cache_dir=tmp_path) == (None, "")
    assert B.cached_startup_extremes(ur5, certified=False, settings=SETTINGS,
                                     cache_dir="") == (None, "")
    computed = B.startup_jacobian_extremes(ur5, certified=False, settings=SETTINGS,
                                           cache_dir=tmp_path)
    found, note = B.cached_startup_extremes(ur5, certified=False, settings=SETTINGS,
                                            cache_dir=tmp_path)
    assert found is not None and found.origin == "cache" and note == ""
    assert found.extremes.inf_lambda_min_JtJ == computed.extremes.inf_lambda_min_JtJ
    # another method or setting is another key: not in the cache
    assert B.cached_startup_extremes(ur5, certified=True, settings=SETTINGS,
                                     cache_dir=tmp_path)[0] is None
