"""The launch file's bring-up without launch_ros: the node executables as subprocesses.

``launch/tv_dynamics.launch.py`` needs launch_ros, which exists only in a ROS 2 install.
This module starts the same nodes with the same parameters: every node gets
``--params-file <config>`` (default: config/tv_dynamics.yaml), then
``-p urdf_path:=<urdf>`` when a URDF is given, and ``-r __ns:=<namespace>``::

    python -m robot_tv_dynamics.ros.bringup --urdf arm.urdf [--use-sim] [--estimate]
        [--config FILE] [--namespace NS] [--joint-states TOPIC]
        [--robot-description TOPIC] [--use-sim-time] [--params-file FILE]
        [--locked-joints A,B] [--log-level LEVEL]

The cell options (:class:`~robot_tv_dynamics.ros.cell.CellOptions`) are the launch
file's arguments of the same names: remaps of ``joint_states`` and
``robot_description``, ``use_sim_time``, a parameter file after the config (per-node
blocks), ``locked_joints`` and the log level, for every node.

It runs until Ctrl-C, SIGTERM or SIGHUP (then stops the nodes with one SIGINT each and
returns 0 if they all exit 0) or until a node exits (then stops the others and returns
that node's exit code; a node killed by a signal counts as 128 + the signal). The nodes
run as ``<python> -m robot_tv_dynamics.ros.<executable>``, so no colcon install is needed.

**Process groups.** Every node starts in its own session (process group), so a
terminal's Ctrl-C (sent to the foreground group) reaches only the bring-up, which then
signals each node once (again after :data:`RESIGNAL_S` if it still runs: a node's
handlers only record a repeat). A node gets the bring-up's
pid in ``ROBOT_TV_DYNAMICS_PARENT_PID`` and exits by itself when the bring-up is gone,
even after a SIGKILL (:mod:`robot_tv_dynamics.ros.node_base`); :meth:`BringUp.stop`
kills the group of a node that does not exit within the timeout.

The launch file and this module derive the parameters of every node the same way
(:func:`node_parameter_sources`): the config file, then ``urdf_path`` only when a URDF
is given, so a ``urdf_path`` set in the config file is kept otherwise.

The demo (:mod:`robot_tv_dynamics.ros.demo`) starts its own set of nodes with the same
pieces: :func:`node_command` (with a node ``name``, ``parameters`` and ``remaps``) and
:class:`BringUp` (with a log file per node and :meth:`BringUp.wait_for_output`).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from robot_tv_dynamics.exceptions import BringUpError, InvalidInputError
from robot_tv_dynamics.paths import package_config_dir
from robot_tv_dynamics.ros.cell import LOG_LEVELS, CellOptions

#: Seconds after which :meth:`BringUp.stop` repeats the SIGINT to a node still running.
RESIGNAL_S = 1.0
#: Environment variable naming the process a node must not outlive (node_base reads it).
PARENT_ENV = "ROBOT_TV_DYNAMICS_PARENT_PID"
#: Set in every started node's environment unless given there: one BLAS thread each.
#: The nodes' matrices are small (N×N, 6N×nv), and several nodes on few cores would
#: otherwise each keep a pool of OpenBLAS threads competing for the same cores. Only the
#: children a bring-up starts get it; importing a module of the package sets nothing.
CHILD_ENV_DEFAULTS = {"OPENBLAS_NUM_THREADS": "1"}
#: The environment variables that name a Fast DDS XML profile file (Fast DDS 2 reads the
#: first, 3 the second); a bring-up sets both to :data:`DISCOVERY_PROFILE` when neither is
#: set.
PROFILE_ENV = ("FASTRTPS_DEFAULT_PROFILES_FILE", "FASTDDS_DEFAULT_PROFILES_FILE")
#: The package's Fast DDS discovery profile (config/): start-up announcements for 1 s and
#: one every second after, instead of every 3 s: a participant whose first exchange with
#: another was missed is found within a second, not 3.
DISCOVERY_PROFILE = "fastdds_discovery.xml"

PACKAGE = "robot_tv_dynamics"
#: Executables started always, and the one ``use_sim`` adds (as in the launch file).
NODES = ("dynamics_node", "monitor_node", "markers_node")
SIM_NODE = "sim_node"
#: The one ``estimate`` adds; with ``use_sim`` its outputs go under ``estimated/``.
ESTIMATOR_NODE = "estimator_node"
ESTIMATOR_OUTPUTS = ("inertial_parameters_stamped", "inertial_parameters",
                     "inertial_parameter_rates", "payload_estimate")
#: Several monitor_node instances in one process (one interpreter, one DDS participant).
MONITOR_GROUP = "monitor_group"
#: sim_node's ``controller`` values (its CONTROLLER_CHOICES, written out so that this
#: module stays free of the core's imports; a test keeps the two equal).
SIM_CONTROLLERS = ("adaptive", "none", "trajectory", "slotine-li", "natural", "projected",
                   "computed-torque")


def _scenario_names() -> list[str]:
    """The built-in loading processes: the files of config/loading (no model import)."""
    return sorted(path.stem for path in (package_config_dir() / "loading").glob("*.yaml"))


def default_config() -> Path:
    """config/tv_dynamics.yaml: the source tree, the ament share or the package data.

    The lookup order is :func:`robot_tv_dynamics.paths.package_config_dir`'s; a pip
    install needs no ``AMENT_PREFIX_PATH``.
    """
    return package_config_dir() / "tv_dynamics.yaml"


def node_parameter_sources(config: str | Path, urdf: str | None,
                           params_file: str = "") -> list[object]:
    """What every node's parameters come from, in order (later entries override).

    The same rule as the launch file's ``parameters``: the config file, the cell's
    ``params_file`` when given, then ``{"urdf_path": urdf}`` only when a URDF is given
    (None or ""), so that a ``urdf_path`` in a file is not overridden by an empty default.
    """
    sources: list[object] = [str(config)]
    if params_file:
        sources.append(os.path.abspath(params_file))
    if urdf:
        sources.append({"urdf_path": os.path.abspath(urdf)})
    return sources


def exit_status(code: int) -> int:
    """A child's exit code as a shell reports it: 128 + N for "killed by signal N"."""
    return 128 - code if code < 0 else code


