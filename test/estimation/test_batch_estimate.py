"""``estimate --batch``: the offline SDP fit of a load on a recording made like a real arm's.

The recording and the identified base model come from :mod:`batch_case` (perturbed plant,
friction the model does not fully have, coloured 0.3–0.8 N·m noise, ``identify`` on the
unloaded first part, a 1 kg load 10 cm out on panda_hand in the second; the unloaded
part is passed as ``--reference``, the tare that carries the base model's own error in
the hand body into the interval; both parts 40 s, the length docs/estimation.md says the
routine needs). Stated tolerances, on each of ``SEEDS``: mass within 3 %, COM within 1 cm
(Euclidean); the 95 % intervals contain the truth (at least 10 of the three seeds' 12
intervals: honest 95 % intervals miss more with a probability of ≈ 2 %) and are
informative (COM intervals narrower than 2 cm). On the first seed: the inertia about the
COM a physical body, the set_load files the same numbers in franka's (column-major) and
UR's ([Ixx, Iyy, Izz, Ixy, Ixz, Iyz]) layouts.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
import yaml
from support.batch_case import LINK, LOAD_COM, LOAD_MASS, PANDA_LOCK, make_case

from robot_tv_dynamics.cli import main
from robot_tv_dynamics.estimation.batch import INERTIA_MARGIN
from robot_tv_dynamics.inertia import mass_com_inertia_from_phi, phi_from_mass_com_inertia

pytestmark = [pytest.mark.slow]  # three 80 s recordings, each identified

#: the seeds the goals are asserted on: fixed before any of them was run (the study in
#: docs/estimation.md, which the recording's length comes from, used seeds 1–40), not tuned.
SEEDS = (101, 102, 103)


@pytest.fixture(scope="module")
def case(tmp_path_factory, urdf_paths):
    """The first seed's recording (the tests of one case use it)."""
    return make_case(urdf_paths["panda"], tmp_path_factory.mktemp(f"batch{SEEDS[0]}"), SEEDS[0])


@pytest.fixture(scope="module")
def cases(case, tmp_path_factory, urdf_paths):
    return {SEEDS[0]: case} | {
        seed: make_case(urdf_paths["panda"], tmp_path_factory.mktemp(f"batch{seed}"), seed)
        for seed in SEEDS[1:]}


def _arguments(case, *extra):
    args = ["estimate", "--batch", "--urdf", str(case.identified_urdf), "--friction",
            str(case.friction_yaml), "--data", str(case.loaded_bag), "--link", LINK,
            "--payload-frame", LINK, "--reference", str(case.unloaded_bag), *extra]
    for joint in PANDA_LOCK:
        args += ["--lock", joint]
    return args


def _fit(case, folder):
    """The test's command with --json and --set-load-out: (JSON answer, folder)."""
    import contextlib
    import io

    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        code = main(_arguments(case, "--json", "--set-load-out", str(folder)))
    assert code == 0
    return json.loads(buffer.getvalue()), folder


@pytest.fixture(scope="module")
def fitted(case, tmp_path_factory):
    return _fit(case, tmp_path_factory.mktemp(f"set_load{SEEDS[0]}"))


@pytest.fixture(scope="module")
def fits(fitted, cases, tmp_path_factory):
    """Each seed's JSON answer and its set_load folder."""
    return {SEEDS[0]: fitted} | {
        seed: _fit(cases[seed], tmp_path_factory.mktemp(f"set_load{seed}"))
        for seed in SEEDS[1:]}


def test_mass_and_com_are_recovered_with_intervals_that_contain_the_truth(fits):
    inside = 0
    for seed, (data, _) in fits.items():
        assert set(data) >= {"mass", "com", "inertia", "interval"}
        com, interval = np.asarray(data["com"]), np.asarray(data["interval"]["com"])
        lo, hi = data["interval"]["mass"]
        print(f"seed {seed}: mass {data['mass']:.4f} ({lo:.4f}–{hi:.4f}), COM error [mm] "
              f"{np.round(1e3 * (com - LOAD_COM), 1).tolist()} "
              f"({1e3 * np.linalg.norm(com - LOAD_COM):.1f}), intervals {interval.tolist()}")
        assert abs(data["mass"] - LOAD_MASS) <= 0.03 * LOAD_MASS, seed
        assert np.linalg.norm(com - LOAD_COM) <= 0.01, seed
        assert interval.shape == (3, 2)
        assert np.all(interval[:, 1] - interval[:, 0] <= 0.02), seed  # informative
        inside += int(lo <= LOAD_MASS <= hi)
        inside += int(np.sum((interval[:, 0] <= LOAD_COM) & (LOAD_COM <= interval[:, 1])))
    assert inside >= 4 * len(SEEDS) - 2  # of the 4 per seed (10 of 12 for three seeds)


