"""Sweeps of evaluate / retime over trajectories × payloads on Dask: one row per item.

Every row is compared with evaluate / retime run directly on that item here; the
pairing, the error rows and the table format are checked on files written here.
"""

from __future__ import annotations

import csv
import importlib.util
from pathlib import Path

import numpy as np
import pytest
import yaml
from support.particle_lagrangian import find_example_robot_urdf

from robot_tv_dynamics import RobotModel, cli
from robot_tv_dynamics.evaluation import evaluate, load_payload, load_trajectory
from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.retiming import retime
from robot_tv_dynamics.sweep import COLUMNS, expand_trajectories, plan_items, sweep

EXAMPLES = Path(__file__).resolve().parents[2] / "config" / "examples"
FINGERS = {"panda_finger_joint1": None, "panda_finger_joint2": None}


def scaled_copy(source: Path, target: Path, factor: float) -> Path:
    """The example trajectory with its times × factor (velocities / factor, …)."""
    data = yaml.safe_load(source.read_text())
    for point in data["points"]:
        time = point["time_from_start"]
        point["time_from_start"] = (time["sec"] + 1e-9 * time["nanosec"]) * factor
        for key, power in (("velocities", 1), ("accelerations", 2)):
            if key in point:
                point[key] = [v / factor**power for v in point[key]]
    target.write_text(yaml.safe_dump(data))
    return target


def payload_file(path: Path, link: str, mass: float) -> Path:
    path.write_text(yaml.safe_dump({"link": link, "mass": mass, "com": [0.0, 0.0, 0.05],
                                    "inertia": {"ixx": 0.01, "iyy": 0.01, "izz": 0.005}}))
    return path


@pytest.fixture
def library(tmp_path):
    folder = tmp_path / "library"
    folder.mkdir()
    scaled_copy(EXAMPLES / "ur5_trajectory.yaml", folder / "ur5_fast.yaml", 0.35)
    scaled_copy(EXAMPLES / "ur5_trajectory.yaml", folder / "ur5_slow.yaml", 1.0)
    scaled_copy(EXAMPLES / "panda_trajectory.yaml", folder / "panda_slow.yaml", 1.0)
    (folder / "broken.yaml").write_text("joint_names: [a]\npoints: [{positions: [.nan]}]\n")
    (folder / "notes.txt").write_text("not a trajectory")
    payloads = [payload_file(tmp_path / "ur5_6kg.yaml", "tool0", 6.0),
                payload_file(tmp_path / "panda_1kg.yaml", "panda_link8", 1.0)]
    return folder, payloads


def urdfs():
    return [find_example_robot_urdf("panda"), find_example_robot_urdf("ur5")]


def test_directories_and_globs_expand_and_items_pair_by_joints_and_links(library):
    folder, payloads = library
    found = expand_trajectories([folder])
    assert [Path(p).name for p in found] == ["broken.yaml", "panda_slow.yaml",
                                             "ur5_fast.yaml", "ur5_slow.yaml"]
    assert expand_trajectories([str(folder / "ur5_*.yaml")]) == found[2:]
    with pytest.raises(InvalidInputError, match="matches no file"):
        expand_trajectories([str(folder / "nothing_*.yaml")])
    with pytest.raises(InvalidInputError, match="does not exist"):
        expand_trajectories([folder / "missing.yaml"])
    items = plan_items("evaluate", urdfs(), found, [str(p) for p in payloads],
                       locked=FINGERS)
    pairs = sorted((Path(i.urdf).stem, Path(i.trajectory).name, Path(i.payload or "").name)
                   for i in items if i.problem is None)
    assert pairs == [("panda", "panda_slow.yaml", "panda_1kg.yaml"),
                     ("ur5_robot", "ur5_fast.yaml", "ur5_6kg.yaml"),
                     ("ur5_robot", "ur5_slow.yaml", "ur5_6kg.yaml")]
    problems = [i for i in items if i.problem is not None]
    # the broken file: one row per payload, as every other trajectory has
    assert {Path(i.trajectory).name for i in problems} == {"broken.yaml"}
    assert sorted(Path(i.payload or "").name for i in problems) == [
        "panda_1kg.yaml", "ur5_6kg.yaml"]
    # the fingers are locked on the Panda only
    assert all(i.locked is None for i in items if "ur5" in i.urdf)


def read_csv(path):
    with Path(path).open(encoding="utf-8") as stream:
        return list(csv.DictReader(stream))


