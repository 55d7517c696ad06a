"""Reading joint data (rosbag2 MCAP/sqlite3, CSV), its checks, and the zero-phase filter."""

from __future__ import annotations

import numpy as np
import pytest
from support.identification_helpers import PANDA_LOCK, write_csv, write_joint_state_bag

from robot_tv_dynamics import RobotModel
from robot_tv_dynamics.exceptions import IdentificationDataError
from robot_tv_dynamics.identification.data import check_samples, load_samples, prepare
from robot_tv_dynamics.identification.pipeline import identify


@pytest.fixture(scope="module")
def panda(urdf_paths):
    return RobotModel.from_urdf(urdf_paths["panda"], PANDA_LOCK)


def _signals(model, count=300, rate=100.0, seed=0):
    rng = np.random.default_rng(seed)
    t = np.arange(count) / rate
    w = 2 * np.pi * 0.5
    q = 0.3 * np.sin(w * t)[:, None] + np.linspace(-0.5, 0.5, model.nv)
    qd = np.tile(0.3 * w * np.cos(w * t)[:, None], (1, model.nv))
    tau = rng.standard_normal((count, model.nv))
    return t, q, qd, tau


def test_mcap_written_like_the_demo_is_read_with_locked_finger_columns_ignored(tmp_path, panda):
    t, q, qd, tau = _signals(panda)
    names = list(panda.joint_names) + PANDA_LOCK
    pad = np.zeros((t.size, 2))
    bag = write_joint_state_bag(tmp_path / "run.mcap", names[::-1], t,
                                np.c_[q, pad][:, ::-1], np.c_[qd, pad][:, ::-1],
                                np.c_[tau, pad][:, ::-1])
    fractions = []
    samples = load_samples(bag, panda, progress=fractions.append)
    assert samples.joint_names == tuple(panda.joint_names)
    assert np.allclose(samples.t - samples.t[0], t, atol=1e-9)
    assert np.array_equal(samples.q, q) and np.array_equal(samples.tau, tau)
    assert np.array_equal(samples.qd, qd)
    assert fractions[-1] == 1.0


def test_sqlite3_bag_folder_is_read(tmp_path, panda):
    from rosbags.rosbag2 import Writer
    from rosbags.typesys import Stores, get_typestore

    t, q, qd, tau = _signals(panda, count=50)
    store = get_typestore(Stores.ROS2_HUMBLE)
    JointState = store.types["sensor_msgs/msg/JointState"]
    Header, Time = store.types["std_msgs/msg/Header"], store.types["builtin_interfaces/msg/Time"]
    folder = tmp_path / "bag"
    with Writer(folder, version=8) as writer:
        connection = writer.add_connection("/arm/joint_states", "sensor_msgs/msg/JointState",
                                           typestore=store)
        for k in range(t.size):
            msg = JointState(header=Header(stamp=Time(sec=1, nanosec=int(t[k] * 1e9)),
                                           frame_id=""), name=list(panda.joint_names),
                             position=q[k], velocity=qd[k], effort=tau[k])
            writer.write(connection, k + 1, store.serialize_cdr(msg, connection.msgtype))
    samples = load_samples(folder, panda)
    assert samples.n_samples == 50 and np.array_equal(samples.tau, tau)


def test_csv_is_read(tmp_path, panda):
    t, q, qd, tau = _signals(panda)
    samples = load_samples(write_csv(tmp_path / "d.csv", panda.joint_names, t, q, qd, tau),
                           panda)
    assert np.allclose(samples.q, q) and np.allclose(samples.tau, tau)
    assert samples.qd is not None and np.allclose(samples.qd, qd)


def test_bag_without_effort_is_refused(tmp_path, panda):
    t, q, qd, tau = _signals(panda, count=20)
    bag = write_joint_state_bag(tmp_path / "e.mcap", panda.joint_names, t, q, qd, tau,
                                with_effort=False)
    with pytest.raises(IdentificationDataError, match="needs measured efforts.*no effort"):
        load_samples(bag, panda)


def test_missing_and_unknown_joints_are_named(tmp_path, panda):
    t, q, qd, tau = _signals(panda, count=20)
    names = list(panda.joint_names)
    bag = write_joint_state_bag(tmp_path / "m.mcap", names[:-1], t, q[:, :-1], qd[:, :-1],
                                tau[:, :-1])
    with pytest.raises(IdentificationDataError, match=r"\['panda_joint7'\] of the model are "
                       "missing"):
        load_samples(bag, panda)
    names[2] = "elbow_typo"
    bag = write_joint_state_bag(tmp_path / "u.mcap", names, t, q, qd, tau)
    with pytest.raises(IdentificationDataError, match=r"\['panda_joint3'\] of the model are "
                       r"missing .*not in the URDF: \('elbow_typo',\)"):
        load_samples(bag, panda)


