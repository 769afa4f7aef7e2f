"""The kinds of notification, as stored in each entry (social/notifications.py).

Each names what its entry's object is: the pin liked or saved, the comment written, the
pinner followed (the recipient), the board followed, the board invited to.
"""

from __future__ import annotations

LIKE = "like"
SAVE = "save"
COMMENT = "comment"
FOLLOW = "follow"
BOARD_FOLLOW = "follow_board"
INVITE = "invite"  # to a board as a collaborator: the object is the board

KINDS = (LIKE, SAVE, COMMENT, FOLLOW, BOARD_FOLLOW, INVITE)
#: The kinds whose object is a board.
ON_BOARDS = (BOARD_FOLLOW, INVITE)
#: The kinds whose object is a pin of the recipient's.
ON_PINS = (LIKE, SAVE)
