"""SQL round trips per page: constant in the number of boards, pins and comments, and
none at all once the cache pools are warm; Redis round trips too.

The profile is the seeds' "Loading a Page": a mod-shard username lookup, then
on the pinner's shard the user (with counts), user_has_boards, boards by IN
(with counts), board_has_pins of every board at once, cover pins by IN.
Follow state comes from the Redis graph, not SQL, and so does the header's count of
unread notifications: one Redis call on every page a pinner sees, none for a visitor. A
grid's cards name each pin's pinner and board: one multi-get of the grid's users and
one of its boards, on the shards of the pins (a pin lives on its board's and owner's
shard), or none where the page has read them already (a board page; a list built ahead,
a feed, likes or the newest pins, whose boards are read first to leave out a secret
board's pins, and handed to the cards).
"""

from __future__ import annotations

from pinboard.data_plane import cached_store, get_feeds
from pinboard.follows.actions import follow_board, follow_user
from pinboard.likes.actions import like
from pinboard.pins.actions import add_comment, save_pin
from pinboard.pins.queries import board_pins_page
from pinboard.users.tokens import issue_token
from shardstore import shard_of
from tests.site.page_helpers import (
    board_url,
    board_with_pins,
    clear_caches,
    get_costs,
    get_counted,
    log_in,
    warm_cache_calls,
)

# username lookup + user, user_has_boards, boards, board_has_pins, cover pins, and the
# group boards they collaborate on (user_collaborates_on_boards: none here); in 4 steps:
# the username; the pinner and their lists; the boards and their newest pins; the covers
PROFILE = 7
PROFILE_STEPS = 4
SIGNED_IN = 1  # the session's pinner (follow state is read from Redis)
UNREAD = 1  # Redis: the header's count of unread notifications, for a signed-in pinner
CARDS = 2  # the grid's pinners by IN, its boards by IN (per read group of its pins)


def round_trips(*, steps: int, statements: int) -> int:
    """A page's SQL round trips: one per read step where the driver sends a step's
    statements on one host together (MySQL: the test's shards share a host), else one per
    statement (SQLite)."""
    return steps if cached_store().store.dialect(0).several_statements else statements


def test_profile_costs_the_same_for_one_board_and_for_twelve(client, make_user):
    small, big, visitor = make_user("small"), make_user("big"), make_user("visitor")
    board_with_pins(small, "Only board", 1)
    for n in range(12):
        board_with_pins(big, f"Board {n}", 5)
    small_cost, _ = get_counted(client, f"/{small['username']}/")
    big_costs = get_costs(client, f"/{big['username']}/")
    profile = round_trips(steps=PROFILE_STEPS, statements=PROFILE)
    assert small_cost == big_costs.sql == profile and big_costs.redis == 0
    assert big_costs.response.content.count(b'class="board-card"') == 12

    log_in(client, visitor)
    small_cost, _ = get_counted(client, f"/{small['username']}/")
    big_costs = get_costs(client, f"/{big['username']}/")
    assert small_cost == big_costs.sql == profile + SIGNED_IN
    assert big_costs.redis == 1 + UNREAD  # whether the visitor follows big, and the count
    warm = get_costs(client, f"/{big['username']}/", warm=True)
    assert warm.sql == 0 and warm.redis == 1 + UNREAD
    # the username; the pinner and their lists; the boards and their newest pins' IDs;
    # the covers (and group boards' owners): one step each; and the session's pinner
    assert warm_cache_calls(client, f"/{big['username']}/") == 4 + SIGNED_IN


def test_own_profile_reads_its_pinner_once(client, make_user):
    ada = make_user("ada")
    board_with_pins(ada, "Mine", 2)
    log_in(client, ada)
    costs = get_costs(client, f"/{ada['username']}/")
    # The session's pinner is the profile's user: one (cached) read; and their secret boards
    # (user_has_secret_boards: none here).
    assert costs.sql == round_trips(steps=PROFILE_STEPS, statements=PROFILE) + 1
    assert costs.redis == UNREAD  # no follow button on one's own profile


