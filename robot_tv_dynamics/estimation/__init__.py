"""Online payload estimation: one link's load from measured joint efforts.

- :mod:`~.interface`: the :class:`PayloadEstimator` protocol every method implements;
- :mod:`~.rls`: recursive least squares with forgetting, classical and projected onto
  the uniform band {ε I ⪯ f(Φ) ⪯ β I} (Definition 3);
- :mod:`~.projection`: that projection in the estimator's metric P⁻¹ (a small SDP, solved
  to a certified duality gap);
- :mod:`~.geometric`: an EKF on log-Cholesky parameters of f(Φ) − ε I, consistent by
  construction, with a rate model (Θ̇̂);
- :mod:`~.measurement`: regressor rows and the load body's torque share from efforts;
- :mod:`~.excitation`: the excitation check that holds the estimate;
- :mod:`~.online`: the live pipeline (q̈ by the shared input rules, delay alignment).

docs/estimation.md explains the methods and their parameters.
"""

from robot_tv_dynamics.estimation.excitation import ExcitationCheck, ExcitationConfig
from robot_tv_dynamics.estimation.geometric import GeometricConfig, GeometricEKF
from robot_tv_dynamics.estimation.interface import PayloadEstimator
from robot_tv_dynamics.estimation.measurement import (
    LoadMeasurement,
    PayloadMeasurement,
    payload_measurement,
)
from robot_tv_dynamics.estimation.online import (
    METHODS,
    LoadEstimate,
    LoadEstimatorSettings,
    OnlineLoadEstimator,
    load_estimate,
    make_estimator,
)
from robot_tv_dynamics.estimation.projection import MetricProjection, project_in_metric
from robot_tv_dynamics.estimation.rls import EstimatorConfig, RecursiveLeastSquares

__all__ = [
    "METHODS",
    "EstimatorConfig",
    "ExcitationCheck",
    "ExcitationConfig",
    "GeometricConfig",
    "GeometricEKF",
    "LoadEstimate",
    "LoadEstimatorSettings",
    "LoadMeasurement",
    "MetricProjection",
    "OnlineLoadEstimator",
    "PayloadEstimator",
    "PayloadMeasurement",
    "RecursiveLeastSquares",
    "load_estimate",
    "make_estimator",
    "project_in_metric",
    "payload_measurement",
]
