"""The design-space search: multi-objective Optuna studies evaluated in-process or on Ray.

    import magnet as mg
    study = mg.search("quickstart", n_trials=40)   # runs or resumes
    study.pareto_front()                      # TrialView: params, values, metrics, records
    mg.load_study("quickstart").trials()      # from storage, any time later

See ``space.py`` for the search-space YAML, ``driver.py`` for how a search runs and resumes,
``storage.py`` for where studies live and ``study.py`` for reading them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from magnet.arguments import Count, Seconds, Seed, checked_call
from magnet.errors import SearchFailed
from magnet.search.design_space import METRICS, SearchSpace, load_space, space_from_data
from magnet.search.driver import SAMPLERS, SearchOptions, run_search
from magnet.search.study import (
    Study,
    TrialView,
    list_studies,
    load_studies,
    load_study,
    pareto_json,
)


@checked_call
def search(
    space: str | Path | SearchSpace | dict[str, Any],
    workload: str | list[str] | None = None,
    *,
    n_trials: Count | None = None,
    workers: Count = 1,
    sampler: str | None = None,
    storage: str | Path | None = None,
    study: str | None = None,
    seed: Seed = 0,
    ray_address: str | None = None,
    timeout: Seconds | None = None,
    max_failures: Count = 5,
    log: Callable[[str], None] | None = None,
) -> Study:
    """Run or resume a design search (the same as ``magnet search``); returns the study.

    Raises ``MagnetError`` (a ``ValueError``) for bad input before any trial is written,
    ``magnet.PluginError`` when a plug-in fails on the space's first design, and
    ``SearchFailed`` after ``max_failures`` failed evaluations in a row or when its Ray
    workers cannot start."""
    if isinstance(space, dict):
        space = space_from_data(space)
    elif not isinstance(space, SearchSpace):
        space = load_space(space)
    workloads = (
        () if workload is None else tuple([workload] if isinstance(workload, str) else workload)
    )
    options = SearchOptions(
        trials=n_trials,
        workers=workers,
        sampler=sampler,
        storage=None if storage is None else str(storage),
        study=study,
        seed=seed,
        ray_address=ray_address,
        timeout=timeout,
        workloads=workloads,
        max_failures=max_failures,
    )
    return run_search(space, options, log=log or (lambda line: None))


__all__ = [
    "METRICS",
    "SAMPLERS",
    "SearchFailed",
    "SearchOptions",
    "SearchSpace",
    "Study",
    "TrialView",
    "list_studies",
    "load_space",
    "load_studies",
    "load_study",
    "pareto_json",
    "run_search",
    "search",
]
