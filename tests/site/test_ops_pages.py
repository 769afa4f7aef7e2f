"""The console's pages on the suite's real store: what each shows, and bad input as a 400 or a
404 page, never a 500."""

from __future__ import annotations

import html
import json
import re
from typing import Any

from django.test import Client

from pinboard.data_plane import cached_store, follower_status
from pinboard.ops.queries.hosts import estimate_users, sample
from pinboard.ops.queries.shards import OBJECT_TABLES, shard_counts
from shardstore import decompose
from tests.site.ops import config_dir_fixture, operator_fixture, staff_fixture, text  # noqa: F401


def test_overview_shows_every_host_with_its_health_and_the_chart(staff: Client) -> None:
    topology = cached_store().topology
    page = text(staff.get("/ops/"))
    for host in topology.hosts:
        assert f'href="/ops/hosts/{host}/"' in page
    assert "<svg" in page and 'class="shards"' in page
    assert "Users are estimated" in page
    assert f"Shard map v{topology.version}" in page
    assert re.search(r'<td class="ok">yes</td>', page)  # every host answers the probe
    status = follower_status()  # None unless some test of the run made this process follow
    if status is None:
        assert "it follows no config source" in page
    else:
        assert ("is connected" if status.connected else "Not connected") in page
    assert "the site&#x27;s shard map" not in page  # reasons live on the topology page


def test_overview_estimates_users_per_host(staff: Client, make_user: Any) -> None:
    for _ in range(40):  # on 16 shards, some land on the sampled ones (all miss: 2**-40)
        make_user("counted")
    page = text(staff.get("/ops/"))
    estimates = [int(n) for n in re.findall(r'<td class="num">~(\d+)</td>', page)]
    assert len(estimates) == len(set(cached_store().topology.ranges)) and sum(estimates) > 0


def test_a_users_estimate_on_few_shards_is_the_exact_count(make_user: Any) -> None:
    store = cached_store().store
    shards = list(range(4))  # at most USER_SAMPLE shards: every one is counted
    for _ in range(12):
        make_user("exact")
    exact = sum(counts.objects[2] for counts in shard_counts(store, shards))  # users column
    assert OBJECT_TABLES[2] == "users"
    assert estimate_users(store, shards) == exact
    assert sample(list(range(100)), 8) == [0, 12, 25, 37, 50, 62, 75, 87]


def test_host_page_counts_the_rows_of_its_shards(staff: Client, cast: dict[str, Any]) -> None:
    store = cached_store()
    ann_shard = decompose(cast["ann"]["id"]).shard_id
    host = store.topology.master_of(ann_shard)
    page = text(staff.get(f"/ops/hosts/{host}/"))
    assert "exact" in page
    row = re.search(rf"<tr>\s*<td>{ann_shard}</td>.*?</tr>", page, re.S)
    assert row is not None
    # ann has a board with two pins on her shard: pins, boards and users are all counted.
    numbers = [int(n) for n in re.findall(r'<td class="num">(\d+)</td>', row.group())]
    pins, boards, users = numbers[0], numbers[1], numbers[2]
    assert pins >= 2 and boards >= 1 and users >= 1


def test_host_page_paginates_and_refuses_bad_page_numbers(staff: Client) -> None:
    host = next(iter(cached_store().topology.hosts))
    assert staff.get(f"/ops/hosts/{host}/?page=1").status_code == 200
    assert staff.get(f"/ops/hosts/{host}/?page=999999").status_code == 404
    for bad in ("0", "-1", "x", "1e3", "9" * 5000):
        assert staff.get(f"/ops/hosts/{host}/?page={bad}").status_code == 400, bad
    assert staff.get("/ops/hosts/nosuchhost/").status_code == 404


def decode(client: Client, query: str, status: int = 200) -> str:
    response = client.get("/ops/decode/", {"q": query})
    assert response.status_code == status, (query, response.status_code)
    return text(response)


def test_decoder_explains_an_id(staff: Client, cast: dict[str, Any]) -> None:
    pin = cast["pin"]
    shard, type_id, local_id = decompose(pin)
    page = decode(staff, str(pin))
    assert f"<dd>{shard} (database <code>db{shard:05d}</code>)</dd>" in page
    assert f"<dd>pin ({type_id})</dd>" in page and f"<dd>{local_id}</dd>" in page
    assert f'href="/ops/hosts/{cached_store().topology.master_of(shard)}/"' in page
    assert "Recipes pin" in page  # the stored JSON
    # Its mappings, with to-IDs linking back to the decoder.
    assert "pin_owned_by_board" in page
    assert f'href="/ops/decode/?q={cast["recipes"]["id"]}"' in page


def test_decoder_finds_a_pinner_by_username_and_by_url(staff: Client, cast: dict[str, Any]) -> None:
    ann = cast["ann"]
    for query in (ann["username"], f"/{ann['username']}/", f"http://127.0.0.1:8000/{ann['username']}/followers/"):  # fmt: skip
        page = decode(staff, query)
        assert f"<h2>{ann['id']}</h2>" in page, query
        assert "user_has_boards" in page and str(cast["recipes"]["id"]) in page
    assert f"<h2>{cast['pin']}</h2>" in decode(staff, f"/pin/{cast['pin']}/")
    board_url = f"/{ann['username']}/{cast['recipes']['slug']}/"
    assert f"<h2>{cast['recipes']['id']}</h2>" in decode(staff, board_url)


