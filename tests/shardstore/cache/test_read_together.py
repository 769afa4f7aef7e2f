"""Reads made together: the reads of one step of a page (a board, its owner, its list of
pins) fetched in one multi-get per server they live on, their misses claimed and filled
together, each answering as alone."""

from __future__ import annotations

from typing import Any

from shardstore import Store
from shardstore.cache import CachedStore, LocalMemory, LocalPool, MemcachePool, read_together
from tests.shardstore.cache.helpers import calls, delta, fill_board


def board_step(cached: CachedStore, board: int, owner: int) -> tuple[Any, Any, Any]:
    return read_together(
        cached.objects("board").reading([board], counts=("board_has_pins",)),
        cached.objects("user").reading([owner]),
        cached.mapping("board_has_pins").reading_page(board, limit=2),
    )


def test_a_step_answers_as_its_reads_alone_in_one_round_trip_per_server(
    store: Store, cached: CachedStore, pools: dict[str, Any]
) -> None:
    owner = store.objects("user").create(3, {"username": "ada"})
    board = store.objects("board").create(3, {"title": "Recipes", "owner_id": owner})
    pins = fill_board(store, board, 5, shard=3)
    alone = (
        store.objects("board").get_many([board], counts=("board_has_pins",)),
        store.objects("user").get_many([owner]),
        store.mapping("board_has_pins").page(board, limit=2),
    )
    assert alone[2].ids == pins[::-1][:2]

    # One memcached server holds every pool: one round trip each time. Pools in memory of
    # their own are three homes.
    homes = 1 if isinstance(pools["lists"], MemcachePool) else 3
    before = calls(pools)
    with store.count_queries() as cold:
        assert board_step(cached, board, owner) == alone  # misses filled as alone
    assert cold.count == 3  # board with its counts, user, list: one query each
    # The gets, the claims and the fills of the three reads go together; the list's claim
    # is read again after its load (appends that landed meanwhile are merged).
    assert sum(delta(before, pools).values()) == 3 * homes + 1
    before = calls(pools)
    with store.count_queries() as warm:
        assert board_step(cached, board, owner) == alone
    assert warm.count == 0
    assert sum(delta(before, pools).values()) == homes
    assert pools["lists"].stats.hits >= 1 and pools["users"].stats.hits >= 1


def test_pools_that_share_a_memory_are_read_together_and_count_their_own_hits(
    store: Store,
) -> None:
    memory = LocalMemory()
    pools = {name: LocalPool(name, memory) for name in ("users", "boards", "pins", "lists")}
    cached = CachedStore(store, pools)
    owner = store.objects("user").create(2, {"username": "bo"})
    board = store.objects("board").create(2, {"title": "Walls", "owner_id": owner})
    absent = store.objects("user").create(2, {"username": "gone"})
    store.objects("user").delete(absent, hard=True)

    def step() -> tuple[Any, Any, Any]:
        return read_together(
            cached.objects("board").reading([board]),
            cached.objects("user").reading([owner, absent]),
            cached.mapping("board_has_pins").reading_page(board),
        )

    step()  # fills
    before = calls(pools)
    (found_board,), users, page = step()
    assert found_board["title"] == "Walls" and [u["id"] for u in users] == [owner]
    assert page.ids == []
    assert delta(before, pools) == {"boards": 1}  # the round trip counts once, at its first
    assert pools["users"].stats.misses == 2  # owner and absent, cold; the warm step hit both


def test_a_lookup_and_a_reshaped_read_go_together(store: Store, cached: CachedStore) -> None:
    owner = store.objects("user").create(4, {"username": "cy"})
    store.lookup("username").insert("cy", owner)
    board = store.objects("board").create(4, {"title": "Maps", "owner_id": owner})
    fill_board(store, board, 3, shard=4)
    user_id, count = read_together(
        cached.lookup("username").reading("cy"),
        cached.mapping("board_has_pins").reading_page(board).then(lambda page: len(page.ids)),
    )
    assert (user_id, count) == (owner, 3)
    assert read_together(
        cached.lookup("username").reading("nobody"), cached.objects("pin").reading([])
    )
    assert cached.lookup("username").reading("nobody").run() is None
