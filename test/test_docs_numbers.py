"""The numbers the docs quote from runs: rendered from their kept data, and reproduced.

``scripts/docs_numbers.py`` runs the commands and rewrites the fragments
(``<!-- numbers: NAME -->`` … ``<!-- /numbers -->``) from ``docs/numbers/NAME.json``. Here:
every fragment is its data rendered (nobody edited a number by hand), and the
deterministic ones agree with a fresh run within the tolerances their fragment states
(``identification`` is checked by test/identification/test_identification_accuracy.py,
whose own run it is; ``collision`` needs DDS: test/demo/ asserts what its text claims).
The speed figures (``bench_demo``, ``bench_dynamics``, ``bench_observer``, ``bench_sim``,
``bench_estimator``) are only dated and stamped: no test asserts a speed.
"""

from __future__ import annotations

import importlib.util
import re
import tempfile
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[1]
SPEC = importlib.util.spec_from_file_location("docs_numbers", REPO / "scripts" / "docs_numbers.py")
numbers = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(numbers)


def test_every_fragment_is_its_kept_data_rendered_and_every_data_file_is_shown():
    found = numbers.fragments()
    assert {name for _, name, _ in found} == set(numbers.SECTIONS)
    kept = {path.stem for path in numbers.DATA.glob("*.json")}
    assert kept == set(numbers.SECTIONS)
    stale = [f"{page.relative_to(REPO)}: {name}" for page, name, text in found
             if text != numbers.rendered(name)]
    assert not stale, ("fragments that differ from their data (run python "
                       f"scripts/docs_numbers.py --render): {stale}")
    for name in numbers.SECTIONS:
        machine = numbers.load(name)["machine"]
        assert {"date", "cores", "load_average", "rnea_us"} <= set(machine), name


# ------------------------------------------------------------------------ demo
def closed_loop_numbers(urdf: str, duration: float = 8.0, publish_rate: float = 50.0) -> dict:
    """What the demo's table quotes, from the simulator's own closed loop without ROS.

    sim_node steps :func:`~robot_tv_dynamics.simulation.closed_loop.demo_loop` at 1 kHz
    and publishes every 1/publish_rate s; the demo replays its monitors and computes
    λ_min(M(q, Θ̂)) on those samples (:func:`~robot_tv_dynamics.demo.analysis.analyse`),
    with γ the safe end of dynamics_node's sampled Jacobian extremes. The same here,
    with no DDS, no recorder and no wall clock in between.
    """
    from robot_tv_dynamics import RobotModel, bounds
    from robot_tv_dynamics.demo.analysis import analyse
    from robot_tv_dynamics.demo.recording import Recording
    from robot_tv_dynamics.demo.scenario import scenario_file
    from robot_tv_dynamics.loading import load_loading_process
    from robot_tv_dynamics.simulation.closed_loop import demo_loop

    model = RobotModel.from_urdf(urdf)
    setup = scenario_file("fill", "", Path(tempfile.mkdtemp()), model, Path(urdf).read_text(),
                          duration)
    loop = demo_loop(model, load_loading_process(setup.path), seed=0)
    every = int(round(1.0 / publish_rate / loop.plant.dt))
    samples = []
    for step in range(int(round(duration / loop.plant.dt))):
        sample = loop.step()
        if step % every == 0:
            samples.append(sample)
    t = np.array([s.t for s in samples])
    estimates = {name: (t, np.array([loop.theta_hat(getattr(s, f"phi_{name}"))
                                     for s in samples])) for name in ("classical", "projected")}
    recording = Recording(
        info={"payload_body": loop.body}, t=t, q=np.array([s.q for s in samples]),
        qd=np.array([s.qd for s in samples]), tau=np.array([s.tau for s in samples]),
        t_ref=t, q_ref=np.array([s.reference[0] for s in samples]),
        theta=(t, np.array([s.loads.theta for s in samples])), estimates=estimates,
        terms=(t, np.zeros(0)), bounds=(t, np.zeros(0), []), diagnostics={}, wall_span=0.0)
    extremes = bounds.jacobian_extremes(model, bounds.SAMPLED, samples=512, time_limit=5.0)
    gamma = float(extremes.inf_lambda_min_JtJ_bracket[0])
    result = analyse(recording, model, gamma, setup.loading_start)
    classical, projected = result["estimators"]["classical"], result["estimators"]["projected"]
    return {
        "link": setup.link, "tilt_file_deg": setup.tilt_file_deg,
        "classical_alarm_t": classical["alarms"][0]["t"] if classical["alarms"] else None,
        "classical_inf_mu": float(classical["inf_mu"][result["body"]]),
        "classical_min_lambda": classical["min_lambda_min_M_hat"],
        "classical_crossing_t": classical["first_nonpositive_lambda_min_M_hat_t"],
        "classical_lead_s": classical["lead_time_s"],
        "projected_alarms": len(projected["alarms"]),
        "projected_min_lambda": projected["min_lambda_min_M_hat"],
        "projected_alpha1": projected["alpha1"], "gamma": gamma,
        "tracking_rms_rad": result["tracking_rms"]}