def test_the_reported_load_is_a_body_with_margin_on_every_seed(fits):
    for seed, (data, _) in fits.items():
        i = data["inertia"]
        inertia = np.array([[i["ixx"], i["ixy"], i["ixz"]], [i["ixy"], i["iyy"], i["iyz"]],
                            [i["ixz"], i["iyz"], i["izz"]]])
        principal = np.linalg.eigvalsh(inertia)
        assert data["mass"] > 0 and principal[0] > 0, seed
        a, b, c = principal
        # the triangle inequalities, strict with margin (the tightest is a + b − c)
        assert a + b - c >= INERTIA_MARGIN, (seed, principal)
        assert data["margin"] >= data["epsilon"] * (1 - 1e-6), seed


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_load_fitted_on_the_boundary_of_the_bodies_keeps_the_triangle_margin(seed):
    # a point mass (inertia about its COM zero: every triangle inequality tight) fitted
    # to noisy rows: the least-squares optimum is not a body, the SDP's is one with margin
    from robot_tv_dynamics.estimation.batch import _solve

    rng = np.random.default_rng(seed)
    phi_point = phi_from_mass_com_inertia(0.8, np.array([0.01, -0.02, 0.1]), np.zeros((3, 3)))
    a = rng.standard_normal((4000, 10))
    b = a @ phi_point + 0.05 * rng.standard_normal(4000)
    base = phi_from_mass_com_inertia(0.7, np.zeros(3), np.diag([3e-3, 3e-3, 2e-3]))
    x, _ = _solve(a, b, base, np.eye(10), 1e-5, ("CLARABEL", "SCS"))
    _, _, inertia = mass_com_inertia_from_phi(x[:10])
    principal = np.linalg.eigvalsh(inertia)
    slacks = principal.sum() - 2 * principal  # I_i + I_j − I_k for each k
    assert slacks.min() >= INERTIA_MARGIN, slacks


def test_set_load_files_carry_the_estimate_in_each_vendors_layout(fitted):
    data, out = fitted
    franka = yaml.safe_load((out / "franka_set_load.yaml").read_text(encoding="utf-8"))
    ur = yaml.safe_load((out / "ur_set_load.yaml").read_text(encoding="utf-8"))
    i = data["inertia"]
    assert franka["mass"] == pytest.approx(data["mass"]) == ur["mass"]
    assert franka["F_x_Cload"] == pytest.approx(data["com"]) == ur["center_of_gravity"]
    assert franka["load_inertia"] == pytest.approx(
        [i["ixx"], i["ixy"], i["ixz"], i["ixy"], i["iyy"], i["iyz"], i["ixz"], i["iyz"],
         i["izz"]])
    assert ur["inertia"] == pytest.approx(
        [i["ixx"], i["iyy"], i["izz"], i["ixy"], i["ixz"], i["iyz"]])
    assert franka["frame"] == ur["frame"] == LINK


def test_a_window_is_fitted_alone_and_an_empty_one_is_refused(case, capsys):
    code = main(_arguments(case, "--json", "--start", "2", "--end", "10"))
    assert code == 0
    data = json.loads(capsys.readouterr().out)
    start, end = data["window"]
    assert 2.0 <= start < 2.5 and 9.5 < end <= 10.0  # the filter trims its edges
    assert abs(data["mass"] - LOAD_MASS) < 0.1
    code = main(_arguments(case, "--start", "6", "--end", "2"))
    captured = capsys.readouterr()
    assert code == 2 and "empty window" in captured.err


def test_an_unknown_link_is_a_clear_error(case, capsys):
    args = _arguments(case)
    args[args.index("--link") + 1] = "no_such_link"
    code = main(args)
    assert code == 2 and "no_such_link" in capsys.readouterr().err

