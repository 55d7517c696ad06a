r"""The payloads an arm carries, per link, each from its stamp on.

A payload replaces one link's URDF share of its body's Φ (exact: Φ is linear in the
mass distribution), so each is held as its Φ about the link frame and its change to Θ,
ΔΘ (N, 10). One received with no stamp, or stamped at or before the newest joint
sample, is *settled*: every later sample takes it. One stamped after the newest sample
is *pending* until a sample reaches its stamp; the samples before keep what they had (a
later-stamped payload of a link replaces an earlier one at its stamp, whatever the
arrival order).

:class:`PayloadSchedule` is immutable: every change returns a new schedule, so a holder
rolls back by keeping the old one (:meth:`~robot_tv_dynamics.inputs.state.ModelInputs.
transaction`). With nothing pending, :attr:`PayloadSchedule.delta` *is*
:attr:`PayloadSchedule.settled_delta` (the same array): a sample compares them by
identity to learn that nothing is pending.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from robot_tv_dynamics.arrays import Array

#: A pending payload: (stamp [s], link, Φ about the link frame, its ΔΘ).
Pending = tuple[float, str, Array, Array]


@dataclass(frozen=True)
class PayloadSchedule:
    """Settled and pending payloads (module docstring).

    Attributes:
        zero: ΔΘ of no payload, (N, 10) zeros.
        settled: link → (Φ, ΔΘ) of the settled payloads.
        settled_delta: Σ of their ΔΘ (``zero`` itself when there is none).
        pending: the pending payloads in stamp order (equal stamps: arrival order).
        phi: link → Φ of every payload received, the pending ones included (derived).
        delta: Σ of every payload's ΔΘ, the pending ones included (derived; ``settled_delta``
            itself when nothing is pending).
    """

    zero: Array
    settled: Mapping[str, tuple[Array, Array]] = field(default_factory=dict)
    settled_delta: Array | None = None
    pending: tuple[Pending, ...] = ()
    phi: Mapping[str, Array] = field(init=False)
    delta: Array = field(init=False)

    def __post_init__(self) -> None:
        """Derive ``phi`` and ``delta`` (and ``settled_delta`` when not given)."""
        if self.settled_delta is None:
            object.__setattr__(self, "settled_delta", _total(
                [d for _, d in self.settled.values()], self.zero))
        current = {link: pair for link, pair in self.settled.items()}
        for _, link, phi, delta in self.pending:
            current[link] = (phi, delta)
        object.__setattr__(self, "phi", {link: phi for link, (phi, _) in current.items()})
        object.__setattr__(self, "delta", self.settled_delta if not self.pending else _total(
            [d for _, d in current.values()], self.zero))

    @classmethod
    def empty(cls, n_bodies: int) -> PayloadSchedule:
        """No payload on an arm of ``n_bodies`` bodies."""
        return cls(np.zeros((n_bodies, 10)))

    def with_payload(self, link: str, phi: Array, delta: Array, stamp: float | None,
                     newest_sample: float) -> PayloadSchedule:
        """This schedule with ``link``'s payload (Φ, ΔΘ) from ``stamp`` on.

        Settled when ``stamp`` is None or at or before ``newest_sample`` [s], else pending.
        """
        if stamp is None or stamp <= newest_sample:
            return PayloadSchedule(self.zero, {**self.settled, link: (phi, delta)}, None,
                                   self.pending)
        pending = sorted([*self.pending, (stamp, link, phi, delta)], key=lambda p: p[0])
        return PayloadSchedule(self.zero, self.settled, self.settled_delta, tuple(pending))

    def settled_at(self, t: float) -> PayloadSchedule:
        """The schedule once a sample stamped ``t`` settled the pending payloads ≤ t.

        ``self`` when none is.
        """
        k = 0
        while k < len(self.pending) and self.pending[k][0] <= t:
            k += 1
        if not k:
            return self
        settled = dict(self.settled)
        for _, link, phi, delta in self.pending[:k]:
            settled[link] = (phi, delta)
        return PayloadSchedule(self.zero, settled, None, self.pending[k:])


def _total(deltas: list[Array], zero: Array) -> Array:
    """Σ of the payloads' ΔΘ (a new array; ``zero`` itself when there is none)."""
    return np.sum(deltas, axis=0) if deltas else zero
