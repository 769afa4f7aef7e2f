"""Reads made together: the reads of one step of a page (a folder, its owner, its list of
notes) fetched in one multi-get per server they live on, their misses claimed and filled
together, each answering as alone."""

from __future__ import annotations

from typing import Any

from shardstore import Store
from shardstore.cache import CachedStore, LocalMemory, LocalPool, MemcachePool, read_together
from tests.shardstore.cache.helpers import calls, delta, fill_folder


def folder_step(cached: CachedStore, folder: int, owner: int) -> tuple[Any, Any, Any]:
    return read_together(
        cached.objects("folder").reading([folder], counts=("folder_has_notes",)),
        cached.objects("account").reading([owner]),
        cached.mapping("folder_has_notes").reading_page(folder, limit=2),
    )


def test_a_step_answers_as_its_reads_alone_in_one_round_trip_per_server(
    store: Store, cached: CachedStore, pools: dict[str, Any]
) -> None:
    owner = store.objects("account").create(3, {"login": "ada"})
    folder = store.objects("folder").create(3, {"title": "Recipes", "account_id": owner})
    notes = fill_folder(store, folder, 5, shard=3)
    alone = (
        store.objects("folder").get_many([folder], counts=("folder_has_notes",)),
        store.objects("account").get_many([owner]),
        store.mapping("folder_has_notes").page(folder, limit=2),
    )
    assert alone[2].ids == notes[::-1][:2]

    # One memcached server holds every pool: one round trip each time. Pools in memory of
    # their own are three homes.
    homes = 1 if isinstance(pools["lists"], MemcachePool) else 3
    before = calls(pools)
    with store.count_queries() as cold:
        assert folder_step(cached, folder, owner) == alone  # misses filled as alone
    # The folder with its counts, the account and the list: one shard, so one round trip
    # where the driver sends several statements at once (MySQL), one each otherwise; the
    # folder and the account, objects, are one statement (one UNION ALL) either way.
    assert cold.count == (1 if store.dialect(3).several_statements else 2)
    # The gets, the claims and the fills of the three reads go together; the list's claim
    # is read again after its load (appends that landed meanwhile are merged).
    assert sum(delta(before, pools).values()) == 3 * homes + 1
    before = calls(pools)
    with store.count_queries() as warm:
        assert folder_step(cached, folder, owner) == alone
    assert warm.count == 0
    assert sum(delta(before, pools).values()) == homes
    assert pools["lists"].stats.hits >= 1 and pools["accounts"].stats.hits >= 1


def test_pools_that_share_a_memory_are_read_together_and_count_their_own_hits(
    store: Store,
) -> None:
    memory = LocalMemory()
    pools = {name: LocalPool(name, memory) for name in ("accounts", "folders", "notes", "lists")}
    cached = CachedStore(store, pools)
    owner = store.objects("account").create(2, {"login": "bo"})
    folder = store.objects("folder").create(2, {"title": "Walls", "account_id": owner})
    absent = store.objects("account").create(2, {"login": "gone"})
    store.objects("account").delete(absent, hard=True)

    def step() -> tuple[Any, Any, Any]:
        return read_together(
            cached.objects("folder").reading([folder]),
            cached.objects("account").reading([owner, absent]),
            cached.mapping("folder_has_notes").reading_page(folder),
        )

    step()  # fills
    before = calls(pools)
    (found_folder,), accounts, page = step()
    assert found_folder["title"] == "Walls" and [u["id"] for u in accounts] == [owner]
    assert page.ids == []
    assert delta(before, pools) == {"folders": 1}  # the round trip counts once, at its first
    assert pools["accounts"].stats.misses == 2  # owner and absent, cold; the warm step hit both


def test_a_lookup_and_a_reshaped_read_go_together(store: Store, cached: CachedStore) -> None:
    owner = store.objects("account").create(4, {"login": "cy"})
    store.lookup("login").insert("cy", owner)
    folder = store.objects("folder").create(4, {"title": "Maps", "account_id": owner})
    fill_folder(store, folder, 3, shard=4)
    account_id, count = read_together(
        cached.lookup("login").reading("cy"),
        cached.mapping("folder_has_notes").reading_page(folder).then(lambda page: len(page.ids)),
    )
    assert (account_id, count) == (owner, 3)
    assert read_together(
        cached.lookup("login").reading("nobody"), cached.objects("note").reading([])
    )
    assert cached.lookup("login").reading("nobody").run() is None
