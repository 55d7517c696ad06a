"""``robot-tv-dynamics adapt`` (one run): labelled text by default, one JSON object with --json."""

from __future__ import annotations

import json
import re

import pytest

from robot_tv_dynamics import cli

#: What ``--json`` prints: the suite table's columns of one run.
JSON_KEYS = {"tracking_rms_rad", "tracking_max_rad", "tau_rms", "inf_margin_every_step",
             "inf_lambda_min_M_hat", "time_to_tolerance_load_mass_s",
             "consistency_violations", "first_violation_s", "min_eig_J_hat", "diverged_at_s",
             "final_load_mass_error_kg", "final_load_mass_relative_error", "load_mass_settle_s",
             "load_mass_unobservable_fraction", "final_theta_error", "final_theta_error_max_body",
             "final_visible_error_W", "visible_error_final_over_peak", "band_budget",
             "disturbance"}


def _adapt(urdf: str, out, *extra: str) -> list[str]:
    return ["adapt", "--urdf", urdf, "--scenario", "fill", "--plant", "classical",
            "--duration", "0.2", "--out", str(out), *extra]


def _number(line: str, label: str) -> float:
    found = re.search(rf"{re.escape(label)} (-?[\d.]+(?:e[-+]?\d+)?)", line)
    assert found, (label, line)
    return float(found.group(1))


def test_a_run_prints_labelled_lines_that_agree_with_its_summary(
        urdf_paths: dict[str, str], tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(_adapt(urdf_paths["ur5"], tmp_path, "--controller", "natural"))
    out = capsys.readouterr().out
    assert code == 0
    with pytest.raises(json.JSONDecodeError):
        json.loads(out)  # text, not a bare JSON dict
    summary = json.loads((tmp_path / "summary.json").read_text())
    lines = {line.split(":", 1)[0]: line for line in out.splitlines()}
    assert {"adapt", "tracking error", "consistency", "mass matrix", "pseudo-inertias",
            "load mass", "wrote"} <= set(lines)
    assert "natural on the classical plant, scenario fill" in lines["adapt"]
    assert _number(lines["tracking error"], "RMS") == pytest.approx(
        summary["tracking_rms_rad"], rel=5e-3)
    assert _number(lines["consistency"], "over every step") == pytest.approx(
        summary["inf_margin_every_step"], rel=5e-3)
    assert f"{summary['consistency_violations']} of {summary['samples']} samples" in (
        lines["consistency"])
    assert _number(lines["mass matrix"], "inf λ_min(M(q, Θ̂))") == pytest.approx(
        summary["inf_lambda_min_M_hat"], rel=5e-3)
    assert "positive definite at every step" in lines["pseudo-inertias"]
    assert str(tmp_path / "summary.json") in lines["wrote"]


def test_json_prints_one_object_of_the_table_columns(
        urdf_paths: dict[str, str], tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli.main(_adapt(urdf_paths["ur5"], tmp_path, "--controller", "slotine-li",
                           "--json"))
    data = json.loads(capsys.readouterr().out)  # exactly one JSON document
    assert code == 0
    assert set(data) == JSON_KEYS
    summary = json.loads((tmp_path / "summary.json").read_text())
    assert all(data[key] == summary[key] for key in JSON_KEYS)
    # the gradient law leaves the consistent set within 0.2 s (docs/adaptive.md)
    assert data["consistency_violations"] > 0 and data["min_eig_J_hat"] is None
    assert data["disturbance"] == 0.0  # w = 0 unless --disturbance
