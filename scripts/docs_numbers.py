"""The numbers the README and docs quote from runs: run the commands, rewrite the fragments.

Usage (in the package's environment, with ``source scripts/ros_env.sh`` for the demo)::

    python scripts/docs_numbers.py [NAME ...]      # run NAME's commands, rewrite its fragments
    python scripts/docs_numbers.py --render        # rewrite the fragments from the kept data
    python scripts/docs_numbers.py --figures       # redraw the figures from the kept data
    python scripts/docs_numbers.py --list

Each number sits in a fragment of a Markdown page, between ``<!-- numbers: NAME -->`` and
``<!-- /numbers -->``, with the date and the machine it was measured on (cores, load
average, µs per ``pin.rnea`` on the Panda: the speed of the machine class). The data of
NAME is kept in ``docs/numbers/NAME.json``; the fragments are rendered from it, so that
the pages and the data never disagree (``test/test_docs_numbers.py`` checks that, and
re-runs the deterministic ones against the data).

NAME is one fragment; each is one module of ``scripts/docs_fragments/`` (its docstring
says what it runs and which test checks it), listed by ``docs_fragments/registry.py``:
``demo``, ``retime``, ``max_payload``, ``retime_cases``, ``identification``,
``collision``, ``simulation``, ``generalized_fill``, ``observer_noise``, ``batch_seeds``,
``realistic_seeds``, ``realistic_terms``, ``real_payload``, ``bench_demo``,
``weighted_bounds``, ``weighted_certified``, the speed benchmarks (``bench_dynamics``,
``bench_observer``, ``bench_sim``, ``bench_estimator``, ``bench_estimator_node``,
``bench_ready``, ``bench_bringup``, ``bench_bounds``, ``bench_bounds_workers``:
``docs_fragments/benchmarks.py``), ``adaptive_60s``, ``adaptive_5s``,
``adaptive_matched`` and ``adaptive_disturbance``. ``--add-adaptive-60s FOLDER`` and
``--add-adaptive-matched FOLDER`` keep the rows of ``adapt --suite`` runs already made into FOLDER.
"""

from __future__ import annotations

import sys
from pathlib import Path

# the package beside this file (already first on sys.path when the file is run)
sys.path.insert(0, str(Path(__file__).resolve().parent))

from docs_fragments.cli import main  # noqa: E402

if __name__ == "__main__":
    raise SystemExit(main())
