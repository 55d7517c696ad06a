"""Identification recovers a known Θ_true and friction from simulated, noisy data.

Data: Θ_true = the URDF with mass, COM and principal second moments changed by 20–50 %
(still consistent), an exciting trajectory from ``design_excitation``, τ by the package's
eq. (39) (``RobotModel.inverse_dynamics``) + friction + joint-torque noise whose level
differs per joint (0.05 … 0.3 N·m), q̇ recorded with 1e-3 rad/s noise; q̈ is not given
(the pipeline filters q̇). Two periods of 4 s at 250 Hz (as an excitation is run on a
real arm: several periods), the last 20 % held out.

Stated tolerances:
* held-out RMS of every joint ≤ 1.2 × the RMS of the noise actually added there;
* identifiable combinations: the torque Y(q,q̇,q̈)Θ of eq. (39) along the held-out states
  and at 200 random states of the joint box (|q̇| ~ 1 rad/s, |q̈| ~ 1 rad/s²) within 3 %
  resp. 10 % (relative, whole-vector norm) of Θ_true's — the random states test the
  base parameters far from the data;
* the projection of Θ onto the row space of the stacked eq. (44) regressor (SVD over
  random states, rank 43 resp. 36): relative error ≤ 2 %;
* friction: |Δviscous| ≤ 0.1 N·m·s/rad, |Δcoulomb| ≤ 0.1 N·m, |Δoffset| ≤ 0.1 N·m;
* every identified body f(Φ_l) ⪰ εI.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from support.identification_accuracy import make_case, measure

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module", params=["panda", "ur5"])
def measured(request, urdf_paths):
    measured = measure(make_case(request.param, urdf_paths[request.param]))
    print(request.param, measured)
    return request.param, measured


def test_held_out_torques_are_predicted_to_within_1_2_times_the_noise(measured):
    _, found = measured
    assert np.all(np.array(found["held_out_ratio"]) <= 1.2), found["held_out_ratio"]
    # the URDF prior is far off, so this is not trivially satisfied
    assert np.all(np.array(found["urdf_held_out_ratio"]) > 1.5)


def test_identifiable_combinations_of_theta_true_are_recovered(measured):
    _, found = measured
    assert found["torque_error_held_out"] <= 0.03
    assert found["torque_error_random"] <= 0.10
    assert found["torque_error_random"] < 0.5 * found["prior_torque_error_random"]


def test_projection_of_theta_on_the_identifiable_row_space_is_recovered(measured):
    arm, found = measured
    assert found["rank"] == {"panda": 43, "ur5": 36}[arm]
    assert found["projection_error"] <= 0.02
    assert found["projection_error"] < 0.2 * found["prior_projection_error"]


def test_friction_is_recovered(measured):
    _, found = measured
    for key in ("viscous", "coulomb", "offset"):
        assert found["friction_error"][key] <= 0.1, key


def test_every_identified_body_is_uniformly_consistent(measured):
    _, found = measured
    assert np.all(np.array(found["margins"]) >= found["epsilon"] * (1 - 1e-9))
    assert found["solver"] in ("CLARABEL", "SCS")


def test_the_docs_table_is_this_run_within_its_tolerances(measured):
    """docs/identification.md's "Measured" table is what this run measures, within the
    tolerances its fragment states (after a deliberate change of the case:
    ``python scripts/docs_numbers.py identification``)."""
    arm, found = measured
    kept = json.loads((REPO / "docs" / "numbers" / "identification.json").read_text())["data"]
    stated, tolerance = kept["arms"][arm], kept["tolerance"]
    assert found["rank"] == stated["rank"]
    np.testing.assert_allclose(found["held_out_ratio"], stated["held_out_ratio"], rtol=0,
                               atol=tolerance["ratio"])
    for key in ("torque_error_held_out", "torque_error_random", "prior_torque_error_random",
                "projection_error", "prior_projection_error"):
        assert found[key] == pytest.approx(stated[key], rel=tolerance["relative"]), key
    for key, value in stated["friction_error"].items():
        assert found["friction_error"][key] == pytest.approx(
            value, rel=tolerance["relative"], abs=tolerance["friction"]), key
    np.testing.assert_allclose(np.sort(found["margins"])[:2], np.sort(stated["margins"])[:2],
                               rtol=tolerance["relative"])