def test_decoder_never_shows_a_password_hash_or_a_token_hash(
    staff: Client, cast: dict[str, Any]
) -> None:
    from pinboard.users.tokens import issue_token

    ann = cached_store().objects("user").get(cast["ann"]["id"])
    page = html.unescape(decode(staff, str(ann["id"])))
    assert f'"username": "{ann["username"]}"' in page  # the body is there...
    assert ann["password"] not in page and '"password"' not in page  # ...without its hash
    assert "Not shown: password" in page
    token_id = int(issue_token(cast["ann"])["token"].split(".")[0])
    stored = cached_store().store.objects("token").get(token_id)
    token_page = html.unescape(decode(staff, str(token_id)))
    assert stored["hash"] not in token_page and "Not shown: hash" in token_page
    assert f'"expires_at": {json.dumps(stored["expires_at"])}' in token_page


def test_decoder_bad_input_is_a_400_and_nothing_there_a_404(staff: Client) -> None:
    assert decode(staff, "", 200).count("alert") == 0  # the empty form
    for bad in ("-5", "0123", "1" * 30, "/settings/password/", "/pin/notanid/", "x" * 3000):
        assert 'role="alert"' in decode(staff, bad, 400), bad
    assert "no pinner is called" in decode(staff, "nobody_has_this_name", 404)
    # Well-formed IDs that name nothing: an empty row, an unregistered type, a shard no
    # range covers. Their fields are still explained.
    empty = decode(staff, str((3 << 46) | (1 << 36) | 99_999_999), 404)
    assert "no pin is stored at local id 99999999 of shard 3" in empty
    assert "type 77 is not a registered type" in decode(staff, str(77 << 36 | 5), 404)
    assert "is in no range" in decode(staff, str(60_000 << 46 | 1 << 36 | 1), 404)


def test_topology_page_shows_documents_history_and_diffs(staff: Client, config_dir: Any) -> None:
    from shardstore.control.file_source import FileSource

    source = FileSource(config_dir)
    document = source.current("shards").document
    source.publish("shards", {**document, "open": [[0, 3]]}, author="ops_bob", reason="fewer open")
    page = text(staff.get("/ops/topology/"))
    assert "In force: shards v2" in page and "fewer open" in page and "ops_bob" in page
    assert '<span class="add">' in page and '<span class="remove">' in page
    assert "Roll back to v1" in page
    compared = text(staff.get("/ops/topology/", {"a": "2", "b": "1"}))
    assert "v2 → v1" in compared
    assert staff.get("/ops/topology/", {"a": "1", "b": "99"}).status_code == 404
    assert staff.get("/ops/topology/", {"a": "x", "b": "1"}).status_code == 400
    assert staff.get("/ops/topology/", {"document": "nope"}).status_code == 404
    redis = text(staff.get("/ops/topology/", {"document": "redis"}))
    assert "not published" in redis
    assert staff.get("/ops/topology/", {"page": "99"}).status_code == 404


def test_topology_page_diffs_a_map_written_with_slave_by_what_changed(
    staff: Client, config_dir: Any
) -> None:
    """A version an older release published names its replicas ``slave``: compared with a
    version published since, only what changed is marked, not every range."""
    from shardstore.control.file_source import FileSource

    old = json.loads((config_dir / "shards.json").read_text())
    scheme = next(iter(old["hosts"].values())).split("://")[0]
    old["hosts"]["spare"] = f"{scheme}://spare.invalid"
    old["ranges"][0]["slave"] = "spare"
    entry = config_dir / "history" / "shards" / f"{old['version']:010d}.json"
    entry.write_text(json.dumps({**json.loads(entry.read_text()), "document": old}))
    (config_dir / "shards.json").write_text(json.dumps(old))
    FileSource(config_dir).publish(
        "shards",
        {**old, "open": [[1, old["shard_count"] - 1]]},
        author="ops_bob",
        reason="fewer open",
    )
    compared = text(staff.get("/ops/topology/", {"a": "1", "b": "2"}))
    marked = re.findall(r'<span class="(?:add|remove)">([^<]*)</span>', compared)
    assert marked and not [line for line in marked if "slave" in line or "replica" in line]
    assert '"replicas": [' in html.unescape(compared) and '"spare"' in html.unescape(compared)


def test_cache_and_celery_pages_describe_the_embedded_default(staff: Client) -> None:
    caches = text(staff.get("/ops/caches/"))
    for pool in ("users", "boards", "pins", "lists"):
        assert f"<h2>{pool}</h2>" in caches
    assert "This process:" in caches and "Virtual shards" in caches
    celery = text(staff.get("/ops/celery/"))
    assert "Eager (no broker)" in celery or "Waiting" in celery


def test_journal_lists_entries_newest_first_and_pages_refuse_bad_input(
    staff: Client,
) -> None:
    for first in (0, 4):
        staff.post("/ops/actions/close-range/", {"first": first, "last": first + 1, "step": "plan"})
    page = text(staff.get("/ops/journal/"))
    assert page.index("close shards 4..5") < page.index("close shards 0..1")
    assert page.count("dry run") >= 2
    assert staff.get("/ops/journal/?page=2").status_code == 404
    assert staff.get("/ops/journal/?page=abc").status_code == 400
    for bad in ("999999", "99999999999999999999999999", "1x", "-1", "0", "01", "+1", "\u0661"):
        assert staff.get(f"/ops/journal/{bad}/").status_code == 404, bad
