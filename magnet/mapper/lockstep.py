"""Searches run in lock step: the searches of a design's layer shapes priced together.

A search prices many small batches (a warm start: its seeds and samples, then a round of
moves or two, a few hundred mappings each), and a call of the evaluator costs about half a
millisecond whatever its size: numpy's cost per operation, paid once per array however
long. ``run_together`` runs several jobs (``map_network``'s layer shapes, when they start
from a store of earlier designs' mappings) as greenlets: each
runs until it asks for a batch of fewer than ``ALONE_FROM`` mappings to be priced (``price``,
which ``Tracker.price`` calls). Once every job has asked or ended, the largest group of
batches asked alike (the same design, prices, keep pattern, operands on chip and window
flags) is priced in one call (``evaluate_batches``: each mapping counted as its own layer
counts it, the results the same to the bit) and its jobs resume, each with its own, until
they ask again or end; the other jobs wait, so that jobs out of step gather again. The jobs
take turns in a fixed order, so a run is as reproducible as one job after another: each
search draws from its own random generator, and a job's seconds (``clock``) are the time it
ran plus its share of the calls that priced its batches, by mappings.

Greenlets (the ``greenlet`` package) and not threads: a job is suspended only where it
asks for a price, so the jobs never run at once and share their caches without locks, an
exception (a plug-in's, a budget's, Ctrl-C) is raised in the job as it would be alone, and
a switch costs about a microsecond.
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Callable, Collection, Sequence
from typing import Any, NamedTuple, TypeVar

import greenlet

from magnet.arch.spec import Arch
from magnet.cost import ArchCosts
from magnet.mapping import MappingBatch
from magnet.model.evaluate import BatchResult, evaluate_batch, evaluate_batches, stack_key
from magnet.workload.dims import Operand
from magnet.workload.layer import Layer

T = TypeVar("T")

#: A job's batch of fewer mappings than this waits to be priced with the others'; a larger
#: one is priced at once, alone: past a thousand mappings numpy's cost per call is small
#: beside the arrays' own, and ResNet-50's searches afresh on a chip (rounds of 1,536 moves)
#: ran 10 % slower when they took turns. At most ``STACK_MAPPINGS`` mappings are priced in
#: one call. Both measured on 60 designs of ``magnet`` and the chip's ResNet-50, the code
#: with each setting run at once on the two cores (benchmarks/HISTORY.md).
ALONE_FROM = 1024
STACK_MAPPINGS = 8192

#: The most jobs running at once (``run_together``): each holds its mapspace and its batch
#: while it waits, so a network of hundreds of shapes runs them this many at a time (a
#: design of ``magnet`` maps 24-40 on ResNet-50).
MAX_JOBS = 64


class _Ask(NamedTuple):
    """A batch a job asks to be priced (``evaluate_batch``'s arguments), and what the
    batches priced with it share: the design, prices, keep pattern, operands on chip and
    ``stack_key``."""

    layer: Layer
    arch: Arch
    batch: MappingBatch
    costs: ArchCosts
    on_chip: tuple[Operand, ...]
    key: tuple[Any, ...]


class _Done(NamedTuple):
    """A job's value, once it has ended."""

    value: Any


class _Job(greenlet.greenlet):
    """A job of ``run_together``, with the seconds it has had (``clock``)."""

    def __init__(self, job: Callable[[], Any]) -> None:
        super().__init__(lambda: _Done(job()))
        self.seconds = 0.0
        self.resumed = 0.0


def price(
    layer: Layer,
    arch: Arch,
    batch: MappingBatch,
    costs: ArchCosts,
    on_chip: Collection[Operand] = (),
) -> BatchResult:
    """``evaluate_batch(layer, arch, batch, costs, on_chip=on_chip)``; inside a job of
    ``run_together``, a batch of fewer than ``ALONE_FROM`` mappings is priced with the other
    jobs' batches (the same result)."""
    job = greenlet.getcurrent()
    small = isinstance(job, _Job) and batch.size < ALONE_FROM
    alike = stack_key(layer, arch) if small else None
    if alike is None:  # outside a job, a batch priced alone, or one large enough alone
        return evaluate_batch(layer, arch, batch, costs, on_chip=on_chip)
    ops = tuple(on_chip)
    key = (id(arch), id(costs), batch.keep.tobytes(), ops, alike)
    assert job.parent is not None  # the scheduler's greenlet
    # the scheduler's answer, or its exception raised here
    result: BatchResult = job.parent.switch(_Ask(layer, arch, batch, costs, ops, key))
    return result


def clock() -> float:
    """Seconds on a clock that, inside a job of ``run_together``, runs only for that job
    (``time.perf_counter`` elsewhere): the time a search or a layer took, and its budget."""
    job = greenlet.getcurrent()
    if not isinstance(job, _Job):
        return time.perf_counter()
    return job.seconds + time.perf_counter() - job.resumed


def run_together(
    jobs: Sequence[Callable[[], T]],
    done: Callable[[int, T], bool] | None = None,
    width: int = MAX_JOBS,
) -> list[T | None]:
    """Each job's value, the jobs run in lock step (see the module docstring), at most
    ``width`` at once (1: one after another, each to its end). ``done(i, value)`` is called
    as job ``i`` ends; True ends the jobs after it that are still running (their values
    None), as if they had not started. An exception of a job ends them all and is raised."""
    tasks = [_Job(job) for job in jobs]
    values: list[T | None] = [None] * len(jobs)
    asked: dict[int, _Ask] = {}  # the batches the jobs wait for, by job

    def resume(i: int, answer: BatchResult | BaseException | None) -> None:
        task = tasks[i]
        task.resumed = time.perf_counter()
        try:
            if isinstance(answer, BaseException):
                out = task.throw(answer)
            else:
                out = task.switch() if answer is None else task.switch(answer)
        finally:
            task.seconds += time.perf_counter() - task.resumed
        if not isinstance(out, _Done):
            asked[i] = out
            return
        values[i] = out.value
        if done is not None and done(i, out.value):
            for later in tasks[i + 1 :]:
                _end(later)

    try:
        unstarted = iter(range(len(tasks)))
        while True:
            # jobs start, in order, while fewer than ``width`` run (a network of hundreds of
            # shapes holds no more of them at once); ``done`` may have ended some
            running = sum(bool(t) for t in tasks)  # started, not ended
            for i in itertools.islice(unstarted, max(0, width - running)):
                if not tasks[i].dead:
                    resume(i, None)
            for i in [i for i in asked if tasks[i].dead]:
                del asked[i]
            if not asked:
                if all(t.dead for t in tasks):
                    break
                continue
            # the largest group of batches asked alike is priced, its jobs resumed until they
            # ask again or end; the others wait, so that jobs out of step gather again
            group = max(_groups(asked), key=len)
            answers = _priced([asked.pop(i) for i in group], [tasks[i] for i in group])
            for i, answer in zip(group, answers, strict=True):
                if not tasks[i].dead:  # a switch to an ended job would return at once
                    resume(i, answer)
    finally:
        for task in tasks:  # after an exception: the others end (their cleanup runs)
            _end(task)
    return values


def _end(task: _Job) -> None:
    """End a job that has not ended (``GreenletExit`` raised where it waits). What it raises
    as it ends is dropped: it is ended because another job raised, or because its value is
    not wanted (``done``)."""
    if not task.dead:
        with contextlib.suppress(Exception):
            task.throw(greenlet.GreenletExit)


def _groups(asked: dict[int, _Ask]) -> list[list[int]]:
    """The jobs whose batches are priced in one call, in the order of their first job: the
    same key, at most ``STACK_MAPPINGS`` mappings."""
    groups: list[list[int]] = []
    growing: dict[Any, tuple[list[int], int]] = {}  # key -> its last group, its mappings
    for i in sorted(asked):
        key, size = asked[i].key, asked[i].batch.size
        members, filled = growing.get(key, ([], STACK_MAPPINGS))
        if filled + size > STACK_MAPPINGS:
            members, filled = [], 0
            groups.append(members)
        members.append(i)
        growing[key] = (members, filled + size)
    return groups


def _priced(asks: list[_Ask], tasks: list[_Job]) -> list[BatchResult | BaseException]:
    """The answers to ``asks`` (alike: one group), priced in one call, each job charged its
    share of the call's seconds, by mappings; where the call raises, each batch priced
    alone (an exception is then its job's, raised where it asked)."""
    if not asks:
        return []
    start = time.perf_counter()
    try:
        answers: list[BatchResult | BaseException] = list(
            evaluate_batches(
                [a.layer for a in asks],
                asks[0].arch,
                [a.batch for a in asks],
                asks[0].costs,
                on_chip=asks[0].on_chip,
            )
        )
    except Exception:
        answers = [_alone(a) for a in asks]
    seconds = time.perf_counter() - start
    total = sum(a.batch.size for a in asks)
    for task, a in zip(tasks, asks, strict=True):
        task.seconds += seconds * a.batch.size / max(total, 1)
    return answers


def _alone(ask: _Ask) -> BatchResult | BaseException:
    """``ask`` priced alone, or the exception that raised."""
    try:
        return evaluate_batch(ask.layer, ask.arch, ask.batch, ask.costs, on_chip=ask.on_chip)
    except Exception as exc:
        return exc
