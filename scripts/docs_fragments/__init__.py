"""The fragments of ``scripts/docs_numbers.py``: one module per generated fragment.

:mod:`.registry` lists them; :mod:`.common` holds what they share; :mod:`.cli` is the
command line.
"""