def test_evaluate_sweep_by_one_command_writes_the_table_and_plot(library, tmp_path, capsys):
    folder, payloads = library
    table = tmp_path / "out.csv"
    argv = ["evaluate", "--urdf", urdfs()[0], "--urdf", urdfs()[1],
            "--lock", "panda_finger_joint1", "--lock", "panda_finger_joint2",
            "--trajectory", str(folder), "--table", str(table), "--workers", "1"]
    for payload in payloads:
        argv += ["--payload", str(payload)]
    code = cli.main(argv)
    captured = capsys.readouterr()
    assert code == 1, captured.err  # the fast UR5 move is over a limit, one file broken
    rows = read_csv(table)
    assert set(COLUMNS) <= set(rows[0])
    assert {"trajectory", "payload", "feasible", "max_effort_ratio", "worst_joint",
            "error"} <= set(rows[0])
    assert len(rows) == 5
    broken = [row for row in rows if row["error"]]
    assert len(broken) == 2 and all(row["trajectory"].endswith("broken.yaml") for row in broken)
    assert {Path(row["payload"]).name for row in broken} == {"panda_1kg.yaml", "ur5_6kg.yaml"}
    assert all("InvalidInputError" in row["error"] for row in broken)
    for row in rows:
        if row["error"]:
            continue
        model = RobotModel.from_urdf(row["urdf"], FINGERS if "panda" in row["urdf"] else None)
        direct = evaluate(model, load_trajectory(row["trajectory"]),
                          load_payload(row["payload"]), compute_max_payload=False)
        assert float(row["max_effort_ratio"]) == pytest.approx(float(np.nanmax(
            direct.peak_ratio)), rel=1e-12)
        assert row["worst_joint"] == direct.joint_names[int(np.nanargmax(direct.peak_ratio))]
        assert (row["feasible"] == "True") == (not direct.violations)
    assert {row["feasible"] for row in rows if not row["error"]} == {"True", "False"}
    plot = table.with_suffix(".png")
    assert plot.stat().st_size > 10_000
    assert "5 items" in captured.out and "2 errors" in captured.out


def test_retime_sweep_through_the_python_api_on_a_running_scheduler(library, tmp_path):
    from dask.distributed import LocalCluster

    folder, payloads = library
    outside = yaml.safe_load((folder / "ur5_slow.yaml").read_text())
    outside["points"][3]["positions"][1] = 9.0  # read fine, refused by retime
    (folder / "ur5_outside.yaml").write_text(yaml.safe_dump(outside))
    options = {"gridpoints": 40, "compare_uniform": True}
    with LocalCluster(n_workers=1, threads_per_worker=1, dashboard_address=":0") as cluster:
        result = sweep("retime", [urdfs()[1]], [str(folder / "ur5_*.yaml")],
                       [str(payloads[0])], options=options, scheduler=cluster.scheduler_address,
                       progress=None)
    assert result.workers == 1
    rows = {Path(row["trajectory"]).name: row for row in result.rows}
    assert set(rows) == {"ur5_fast.yaml", "ur5_slow.yaml", "ur5_outside.yaml"}
    assert "InvalidInputError" in rows["ur5_outside.yaml"]["error"]
    assert rows["ur5_outside.yaml"]["feasible"] is False
    model = RobotModel.from_urdf(urdfs()[1])
    for name in ("ur5_fast.yaml", "ur5_slow.yaml"):
        row = rows[name]
        assert not row["error"]
        direct = retime(model, load_trajectory(folder / name), load_payload(payloads[0]),
                        **options)
        assert row["duration_out"] == pytest.approx(direct.duration_after, rel=1e-9)
        assert row["duration_in"] == pytest.approx(direct.duration_before)
        assert row["duration_uniform_scaling"] == pytest.approx(direct.uniform.duration)
        assert row["max_velocity_scaling_factor"] == pytest.approx(
            direct.uniform.max_velocity_scaling_factor)
        assert row["max_acceleration_scaling_factor"] == pytest.approx(
            direct.uniform.max_acceleration_scaling_factor)
        assert row["feasible"] is True and row["max_effort_ratio"] <= 1.0 + 2e-3
    assert rows["ur5_fast.yaml"]["max_velocity_scaling_factor"] < 1.0


def test_a_parquet_table_without_pyarrow_is_a_clear_error(library, tmp_path, capsys):
    folder, payloads = library
    table = tmp_path / "out.parquet"
    argv = ["evaluate", "--urdf", urdfs()[1], "--trajectory", str(folder / "ur5_slow.yaml"),
            "--table", str(table), "--workers", "1"]
    if importlib.util.find_spec("pyarrow") is not None:  # pragma: no cover - not pinned
        assert cli.main(argv) == 0
        import pyarrow.parquet as pq

        assert pq.read_table(table).num_rows == 1
        return
    assert cli.main(argv) == 2
    err = capsys.readouterr().err
    assert "pyarrow" in err and err.count("\n") == 1
    assert not table.exists()
    assert cli.main([*argv[:-4], "--table", str(tmp_path / "out.xlsx")]) == 2
    assert ".csv or .parquet" in capsys.readouterr().err