def _yaml_string(text: str) -> str:
    """A YAML single-quoted string (``-p name:=value`` values are parsed as YAML)."""
    return "'" + text.replace("'", "''") + "'"


def parameter_value(value: bool | int | float | str | list[str]) -> str:
    """A parameter value as ``-p name:=value`` takes it (strings stay strings)."""
    if isinstance(value, list):
        return "[" + ", ".join(_yaml_string(str(item)) for item in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return _yaml_string(value)
    return str(value)


def node_command(
    executable: str,
    *,
    urdf: str | None = None,
    config: str | Path | None = None,
    namespace: str = "",
    python: str = sys.executable,
    ros_args: Sequence[str] = (),
    name: str | None = None,
    parameters: Mapping[str, bool | int | float | str] | None = None,
    remaps: Mapping[str, str] | None = None,
    cell: CellOptions | None = None,
) -> list[str]:
    """The command line that starts one node like the launch file does.

    Args:
        executable: ``dynamics_node``, ``monitor_node`` or ``sim_node``.
        urdf: URDF file passed as ``urdf_path`` (None: the robot_description topic).
        config: parameter file (None: :func:`default_config`).
        namespace: namespace of the node and its relative topics ("" = root).
        python: interpreter (the venv's: it must import rclpy).
        ros_args: more ``--ros-args`` arguments (e.g. ``["-p", "publish_rate:=10.0"]``).
        name: node name (None: ``executable``), e.g. to run two monitor nodes.
        parameters: ``-p name:=value`` overrides, after the file and the URDF.
        remaps: ``-r from:=to`` topic remappings.
        cell: the cell's remaps, parameter file, parameters and log level (None: none).

    Returns:
        argv for :class:`subprocess.Popen`.
    """
    return ([python, "-m", f"{PACKAGE}.ros.{executable}", "--ros-args",
             "-r", f"__node:={name or executable}"]
            + _ros_arguments(urdf, config, namespace, parameters, remaps, cell)
            + list(ros_args))


def _ros_arguments(
    urdf: str | None, config: str | Path | None, namespace: str,
    parameters: Mapping[str, bool | int | float | str] | None,
    remaps: Mapping[str, str] | None, cell: CellOptions | None = None,
) -> list[str]:
    """The ``--ros-args`` of :func:`node_command` after the node name, in that order.

    Namespace; the files and ``urdf_path`` (:func:`node_parameter_sources`); the cell's
    parameters, then ``parameters``; the cell's remaps, then ``remaps``; the log level.
    """
    config = default_config() if config is None else Path(config)
    cell = cell if cell is not None else CellOptions()
    arguments: list[str] = []
    if namespace.strip("/"):
        arguments += ["-r", f"__ns:=/{namespace.strip('/')}"]
    for source in node_parameter_sources(config, urdf, cell.params_file):
        if isinstance(source, dict):
            for key, value in source.items():
                arguments += ["-p", f"{key}:={parameter_value(value)}"]
        else:
            arguments += ["--params-file", str(source)]
    for key, value in {**cell.parameters(), **(parameters or {})}.items():
        arguments += ["-p", f"{key}:={parameter_value(value)}"]  # type: ignore[arg-type]
    for old, new in {**cell.remappings(), **(remaps or {})}.items():
        arguments += ["-r", f"{old}:={new}"]
    return arguments + cell.log_arguments()


@dataclass(frozen=True)
class MonitorMember:
    """One monitor of a ``monitor_group`` process (:mod:`robot_tv_dynamics.ros.monitor_group`).

    Attributes:
        name: its node name (unique in the group), e.g. ``monitor_classical``.
        watch: the namespace of the Θ(t) it watches, relative to the group's, e.g.
            ``estimates/classical``: its ``inertial_parameters``,
            ``inertial_parameter_rates``, ``consistency`` and their stamped forms are
            remapped under it and its
            ``status_prefix`` is it. "" = the group's own topics (as one monitor_node).
    """

    name: str
    watch: str = ""

    @classmethod
    def parse(cls, text: str) -> MonitorMember:
        """``NAME`` or ``NAME=NAMESPACE`` (the ``--monitor`` argument of monitor_group).

        Raises:
            InvalidInputError: an empty name, or a name or namespace that is not a ROS
                name (letters, digits, ``_``; namespaces also ``/``).
        """
        name, _, watch = text.partition("=")
        name, watch = name.strip(), watch.strip().strip("/")
        if not _ROS_NAME.fullmatch(name):
            raise InvalidInputError(
                "--monitor", f'"{text}": the node name "{name}" must be letters, digits and '
                "_, not starting with a digit (NAME or NAME=NAMESPACE)")
        if watch and not all(_ROS_NAME.fullmatch(part) for part in watch.split("/")):
            raise InvalidInputError(
                "--monitor", f'"{text}": the namespace "{watch}" must be ROS names separated '
                "by / (NAME or NAME=NAMESPACE)")
        return cls(name, watch)

    def spec(self) -> str:
        """The ``--monitor`` argument that :meth:`parse` reads back."""
        return f"{self.name}={self.watch}" if self.watch else self.name


#: A ROS name token (node names, namespace parts).
_ROS_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def monitor_group_command(
    members: Sequence[MonitorMember],
    *,
    urdf: str | None = None,
    config: str | Path | None = None,
    namespace: str = "",
    python: str = sys.executable,
    parameters: Mapping[str, bool | int | float | str] | None = None,
    ros_args: Sequence[str] = (),
) -> list[str]:
    """The command line of one process running several monitors (``monitor_group``).

    The arguments mean what they mean for :func:`node_command`; ``parameters`` and
    ``ros_args`` apply to every member (a parameter file with the key ``/**/<member>``
    to one).

    Raises:
        InvalidInputError: no member, or two with the same name.
    """
    names = [member.name for member in members]
    if not names or len(set(names)) != len(names):
        raise InvalidInputError("members", f"need one or more distinct names, got {names}")
    command = [python, "-m", f"{PACKAGE}.ros.{MONITOR_GROUP}"]
    for member in members:
        command += ["--monitor", member.spec()]
    return (command + ["--ros-args"]
            + _ros_arguments(urdf, config, namespace, parameters, None) + list(ros_args))


def child_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` with the bring-up's defaults where it does not set them.

    :data:`CHILD_ENV_DEFAULTS` (one BLAS thread), and the package's Fast DDS discovery
    profile in both :data:`PROFILE_ENV` variables unless one of them is set (a user's own
    profile wins whole: the two files are not merged).
    """
    environment = {**CHILD_ENV_DEFAULTS, **env}
    if not any(environment.get(name) for name in PROFILE_ENV):
        profile = str(package_config_dir() / DISCOVERY_PROFILE)
        environment.update(dict.fromkeys(PROFILE_ENV, profile))
    return environment


#: The discovery range of a run that is whole on this host (the demo): its own, whatever
#: the user's ROS_AUTOMATIC_DISCOVERY_RANGE says (a bring-up for a real cell keeps the
#: user's, so that a driver on another host is reached).
LOCAL_DISCOVERY = {"ROS_AUTOMATIC_DISCOVERY_RANGE": "LOCALHOST"}


def use_local_discovery() -> None:
    """This process's participants, and the children it starts, discover on this host only.

    For the demo, whose nodes all run here: call it before the first ``rclpy.init``.
    ``ROS_STATIC_PEERS`` is dropped as well (it would reach other hosts).
    """
    os.environ.update(LOCAL_DISCOVERY)
    os.environ.pop("ROS_STATIC_PEERS", None)


def use_discovery_profile() -> str | None:
    """Give this process the discovery profile of :func:`child_environment`, if unset.

    For a process that is itself a participant beside the nodes (the demo's recorder):
    call it before the process's first ``rclpy.init`` (Fast DDS reads the file once).

    Returns:
        The profile's path if it was set here, else None (one was set already).
    """
    if any(os.environ.get(name) for name in PROFILE_ENV):
        return None
    profile = str(package_config_dir() / DISCOVERY_PROFILE)
    os.environ.update(dict.fromkeys(PROFILE_ENV, profile))
    return profile


@dataclass
class BringUp:
    """The running node processes.

    Attributes:
        processes: node name → process.
        logs: directory of one log file per node, ``<name>.log`` with its stdout and
            stderr (None: the output goes where :meth:`start` is told).
        killed: the nodes :meth:`stop` had to kill (SIGKILL after the grace period), in
            order; each is also named on stderr.
    """

    processes: dict[str, subprocess.Popen] = field(default_factory=dict)
    logs: Path | None = None
    killed: list[str] = field(default_factory=list)
    _signalled: set[int] = field(default_factory=set, repr=False)

    def start(self, name: str, command: Sequence[str],
              env: Mapping[str, str] | None = None, **popen: object) -> subprocess.Popen:
        """Start one node process under ``name``.

        Args:
            name: key in :attr:`processes` (and the log file's name).
            command: argv, e.g. from :func:`node_command`.
            env: environment of the node (None: this process's).
            **popen: more :class:`subprocess.Popen` arguments (with :attr:`logs`, not
                ``stdout``/``stderr``).

        The process starts in its own session (``start_new_session``, unless ``popen``
        says otherwise) with :data:`~robot_tv_dynamics.ros.node_base.PARENT_ENV` set to
        this process's pid and :func:`child_environment`'s defaults where the environment
        does not set them; a node of the package (:func:`is_package_node`) starts with
        SIGINT ignored, until its first import installs the package's handlers
        (:mod:`robot_tv_dynamics.ros.early_stop`), so that a stop in the first milliseconds
        cannot kill it (:meth:`stop` repeats the SIGINT).

        Returns:
            The started process.
        """
        environment = child_environment(dict(env) if env is not None else dict(os.environ))
        environment[PARENT_ENV] = str(os.getpid())
        popen.setdefault("start_new_session", True)
        if is_package_node(command):  # a SIGINT before its handlers exist would kill it
            popen.setdefault("preexec_fn", _ignore_sigint)
        if self.logs is not None:
            with self.log(name).open("wb") as log:  # the child keeps its own descriptor
                process = subprocess.Popen(  # type: ignore[call-overload]
                    list(command), env=environment, stdout=log, stderr=subprocess.STDOUT,
                    **popen)
        else:
            process = subprocess.Popen(
                list(command), env=environment, **popen)  # type: ignore[call-overload]
        self.processes[name] = process
        return process

    def log(self, name: str) -> Path:
        """The log file of node ``name`` (only with :attr:`logs`)."""
        if self.logs is None:
            raise BringUpError(f"no log directory: the output of {name} is not kept")
        return self.logs / f"{name}.log"

    def wait_for_output(self, names: Sequence[str], text: str = "ready",
                        timeout: float = 120.0) -> None:
        """Wait until the log of every node in ``names`` contains ``text``.

        The nodes log "ready: ..." once their model is loaded and their topics exist
        (the dynamics node before the Jacobian extremes γ, δ when it computes them).

        Raises:
            BringUpError: a node exited first, or ``timeout`` [s] passed; the nodes keep
                running (:meth:`stop` them).
        """
        deadline = time.monotonic() + timeout
        for name in names:
            log = self.log(name)
            while text not in log.read_text(errors="replace"):
                if self.processes[name].poll() is not None or time.monotonic() > deadline:
                    raise BringUpError(f"{name} did not start; see {log}")
                time.sleep(0.1)

    def poll(self) -> tuple[str, int] | None:
        """(name, exit code) of the first node that has exited, or None."""
        for name, process in self.processes.items():
            code = process.poll()
            if code is not None:
                return name, code
        return None

    def stop(self, timeout: float = 10.0) -> dict[str, int]:
        """SIGINT every node, wait up to ``timeout`` s, then kill; the exit codes.

        A node still running :data:`RESIGNAL_S` after its SIGINT gets it again (a node
        signalled in the first milliseconds of its interpreter, before its handlers
        exist, does not see it: :meth:`start` makes it ignore SIGINT until then; a node
        already stopping only records a repeat). A node still running after ``timeout``
        (its grace period) is killed with its whole process group (SIGKILL), named on
        stderr and added to :attr:`killed`. Idempotent.
        """
        pending = {name: p for name, p in self.processes.items() if p.poll() is None}
        for process in pending.values():
            if process.pid not in self._signalled:
                self._signalled.add(process.pid)
                _interrupt(process)
        now = time.monotonic()
        deadline, resignal = now + timeout, now + RESIGNAL_S
        while pending and time.monotonic() < deadline:
            pending = {name: p for name, p in pending.items() if p.poll() is None}
            if pending and time.monotonic() >= resignal:
                resignal += RESIGNAL_S
                for process in pending.values():
                    _interrupt(process)
            time.sleep(0.02)
        for name, process in pending.items():
            if process.poll() is not None:
                continue
            print(f"bringup: {name} (pid {process.pid}) did not stop within {timeout:g} s "
                  "of its SIGINT; killing its process group (SIGKILL)", file=sys.stderr)
            _kill_group(process)
            self.killed.append(name)
        return {name: process.wait() for name, process in self.processes.items()}


def _interrupt(process: subprocess.Popen) -> None:
    """SIGINT ``process`` unless it has exited."""
    try:
        process.send_signal(signal.SIGINT)
    except ProcessLookupError:  # exited meanwhile
        pass


def _ignore_sigint() -> None:
    """In a node before its ``exec``: SIGINT ignored until the node installs its handlers."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def is_package_node(command: Sequence[str]) -> bool:
    """Whether ``command`` runs an executable of the package (it installs SIGINT handlers)."""
    argv = list(command)
    if "-m" in argv[:-1]:
        return argv[argv.index("-m") + 1].startswith(f"{PACKAGE}.ros.")
    return bool(argv) and os.path.basename(argv[0]).endswith("_node")


def _kill_group(process: subprocess.Popen) -> None:
    """SIGKILL ``process`` and, if it leads its own process group, the group."""
    try:
        if os.getpgid(process.pid) == process.pid:
            os.killpg(process.pid, signal.SIGKILL)
            return
    except (ProcessLookupError, PermissionError):
        pass
    try:
        process.kill()
    except ProcessLookupError:
        pass


def node_commands(
    urdf: str | None = None,
    *,
    use_sim: bool = False,
    estimate: bool = False,
    config: str | Path | None = None,
    namespace: str = "",
    python: str = sys.executable,
    ros_args: Sequence[str] = (),
    scenario: str = "",
    link: str = "",
    controller: str = "",
    cell: CellOptions | None = None,
) -> dict[str, list[str]]:
    """Node name → command line, as the launch file starts them (see :func:`bring_up`).

    With ``estimate`` and ``use_sim`` the estimator's outputs are remapped under
    ``estimated/`` (the simulator publishes the true Θ on ``inertial_parameters_stamped``);
    ``scenario``, ``link`` and ``controller`` set sim_node's ``loading``, ``load_link`` and
    ``controller`` when given.

    Raises:
        BringUpError: ``controller`` is not one of sim_node's, or given without ``use_sim``.
    """
    check_controller(controller, use_sim)
    sim = {k: v for k, v in (("loading", scenario), ("load_link", link),
                             ("controller", controller)) if v}
    names = NODES + ((SIM_NODE,) if use_sim else ()) + ((ESTIMATOR_NODE,) if estimate else ())
    commands = {}
    for name in names:
        remaps = ({topic: f"estimated/{topic}" for topic in ESTIMATOR_OUTPUTS}
                  if name == ESTIMATOR_NODE and use_sim else None)
        commands[name] = node_command(name, urdf=urdf, config=config, namespace=namespace,
                                      python=python, ros_args=ros_args, remaps=remaps,
                                      parameters=sim if name == SIM_NODE else None, cell=cell)
    return commands


def check_controller(controller: str, use_sim: bool) -> None:
    """Refuse a sim_node ``controller`` that is not one of :data:`SIM_CONTROLLERS`.

    Raises:
        BringUpError: an unknown name, or a controller without ``use_sim``.
    """
    if not controller:
        return
    if controller not in SIM_CONTROLLERS:
        raise BringUpError(f"unknown controller {controller!r}; sim_node takes "
                           f"{', '.join(SIM_CONTROLLERS)}")
    if not use_sim:
        raise BringUpError(f"controller {controller!r} is sim_node's: give --use-sim too")


def bring_up(
    urdf: str | None = None,
    *,
    use_sim: bool = False,
    config: str | Path | None = None,
    namespace: str = "",
    python: str = sys.executable,
    env: Mapping[str, str] | None = None,
    ros_args: Sequence[str] = (),
    scenario: str = "",
    link: str = "",
    estimate: bool = False,
    controller: str = "",
    cell: CellOptions | None = None,
    **popen: object,
) -> BringUp:
    """Start dynamics_node, monitor_node and markers_node (and sim_node if ``use_sim``).

    Args:
        urdf: URDF file for every node (None: the robot_description topic).
        use_sim: also start ``sim_node``.
        estimate: also start ``estimator_node`` (outputs under ``estimated/`` with
            ``use_sim``, as the launch file does).
        config: parameter file (None: config/tv_dynamics.yaml).
        namespace: namespace of every node.
        python: interpreter of the nodes.
        env: environment of the nodes (None: this process's).
        ros_args: extra ``--ros-args`` arguments for every node.
        scenario: sim_node's loading process (``loading``; "": the config file's), as
            ``robot-tv-dynamics demo --scenario``.
        link: sim_node's ``load_link`` ("": the file's link, else the tool flange), as
            ``demo --link``.
        controller: sim_node's ``controller`` ("": the config file's), one of
            :data:`SIM_CONTROLLERS`, as ``demo --controller``.
        cell: remaps, ``use_sim_time``, a parameter file, ``locked_joints`` and the log
            level of every node (:class:`~robot_tv_dynamics.ros.cell.CellOptions`).
        **popen: more :class:`subprocess.Popen` arguments (e.g. ``stdout``).

    Returns:
        The running :class:`BringUp`.

    Raises:
        BringUpError: the config file or a node module is missing, or ``controller`` is
            not one of sim_node's.
    """
    config = default_config() if config is None else Path(config)
    if not config.is_file():
        raise BringUpError(f"config file {config} does not exist")
    if urdf is not None and not os.path.isfile(urdf):
        raise BringUpError(f"URDF file {urdf} does not exist")
    commands = node_commands(urdf, use_sim=use_sim, estimate=estimate, config=config,
                             namespace=namespace, python=python, ros_args=ros_args,
                             scenario=scenario, link=link, controller=controller, cell=cell)
    for name in commands:
        if importlib.util.find_spec(f"{PACKAGE}.ros.{name}") is None:
            raise BringUpError(f"node module {PACKAGE}.ros.{name} is not available")
    started = BringUp()
    try:
        for name, command in commands.items():
            started.start(name, command, env=env, **popen)
    except BaseException:
        started.stop()
        raise
    return started


def main(argv: Sequence[str] | None = None) -> int:
    """Command line: start the nodes and wait for a stop signal or a node exit.

    SIGINT, SIGTERM and SIGHUP are recorded (never raised), at start-up too; then every
    node gets one SIGINT. Exit code 0 for a requested stop whose nodes all exit 0, else
    the first failing node's code (128 + N for a node killed by signal N).
    """
    parser = argparse.ArgumentParser(
        prog="python -m robot_tv_dynamics.ros.bringup",
        description="Start dynamics_node, monitor_node and markers_node (and sim_node) like "
                    "launch/tv_dynamics.launch.py, without launch_ros.")
    parser.add_argument("--urdf", help="URDF file (default: the config file's urdf_path, "
                                       "else the robot_description topic)")
    parser.add_argument("--use-sim", action="store_true", help="also start sim_node")
    parser.add_argument("--estimate", action="store_true",
                        help="also start estimator_node (outputs under estimated/ with "
                             "--use-sim)")
    parser.add_argument("--config", help="parameter file (default: config/tv_dynamics.yaml)")
    parser.add_argument("--namespace", default="", help="namespace of every node")
    parser.add_argument("--scenario", default="",
                        help="with --use-sim: loading process, "
                             f"{', '.join(_scenario_names())}, none or a YAML file "
                             "(default: the config file's)")
    parser.add_argument("--link", default="",
                        help="with --use-sim: URDF link the load is on (default: the "
                             "scenario's link when the URDF has it, else the tool flange)")
    parser.add_argument("--controller", default="",
                        help="with --use-sim: sim_node's controller, "
                             f"{', '.join(SIM_CONTROLLERS)} (default: the config file's)")
    cell = parser.add_argument_group("cell (the launch file's arguments of the same names)")
    cell.add_argument("--joint-states", default="joint_states", metavar="TOPIC",
                      help="the joint_states topic of the arm (default joint_states)")
    cell.add_argument("--robot-description", default="robot_description", metavar="TOPIC",
                      help="the URDF topic (default robot_description)")
    cell.add_argument("--use-sim-time", action="store_true",
                      help="every node's clock is /clock (a bag replayed with --clock)")
    cell.add_argument("--params-file", default="", metavar="FILE",
                      help="a parameter file after the config (per-node /**/<node> blocks)")
    cell.add_argument("--locked-joints", default="", metavar="A,B",
                      help='joints made fixed in every node, "name" or "name=position"')
    cell.add_argument("--log-level", default="info", choices=LOG_LEVELS,
                      help="every node's log level")
    args = parser.parse_args(argv)
    requested: list[str] = []

    def record(signum: int, frame: object) -> None:
        requested.append(signal.Signals(signum).name)

    previous = {signum: signal.signal(signum, record)
                for signum in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)}
    try:
        return _run(args, requested)
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)


def _run(args: argparse.Namespace, requested: list[str]) -> int:
    try:
        cell = CellOptions(args.joint_states, args.robot_description, args.use_sim_time,
                           args.params_file, CellOptions.parse_joints(args.locked_joints),
                           args.log_level)
        running = bring_up(args.urdf, use_sim=args.use_sim, config=args.config,
                           namespace=args.namespace, scenario=args.scenario, link=args.link,
                           estimate=args.estimate, controller=args.controller, cell=cell)
    except (BringUpError, InvalidInputError) as error:
        print(f"bringup: {error}", file=sys.stderr)
        return 1
    print("bringup: started " + ", ".join(
        f"{name} (pid {p.pid})" for name, p in running.processes.items()), file=sys.stderr)
    try:
        while not requested and (exited := running.poll()) is None:
            time.sleep(0.05)
    finally:  # whatever ends the wait, no node is left behind
        codes = running.stop()
    if requested or exited is None:  # the loop ends on a request or an exit
        killed = f"; killed {', '.join(running.killed)}" if running.killed else ""
        reason = requested[0] if requested else "stop"
        print(f"bringup: {reason}: stopped the nodes, exit codes {codes}{killed}",
              file=sys.stderr)
        failed = [exit_status(code) for code in codes.values() if code != 0]
        return failed[0] if failed else 0
    name, code = exited
    print(f"bringup: {name} exited with code {code}; stopped the others", file=sys.stderr)
    return exit_status(code)


if __name__ == "__main__":
    raise SystemExit(main())
