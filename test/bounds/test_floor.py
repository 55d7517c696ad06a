"""The loading floor and the live weighted α₁: certified, cached once per arm, live.

M(q, Θ) comes from Pinocchio's CRBA (``model.dynamics()``) and the weighted Gram
Σ z_l J_lᵀJ_l from the model's own LOCAL Jacobians with z_l = λ_min(Z(Φ_l)), the
spatial inertia built here by hand: independent of the searches and of the left
inverse K that the bounds use.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from support.bounds_cases import random_consistent_theta
from support.by_hand import z_by_hand

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.bounds import cache, floor, live
from robot_tv_dynamics.bounds.structural import (
    structural_left_inverse,
    structural_weighted_lower_bound,
)

LOCK = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}




def lambda_min_m(model: RobotModel, theta: np.ndarray, qs: np.ndarray) -> np.ndarray:
    rd = model.dynamics()
    rd.set_theta(theta)
    return np.array([np.linalg.eigvalsh(rd.mass_matrix(q))[0] for q in qs])


def lambda_min_weighted(model: RobotModel, z: np.ndarray, qs: np.ndarray) -> np.ndarray:
    out = []
    for q in qs:
        jac = model.body_jacobians_local(q).reshape(model.n_bodies, 6, model.nv)
        out.append(np.linalg.eigvalsh(np.einsum("l,lri,lrj->ij", z, jac, jac))[0])
    return np.array(out)


def unbounded_q(model: RobotModel, rng: np.random.Generator, count: int) -> np.ndarray:
    """Configurations anywhere (the K bound holds for every q ∈ ℝⁿ, not only in the box)."""
    return rng.uniform(-4.0, 4.0, (count, model.nv))


@pytest.fixture(scope="module")
def arms(urdf_paths: dict[str, str]) -> dict[str, RobotModel]:
    return {"ur5": RobotModel.from_urdf(urdf_paths["ur5"]),
            "panda": RobotModel.from_urdf(urdf_paths["panda"]),
            "panda_locked": RobotModel.from_urdf(urdf_paths["panda"], locked_joints=LOCK)}


@pytest.mark.parametrize("name", ["ur5", "panda", "panda_locked"])
def test_the_left_inverse_bounds_lambda_min_of_m_and_of_the_weighted_gram_at_any_q(
        arms: dict[str, RobotModel], name: str) -> None:
    model = arms[name]
    rng = np.random.default_rng(7)
    K = structural_left_inverse(model)
    for theta in (model.theta_nominal, random_consistent_theta(model.n_bodies, rng)):
        zmat = z_by_hand(np.asarray(theta))
        exact = structural_weighted_lower_bound(K, zmat)
        z = np.linalg.eigvalsh(zmat)[:, 0]
        weighted = structural_weighted_lower_bound(K, z)
        qs = unbounded_q(model, rng, 300)
        lam_m = lambda_min_m(model, np.asarray(theta), qs)
        lam_w = lambda_min_weighted(model, z, qs)
        assert np.all(lam_m >= exact), (lam_m.min(), exact)
        assert np.all(lam_w >= weighted), (lam_w.min(), weighted)
        assert weighted <= exact * (1 + 1e-9)  # z_l I ⪯ Z_l
        assert weighted > 0.0
    # not vacuous: within a factor 7 of the sampled infimum on the nominal arm (measured:
    # UR5 0.42, Panda 0.20, locked Panda 0.30; the paper's α₁ is 10⁻⁴ of it on the Panda)
    zmat = z_by_hand(np.asarray(model.theta_nominal))
    qs = unbounded_q(model, rng, 300)
    assert structural_weighted_lower_bound(K, zmat) >= 0.15 * lambda_min_m(
        model, np.asarray(model.theta_nominal), qs).min()


def test_the_cache_folder_follows_xdg_cache_home(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert cache.resolve_cache_dir("auto") == tmp_path / "robot_tv_dynamics"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/dir")  # ignored, as the spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.resolve_cache_dir("auto") == tmp_path / "home" / ".cache" / "robot_tv_dynamics"
    monkeypatch.delenv("XDG_CACHE_HOME")
    assert cache.resolve_cache_dir("auto") == tmp_path / "home" / ".cache" / "robot_tv_dynamics"
    assert cache.resolve_cache_dir("") is None
    assert cache.resolve_cache_dir("~/x") == tmp_path / "home" / "x"


def test_the_arm_hash_follows_inertia_and_box_not_the_urdf_text(urdf_paths) -> None:
    text = open(urdf_paths["ur5"]).read()
    base = RobotModel.from_urdf_string(text)
    commented = RobotModel.from_urdf_string(text.replace("<robot ", "<!-- edit -->\n<robot ", 1))
    assert commented.urdf_sha256 != base.urdf_sha256
    assert floor.arm_hash(commented) == floor.arm_hash(base)
    heavier = RobotModel.from_urdf_string(text.replace('<mass value="0.1879"/>',
                                                       '<mass value="0.2879"/>', 1))
    assert heavier.theta_nominal[-1, 0] != base.theta_nominal[-1, 0]
    assert floor.arm_hash(heavier) != floor.arm_hash(base)
    elbow = 'lower="-3.14159265359" upper="3.14159265359"'  # the elbow: another box
    assert text.count(elbow) == 1
    narrower = RobotModel.from_urdf_string(text.replace(elbow, 'lower="-1.0" upper="1.0"'))
    assert floor.arm_hash(narrower) != floor.arm_hash(base)


def test_the_loading_floor_is_searched_once_then_read_and_recomputed_when_corrupt_or_stale(
        arms: dict[str, RobotModel], tmp_path) -> None:
    model = arms["ur5"]
    said: list[str] = []
    first = floor.cached_lower_bound(model, floor.LOADING_FLOOR, cache_dir=tmp_path,
                                     time_limit=3.0, on_compute=said.append)
    assert first.origin == "computed" and len(said) == 1 and not first.note
    path = floor.record_path(tmp_path, model, floor.LOADING_FLOOR)
    assert path.is_file()
    again = floor.cached_lower_bound(model, floor.LOADING_FLOOR, cache_dir=tmp_path,
                                     time_limit=3.0, on_compute=said.append)
    assert again.origin == "cache" and again.value == first.value and len(said) == 1
    # a certified floor is a lower bound of the sampled inf_q λ_min(M₀), and not vacuous
    rng = np.random.default_rng(3)
    box = np.array(model.joint_limits.lower), np.array(model.joint_limits.upper)
    qs = rng.uniform(np.maximum(box[0], -np.pi), np.minimum(box[1], np.pi), (400, model.nv))
    sampled = lambda_min_m(model, np.asarray(model.theta_nominal), qs).min()
    assert 0.35 * sampled <= first.value <= sampled
    path.write_text("{ not json")
    corrupt = floor.cached_lower_bound(model, floor.LOADING_FLOOR, cache_dir=tmp_path,
                                       time_limit=3.0, on_compute=said.append)
    assert corrupt.origin == "computed" and "corrupt" in corrupt.note and len(said) == 2
    data = json.loads(path.read_text())
    data["key"] = "0" * 64  # what an older algorithm version's key looks like
    path.write_text(json.dumps(data))
    stale = floor.cached_lower_bound(model, floor.LOADING_FLOOR, cache_dir=tmp_path,
                                     time_limit=3.0, on_compute=said.append)
    assert stale.origin == "computed" and "stale" in stale.note and len(said) == 3
    longer = floor.cached_lower_bound(model, floor.LOADING_FLOOR, cache_dir=tmp_path,
                                      time_limit=6.0, target_gap=0.0, on_compute=said.append)
    assert longer.origin == "computed" and "3 s" in longer.note and len(said) == 4


def test_the_live_bounds_hold_on_samples_and_say_which_load_breaks_the_floor(
        arms: dict[str, RobotModel]) -> None:
    model = arms["ur5"]
    ref = floor.cached_lower_bound(model, floor.WEIGHTED_REFERENCE, cache_dir=None,
                                   time_limit=3.0)
    fl = floor.cached_lower_bound(model, floor.LOADING_FLOOR, cache_dir=None, time_limit=3.0)
    bounds = live.LiveLowerBounds(model, reference=ref, floor=fl)
    rng = np.random.default_rng(11)
    qs = unbounded_q(model, rng, 300)
    theta0 = np.asarray(model.theta_nominal)
    loaded = theta0.copy()
    loaded[-1] += [2.0, 0.0, 0.0, 0.2, 0.02 + 0.04, 0.02 + 0.04, 0.02, 0.0, 0.0, 0.0]
    for theta in (theta0, loaded):
        sample = bounds.sample(theta)
        z = np.linalg.eigvalsh(z_by_hand(theta))[:, 0]
        lam_w = lambda_min_weighted(model, z, qs)
        lam_m = lambda_min_m(model, theta, qs)
        assert sample.weighted_alpha1 <= lam_w.min()
        assert sample.weighted_alpha1 >= 0.5 * lam_w.min()  # tight enough to be useful
        assert sample.paper_alpha1 <= sample.weighted_alpha1
        assert sample.floor_holds and np.all(lam_m >= sample.loading_floor)
    doubled = bounds.sample(2.0 * theta0).weighted_alpha1  # α₁ʷ is homogeneous in z
    assert doubled == pytest.approx(2.0 * bounds.sample(theta0).weighted_alpha1, rel=1e-9)
    estimate = theta0.copy()
    estimate[-1, 0] -= 0.05  # a load estimate with negative mass: still a consistent body
    sample = bounds.sample(estimate)
    assert sample.inconsistent_loads == (model.n_bodies - 1,)
    assert not sample.floor_holds and sample.load_margins[-1] < 0.0
    assert np.isfinite(sample.weighted_alpha1)  # the body itself is still consistent
