"""QoS profiles of the package's topics.

``robot_description`` (depth 1, reliable, transient local, as robot_state_publisher
publishes it) and the latched payload topics, streaming inputs (best effort: a
best-effort subscription matches reliable *and* best-effort publishers, whereas a
reliable one ignores best-effort publishers), events and outputs (reliable; per-sample
outputs as deep as the joint_states queue).
"""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

# ---------------------------------------------------------------------------- QoS
#: Latched state (depth 1, reliable, transient local): a reader that joins late, or a
#: node that restarts, gets the last value at once. ``payload`` in, ``payload_estimate``
#: out; a transient-local reader matches only transient-local writers.
LATCHED_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=1, reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.TRANSIENT_LOCAL)
#: ``robot_description``: as robot_state_publisher publishes and MoveIt subscribes it.
ROBOT_DESCRIPTION_QOS = LATCHED_QOS


def stream_qos(depth: int, reliable: bool = False) -> QoSProfile:
    """QoS of a stream, ``depth`` deep: best effort unless ``reliable``.

    Streaming inputs (joint_states, Θ, Ψ) are best effort by default. The per-sample
    outputs (τ, contacts, Θ̂) are reliable and as deep as the node's joint_states queue:
    a reliable writer only 10 deep overwrites what a reader that lags by more than 10
    samples has not yet acknowledged.
    """
    return QoSProfile(
        history=HistoryPolicy.KEEP_LAST, depth=depth,
        reliability=ReliabilityPolicy.RELIABLE if reliable else ReliabilityPolicy.BEST_EFFORT,
        durability=DurabilityPolicy.VOLATILE)


#: Events (payload, reference), one-off outputs and diagnostics: reliable, volatile,
#: depth 10.
RELIABLE_QOS = QoSProfile(
    history=HistoryPolicy.KEEP_LAST, depth=10, reliability=ReliabilityPolicy.RELIABLE,
    durability=DurabilityPolicy.VOLATILE)
