"""The reader's replay of a journal (``magnet.search.journal_replay``) against Optuna's own.

A reader's replay must rebuild exactly the studies and trials Optuna's replay rebuilds from
the same operations, skipped operations included: random journals (valid and invalid
operations of every kind Optuna writes, as other processes would have written them) are
replayed both ways and compared study by study, trial by trial; a real search's journal
read through ``magnet.load_study`` gives the trials Optuna's storage gives.
"""

from __future__ import annotations

import json
import random
from typing import Any

import optuna
import pytest
from optuna.storages import JournalStorage
from optuna.storages.journal import JournalFileBackend
from optuna.storages.journal._storage import JournalStorageReplayResult

from magnet.search.journal_replay import ReaderJournalStorage, ReaderReplay
from magnet.search.storage import ReadOnlyJournal

DISTRIBUTIONS = [
    '{"name": "CategoricalDistribution", "attributes": {"choices": [4, 8, 16]}}',
    '{"name": "CategoricalDistribution", "attributes": {"choices": [1, 2]}}',
    '{"name": "IntDistribution", "attributes": {"log": false, "step": 1, "low": 0, "high": 9}}',
    '{"name": "FloatDistribution", "attributes": {"step": null, "low": 0.5, "high": 4.0, '
    '"log": true}}',
]
TIME = "2026-11-27T21:50:41.583065+00:00"


def _value(rng: random.Random, dist: str) -> float:
    """An internal value of ``dist`` (a choice's index, an int, a float)."""
    if "Categorical" in dist:
        return rng.randrange(len(json.loads(dist)["attributes"]["choices"]))
    if "Int" in dist:
        return rng.randrange(10)
    return rng.uniform(0.5, 4.0)


def _journal(rng: random.Random, ops: int) -> list[dict[str, Any]]:
    """A random journal: operations of every kind, on studies and trials that may not exist
    or be finished, parameters whose distributions may clash, a waiting trial claimed twice."""
    out: list[dict[str, Any]] = []
    trials = 0

    def log(op: int, **fields: Any) -> None:
        out.append({"op_code": op, "worker_id": f"w{rng.randrange(3)}", **fields})

    for n in range(ops):
        kind = 0 if n == 0 else rng.choices(range(10), weights=[2, 0.3, 2, 2, 6, 12, 6, 2, 3, 2])[0]
        study = rng.choice([0, 0, 0, 1, 2, 7])  # at most 3 names: 3 studies, or fewer
        trial = rng.randrange(max(trials, 1) + 2)
        if kind == 0:
            log(0, study_name=f"s{rng.randrange(3)}", directions=[1, 2][: rng.randint(1, 2)])
        elif kind == 1:
            log(1, study_id=rng.choice([2, 7]))  # a study deleted (others live on)
        elif kind in (2, 3):
            attr = {f"k{rng.randrange(3)}": rng.random()}
            log(kind, study_id=study, **{"user_attr" if kind == 2 else "system_attr": attr})
        elif kind == 4:
            fields: dict[str, Any] = {"study_id": study, "datetime_start": TIME}
            if rng.random() < 0.5:  # a whole trial, as add_trial writes it
                names = rng.sample(["a", "b", "c"], rng.randint(0, 3))
                dists = {n: rng.choice(DISTRIBUTIONS) for n in names}
                fields |= {
                    "state": rng.choice([0, 1, 2, 3, 4]),
                    "distributions": dists,
                    "params": {n: _value(rng, d) for n, d in dists.items()},
                    "user_attrs": {"magnet": {"status": "ok"}},
                    "system_attrs": {"constraints:0": rng.uniform(-1, 1)},
                    "values": [rng.random()],
                    "value": None,
                    "intermediate_values": {"1": 0.5},
                    "datetime_complete": TIME,
                }
            elif rng.random() < 0.5:
                fields |= {"state": 4, "datetime_start": None}  # waiting (enqueued)
            log(4, **fields)
            trials += 1
        elif kind == 5:
            dist = rng.choice(DISTRIBUTIONS)
            name = rng.choice(["a", "b", "c"])
            log(5, trial_id=trial, param_name=name, param_value_internal=_value(rng, dist),
                distribution=dist)  # fmt: skip
        elif kind == 6:
            state = rng.choice([0, 0, 1, 2, 3])
            fields = {"trial_id": trial, "state": state, "values": None}
            if state == 0:
                fields["datetime_start"] = TIME
            else:
                fields |= {"datetime_complete": TIME, "values": [rng.random()]}
            log(6, **fields)
        elif kind == 7:
            log(7, trial_id=trial, step=rng.randrange(3), intermediate_value=rng.random())
        else:
            attr = {f"k{rng.randrange(3)}": rng.random()}
            log(kind, trial_id=trial, **{"user_attr" if kind == 8 else "system_attr": attr})
    return out


