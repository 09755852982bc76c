"""Mapping reuse shared by the workers of one machine (``magnet.search.store_share``): what
one worker's store learns, another's answers from."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest

from magnet.mapper.warm import WarmStore
from magnet.search import job as E
from magnet.search import load_space
from magnet.search import store_share as share_module
from magnet.search.store_share import LENGTH_BYTES, StoreShare


def _as(share: StoreShare, name: str) -> StoreShare:
    share.own = f"{name}.store"  # as if another process
    return share


def test_entries_go_from_one_process_to_the_others_whole_records_only(tmp_path) -> None:
    a, b = _as(StoreShare(tmp_path), "1"), _as(StoreShare(tmp_path), "2")
    a.publish([("known", ("k",), "first")])
    a.publish([])  # nothing learnt: nothing written
    assert b.collect() == [("known", ("k",), "first")]
    assert b.collect() == []  # read once
    assert a.collect() == []  # its own file is not read back
    # a record being written (its length and 3 of its bytes so far) is read once whole
    a.publish([("seen", ("s",), "second")])
    whole = (tmp_path / "1.store").read_bytes()
    first_end = LENGTH_BYTES + int.from_bytes(whole[:LENGTH_BYTES], "little")
    (tmp_path / "1.store").write_bytes(whole[: first_end + LENGTH_BYTES + 3])
    c = _as(StoreShare(tmp_path), "3")
    assert c.collect() == [("known", ("k",), "first")]
    assert c.collect() == []
    (tmp_path / "1.store").write_bytes(whole)
    assert c.collect() == [("seen", ("s",), "second")]


def _job(share: str | None):
    space = load_space("quickstart")
    data = space.model_dump(mode="json")
    data["mapper"]["options"] = {"samples": 300, "rounds": 4}
    s = type(space).model_validate(data)
    params = s.design({n: r.first() for n, r in s.ranges().items()})
    return dataclasses.replace(E.DesignJob.of(s, params, "ws"), share=share)


def _starts(result) -> set[str]:
    return {row["mapping_start"] for row in result.records[0]["layers"]} - {None}


@pytest.fixture
def fresh_process(monkeypatch):
    """A new worker process's state each time it is called: an empty store and mapping
    cache, its own side of each shared folder (named ``name``)."""

    def start(name: str) -> None:
        monkeypatch.setattr(E, "WARM_STORE", WarmStore())
        E.MAPPING_CACHE.clear()
        share_module._SHARES.clear()
        monkeypatch.setattr(os, "getpid", lambda: int(name))

    yield start
    E.MAPPING_CACHE.clear()
    share_module._SHARES.clear()


def test_a_worker_answers_a_layer_another_worker_mapped(tmp_path, fresh_process) -> None:
    folder = str(tmp_path)
    fresh_process("101")
    first = E.evaluate_design(_job(folder))
    assert _starts(first) == {"searched"}
    assert [p.name for p in Path(folder).iterdir()] == ["101.store"]
    # a second worker, on the same design: every layer answered from the first's mappings
    fresh_process("102")
    second = E.evaluate_design(_job(folder))
    assert _starts(second) == {"exact"}
    assert second.mappings_evaluated < first.mappings_evaluated / 100
    assert second.metrics == pytest.approx(first.metrics)
    # without the folder, a new worker searches afresh, and its store keeps nothing to share
    fresh_process("103")
    alone = E.evaluate_design(_job(None))
    assert _starts(alone) == {"searched"}
    assert not E.WARM_STORE.take_fresh()
