"""The design search: one driver owns the Optuna study and is the only process writing it.

The driver asks the sampler for trials, turns each into a ``DesignJob`` (a design: template
parameters and a dataflow), hands it to a worker pool (``workers.py``: in-process or Ray,
at most W in flight) and tells the result: the objectives, one constraint per limit plus
``feasible`` (every constraint is set on every trial, so Optuna never takes a trial without
them for feasible), and magnet's record of the trial as one user attribute.

A design that cannot run (a derived constraint broken, a template refusal, a dataflow it
cannot run, a layer no mapping fits) is told COMPLETE with the worst objective values and
``feasible`` > 0, so the constraint-aware samplers (NSGA-II/III, TPE) steer away from it; an
evaluation that raises is told FAIL; neither stops the search. ``trials`` counts COMPLETE
trials, those of earlier runs included: running the same command again resumes. Trials a
killed driver left RUNNING are failed and their designs queued again, once.
"""

from __future__ import annotations

import math
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, get_args

from magnet.errors import MagnetError
from magnet.search import pareto
from magnet.search.evaluate import DesignJob, DesignResult
from magnet.search.space import SearchSpace, WorkloadSpec, constraint_violations
from magnet.search.storage import DriverLock, describe, open_storage
from magnet.search.study import CONFIG_ATTR, REFERENCE_ATTR, TRIAL_ATTR, Study

#: The samplers a space may name (the values of ``SearchSpace.sampler``).
SAMPLERS: tuple[str, ...] = get_args(SearchSpace.model_fields["sampler"].annotation)
#: The objective value told for a design that produced none: far worse than any real one.
WORST = {"minimize": 1e30, "maximize": 0.0}
#: Feasible trials that fix the hypervolume reference point.
REFERENCE_TRIALS = 10
#: Consecutive failed evaluations that stop the search (a broken installation, not designs).
MAX_FAILURES_IN_A_ROW = 20


@dataclass(frozen=True)
class SearchOptions:
    """How to run a search (the command line's options)."""

    trials: int | None = None
    workers: int = 1
    sampler: str | None = None
    storage: str | None = None
    study: str | None = None
    seed: int = 0
    ray_address: str | None = None
    timeout: float | None = None
    workloads: tuple[str, ...] = ()


def resolve(space: SearchSpace, options: SearchOptions) -> SearchSpace:
    """The space with the command line's overrides (workloads, sampler, trials)."""
    update: dict[str, Any] = {}
    if options.workloads:
        update["workloads"] = [WorkloadSpec(workload=w) for w in options.workloads]
    if options.sampler is not None:
        if options.sampler not in SAMPLERS:
            raise MagnetError(
                f"unknown sampler {options.sampler!r}; allowed: {', '.join(SAMPLERS)}",
                field="--sampler",
            )
        update["sampler"] = options.sampler
    if options.trials is not None:
        update["trials"] = options.trials
    return space.model_copy(update=update) if update else space


def config_of(space: SearchSpace, options: SearchOptions) -> dict[str, Any]:
    """What a study must be resumed with: the space (but the trial count), sampler, seed."""
    data = space.model_dump(mode="json")
    data.pop("trials")
    return {"space": data, "seed": options.seed, "schema": 1}


def _differences(old: Any, new: Any, path: str = "") -> list[str]:
    if isinstance(old, dict) and isinstance(new, dict):
        out = []
        for key in sorted(set(old) | set(new), key=str):
            out += _differences(old.get(key), new.get(key), f"{path}.{key}" if path else key)
        return out
    return [] if old == new else [f"{path}: {old!r} -> {new!r}"]


