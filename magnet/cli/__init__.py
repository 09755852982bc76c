"""The ``magnet`` command: a thin layer over ``magnet.api`` and ``magnet.search``.

Each command reads and checks its flags and files, calls the Python API and prints what it
returns (a record as text, or as JSON with ``--json``); progress goes to stderr. Bad input
exits 2 with one line, a plug-in's bug exits 1 with its traceback (``_friendly``). Modules
are imported inside the commands, so that ``magnet --help`` starts fast.

``shared`` holds the group (``main``) and what every command shares; the commands are in
``price_commands`` (evaluate, map, export-timeloop), ``catalog_commands`` (archs,
workloads, dataflows, costs, schema, spaces, examples) and ``study_commands`` (search,
studies, pareto, export, report, dashboard), each registering its commands on ``main``.
"""

# importing the command modules registers their commands on ``main``
from magnet.cli import catalog_commands, price_commands, study_commands  # noqa: F401
from magnet.cli.shared import main

__all__ = ["main"]
