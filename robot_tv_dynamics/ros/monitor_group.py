r"""monitor_group: several monitor_node instances in one process, on one executor.

Watching four Θ streams (the true Θ and three estimates, as the demo does) with four
``monitor_node`` processes costs four Python interpreters and four DDS participants;
this executable runs the same :class:`~robot_tv_dynamics.ros.monitor_node.MonitorNode`
four times in one process (one interpreter, one participant, one executor)::

    python -m robot_tv_dynamics.ros.monitor_group --monitor monitor_truth \
        --monitor monitor_classical=estimates/classical --ros-args \
        --params-file config/tv_dynamics.yaml -p urdf_path:=arm.urdf

Each ``--monitor NAME[=NAMESPACE]`` is one node named NAME. With a NAMESPACE (relative
to the process's namespace) its ``inertial_parameters``, ``inertial_parameter_rates``,
``consistency`` and their stamped forms are remapped under it (:data:`WATCHED_TOPICS`) and its
``status_prefix`` is NAMESPACE, so its statuses on the shared ``/diagnostics`` read
``NAMESPACE: <body>``; without, it watches the process's own topics. Every member is the
node ``monitor_node`` runs, with the same parameters, topics and diagnostics as that node
started alone with the same name, remaps and ``status_prefix``. The ``--ros-args`` apply
to every member; a parameter-file key ``/**/NAME`` to one (rcl's ``-p NAME:parameter:=``
matches a node in the root namespace only). No ``--monitor``: one member
``monitor_node`` on the process's topics, which is ``monitor_node`` itself.

The process logs each member's ``ready:`` line, then ``[monitor_group]: ready: all N
monitors`` once all are built, and stops like every node (SIGINT, SIGTERM, SIGHUP or the
bring-up's exit: :func:`robot_tv_dynamics.ros.node_base.run_nodes`). A member that
cannot start (no URDF, a bad parameter) stops the whole process with exit code 1.
``monitor_node`` stays runnable alone, as before.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from rclpy.node import Node
from rclpy.utilities import remove_ros_args

from robot_tv_dynamics.exceptions import InvalidInputError
from robot_tv_dynamics.ros import node_base
from robot_tv_dynamics.ros.bringup import MONITOR_GROUP, MonitorMember, parameter_value
from robot_tv_dynamics.ros.monitor_node import NODE_NAME, MonitorNode

#: The relative topics of a monitor that a member watching a namespace has under it.
WATCHED_TOPICS = ("inertial_parameters", "inertial_parameter_rates", "consistency",
                  "inertial_parameters_stamped", "consistency_stamped")


def member_arguments(member: MonitorMember) -> list[str]:
    """The member's own ``--ros-args`` (they take precedence over the process's).

    ``-r __node:=NAME``; with a watched namespace, the remaps of :data:`WATCHED_TOPICS`
    under it and ``-p status_prefix:=<namespace>``.
    """
    arguments = ["--ros-args", "-r", f"__node:={member.name}"]
    if member.watch:
        for topic in WATCHED_TOPICS:
            arguments += ["-r", f"{topic}:={member.watch}/{topic}"]
        arguments += ["-p", f"status_prefix:={parameter_value(member.watch)}"]
    return arguments


class _MemberArguments(Node):
    """Below :class:`~robot_tv_dynamics.ros.node_base.ModelNode` in a member's MRO.

    ModelNode calls ``Node.__init__(node_name)``; this class adds the member's own
    arguments (``cli_args``) on the way, leaving monitor_node's code as it is.
    """

    #: set per member by :func:`member_factory`
    cli_arguments: tuple[str, ...] = ()

    def __init__(self, node_name: str, **options: Any) -> None:
        options.setdefault("cli_args", list(self.cli_arguments))
        super().__init__(node_name, **options)


def member_factory(member: MonitorMember) -> Callable[[], MonitorNode]:
    """A constructor of the MonitorNode that ``member`` describes."""

    class GroupMember(MonitorNode, _MemberArguments):
        cli_arguments = tuple(member_arguments(member))

    GroupMember.__name__ = GroupMember.__qualname__ = f"MonitorNode[{member.name}]"
    return GroupMember


def parse_members(specs: Sequence[str]) -> list[MonitorMember]:
    """The ``--monitor`` arguments as members (none: one ``monitor_node``).

    Raises:
        InvalidInputError: a malformed spec, or two members with the same name.
    """
    members = [MonitorMember.parse(spec) for spec in specs] or [MonitorMember(NODE_NAME)]
    names = [member.name for member in members]
    duplicates = sorted({name for name in names if names.count(name) > 1})
    if duplicates:
        raise InvalidInputError("--monitor", f"node names must be distinct, {duplicates} "
                                "appear more than once")
    return members


def main(args: list[str] | None = None) -> int:
    """Run the members until Ctrl-C / SIGTERM; exit code 1 if one cannot start, 2 on usage."""
    argv = list(sys.argv if args is None else args)
    parser = argparse.ArgumentParser(
        prog=MONITOR_GROUP, description="Several monitor_node instances in one process.",
        epilog="--ros-args ... after the options apply to every member.")
    parser.add_argument(
        "--monitor", action="append", default=[], metavar="NAME[=NAMESPACE]",
        help="one monitor node named NAME watching NAMESPACE/inertial_parameters "
             "(default: the process's own); repeat for more")
    options = parser.parse_args(remove_ros_args(argv)[1:])
    try:
        members = parse_members(options.monitor)
    except InvalidInputError as error:
        parser.error(str(error))

    def ready(nodes: list[Node]) -> None:
        rclpy.logging.get_logger(MONITOR_GROUP).info(
            f"ready: all {len(nodes)} monitors "
            f"({', '.join(node.get_name() for node in nodes)}) in one process")

    return node_base.run_nodes([member_factory(m) for m in members], MONITOR_GROUP, argv,
                               on_ready=ready)


if __name__ == "__main__":
    raise SystemExit(main())