def test_board_page_costs_the_same_for_3_and_60_pins(client, make_user):
    owner, visitor = make_user("owner"), make_user("visitor")
    few, many = board_with_pins(owner, "Few", 3), board_with_pins(owner, "Many", 60)
    # username lookup, slug lookup, the board with its owner (objects of one shard: one
    # UNION ALL), board_has_pins, pins by IN; the cards name the owner and board the page
    # has read
    board_page = round_trips(steps=4, statements=5)
    few_cost, _ = get_counted(client, board_url(owner, few))
    many_cost, response = get_counted(client, board_url(owner, many))
    assert few_cost == many_cost == board_page
    assert response.content.count(b'class="pin"') == 50
    assert response.content.count(f'href="/{owner["username"]}/many/"'.encode()) == 50
    # username, slug, then the board, its owner and its list together, then the pins
    assert warm_cache_calls(client, board_url(owner, many)) == 4

    log_in(client, visitor)
    few_cost, _ = get_counted(client, board_url(owner, few))
    many_costs = get_costs(client, board_url(owner, many))
    assert few_cost == many_costs.sql == board_page + SIGNED_IN
    assert many_costs.redis == 1 + UNREAD  # whether the visitor follows the board, the count

    cursor = board_pins_page(many["id"]).cursor
    partial = get_costs(client, f"{board_url(owner, many)}?cursor={cursor}&partial=1")
    # a secret board's next page is its owner's too: the session's pinner is read
    assert partial.sql == board_page + SIGNED_IN and partial.redis == 0  # a chunk: no count
    get_counted(client, board_url(owner, many))
    warm_cost, _ = get_counted(client, board_url(owner, many), warm=True)
    assert warm_cost == 0


def test_likes_page_costs_the_same_for_1_and_60_likes(client, make_user):
    owner, few, many = make_user("owner"), make_user("few"), make_user("many")
    board = board_with_pins(owner, "Likeable", 60)
    pins = (
        board_pins_page(board["id"]).ids
        + board_pins_page(board["id"], cursor=board_pins_page(board["id"]).cursor).ids
    )
    like(few["id"], pins[0])
    for pin_id in pins:
        like(many["id"], pin_id)
    # username lookup, user (with counts), user_likes_pins, pins by IN, their boards by IN
    # (a secret board's pins are left out; the cards take them), then for the cards their
    # pinner; all on the owner's shard
    few_cost, _ = get_counted(client, f"/{few['username']}/likes/")
    many_cost, response = get_counted(client, f"/{many['username']}/likes/")
    assert few_cost == many_cost == 4 + CARDS
    assert response.content.count(b'class="pin"') == 50
    assert response.content.count(b'class="credit-board"') == 50
    warm = get_costs(client, f"/{many['username']}/likes/", warm=True)
    assert warm.sql == 0 and warm.redis == 0  # a visitor: no count to show
    assert warm_cache_calls(client, f"/{many['username']}/likes/") == 4 + CARDS


def test_the_cards_of_many_pinners_cost_one_read_of_them_per_read_group(client, make_user):
    """Liked pins of twelve pinners on shards of their own: their twelve users and twelve
    boards are read as the pins are, in one statement per read group (host or shard)."""
    fan = make_user("fan")
    pin_ids = []
    for n in range(12):
        board = board_with_pins(make_user("liked"), f"Board {n}", 2)
        pin_ids += board_pins_page(board["id"]).ids
    for pin_id in pin_ids:
        like(fan["id"], pin_id)
    groups = cached_store().store.read_groups(shard_of(pin_id) for pin_id in pin_ids)
    assert len(groups) > 1
    cost, response = get_counted(client, f"/{fan['username']}/likes/")
    assert cost == 3 + len(groups) * (1 + CARDS)  # lookup, user, likes; pins, pinners, boards
    assert response.content.count(b'class="credit-pinner"') == 24
    assert warm_cache_calls(client, f"/{fan['username']}/likes/") == 4 + CARDS