def test_a_gripper_joint_the_model_lacks_is_skipped_and_noted(tmp_path, panda):
    t, q, qd, tau = _signals(panda, count=40)
    extra = np.full((t.size, 1), 0.02)
    names = ["gripper_finger", *reversed(panda.joint_names)]
    bag = write_joint_state_bag(tmp_path / "g.mcap", names, t,
                                np.hstack([extra, q[:, ::-1]]), np.hstack([0 * extra, qd[:, ::-1]]),
                                np.hstack([0 * extra, tau[:, ::-1]]))
    samples = load_samples(bag, panda)
    np.testing.assert_array_equal(samples.q, q)
    np.testing.assert_array_equal(samples.tau, tau)
    assert samples.skipped_joints == ("gripper_finger",)


def test_topics_are_chosen_or_refused(tmp_path, panda):
    t, q, qd, tau = _signals(panda, count=20)
    bag = write_joint_state_bag(tmp_path / "t.mcap", panda.joint_names, t, q, qd, tau,
                                topic="/arm/joint_states")
    assert load_samples(bag, panda).n_samples == 20  # the only JointState topic
    with pytest.raises(IdentificationDataError, match='topic "/joint_states" is not in the bag'):
        load_samples(bag, panda, topic="/joint_states")
    with pytest.raises(IdentificationDataError, match="no such file"):
        load_samples(tmp_path / "absent.mcap", panda)


def test_nan_samples_are_dropped_and_counted(panda):
    t, q, qd, tau = _signals(panda)
    tau[[5, 17, 250], 2] = np.nan
    q[40, 0] = np.inf
    samples = check_samples("x", panda.joint_names, t, q, qd, tau)
    assert samples.n_samples == t.size - 4 and samples.dropped_nonfinite == 4
    assert "dropped 4 samples with NaN/Inf" in prepare(samples).notes
    tau[:] = np.nan
    with pytest.raises(IdentificationDataError, match="all 300 samples contain NaN"):
        check_samples("x", panda.joint_names, t, q, qd, tau)


def test_time_going_backwards_is_refused_naming_the_sample(panda):
    t, q, qd, tau = _signals(panda)
    t[100] = t[98]
    with pytest.raises(IdentificationDataError, match="goes backwards at sample 100"):
        check_samples("x", panda.joint_names, t, q, qd, tau)


def test_fewer_samples_than_parameters_is_refused(panda):
    t, q, qd, tau = _signals(panda, count=60)
    prepared = prepare(check_samples("x", panda.joint_names, t, q, qd, tau), cutoff=10.0)
    with pytest.raises(IdentificationDataError, match="fewer than the 91 unknowns"):
        identify(panda, prepared)


def test_cutoff_above_nyquist_is_refused(panda):
    t, q, qd, tau = _signals(panda)
    with pytest.raises(IdentificationDataError, match="Nyquist"):
        prepare(check_samples("x", panda.joint_names, t, q, qd, tau), cutoff=60.0)


def test_irregular_stamps_give_accelerations_close_to_the_analytic_ones(panda):
    rng = np.random.default_rng(4)
    t = np.cumsum(rng.uniform(0.5e-3, 1.5e-3, 6000))  # 1 kHz on average, ±50 % jitter
    w = 2 * np.pi * 0.4
    q = np.sin(w * t)[:, None] * np.ones(panda.nv)
    qd = w * np.cos(w * t)[:, None] * np.ones(panda.nv)
    qd_noisy = qd + 1e-3 * rng.standard_normal(qd.shape)
    prepared = prepare(check_samples("x", panda.joint_names, t, q, qd_noisy,
                                     np.zeros_like(q)), cutoff=5.0)
    qdd_true = -w * w * np.sin(w * prepared.t)
    error = np.abs(prepared.qdd[:, 0] - qdd_true).max()
    assert error < 0.02 * w * w  # 2 % of the peak acceleration
    assert np.allclose(np.diff(prepared.t), np.diff(prepared.t)[0])


def test_csv_without_velocities_derives_them_from_the_positions(tmp_path, panda):
    t, q, qd, tau = _signals(panda, count=400, rate=200.0)
    path = tmp_path / "nov.csv"
    header = ["time"] + [f"{n}.{kind}" for kind in ("position", "effort")
                         for n in panda.joint_names]
    np.savetxt(path, np.column_stack([t, q, tau]), delimiter=",", header=",".join(header),
               comments="")
    samples = load_samples(path, panda)
    assert samples.qd is None
    prepared = prepare(samples)
    assert "no measured velocities: q̇ from the filtered positions" in prepared.notes
    rows = np.rint(prepared.t * 200.0).astype(int)
    assert np.abs(prepared.qd - qd[rows]).max() < 0.01 * np.abs(qd).max()
