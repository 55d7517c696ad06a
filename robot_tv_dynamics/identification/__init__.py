"""Identification of Θ and joint friction from measured joint data.

One concept per module: :mod:`.data` (bag/CSV reading, zero-phase filtering),
:mod:`.friction` (friction model and file), :mod:`.regressor` (stacked regressors),
:mod:`.solve` (least squares subject to f(Φ_l) ⪰ εI), :mod:`.excitation` (Fourier
trajectories), :mod:`.urdf_writer` (identified ``<inertial>`` elements),
:mod:`.pipeline` (fit, hold-out, metrics), :mod:`.report` (summary and plot),
:mod:`.progress` (stderr progress bar), and the
the CLI subcommands ``identify`` and ``excite`` (:mod:`robot_tv_dynamics.cli`). No rclpy.
"""
