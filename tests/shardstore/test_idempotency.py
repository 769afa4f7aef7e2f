"""Idempotency keys: a create sent again with its key makes no second object, on every
store and backend, including when the first attempt's commit landed after its caller gave
up on it, and when its transaction is still open as the retry comes."""

from __future__ import annotations

import threading
import time
from contextlib import nullcontext
from typing import Any

import pytest

from shardstore import (
    AlreadyCreated,
    IdempotencyKey,
    InvalidKey,
    KeyReused,
    Store,
    compose,
    init_shards,
    jobs,
    shard_of,
)
from shardstore.idempotency import MAX_KEY_LENGTH, TABLES
from shardstore.interface import StoreInterface

from .conftest import plain

ADA, BEA = compose(2, 3, 1), compose(11, 3, 1)  # two accounts, on two hosts


def key(sender: int = ADA, value: str = "k-1", request: str = "note: hello") -> IdempotencyKey:
    return IdempotencyKey(sender, value, fingerprint=request.encode().hex()[:64])


def notes_on(store: StoreInterface, shard: int) -> list[dict[str, Any]]:
    return [note for batch in store.objects("note").scan(shard) for note in batch]


def key_rows(store: StoreInterface, shard: int) -> list[tuple[Any, ...]]:
    with plain(store).session(shard) as session:
        return session.query("SELECT sender_id, idem_key, object_id FROM {db}.idempotency_keys")


def test_the_same_key_again_makes_no_second_object(store: StoreInterface) -> None:
    notes, sent = store.objects("note"), key()
    first = notes.create(9, {"title": "hello"}, key=sent)
    with pytest.raises(AlreadyCreated) as again:
        notes.create(9, {"title": "hello"}, key=sent)
    assert again.value.object_id == first
    assert store.idempotency_keys().created(9, sent) == first
    assert [note["id"] for note in notes_on(store, 9)] == [first]
    assert key_rows(store, 9) == [(ADA, "k-1", first)]
    assert notes.get(first) == {"id": first, "title": "hello"}


def test_a_create_without_a_key_writes_no_key_row(store: StoreInterface) -> None:
    store.objects("note").create(9, {"title": "plain"})
    assert key_rows(store, 9) == []


def test_a_claim_is_new_once_then_a_retry_and_refused_for_another_request(
    store: StoreInterface,
) -> None:
    keys = store.idempotency_keys()
    assert keys.claim(key()) is True
    assert keys.claim(key()) is False  # the same request again: look for what it made
    with pytest.raises(KeyReused):
        keys.claim(key(request="note: goodbye"))
    assert keys.claim(key()) is False  # the refused one changed nothing
    assert keys.created(9, key()) is None  # nothing made yet


def test_the_key_with_another_request_is_refused_and_writes_nothing(
    store: StoreInterface,
) -> None:
    notes = store.objects("note")
    first = notes.create(9, {"title": "hello"}, key=key())
    with pytest.raises(KeyReused):
        notes.create(9, {"title": "goodbye"}, key=key(request="note: goodbye"))
    with pytest.raises(KeyReused):
        store.idempotency_keys().created(9, key(request="note: goodbye"))
    assert [note["id"] for note in notes_on(store, 9)] == [first]


def test_senders_keys_are_their_own(store: StoreInterface) -> None:
    notes, keys = store.objects("note"), store.idempotency_keys()
    assert keys.claim(key(ADA)) and keys.claim(key(BEA))
    ada = notes.create(9, {"by": "ada"}, key=key(ADA))
    bea = notes.create(9, {"by": "bea"}, key=key(BEA, request="another request"))
    assert ada != bea
    assert keys.created(9, key(ADA)) == ada
    assert keys.created(9, key(BEA, request="another request")) == bea
    assert sorted(n["by"] for n in notes_on(store, 9)) == ["ada", "bea"]


@pytest.mark.parametrize(
    "bad", ["", "x" * (MAX_KEY_LENGTH + 1), "tab\there", "nul\x00", "caf\u00e9", "\ud800"]
)
def test_a_bad_key_is_refused(bad: str) -> None:
    with pytest.raises(InvalidKey):
        IdempotencyKey(ADA, bad, fingerprint="f")


def test_keys_are_case_sensitive(store: StoreInterface) -> None:
    notes = store.objects("note")
    lower = notes.create(9, {}, key=key(value="abc"))
    upper = notes.create(9, {}, key=key(value="ABC"))
    assert lower != upper


def test_a_commit_its_caller_gave_up_on_is_found_by_the_retry(store: StoreInterface) -> None:
    """The first attempt's claim, object and key row committed, but its caller saw an error
    (a commit given up on, that landed): the retry finds the object, and makes none."""
    keys, notes, sent = store.idempotency_keys(), store.objects("note"), key()
    assert keys.claim(sent)
    first = notes.create(12, {"title": "hello"}, key=sent)  # its answer lost
    assert keys.claim(sent) is False
    assert keys.created(12, sent) == first
    with pytest.raises(AlreadyCreated):
        notes.create(12, {"title": "hello"}, key=sent)
    assert [note["id"] for note in notes_on(store, 12)] == [first]


