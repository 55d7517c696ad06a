"""The ``max_payload`` fragment of ``scripts/docs_numbers.py``.

The exact and MoveIt's static maximum payload of the ``evaluate`` examples (docs/cli.md).
Deterministic: the test re-runs them.
"""

from __future__ import annotations

import json
from typing import Any

from .common import UR5, Fragment, example_urdf, stamp

#: The examples of docs/cli.md: (arm, URDF, trajectory, payload) in config/examples/.
MAX_PAYLOAD_CASES = (("UR5", UR5, "ur5_trajectory.yaml", "ur5_payload.yaml"),
                     ("Panda", "", "panda_trajectory.yaml", "panda_payload.yaml"))
#: What the agreement test allows (relative; the solve is exact, so only round-off).
MAX_PAYLOAD_TOLERANCE = 1e-6


def max_payload_outputs() -> dict[str, dict[str, Any]]:
    """``evaluate --json`` on each example: the exact and MoveIt's static maximum payload.

    The command runs in this process (``robot_tv_dynamics.cli.main``, its stdout caught):
    what the shell command prints, without two more interpreter start-ups.
    """
    import contextlib
    import io

    from robot_tv_dynamics.cli import main as cli
    from robot_tv_dynamics.paths import package_config_dir

    examples = package_config_dir() / "examples"
    outputs = {}
    for arm, urdf, trajectory, payload in MAX_PAYLOAD_CASES:
        printed = io.StringIO()
        with contextlib.redirect_stdout(printed):
            code = cli(["evaluate", "--urdf", example_urdf(urdf), "--trajectory",
                        str(examples / trajectory), "--payload", str(examples / payload),
                        "--json"])
        if code not in (0, 1):
            raise RuntimeError(f"evaluate {trajectory}: exit {code}")
        report = json.loads(printed.getvalue())
        outputs[arm] = {key: report[key] for key in (
            "max_payload_mass", "max_payload_joint", "max_payload_t",
            "moveit_static_max_payload_mass", "moveit_static_max_payload_joint")}
    return outputs


def run_max_payload() -> dict[str, Any]:
    """The maximum payloads of the evaluate examples."""
    return {"cases": [[arm, trajectory, payload]
                      for arm, _, trajectory, payload in MAX_PAYLOAD_CASES],
            "outputs": max_payload_outputs(), "tolerance": MAX_PAYLOAD_TOLERANCE}


def render_max_payload(data: dict[str, Any], info: dict[str, Any]) -> str:
    """One row per example: exact, static, by how much the static one overstates."""
    lines = ["| `evaluate` example (`config/examples/`) | exact maximum payload (saturating "
             "joint, time) | MoveIt's static estimate | static overstates by |",
             "|---|---|---|---|"]
    for arm, trajectory, payload in data["cases"]:
        out = data["outputs"][arm]
        exact, static = out["max_payload_mass"], out["moveit_static_max_payload_mass"]
        lines.append(f"| {arm}: `{trajectory}`, `{payload}` | {exact:.2f} kg "
                     f"(`{out['max_payload_joint']}` at {out['max_payload_t']:.2f} s) | "
                     f"{static:.2f} kg | {100 * (static / exact - 1):.1f} % |")
    lines += ["", stamp(info, "python scripts/docs_numbers.py max_payload") + " The payload "
              "shape (COM, inertia per kg) is the example's. `test/test_docs_numbers.py` "
              "re-runs `evaluate --json` on both and requires these masses within "
              f"{data['tolerance']:g} (relative), the same joints and times."]
    return "\n".join(lines) + "\n"


#: What the registry lists of this module.
FRAGMENTS = (Fragment("max_payload", run_max_payload, render_max_payload),)