def _state(replay: JournalStorageReplayResult) -> list[Any]:
    """Every study of a replay and its trials, as comparable data."""
    out = []
    for s in replay.get_all_studies():
        trials = replay.get_all_trials(s._study_id, None)
        out.append((s._study_id, s.study_name, s.directions, s.user_attrs, s.system_attrs))
        out.append([(t._trial_id, t.__dict__) for t in trials])
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_journals_replay_as_optuna_replays_them(seed: int) -> None:
    rng = random.Random(seed)
    logs = _journal(rng, 300)
    optunas, ours = JournalStorageReplayResult("reader-"), ReaderReplay("reader-")
    optunas.apply_logs(logs)
    ours.apply_logs(logs)
    assert _state(ours) == _state(optunas)
    # the journal made trials with parameters, and had operations to skip (else it is void)
    trials = [t for study in _state(optunas)[1::2] for _, t in study]
    assert len(trials) > 5 and sum(len(t["_params"]) for t in trials) > 3


def test_a_parameter_clashing_with_an_earlier_trials_is_skipped() -> None:
    # trial 1 sets "a" first, then trial 0 (earlier by number) sets it with another
    # distribution: from then on a value of "a" is checked against trial 0's, as Optuna does
    int_dist, cat_dist = DISTRIBUTIONS[2], DISTRIBUTIONS[0]
    w = {"worker_id": "other"}
    logs = [
        {"op_code": 0, "study_name": "s", "directions": [1], **w},
        {"op_code": 4, "study_id": 0, "datetime_start": TIME, **w},
        {"op_code": 4, "study_id": 0, "datetime_start": TIME, **w},
        {"op_code": 5, "trial_id": 1, "param_name": "a", "param_value_internal": 3,
         "distribution": int_dist, **w},
        {"op_code": 5, "trial_id": 0, "param_name": "a", "param_value_internal": 1,
         "distribution": cat_dist, **w},  # clashes with trial 1's: skipped
        {"op_code": 5, "trial_id": 1, "param_name": "a", "param_value_internal": 2,
         "distribution": cat_dist, **w},  # so does this
    ]  # fmt: skip
    for replay in (JournalStorageReplayResult("r-"), ReaderReplay("r-")):
        replay.apply_logs(logs)
        assert [t.params for t in replay.get_all_trials(0, None)] == [{}, {"a": 3}]


def test_a_search_journal_reads_as_optuna_reads_it(tmp_path: Any) -> None:
    journal = str(tmp_path / "s.journal")
    study = optuna.create_study(
        study_name="s",
        storage=JournalStorage(JournalFileBackend(journal)),
        directions=["minimize", "minimize"],
    )
    study.set_user_attr("magnet_config", {"x": 1})

    def objective(trial: optuna.Trial) -> tuple[float, float]:
        x = trial.suggest_categorical("x", [1, 2, 4])
        y = trial.suggest_float("y", 0.1, 10, log=True)
        trial.set_user_attr("magnet", {"status": "ok"})
        return x * y, x / y

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study.optimize(objective, n_trials=30)
    stock = JournalStorage(ReadOnlyJournal(journal)).get_all_trials(0)
    read = ReaderJournalStorage(ReadOnlyJournal(journal)).get_all_trials(0)
    assert len(read) == 30
    assert [t.__dict__ for t in read] == [t.__dict__ for t in stock]
    # equal names and short strings kept once for all trials (JSON gives each line its own)

    def strings(trials: list[Any]) -> int:
        attrs = [t.user_attrs["magnet"] for t in trials]
        return len({id(k) for a in attrs for k in a} | {id(a["status"]) for a in attrs})

    assert strings(read) == 2 and strings(stock) == 60  # "status" and "ok"; each trial's own
    reader = ReaderJournalStorage(ReadOnlyJournal(journal))
    assert reader.get_n_trials(0) == 30 == JournalStorage(ReadOnlyJournal(journal)).get_n_trials(0)
    with pytest.raises(KeyError):
        reader.get_n_trials(7)