def make_sampler(space: SearchSpace, seed: int, trials: int) -> Any:
    import optuna

    name = space.sampler
    population = min(50, max(8, trials // 5))
    if name == "nsga2":
        return optuna.samplers.NSGAIISampler(seed=seed, population_size=population)
    if name == "nsga3":
        return optuna.samplers.NSGAIIISampler(seed=seed, population_size=population)
    if name == "tpe":
        return optuna.samplers.TPESampler(seed=seed, multivariate=True, constant_liar=True)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.GridSampler(grid(space), seed=seed)


def grid(space: SearchSpace) -> dict[str, list[Any]]:
    out = {name: r.values() for name, r in space.ranges().items()}
    flows = space.dataflows()
    if len(flows) > 1:
        out["dataflow"] = flows
    return out


def suggest(trial: Any, space: SearchSpace) -> tuple[dict[str, Any], str]:
    """The trial's template parameters and dataflow."""
    params = dict(space.fixed())
    for name, r in space.ranges().items():
        if r.kind == "int":
            values = r.values()  # the step may be written as a size, like the bounds
            step = values[1] - values[0] if len(values) > 1 else 1
            params[name] = trial.suggest_int(name, values[0], values[-1], step=step)
        elif r.kind == "float":
            lo, hi = r.bounds()
            params[name] = trial.suggest_float(name, lo, hi, log=r.log)
        else:
            params[name] = trial.suggest_categorical(name, r.values())
    flows = space.dataflows()
    flow = trial.suggest_categorical("dataflow", flows) if len(flows) > 1 else flows[0]
    return params, flow


class Front:
    """The feasible points told so far (minimised log10 objectives) and the hypervolume
    reference point fixed from the first of them. The driver is the only writer of the study,
    so the reference is read from it once and kept here."""

    def __init__(self, study: Any, before: Study):
        self.study = study
        self.directions = before.directions
        self.points: list[list[float]] = before.points(before.feasible()).tolist()
        self.reference: list[float] | None = before.reference

    def add(self, values: list[float]) -> None:
        self.points.append(pareto.to_minimised_log([values], self.directions)[0].tolist())
        self.store_reference()

    def store_reference(self, force: bool = False) -> None:
        """Fix the reference once ``REFERENCE_TRIALS`` feasible designs are known (``force``:
        from those there are, at the end of a run)."""
        if self.reference is not None or not self.points:
            return
        if len(self.points) >= REFERENCE_TRIALS or force:
            self.reference = pareto.reference_point(self.points[:REFERENCE_TRIALS])
            self.study.set_user_attr(REFERENCE_ATTR, self.reference)

    def size_and_hypervolume(self) -> tuple[int, float | None]:
        if not self.points:
            return 0, None
        # a design proposed again has the same point: the front counts it once
        mask = pareto.nondominated(self.points)
        size = len({tuple(p) for p, keep in zip(self.points, mask, strict=True) if keep})
        hv = None if self.reference is None else pareto.hypervolume(self.points, self.reference)
        return size, hv


class Progress:
    """The search's progress on stderr: one line per finished trial, a summary at the end."""

    def __init__(self, log: Callable[[str], None], total: int, done_before: int, front: Front):
        self.log, self.total, self.done, self.front = log, total, done_before, front
        ok_before = len(front.points)
        self.counts = {"ok": ok_before, "infeasible": done_before - ok_before, "failed": 0}
        self.start = time.monotonic()
        self.finished_here = 0

    def trial(self, number: int, status: str, text: str) -> None:
        if status != "failed":
            self.done += 1
        self.counts[status] += 1
        self.finished_here += 1
        elapsed = time.monotonic() - self.start
        rate = self.finished_here / elapsed if elapsed > 0 else 0.0
        left = max(0, self.total - self.done)
        eta = left / rate if rate > 0 else math.inf
        front, hv = self.front.size_and_hypervolume()
        hv_text = "-" if hv is None else f"{hv:.3g}"
        eta_text = "-" if not math.isfinite(eta) else f"{eta:.0f}s"
        self.log(
            f"[{min(self.done, self.total):>{len(str(self.total))}}/{self.total}] #{number} "
            f"{status:<10} {text} | front {front} | HV {hv_text} | "
            f"ok {self.counts['ok']}, infeasible {self.counts['infeasible']}, "
            f"failed {self.counts['failed']} | {rate:.2f} trials/s, eta {eta_text}"
        )


def run_search(
    space: SearchSpace,
    options: SearchOptions = SearchOptions(),
    log: Callable[[str], None] = print,
) -> Study:
    """Run (or resume) the search of ``space``; returns the study (see the module docstring)."""
    import optuna

    space = resolve(space, options)
    config = config_of(space, options)
    name = options.study or space.name
    storage = open_storage(options.storage, create=True)
    study = optuna.create_study(
        study_name=name,
        storage=storage,
        directions=space.directions(),
        sampler=make_sampler(space, options.seed, space.trials),
        load_if_exists=True,
    )
    saved = study.user_attrs.get(CONFIG_ATTR)
    if saved is None:
        if study.trials:
            raise MagnetError(
                f"study {name!r} exists but was not made by magnet; give another --study",
                source=describe(options.storage),
            )
        study.set_user_attr(CONFIG_ATTR, config)
    elif saved != config:
        diff = "; ".join(_differences(saved, config)[:8])
        raise MagnetError(
            f"study {name!r} was run with another configuration ({diff}); resume it with the "
            "same space, or give another --study",
            source=describe(options.storage),
        )
    lock = DriverLock(options.storage, study)
    lock.acquire()
    try:
        return _drive(study, space, options, lock, log)
    finally:
        lock.release()


def _recover_orphans(study: Any, log: Callable[[str], None]) -> None:
    """Trials a killed driver left RUNNING: failed, and their designs queued once more."""
    from optuna.trial import TrialState

    orphans = study.get_trials(deepcopy=False, states=(TrialState.RUNNING,))
    for t in orphans:
        again = "requeued_from" not in t.user_attrs
        study._storage.set_trial_user_attr(
            t._trial_id,
            TRIAL_ATTR,
            {"status": "failed", "reason": "the driver stopped before this trial finished"},
        )
        study.tell(t.number, state=TrialState.FAIL, skip_if_finished=True)
        if again and t.params:
            study.enqueue_trial(t.params, user_attrs={"requeued_from": t.number})
    if orphans:
        log(
            f"resuming: {len(orphans)} trial(s) left running by a stopped driver were failed "
            "and queued again"
        )


def _drive(
    study: Any,
    space: SearchSpace,
    options: SearchOptions,
    lock: DriverLock,
    log: Callable[[str], None],
) -> Study:
    from magnet.search.workers import make_pool

    _recover_orphans(study, log)
    before = Study(study, describe(options.storage))
    complete = before.counts()["complete"]
    front = Front(study, before)
    total = space.trials
    if space.sampler == "grid":
        total = min(total, math.prod(len(v) for v in grid(space).values()))
    progress = Progress(log, total, complete, front)
    if complete >= total:
        log(
            f"study {study.study_name!r} already has {complete} complete trials "
            f"(of {total}); nothing to do"
        )
        return before
    log(
        f"study {study.study_name!r} in {describe(options.storage)}: {complete} complete "
        f"trial(s), {total} wanted; sampler {space.sampler}, {options.workers} worker(s)"
    )
    pool = make_pool(options.workers, options.ray_address, log)
    running: dict[int, Any] = {}  # trial number -> optuna Trial
    deadline = None if options.timeout is None else time.monotonic() + options.timeout
    failures = 0
    asked = 0
    previous = signal.signal(signal.SIGTERM, _raise_interrupt)
    try:

        def enough() -> bool:
            return (
                progress.done + len(running) >= total
                or (deadline is not None and time.monotonic() > deadline)
                or failures >= MAX_FAILURES_IN_A_ROW
                or (space.sampler == "grid" and asked >= total)
            )

        while True:
            lock.beat()
            while not enough() and len(running) < pool.slots:
                trial = study.ask()
                # running from the moment it exists, so that an interrupt fails it
                running[trial.number] = trial
                asked += 1
                params, flow = suggest(trial, space)
                broken = constraint_violations(space, params)
                if broken:
                    outcome = DesignResult(
                        status="infeasible", reason=f"constraint broken: {broken[0]}"
                    )
                    _tell(study, trial, space, outcome, progress)
                    del running[trial.number]
                    continue
                pool.submit(
                    DesignJob.of(space, params, flow, number=trial.number, seed=options.seed)
                )
            if not running:
                break
            for job, outcome in pool.results(timeout=1.0):
                trial = running[job.number]
                if isinstance(outcome, BaseException):
                    failures += 1
                    _fail(study, trial, f"{type(outcome).__name__}: {outcome}", progress)
                else:
                    failures = 0
                    _tell(study, trial, space, outcome, progress)
                del running[job.number]  # once told: an interrupt meanwhile fails it
        if failures >= MAX_FAILURES_IN_A_ROW:
            log(f"stopped: {failures} evaluations in a row failed (see the trials' reasons)")
    except KeyboardInterrupt:
        pool.cancel_all()
        from optuna.exceptions import UpdateFinishedTrialError

        for number, trial in running.items():
            try:
                _fail(study, trial, "interrupted", progress)
            except UpdateFinishedTrialError:  # told just before the interrupt: it stands
                continue
            if trial.params:  # asked, not yet suggested: no design to run again
                study.enqueue_trial(trial.params, user_attrs={"requeued_from": number})
        running.clear()
        log("interrupted: finished trials are kept; run the same command to resume")
        raise
    finally:
        signal.signal(signal.SIGTERM, previous)
        pool.close()
        front.store_reference(force=True)
    result = Study(study, describe(options.storage))
    for line in summary_lines(result):
        log(line)
    return result


def _raise_interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt


def _tell(
    study: Any,
    trial: Any,
    space: SearchSpace,
    outcome: DesignResult,
    progress: Progress,
) -> None:
    directions = space.directions()
    objectives = [o.metric for o in space.objectives]
    attrs: dict[str, Any] = {
        "status": outcome.status,
        "reason": outcome.reason,
        "seconds": round(outcome.seconds, 3),
    }
    constraints = {"feasible": 0.0 if outcome.status == "ok" else 1.0}
    if outcome.status == "ok":
        values = [outcome.metrics[m] for m in objectives]
        missing = [m for m, v in zip(objectives, values, strict=True) if not math.isfinite(v)]
        if missing:
            attrs.update(
                status="infeasible", reason=f"the cost model gives no {', '.join(missing)}"
            )
            constraints["feasible"] = 1.0
            values = [WORST[d] for d in directions]
        for limit in space.limits:
            value = outcome.metrics.get(limit.metric, math.nan)
            violation = limit.violation(value) if math.isfinite(value) else 1.0
            constraints[limit.key] = violation
            if violation > 0 and attrs["status"] == "ok":
                attrs.update(
                    status="infeasible", reason=f"outside the limit {limit.key}: {value:.4g}"
                )
        attrs.update(
            metrics=outcome.metrics,
            records=outcome.packed_records(),
            mappings_evaluated=outcome.mappings_evaluated,
            cache_hits=outcome.cache_hits,
        )
    else:
        values = [WORST[d] for d in directions]
        constraints.update({limit.key: 1.0 for limit in space.limits})
    for key, value in constraints.items():
        trial.set_constraint(key, value)
    trial.set_user_attr(TRIAL_ATTR, attrs)
    try:
        study.tell(trial, values)
    except RuntimeError as exc:  # the grid sampler stops the study after its last point
        if "Study.stop" not in str(exc):
            raise
    if attrs["status"] == "ok":
        progress.front.add(values)
        text = "  ".join(f"{m} {v:.4g}" for m, v in zip(objectives, values, strict=True))
    else:
        text = (attrs["reason"] or "")[:100]
    progress.trial(trial.number, attrs["status"], text)


def _fail(study: Any, trial: Any, reason: str, progress: Progress) -> None:
    from optuna.trial import TrialState

    trial.set_user_attr(TRIAL_ATTR, {"status": "failed", "reason": reason})
    study.tell(trial, state=TrialState.FAIL)
    progress.trial(trial.number, "failed", reason[:100])


def summary_lines(study: Study) -> list[str]:
    summary = study.summary()
    counts = summary["trials"]
    lines = [
        "",
        f"study {study.name!r} ({study.storage})",
        f"  trials     {counts['complete']} complete: {counts['ok']} ok, "
        f"{counts['infeasible']} infeasible; {counts['failed']} failed",
        f"  front      {summary['front_size']} designs, hypervolume "
        f"{summary['hypervolume']:.4g} (decades^{len(study.objectives)})",
    ]
    for metric, best in summary["best"].items():
        if best is not None:
            lines.append(f"  best       {metric}: {best['value']:.4g} (trial #{best['trial']})")
    storage = "" if study.storage == describe(None) else f" --storage {study.storage}"
    lines += [
        f"  front      magnet pareto --study {study.name}{storage}",
        f"  dashboard  magnet dashboard{storage}",
    ]
    return lines
