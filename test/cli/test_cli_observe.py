"""``robot-tv-dynamics observe`` over rosbag2 MCAP bags written here with rosbags.

The bags carry the demo's topics and layouts (observer_bag.py). The command's residual
must equal the core observer run on the same samples in memory; missing effort, NaN,
wrong joints, malformed arrays give clear errors or per-sample drops with a count.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import numpy as np
import pytest
import yaml
from support.observer_bag import EPOCH, simulate, write_bag

from robot_tv_dynamics.cli import main
from robot_tv_dynamics.friction import load_friction_file as load_friction
from robot_tv_dynamics.observer import MomentumObserver, ObserverConfig


class _Loads:
    def __init__(self, theta, psi):
        self.theta, self.psi = theta, psi


@pytest.fixture(scope="module")
def samples(panda):
    return simulate(panda)


@pytest.fixture(scope="module")
def bag(tmp_path_factory, panda, samples):
    return write_bag(tmp_path_factory.mktemp("bag") / "run", panda, samples)


@pytest.fixture(scope="module")
def urdf(urdf_paths):
    return urdf_paths["panda"]


def observe_json(capsys, *args):
    capsys.readouterr()
    code = main(["observe", *map(str, args), "--json"])
    out = capsys.readouterr()
    assert code == 0, out.err
    return json.loads(out.out), out.err


def node_clock(t):
    """The bag's stamps as dynamics_node (and so ``observe``) reads them: sec + 1e-9·nanosec."""
    total = np.round(np.asarray(t) * 1e9).astype(np.int64)
    return (EPOCH + total // 1_000_000_000) + 1e-9 * (total % 1_000_000_000)


def core_residual(model, s, kind, gain=50.0, t=None):
    t = node_clock(s.t) if t is None else t  # integrated on the node's clock, as observe does
    observer = MomentumObserver(model, ObserverConfig(gain=gain, kind=kind),
                                theta_nominal=s.theta[0])
    return np.array([observer.update(t[k], s.q[k], s.qd[k], s.tau[k],
                                     _Loads(s.theta[k], s.psi[k])) for k in range(t.size)])


@pytest.mark.parametrize("kind", ["generalized", "classical"])
def test_observe_reproduces_the_core_observer_on_the_same_samples(capsys, panda, samples, bag,
                                                                   urdf, kind):
    data, _ = observe_json(capsys, "--urdf", urdf, "--data", bag, "--model", kind)
    assert data["model"] == kind
    assert data["joint_names"] == panda.joint_names
    np.testing.assert_allclose(data["t"], samples.t, atol=1e-9)  # ns stamps
    residual = np.array(data["external_torque"])
    assert residual.shape == (samples.t.size, panda.nv)
    np.testing.assert_allclose(residual, core_residual(panda, samples, kind), rtol=0, atol=1e-9)
    assert data["dropped"] == {} and data["skipped"] == {}


def test_observe_contacts_generalized_only_the_wrench_classical_also_the_fill(capsys, bag,
                                                                              urdf):
    generalized, _ = observe_json(capsys, "--urdf", urdf, "--data", bag)
    classical, _ = observe_json(capsys, "--urdf", urdf, "--data", bag, "--model", "classical")
    assert generalized["contacts"]
    for contact in generalized["contacts"]:  # the wrench acts over [0.5, 0.7) s
        assert set(contact) == {"t_start", "t_end", "joint", "peak"}
        assert 0.5 <= contact["t_start"] < 0.51 and 0.7 < contact["t_end"] < 0.8
        assert contact["joint"] in ("panda_joint2", "panda_joint4")
    assert min(c["t_start"] for c in classical["contacts"]) < 0.5  # the fill, flagged


def test_observe_json_on_a_single_mcap_file_and_the_bag_directory_agree(capsys, bag, urdf):
    from_file, _ = observe_json(capsys, "--urdf", urdf, "--data", bag)
    from_dir, _ = observe_json(capsys, "--urdf", urdf, "--data", bag.parent)
    assert from_file["external_torque"] == from_dir["external_torque"]


def test_relative_paths_resolve_against_the_callers_cwd(tmp_path, panda, samples, urdf):
    write_bag(tmp_path / "rel", panda, samples, arrays=())
    out = subprocess.run(
        [sys.executable, "-m", "robot_tv_dynamics.cli", "observe", "--urdf", urdf, "--data",
         "rel", "--plot", "residual.png"], cwd=tmp_path, capture_output=True, text=True,
        timeout=120)
    assert out.returncode == 0, out.stderr
    assert "inertial_parameters not in the bag" in out.stdout
    assert (tmp_path / "residual.png").stat().st_size > 10_000


def test_without_body_arrays_generalized_falls_back_to_nominal_and_says_so(
        capsys, tmp_path, panda, samples, urdf):
    bag = write_bag(tmp_path / "bare", panda, samples, arrays=())
    data, err = observe_json(capsys, "--urdf", urdf, "--data", bag)
    assert any("nominal" in note for note in data["notes"]) and "nominal" in err
    observer = MomentumObserver(panda, ObserverConfig(gain=50.0))  # URDF Θ, Ψ = 0
    clock = node_clock(samples.t)
    expected = np.array([observer.update(clock[k], samples.q[k], samples.qd[k],
                                         samples.tau[k]) for k in range(samples.t.size)])
    np.testing.assert_allclose(np.array(data["external_torque"]), expected, atol=1e-6)


def test_missing_effort_is_a_clear_error(capsys, tmp_path, panda, samples, urdf):
    bag = write_bag(tmp_path / "noeffort", panda, samples, effort=False)
    capsys.readouterr()
    assert main(["observe", "--urdf", urdf, "--data", str(bag)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: bag ") and "effort" in err and "Traceback" not in err


def test_wrong_joints_are_a_clear_error(capsys, tmp_path, ur5, samples, urdf_paths):
    names = ur5.joint_names + ["extra_a", "extra_b", "extra_c"]
    bag = write_bag(tmp_path / "ur5names", ur5, samples, names=names, arrays=())
    capsys.readouterr()
    assert main(["observe", "--urdf", urdf_paths["panda"], "--data", str(bag)]) == 2
    err = capsys.readouterr().err
    assert "wrong joint names" in err and "panda_joint1" in err


def test_nan_and_foreign_samples_are_dropped_with_a_count(capsys, tmp_path, panda, samples,
                                                          urdf):
    def corrupt(k, position, velocity, effort, names):
        if k % 50 == 7:
            velocity[2] = np.nan
        elif k % 50 == 20:
            effort = effort[:-1]
        elif k % 50 == 33:
            names = [*names[:-1], "stranger"]
        return position, velocity, effort, names

    bag = write_bag(tmp_path / "corrupt", panda, samples, corrupt=corrupt)
    data, _ = observe_json(capsys, "--urdf", urdf, "--data", bag)
    assert data["dropped"] == {"NaN/Inf": 10, "no effort": 10, "wrong joint names": 10}
    assert data["samples"] == samples.t.size - 30
    keep = np.array([k % 50 not in (7, 20, 33) for k in range(samples.t.size)])
    np.testing.assert_allclose(data["t"], samples.t[keep], atol=1e-9)
    assert np.all(np.isfinite(data["external_torque"]))
    # bridging a dropped 2 ms sample costs accuracy only at the sample after it
    full = core_residual(panda, samples, "generalized")[keep]
    # (measured 7e-4 N·m)
    assert np.abs(np.array(data["external_torque"]) - full).max() < 0.01


def test_malformed_array_messages_are_skipped_and_counted(capsys, tmp_path, panda, samples,
                                                          urdf):
    theta = samples.theta.copy()
    theta[100:103] = np.nan
    bad = dataclasses.replace(samples, theta=theta)
    bag = write_bag(tmp_path / "badtheta", panda, bad)
    data, _ = observe_json(capsys, "--urdf", urdf, "--data", bag)
    assert sum(v for k, v in data["skipped"].items() if k.startswith("inertial_parameters:")) == 3
    assert data["samples"] == samples.t.size  # Θ held over the three samples


def test_friction_file_is_subtracted_from_the_effort(capsys, tmp_path, panda, samples, urdf):
    params = {name: {} for name in panda.joint_names}  # every joint listed, {} = none
    params.update({"panda_joint2": {"viscous": 2.0, "coulomb": 1.5, "offset": 0.3,
                                    "coulomb_velocity": 0.02},
                   "panda_joint4": {"viscous": 1.0}})
    path = tmp_path / "friction.yaml"
    path.write_text(yaml.safe_dump(params))
    friction = load_friction(path, panda.joint_names)
    qd2 = samples.qd[:, 1]
    np.testing.assert_allclose(friction.torque(samples.qd)[:, 1],
                               2.0 * qd2 + 1.5 * np.tanh(qd2 / 0.02) + 0.3)
    with_friction = dataclasses.replace(samples, tau=samples.tau + friction.torque(samples.qd))
    bag = write_bag(tmp_path / "friction", panda, with_friction)
    data, _ = observe_json(capsys, "--urdf", urdf, "--data", bag, "--friction", path)
    np.testing.assert_allclose(np.array(data["external_torque"]),
                               core_residual(panda, samples, "generalized"), atol=1e-6)


@pytest.mark.parametrize("content, message", [
    ({"nonexistent_joint": {"viscous": 1.0}}, "are not joints of the model"),
    ({"panda_joint1": {"viscous": 1.0}}, "no entry for joints"),
    ({"panda_joint1": {"viscous": 1.0, "stiction": 2.0}}, "unknown keys"),
    ({"panda_joint1": {"coulomb_velocity": 0.0}}, "coulomb_velocity"),
    ({"panda_joint1": {"viscous": "fast"}}, "finite number"),
])
def test_bad_friction_files_are_clear_errors(capsys, tmp_path, bag, urdf, content, message):
    path = tmp_path / "friction.yaml"
    path.write_text(yaml.safe_dump(content))
    capsys.readouterr()
    assert main(["observe", "--urdf", urdf, "--data", str(bag), "--friction", str(path)]) == 2
    assert message in capsys.readouterr().err


def test_missing_bag_is_a_clear_error(capsys, tmp_path, urdf):
    capsys.readouterr()
    assert main(["observe", "--urdf", urdf, "--data", str(tmp_path / "nothing.mcap")]) == 2
    assert "no such file" in capsys.readouterr().err


def test_norm_mode_reports_one_contact_per_crossing(capsys, bag, urdf):
    data, _ = observe_json(capsys, "--urdf", urdf, "--data", bag, "--contact-mode", "norm",
                           "--threshold", "2.0")
    (contact,) = data["contacts"]
    assert data["contact_mode"] == "norm" and data["threshold"] == [2.0]
    assert 0.5 <= contact["t_start"] < 0.51 and contact["joint"] == "panda_joint2"
    residual = np.array(data["external_torque"])
    assert contact["peak"] == pytest.approx(np.linalg.norm(residual, axis=1).max())


@pytest.mark.parametrize("args, message", [
    (["--gain", "10,20"], "one per joint"),
    (["--threshold", "1,2,3"], "threshold"),
    (["--release", "1.5"], "release"),
])
def test_bad_settings_are_clear_errors(capsys, bag, urdf, args, message):
    capsys.readouterr()
    assert main(["observe", "--urdf", urdf, "--data", str(bag), *args]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err


def test_body_arrays_of_another_model_are_skipped_and_nominal_is_used(capsys, tmp_path, panda,
                                                                      samples, urdf):
    """A bag recorded with the fingers locked (7 bodies) replayed on the 9-body model."""
    bag = write_bag(tmp_path / "locked", panda, dataclasses.replace(
        samples, theta=samples.theta[:, :7], theta_dot=samples.theta_dot[:, :7],
        psi=samples.psi[:, :7], psi_dot=samples.psi_dot[:, :7]), bodies=7)
    data, _ = observe_json(capsys, "--urdf", urdf, "--data", bag)
    assert data["samples"] == samples.t.size
    assert sum(data["skipped"].values()) == 4 * samples.t.size
    assert "inertial_parameters has no valid message: the URDF's nominal Θ is used" in \
        data["notes"]
