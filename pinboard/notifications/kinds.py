"""The kinds of notification, as stored in each entry (shardstore/notifications.py).

Each names what its entry's object is: the pin liked or saved, the comment written, the
pinner followed (the recipient), the board followed.
"""

from __future__ import annotations

LIKE = "like"
SAVE = "save"
COMMENT = "comment"
FOLLOW = "follow"
BOARD_FOLLOW = "follow_board"

KINDS = (LIKE, SAVE, COMMENT, FOLLOW, BOARD_FOLLOW)
#: The kinds whose object is a pin of the recipient's.
ON_PINS = (LIKE, SAVE)
