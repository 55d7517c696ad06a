"""``demo --out``: where a run writes, and that an earlier run is never overwritten unasked."""

from __future__ import annotations

import datetime

import pytest

from robot_tv_dynamics.cli import build_parser
from robot_tv_dynamics.cli.demo import output_folder
from robot_tv_dynamics.exceptions import DemoError

NOW = datetime.datetime(2026, 12, 1, 9, 30, 5)


def test_an_out_folder_holding_an_earlier_run_is_refused_unless_overwrite(tmp_path):
    (tmp_path / "summary.json").write_text("{}")
    with pytest.raises(DemoError, match=r"holds an earlier run \(summary.json\).*--overwrite"):
        output_folder(str(tmp_path))
    assert output_folder(str(tmp_path), overwrite=True) == tmp_path


def test_an_empty_or_new_out_folder_is_used_as_given(tmp_path):
    assert output_folder(str(tmp_path)) == tmp_path
    assert output_folder(str(tmp_path / "new")) == tmp_path / "new"


def test_the_default_folder_moves_aside_from_an_earlier_run_and_says_where(
        tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert str(output_folder(None, now=NOW)) == "demo_output"
    (tmp_path / "demo_output").mkdir()
    (tmp_path / "demo_output" / "run.mcap").write_bytes(b"")
    fresh = output_folder(None, now=NOW)
    assert str(fresh) == "demo_output_20261201-093005"
    assert "writing to ./demo_output_20261201-093005" in capsys.readouterr().err
    assert str(output_folder(None, overwrite=True, now=NOW)) == "demo_output"


def test_the_parser_takes_out_and_overwrite():
    args = build_parser().parse_args(["demo", "--out", "x", "--overwrite"])
    assert (args.out, args.overwrite) == ("x", True)
    assert build_parser().parse_args(["demo"]).out is None