TIMES = ("classical_alarm_t", "classical_crossing_t", "classical_lead_s")
VALUES = ("classical_inf_mu", "classical_min_lambda", "projected_min_lambda",
          "projected_alpha1", "gamma", "tracking_rms_rad", "tilt_file_deg")


@pytest.mark.slow
@pytest.mark.parametrize("arm", ["panda", "ur5"])
def test_the_demo_table_agrees_with_a_fresh_closed_loop(arm):
    kept = numbers.load("demo")["data"]
    stated, tolerance = kept["arms"][arm], kept["tolerances"]
    urdf = numbers.example_urdf(numbers.UR5 if arm == "ur5" else "")
    fresh = closed_loop_numbers(urdf, duration=kept["duration_s"])
    assert fresh["link"] == stated["link"]
    assert fresh["projected_alarms"] == stated["projected_alarms"] == 0
    for key in TIMES:
        assert (fresh[key] is None) == (stated[key] is None), key
        if stated[key] is not None:
            assert fresh[key] == pytest.approx(stated[key], abs=tolerance["time_s"]), key
    for key in VALUES:
        assert fresh[key] == pytest.approx(stated[key], rel=tolerance["relative"]), key
    # what the page says of these numbers, asserted rather than read off the table:
    # the classical estimate alarms before its M(q, Θ̂) loses definiteness; the projected
    # one keeps λ_min(M(q, Θ̂)) ≥ α₁ > 0 (Theorem 2)
    assert fresh["classical_alarm_t"] < fresh["classical_crossing_t"]
    assert fresh["classical_min_lambda"] < 0 < fresh["projected_alpha1"]
    assert fresh["projected_min_lambda"] >= fresh["projected_alpha1"]


# ------------------------------------------------------------------------ retime
NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
RUNTIME = re.compile(r"runtime [\d.]+ s")


def skeleton(text: str) -> tuple[str, list[float]]:
    """The text with its numbers taken out, and the numbers (the runtime dropped)."""
    text = RUNTIME.sub("runtime ? s", text)
    return NUMBER.sub("#", text), [float(x) for x in NUMBER.findall(text)]


@pytest.mark.slow
def test_the_retime_example_agrees_with_a_fresh_run():
    kept = numbers.load("retime")["data"]
    for stated, fresh in zip(kept["outputs"], numbers.retime_outputs(), strict=True):
        words, values = skeleton(stated)
        fresh_words, fresh_values = skeleton(fresh)
        assert fresh_words == words
        np.testing.assert_allclose(fresh_values, values, rtol=0, atol=kept["tolerance"])
    assert "violations: none" in kept["outputs"][1]
    # what the page says of the example: faster than the input, slower when uniform
    text = kept["outputs"][0]
    before, after = map(float, re.search(r"duration: ([\d.]+) s -> ([\d.]+) s", text).groups())
    uniform = float(re.search(r"uniform slowdown .*= ([\d.]+) s", text).group(1))
    assert after < before < uniform
    assert re.search(r"^binding constraint: velocity shoulder_pan_joint: ", text, flags=re.M)


# ------------------------------------------------------------------------ max_payload
def test_the_maximum_payloads_agree_with_a_fresh_evaluate():
    kept = numbers.load("max_payload")["data"]
    fresh = numbers.max_payload_outputs()
    assert set(fresh) == set(kept["outputs"])
    for arm, stated in kept["outputs"].items():
        for key in ("max_payload_mass", "moveit_static_max_payload_mass"):
            assert fresh[arm][key] == pytest.approx(stated[key], rel=kept["tolerance"]), arm
        assert fresh[arm]["max_payload_joint"] == stated["max_payload_joint"], arm
        assert fresh[arm]["moveit_static_max_payload_joint"] == stated[
            "moveit_static_max_payload_joint"], arm
        assert fresh[arm]["max_payload_t"] == pytest.approx(stated["max_payload_t"], abs=1e-9)
        # what the page says of them: the static estimate overstates what the motion allows
        assert fresh[arm]["moveit_static_max_payload_mass"] > fresh[arm]["max_payload_mass"]


# ------------------------------------------------------------------------ retime_cases
RETIME_ROWS = tuple(numbers.load("retime_cases")["data"]["rows"])