def test_pin_page_cost_does_not_grow_with_likes_saves_and_comments(client, make_user):
    owner, fan, visitor = make_user("owner"), make_user("fan"), make_user("visitor")
    board = board_with_pins(owner, "Pins", 2)
    quiet, busy = board_pins_page(board["id"]).ids
    fan_board = board_with_pins(fan, "Fan board", 0)
    for pin_id in (quiet, busy):
        add_comment(fan["id"], pin_id, "first")
    for n in range(30):
        add_comment(fan["id"], busy, f"comment {n}")
    commenters = [make_user("commenter") for _ in range(8)]  # on shards of their own
    assert len({shard_of(c["id"]) for c in commenters}) > 1
    for commenter in commenters:
        add_comment(commenter["id"], busy, "me too")
    like(fan["id"], busy)
    save_pin(fan["id"], busy, fan_board["id"])
    follow_user(fan["id"], owner["id"])
    # the pin, pin_has_comments; then the board, its owner and the comments by IN (each
    # names its author), objects of one shard: one UNION ALL
    pin_page = round_trips(steps=2, statements=3)
    quiet_cost, _ = get_counted(client, f"/pin/{quiet}/")
    busy_cost, response = get_counted(client, f"/pin/{busy}/")
    assert quiet_cost == busy_cost == pin_page
    assert all(c["username"].encode() in response.content for c in commenters)
    # the pin and its comments' list together, then its board, owner and comments
    assert warm_cache_calls(client, f"/pin/{busy}/") == 2

    board_with_pins(visitor, "Visitor board", 0)
    log_in(client, visitor)
    # + the session's pinner, the like state, the boards they may pin to
    # (user_has_secret_boards, user_has_boards, user_collaborates_on_boards: one step;
    # then boards by IN)
    quiet_cost, _ = get_counted(client, f"/pin/{quiet}/")
    busy_cost, _ = get_counted(client, f"/pin/{busy}/")
    assert quiet_cost == busy_cost == pin_page + round_trips(steps=4, statements=6)
    warm = get_costs(client, f"/pin/{busy}/", warm=True)
    assert warm.sql == 0 and warm.redis == UNREAD


def test_api_lists_read_their_board_or_pin_with_the_list(client, make_user):
    owner, fan = make_user("owner"), make_user("fan")
    board = board_with_pins(owner, "Pins", 3)
    pin = board_pins_page(board["id"]).ids[0]
    add_comment(fan["id"], pin, "nice")
    # the board (whose privacy decides) and its pins' list together, then the pins
    assert warm_cache_calls(client, f"/api/v1/boards/{board['id']}/pins") == 2
    # the pin and its comments' list, then its board and the comments, then their authors
    assert warm_cache_calls(client, f"/api/v1/pins/{pin}/comments") == 3
    like(fan["id"], pin)
    # the pin and its likers' list, then its board and the likers
    assert warm_cache_calls(client, f"/api/v1/pins/{pin}/likes") == 2


def test_a_cold_home_feed_reads_its_pins_and_boards_in_one_statement_per_host(client, make_user):
    viewer = make_user("viewer")
    authors = [make_user("author") for _ in range(12)]  # on shards of their own
    for author in authors:
        board_with_pins(author, "Mine", 4)
        follow_user(viewer["id"], author["id"])  # merges their pins into the feed
    shards = {shard_of(author["id"]) for author in authors}
    assert len(shards) > 2
    token = issue_token(viewer)["token"]
    client.get("/api/v1/feed", HTTP_AUTHORIZATION=f"Token {token}")  # the visit is noted
    clear_caches()
    with cached_store().count_queries() as queries:
        response = client.get("/api/v1/feed", HTTP_AUTHORIZATION=f"Token {token}")
    assert response.status_code == 200 and len(response.json()["items"]) == 48
    store = cached_store().store
    hosts = {store.topology.master_of(shard) for shard in shards}
    spans = all(backend.spans_shards for backend in store.backends().values())
    # the token, the pinner, then the pins with the boards their feed entries name (a pin
    # lives on its board's shard; secret boards' pins are left out): objects of one host,
    # one UNION ALL per host (or per shard)
    assert queries.count == 2 + (len(hosts) if spans else len(shards)), queries.statements