@pytest.mark.parametrize("seed", range(30))
def test_the_line_starts_counted_in_blocks_are_those_read_line_by_line(seed, tmp_path) -> None:
    # ``_line_starts_ok`` counts newlines and newlines followed by a record's start a block
    # at a time (seams anywhere, blocks of 1 to 40 bytes): the answer of a line-by-line look
    import io

    from magnet.search.storage import RECORD_START, _last_line_start, _line_starts_ok

    rng = random.Random(seed)
    kinds = [RECORD_START + b'"x":1}', b"a note", b"", b'{"op_code"', b"{" + RECORD_START]
    lines = [rng.choices(kinds, weights=[12, 1, 1, 1, 1])[0] for _ in range(rng.randint(1, 9))]
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.7 else b"")
    f = io.BytesIO(data)
    last = _last_line_start(f)
    starts, offset, expected = [], 0, True
    for line in data.splitlines(keepends=True):
        if offset < last:
            starts.append(line)
            expected = expected and line.startswith(RECORD_START)
        offset += len(line)
    if last == 0:
        return  # one line: nothing before the last
    assert _line_starts_ok(f, last, block_bytes=rng.randint(1, 40)) == expected


def _records_journal(tmp_path: Any) -> tuple[str, list[str]]:
    """A journal of a study whose trials hold records both ways Optuna writes them: the
    first trials set them with their other attributes (``set_user_attr`` lines, as a search
    does), the rest were added whole (``add_trial``: the attributes in the trial's creating
    line, as ``optuna.copy_study`` writes them). The records are packed text
    (``magnet.search.job.pack``); returned in trial order."""
    from magnet.search.job import pack

    journal = str(tmp_path / "r.journal")
    study = optuna.create_study(
        study_name="r", storage=JournalStorage(JournalFileBackend(journal)), directions=["minimize"]
    )
    study.set_user_attr("magnet_config", {"x": 1})
    texts = [pack([{"trial": k, "note": "é" * k}]) for k in range(6)]
    for k in range(3):
        trial = study.ask({"x": optuna.distributions.IntDistribution(0, 9)})
        trial.set_user_attr("magnet", {"status": "ok", "records": texts[k]})
        study.tell(trial, float(k))
    for k in range(3, 6):
        study.add_trial(
            optuna.trial.create_trial(
                params={"x": k},
                distributions={"x": optuna.distributions.IntDistribution(0, 9)},
                value=float(k),
                user_attrs={"magnet": {"status": "ok", "records": texts[k]}},
            )
        )
    return journal, texts


def test_magnets_readers_leave_a_journals_records_in_it(tmp_path: Any) -> None:
    # a reader of magnet's (keep_records=False) keeps where each trial's records are, not
    # the text (190 MB of a 100,000-trial study's 1 GB), and reads it when asked: the same
    # text Optuna's replay keeps; Optuna's tools get the storage as Optuna keeps it
    from magnet.search.journal_replay import StoredText
    from magnet.search.storage import open_storage
    from magnet.search.study import _view

    journal, texts = _records_journal(tmp_path)
    lazy = open_storage(journal, create=False, keep_records=False).get_all_trials(0)
    kept = open_storage(journal, create=False).get_all_trials(0)
    stock = JournalStorage(ReadOnlyJournal(journal)).get_all_trials(0)
    assert [t.user_attrs["magnet"]["records"] for t in kept] == texts
    assert [t.__dict__ for t in kept] == [t.__dict__ for t in stock]
    stored = [t.user_attrs["magnet"]["records"] for t in lazy]
    assert all(isinstance(s, StoredText) for s in stored)
    assert [s.read() for s in stored] == texts
    # a view reads them through it, the same records as from the text
    for lazy_trial, kept_trial in zip(lazy, kept, strict=True):
        a, b = _view(lazy_trial, ["energy_pj"]), _view(kept_trial, ["energy_pj"])
        assert a.stored_records() == b.stored_records() and a.records_json() == b.records_json()


def test_a_record_whose_journal_line_changed_is_refused(tmp_path: Any) -> None:
    # the journal edited after it was read: the records are not read from another line
    from pathlib import Path

    from magnet.errors import MagnetError
    from magnet.search.storage import open_storage

    journal, texts = _records_journal(tmp_path)
    lazy = open_storage(journal, create=False, keep_records=False).get_all_trials(0)
    stored = [t.user_attrs["magnet"]["records"] for t in lazy]
    data = Path(journal).read_bytes()
    Path(journal).write_bytes(data.replace(texts[4].encode(), texts[5].encode()))
    assert [s.read() for s in stored[:4]] == texts[:4]  # the other lines are as they were
    with pytest.raises(MagnetError, match=r"r\.journal: the journal's line at byte [\d,]+ is not"):
        stored[4].read()
    Path(journal).write_bytes(data[: stored[1].offset])  # cut before trial 1's line
    with pytest.raises(MagnetError, match="edited or replaced since"):
        stored[1].read()
