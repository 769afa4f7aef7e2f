"""The mapping tables the social model reads and keeps, by the names it owns.

The follower graph is the truth of the follow tables, rebuilt into Redis from them; home
feeds are built from the pins lists. A site's catalog includes these relations, with
object types named ``user``, ``board`` and ``pin`` of its own choosing (ids, tables,
pools); the library is handed the whole and knows none of the names.
"""

from shardstore import Relation, inverse_pair

RELATIONS = (
    # A pinner's public boards and pins; a secret board and its pins are listed apart
    # (rules.board_list, rules.pin_list), so that every list, count and feed built from
    # the public ones leaves them out. A feed's rebuild reads them, and every pin of a board.
    Relation("user_has_boards", "user", "board"),
    Relation("user_has_pins", "user", "pin"),
    Relation("user_has_secret_boards", "user", "board"),
    Relation("user_has_secret_pins", "user", "pin"),
    *inverse_pair("board_has_pins", "pin_owned_by_board", "board", "pin"),
    # The follower graph: pinners, boards, and boards a pinner follows no more although
    # they follow the owner (an explicit unfollow outlives the implicit follow).
    *inverse_pair("user_follows_users", "user_followed_by_users", "user", "user"),
    *inverse_pair("user_follows_boards", "board_followed_by_users", "user", "board"),
    *inverse_pair("user_unfollows_boards", "board_unfollowed_by_users", "user", "board"),
)
