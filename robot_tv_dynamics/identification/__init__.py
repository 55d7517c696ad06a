"""Identification of Θ and joint friction from measured joint data.

One concept per module: :mod:`.data` (bag/CSV reading, zero-phase filtering),
:mod:`.regressor` (stacked regressors), :mod:`.solve` (least squares subject to
f(Φ_l) ⪰ εI), :mod:`.excitation` (Fourier trajectories), :mod:`.urdf_writer` (identified
``<inertial>`` elements), :mod:`.pipeline` (fit, hold-out, metrics), :mod:`.report`
(summary and plot) and :mod:`.progress` (stderr progress bar); the friction model and
its file are :mod:`robot_tv_dynamics.friction`; the CLI subcommands ``identify`` and
``excite`` are in :mod:`robot_tv_dynamics.cli`. No rclpy.
"""
