"""Follow semantics (seed 004), case by case, through the actions."""

from __future__ import annotations

from pinboard.boards.actions import create_board
from pinboard.boards.queries import follower_count, get_board
from pinboard.data_plane import cached_store, get_graph
from pinboard.follows.actions import follow_board, follow_user, unfollow_board, unfollow_user
from pinboard.follows.queries import followed_among, follows_board, follows_user
from pinboard.users.queries import get_user
from social.graph_sync import sync_graph


def board_followers(board_id: int) -> int:
    board = get_board(board_id)
    owner = get_user(board["owner_id"])
    return follower_count(board, owner["counts"]["user_followed_by_users"])


def test_following_a_user_follows_all_their_boards_present_and_future(make_user):
    ann, bob = make_user("ann"), make_user("bob")
    recipes = create_board(bob["id"], "Recipes")
    follow_user(ann["id"], bob["id"])
    later = create_board(bob["id"], "Later board")
    assert follows_user(ann["id"], bob["id"])
    assert follows_board(ann["id"], recipes) and follows_board(ann["id"], later)
    assert board_followers(recipes["id"]) == 1 and board_followers(later["id"]) == 1


def test_follow_user_then_unfollow_one_board(make_user):
    ann, bob = make_user("ann"), make_user("bob")
    recipes, travel = create_board(bob["id"], "Recipes"), create_board(bob["id"], "Travel")
    follow_user(ann["id"], bob["id"])
    unfollow_board(ann["id"], travel["id"])
    assert follows_board(ann["id"], recipes)
    assert not follows_board(ann["id"], get_board(travel["id"]))
    assert follows_user(ann["id"], bob["id"])
    assert board_followers(recipes["id"]) == 1
    assert board_followers(travel["id"]) == 0
    follow_board(ann["id"], travel["id"])  # and back
    assert follows_board(ann["id"], get_board(travel["id"]))
    assert board_followers(travel["id"]) == 1


def test_follow_a_board_of_a_user_you_do_not_follow(make_user):
    ann, bob = make_user("ann"), make_user("bob")
    recipes, travel = create_board(bob["id"], "Recipes"), create_board(bob["id"], "Travel")
    follow_board(ann["id"], recipes["id"])
    assert follows_board(ann["id"], get_board(recipes["id"]))
    assert not follows_board(ann["id"], travel)
    assert not follows_user(ann["id"], bob["id"])
    assert board_followers(recipes["id"]) == 1 and board_followers(travel["id"]) == 0
    unfollow_board(ann["id"], recipes["id"])
    assert not follows_board(ann["id"], get_board(recipes["id"]))
    assert board_followers(recipes["id"]) == 0


def test_unfollow_a_user_you_also_follow_a_board_of(make_user):
    ann, bob, cid = make_user("ann"), make_user("bob"), make_user("cid")
    recipes, travel = create_board(bob["id"], "Recipes"), create_board(bob["id"], "Travel")
    follow_board(ann["id"], recipes["id"])
    follow_board(cid["id"], recipes["id"])
    follow_user(ann["id"], bob["id"])  # subsumes ann's follow of Recipes
    assert board_followers(recipes["id"]) == 2  # ann counted once, cid explicitly
    unfollow_board(ann["id"], travel["id"])
    unfollow_user(ann["id"], bob["id"])
    assert not follows_user(ann["id"], bob["id"])
    assert not follows_board(ann["id"], get_board(recipes["id"]))
    assert not follows_board(ann["id"], get_board(travel["id"]))
    assert follows_board(cid["id"], get_board(recipes["id"]))
    assert board_followers(recipes["id"]) == 1 and board_followers(travel["id"]) == 0
    follow_user(ann["id"], bob["id"])  # a fresh follow has no stale unfollows
    assert follows_board(ann["id"], get_board(travel["id"]))


def test_counts_and_filter(make_user):
    ann, bob, cid, dee = (make_user(n) for n in ("ann", "bob", "cid", "dee"))
    follow_user(ann["id"], bob["id"])
    follow_user(ann["id"], cid["id"])
    follow_user(dee["id"], bob["id"])
    assert sorted(followed_among(ann["id"], [bob["id"], cid["id"], dee["id"]])) == sorted(
        [bob["id"], cid["id"]]
    )
    assert get_user(ann["id"])["counts"]["user_follows_users"] == 2
    assert get_user(bob["id"])["counts"]["user_followed_by_users"] == 2
    follow_user(ann["id"], bob["id"])  # twice is once
    assert get_user(bob["id"])["counts"]["user_followed_by_users"] == 2


def test_live_follows_keep_the_redis_graph_equal_to_mysql(make_user):
    """Every action mirrors its MySQL writes into Redis with the same sequences, so a
    check of the whole graph against the mapping tables finds no drift."""
    ann, bob, cid = make_user("ann"), make_user("bob"), make_user("cid")
    recipes, travel = create_board(bob["id"], "Recipes"), create_board(bob["id"], "Travel")
    follow_board(ann["id"], recipes["id"])
    follow_board(cid["id"], travel["id"])
    follow_user(ann["id"], bob["id"])
    follow_user(ann["id"], bob["id"])  # again: nothing changes, in MySQL or in Redis
    unfollow_board(ann["id"], travel["id"])
    follow_user(bob["id"], cid["id"])
    unfollow_user(bob["id"], cid["id"])
    report = sync_graph(cached_store().store, get_graph(), repair=False)
    assert (report.keys_repaired, report.keys_removed, report.drift) == (0, 0, [])
    assert report.keys_checked > 0
