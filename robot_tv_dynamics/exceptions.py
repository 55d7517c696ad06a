"""Errors raised by robot_tv_dynamics.

Every error the package raises derives from :class:`RobotTvDynamicsError`, so a
caller (a node, the CLI) can catch one class. Subclasses carry the offending
fields and build a message that names the problem.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence


class RobotTvDynamicsError(Exception):
    """Base class of every error raised by robot_tv_dynamics."""



class URDFError(RobotTvDynamicsError):
    """A URDF could not be read or parsed, or describes no usable arm."""

    def __init__(self, source: str, problem: str) -> None:
        """Build the error.

        Args:
            source: where the URDF came from (a path or "<string>").
            problem: what is wrong with it.
        """
        self.source = source
        self.problem = problem
        super().__init__(f"URDF {source}: {problem}")



class UnsupportedJointError(URDFError):
    """The model contains a joint type the package does not support."""

    def __init__(self, source: str, joint: str, kind: str) -> None:
        """Build the error.

        Args:
            source: where the URDF came from.
            joint: name of the joint.
            kind: Pinocchio's short name of its type.
        """
        self.joint = joint
        self.kind = kind
        super().__init__(
            source,
            f'joint "{joint}" is of type {kind}; only 1-dof revolute, continuous and '
            "prismatic joints of a fixed-base arm are supported (a floating base is not)",
        )



class UnknownNameError(RobotTvDynamicsError):
    """A link, joint or body name is not part of the model."""

    def __init__(self, kind: str, name: str, known: Sequence[str]) -> None:
        """Build the error.

        Args:
            kind: "link", "joint" or "body".
            name: the unknown name.
            known: the names the model has.
        """
        self.kind = kind
        self.name = name
        self.known = list(known)
        plural = "bodies" if kind == "body" else f"{kind}s"
        super().__init__(f'{kind} "{name}" is not in the URDF; {plural}: {self.known}')



class InvalidInputError(RobotTvDynamicsError, ValueError):
    """A numeric argument has the wrong shape or non-finite entries."""

    def __init__(self, argument: str, problem: str) -> None:
        """Build the error.

        Args:
            argument: name of the offending argument.
            problem: what is wrong with it.
        """
        self.argument = argument
        self.problem = problem
        super().__init__(f"{argument}: {problem}")



def check_ranges(settings: object, *, positive: Iterable[str] = (),
                 nonnegative: Iterable[str] = (), unit: str = "") -> None:
    """Check a settings record's fields by name: finite and > 0, or finite and ≥ 0.

    ``positive`` and ``nonnegative`` name the fields; ``unit`` is said after the bound in
    the message (e.g. " s").

    Raises:
        InvalidInputError: the first field out of range, by name.
    """
    for names, op in ((positive, ">"), (nonnegative, ">=")):
        for name in names:
            value = getattr(settings, name)
            if not (math.isfinite(value) and (value > 0 if op == ">" else value >= 0)):
                raise InvalidInputError(name, f"must be {op} 0{unit}, got {value}")


class PhysicalConsistencyError(RobotTvDynamicsError, ValueError):
    """Inertial parameters that must be physical are not (e.g. a negative mass)."""

    def __init__(self, what: str, problem: str) -> None:
        """Build the error.

        Args:
            what: the parameters in question (a link or body name, or an argument).
            problem: what is wrong with them.
        """
        self.what = what
        self.problem = problem
        super().__init__(f"{what}: {problem}")



class BoundsCacheError(RobotTvDynamicsError):
    """The Jacobian-extremes cache directory cannot be written."""

    def __init__(self, path: str, problem: str) -> None:
        """Build the error.

        Args:
            path: the cache file or directory.
            problem: what went wrong.
        """
        self.path = path
        self.problem = problem
        super().__init__(f"bounds cache {path}: {problem}")



class SimulationDivergedError(PhysicalConsistencyError):
    """The integration produced a non-finite state or a singular mass matrix."""

    def __init__(self, t: float, problem: str) -> None:
        """Build the error.

        Args:
            t: simulated time of the failure [s].
            problem: what happened.
        """
        self.t = t
        super().__init__("simulation", f"at t = {t:.4f} s: {problem}")



class DemoError(RobotTvDynamicsError):
    """The demo could not run (a node failed, nothing was recorded, ...)."""



class BringUpError(RobotTvDynamicsError):
    """The bring-up cannot start (a missing config file or node module)."""



class RecordingError(RobotTvDynamicsError):
    """A recorded bag cannot be used (unreadable, a topic missing, no usable sample)."""

    def __init__(self, path: str, problem: str) -> None:
        """Build the error.

        Args:
            path: the bag.
            problem: what is wrong with it.
        """
        self.path = path
        self.problem = problem
        super().__init__(f"bag {path}: {problem}")



class IdentificationDataError(RobotTvDynamicsError, ValueError):
    """Measured joint data cannot be used for identification (missing fields, bad samples)."""

    def __init__(self, source: str, problem: str) -> None:
        """Build the error.

        Args:
            source: where the data came from (a bag or CSV path, or "<arrays>").
            problem: what is wrong with it.
        """
        self.source = source
        self.problem = problem
        super().__init__(f"data {source}: {problem}")



class FrictionFileError(RobotTvDynamicsError, ValueError):
    """A friction parameter file is missing, malformed, or does not match the joints."""

    def __init__(self, path: str, problem: str) -> None:
        """Build the error.

        Args:
            path: the friction YAML file.
            problem: what is wrong with it.
        """
        self.path = path
        self.problem = problem
        super().__init__(f"friction file {path}: {problem}")



class IdentificationSolverError(RobotTvDynamicsError):
    """The constrained least-squares problem could not be solved by any solver tried."""

    def __init__(self, solvers: tuple[str, ...], problem: str) -> None:
        """Build the error.

        Args:
            solvers: the solvers tried, in order.
            problem: what each reported.
        """
        self.solvers = solvers
        self.problem = problem
        super().__init__(f"identification solvers {list(solvers)} failed: {problem}")



class RetimingError(RobotTvDynamicsError):
    """No timing along the given path keeps the limits, or the retiming failed."""

    def __init__(self, problem: str) -> None:
        """Build the error.

        Args:
            problem: what makes the path infeasible or what failed.
        """
        self.problem = problem
        super().__init__(f"retime: {problem}")



class StaticHoldingError(RetimingError):
    """The arm cannot hold some point of the path at rest within an effort limit."""

    def __init__(self, joint: str, ratio: float, limit: float, where: str) -> None:
        """Build the error.

        Args:
            joint: the joint whose static torque exceeds its (scaled) limit.
            ratio: |G_i| / (τ_max,i × margin) at the worst point (> 1).
            limit: the (scaled) limit τ_max,i × margin [N·m or N].
            where: the worst point (waypoint index and position along the path).
        """
        self.joint = joint
        self.ratio = ratio
        self.limit = limit
        self.where = where
        super().__init__(
            f'joint "{joint}" cannot hold the load at rest {where}: the static torque is '
            f"{ratio:.4g}× its limit {limit:.4g} ({100.0 * (ratio - 1.0):.3g} % over); no "
            "timing of this path keeps it within limits (lighten the payload or change the path)")



class RosExtraMissingError(RobotTvDynamicsError):
    """A ROS 2 command runs, but rclpy or a message package is not installed."""

    def __init__(self, command: str, module: str, source: str | None = None) -> None:
        """Build the error.

        Args:
            command: what was started (``dynamics_node``, ``robot-tv-dynamics demo``).
            module: the module that could not be imported (``rclpy``).
            source: the source tree the package runs from, if it does (the ``[ros]``
                extra is installed from there: the package is not on PyPI).
        """
        self.command = command
        self.module = module
        self.source = source
        where = source if source is not None else "<the robot_tv_dynamics source folder>"
        super().__init__(
            f"{command} needs ROS 2 ({module} is not installed): pip install "
            f"'{where}[ros]' (the ros-jazzy-* wheels), or source a ROS 2 install")