@pytest.mark.parametrize("first_commits", [True, False], ids=["commits", "rolls-back"])
def test_a_retry_while_the_first_transaction_is_open_waits_for_its_outcome(
    store: StoreInterface, first_commits: bool
) -> None:
    """Two connections: the first attempt's transaction holds its object and key row
    uncommitted; the retry, in a thread, waits on the key row's lock. If the first
    commits, the retry is rolled back and names the first's object; if it rolls back,
    the retry makes the object."""
    sent = key()
    outcome: list[Any] = []

    def retry() -> None:
        try:
            outcome.append(store.objects("note").create(9, {"title": "hello"}, key=sent))
        except AlreadyCreated as earlier:
            outcome.append(earlier)

    thread = threading.Thread(target=retry)
    failing = nullcontext() if first_commits else pytest.raises(RuntimeError)
    with failing, plain(store).session(9, write=True) as session:
        first = plain(store).objects("note").insert(session, 9, {"title": "hello"}, key=sent)
        thread.start()
        time.sleep(0.5)
        assert thread.is_alive(), "the retry went through beside an open first attempt"
        if not first_commits:
            raise RuntimeError("the first attempt fails: rolled back")
    thread.join(15)
    assert not thread.is_alive()
    (result,) = outcome
    if first_commits:
        assert isinstance(result, AlreadyCreated) and result.object_id == first
        assert store.objects("note").get(first) == {"id": first, "title": "hello"}
    else:
        # (SQLite may give the retry the rolled-back row's local id again; MySQL does not.)
        assert isinstance(result, int)
        assert store.idempotency_keys().created(9, sent) == result
    assert [note["id"] for note in notes_on(store, 9)] == [first if first_commits else result]


def _expire_by_hand(store: StoreInterface, shard: int) -> None:
    with plain(store).session(shard) as session:
        for table in TABLES:
            session.execute(f"UPDATE {{db}}.{table} SET expires_at = 0")


def test_an_expired_key_is_a_new_key(store: StoreInterface) -> None:
    keys, notes = store.idempotency_keys(), store.objects("note")
    assert keys.claim(key())
    first = notes.create(shard_of(ADA), {"title": "hello"}, key=key())
    _expire_by_hand(store, shard_of(ADA))
    assert keys.created(shard_of(ADA), key()) is None
    assert keys.claim(key(request="a new request")) is True  # taken over
    second = notes.create(shard_of(ADA), {"title": "new"}, key=key(request="a new request"))
    assert second != first
    assert keys.created(shard_of(ADA), key(request="a new request")) == second


def test_expire_deletes_only_expired_rows(store: StoreInterface) -> None:
    keys, notes = store.idempotency_keys(), store.objects("note")
    keys.claim(key(value="old"))
    notes.create(shard_of(ADA), {}, key=key(value="old"))
    _expire_by_hand(store, shard_of(ADA))
    keys.claim(key(value="new"))
    kept = notes.create(shard_of(ADA), {}, key=key(value="new"))
    assert keys.expire(shard_of(ADA)) == 2  # the old claim and the old key row
    assert keys.expire(shard_of(ADA)) == 0
    assert keys.created(shard_of(ADA), key(value="new")) == kept
    assert keys.claim(key(value="new")) is False
    assert keys.expire(shard_of(ADA), now=time.time() + 2 * 24 * 3600) == 2


def test_init_makes_the_key_tables_on_existing_shards(store: StoreInterface) -> None:
    """A deployment from before the keys gets their tables from ``shardstore init``."""
    for shard in (0, 15):
        with plain(store).session(shard) as session:
            for table in TABLES:
                session.execute(f"DROP TABLE {{db}}.{table}")
    init_shards(plain(store))
    assert store.idempotency_keys().claim(key()) is True
    assert store.objects("note").create(15, {}, key=key()) > 0


def test_a_keyed_create_is_one_transaction(store: Store) -> None:
    with plain(store).count_queries() as counted:
        store.objects("note").create(9, {"title": "hello"}, key=key())
    sent = [sql.split()[0].upper() for sql in counted.statements]
    assert sent == ["BEGIN", "INSERT", "INSERT", "COMMIT"]


def test_the_expire_job_deletes_expired_keys_shard_by_shard(store: StoreInterface) -> None:
    keys = store.idempotency_keys()
    for sender in (ADA, BEA):
        keys.claim(key(sender))
        store.objects("note").create(shard_of(sender), {}, key=key(sender))
    _expire_by_hand(store, shard_of(ADA))
    job = jobs.kind("idempotency-expire")
    context = jobs.JobContext(store)
    summaries = [job.run_chunk(context, chunk, {}) for chunk in job.chunks(context, {})]
    assert sum(summary["expired"] for summary in summaries) == 2
    assert keys.created(shard_of(BEA), key(BEA)) is not None