@pytest.mark.slow
@pytest.mark.parametrize("label", RETIME_ROWS)
def test_a_retiming_case_agrees_with_a_fresh_retime(label):
    kept = numbers.load("retime_cases")["data"]
    stated, tolerance = kept["rows"][label], kept["tolerance"]
    fresh = numbers.retime_case_rows((label,))[label]
    assert fresh["binding"] == stated["binding"]
    assert fresh["solves"] == stated["solves"]
    for key in ("before_s", "after_s", "uniform_s"):
        assert fresh[key] == pytest.approx(stated[key], abs=tolerance["duration_s"]), key
    for key in ("peak_before", "peak_after", "peak_played", "velocity_after",
                "binding_fraction"):
        assert fresh[key] == pytest.approx(stated[key], abs=tolerance["ratio"]), key
    # what the page says of the cases: within the limits as played, faster than a uniform
    # slowdown meeting the same limits
    assert max(fresh["peak_after"], fresh["peak_played"]) <= 1.0 + 1e-3
    assert fresh["velocity_after"] <= 1.0 + 1e-6
    assert fresh["after_s"] < fresh["uniform_s"]


def test_the_smoothing_example_agrees_with_a_fresh_retime():
    kept = numbers.load("retime_cases")["data"]
    stated, tolerance = kept["smoothing"], kept["tolerance"]
    fresh = numbers.retime_smoothing()
    for key in ("raw", "smoothed"):
        assert fresh[key]["jerk"] == pytest.approx(stated[key]["jerk"],
                                                   rel=tolerance["relative"]), key
        assert fresh[key]["after_s"] == pytest.approx(stated[key]["after_s"],
                                                      abs=tolerance["duration_s"]), key
    # the page: the jerk drops to a small fraction for about the window more duration
    assert fresh["smoothed"]["jerk"] < 0.3 * fresh["raw"]["jerk"]
    window = fresh["smoothed"]["window_s"]
    assert 0 < fresh["smoothed"]["after_s"] - fresh["raw"]["after_s"] <= 1.5 * window


def test_the_playback_case_agrees_with_a_fresh_retime_as_written():
    kept = numbers.load("retime_cases")["data"]
    stated, tolerance = kept["playback"]["waypoints"], kept["tolerance"]
    fresh = numbers.retime_playback(("waypoints",), played=False)["waypoints"]
    assert fresh["points"] == stated["points"]
    assert fresh["effort_factor_joint"] == stated["effort_factor_joint"]
    for key in ("written", "effort_factor"):
        assert fresh[key] == pytest.approx(stated[key], abs=tolerance["ratio"]), key
    assert fresh["after_s"] == pytest.approx(stated["after_s"], abs=tolerance["duration_s"])
    assert fresh["acceleration_excess"] == pytest.approx(stated["acceleration_excess"],
                                                         rel=tolerance["relative"], abs=1e-6)
    assert fresh["written"] <= 1.0 + 1e-3
    assert fresh["effort_factor"] < 1.0  # the playback check tightened one joint


# ------------------------------------------------------------------------ simulation
def test_the_simulation_example_prints_what_its_page_says():
    kept = numbers.load("simulation")["data"]
    fresh, _ = numbers.simulation_output()
    words, values = skeleton(kept["output"])
    fresh_words, fresh_values = skeleton(fresh)
    assert fresh_words == words
    np.testing.assert_allclose(fresh_values, values, rtol=kept["tolerance"], atol=0)
    # the page's claim: the classical estimate ends inconsistent, the true load is not
    margin = float(re.search(r"margin of the estimate (\S+);", fresh).group(1))
    assert margin < 0


# ------------------------------------------------------------------------ weighted bounds
@pytest.mark.parametrize("label", [arm[0] for arm in numbers.WEIGHTED_ARMS])
def test_the_weighted_bounds_table_agrees_with_fresh_searches(label):
    kept = numbers.load("weighted_bounds")["data"]
    urdf, locked = next((u, k) for name, u, k in numbers.WEIGHTED_ARMS if name == label)
    fresh = numbers.weighted_row(urdf, locked)
    stated = kept["rows"][label]
    for key, value in stated.items():
        if key != "elapsed_s":
            assert fresh[key] == pytest.approx(value, rel=kept["tolerance"]), key
    # what the page says of them: the COM block within a factor 2 of the sampled truth
    assert 0.5 <= stated["block_alpha1"] / stated["true_alpha1"] <= 1.0 + 1e-6
    assert 1.0 - 1e-6 <= stated["block_alpha2"] / stated["true_alpha2"] <= 2.0