def test_a_visitors_home_reads_its_pins_in_one_statement_per_read_group(client, make_user):
    for _ in range(6):  # pinners on shards of their own
        board_with_pins(make_user("author"), "Mine", 10)
    ids = get_feeds().recent_page().ids
    groups = cached_store().store.read_groups(shard_of(pin_id) for pin_id in ids)
    cold_cost, response = get_counted(client, "/")
    # pins, their boards, their pinners: each by IN, by host or by shard
    assert len(ids) == 50 and cold_cost == len(groups) * (1 + CARDS)
    assert response.content.count(b'class="pin"') == 50
    warm = get_costs(client, "/", warm=True)
    assert warm.sql == 0 and warm.redis == 1  # the newest pins' IDs; a visitor has no count
    assert warm_cache_calls(client, "/") == 1 + CARDS


def test_a_pinners_home_names_the_pinners_and_boards_of_its_pins(client, make_user):
    viewer = make_user("viewer")
    authors = [make_user("author") for _ in range(6)]  # on shards of their own
    for author in authors:
        board_with_pins(author, "Mine", 5)
        follow_user(viewer["id"], author["id"])
    board_with_pins(viewer, "My own", 2)  # in the feed too: the session's pinner, reused
    log_in(client, viewer)
    client.get("/")  # the visit is noted
    ids = get_feeds().page(viewer["id"]).ids
    read_groups = cached_store().store.read_groups
    groups = read_groups(shard_of(pin_id) for pin_id in ids)  # the pins with their boards
    authors_groups = read_groups(shard_of(author["id"]) for author in authors)
    cold_cost, response = get_counted(client, "/")
    assert cold_cost == SIGNED_IN + len(groups) + len(authors_groups)
    assert response.content.count(b'class="credit-pinner"') == 32
    assert response.content.count(f'href="/{viewer["username"]}/my-own/"'.encode()) == 2
    warm_cost, _ = get_counted(client, "/", warm=True)
    assert warm_cost == 0
    # the pins with the boards their entries name, then the cards' pinners
    assert warm_cache_calls(client, "/") == SIGNED_IN + 2


def test_settings_cost_only_the_sessions_pinner(client, make_user):
    ann = make_user("ann")
    log_in(client, ann)
    cold = get_costs(client, "/settings/")
    assert cold.sql == SIGNED_IN and b'name="display_name"' in cold.response.content
    warm = get_costs(client, "/settings/", warm=True)
    assert warm.sql == 0 and warm.redis == UNREAD


def test_notifications_page_costs_a_few_multi_gets_however_many_it_shows(client, make_user):
    few, many = make_user("few"), make_user("many")
    actors = [make_user("actor") for _ in range(8)]  # on shards of their own
    assert len({shard_of(a["id"]) for a in actors}) > 1
    for owner, acting in ((few, actors[:1]), (many, actors)):
        board = board_with_pins(owner, "Mine", 2)
        liked, commented = board_pins_page(board["id"]).ids
        for actor in acting:
            like(actor["id"], liked)
            add_comment(actor["id"], commented, "nice")
            follow_board(actor["id"], board["id"])
            follow_user(actor["id"], owner["id"])
    groups = cached_store().store.read_groups(shard_of(a["id"]) for a in actors)
    for owner, shown, actor_reads in ((few, 4, 1), (many, 32, len(groups))):
        log_in(client, owner)
        cold = get_costs(client, "/notifications/")
        # the session's pinner; comments, pins, boards by IN on the owner's shard; the
        # actors by IN, one statement per read group
        assert cold.sql == SIGNED_IN + 3 + actor_reads
        assert cold.response.content.count(b'<li class="notification unread">') == shown
        # the page of entries with the read mark, the header's count (a visit marks nothing)
        assert cold.redis == 1 + UNREAD
        warm = get_costs(client, "/notifications/", warm=True)
        assert warm.sql == 0 and warm.redis == 1 + UNREAD
        assert warm.response.content.count(b'<li class="notification unread">') == shown
