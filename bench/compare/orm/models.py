"""pinboard's data as one relational schema: foreign keys, unique constraints, and an index
for every list a page reads.

Primary keys hold pinboard's 64-bit IDs (``shard << 46 | type << 36 | local_id``), which
bench/compare/copy.py writes explicitly, so one URL names the same thing on both builds;
rows made here (a save, a comment) take AUTO_INCREMENT's next value above them.

Counts are columns (the ``*_count`` fields), which the writes (actions.py) keep up to
date by adding to them in the database, in the transaction of the row they count; the
copy (bench/compare/copy.py) inserts rows at 0 (a default in the database) and computes
them once. A read is then one indexed read of rows,
with no counting at all.

Lists are read newest first on (created_at, id). The indexes are ascending on purpose:
InnoDB appends the primary key to every secondary index, so (board, created_at) is really
(board, created_at, id), and "newest first, ties by id" is that index read backwards, with
no sort. A descending created_at would leave the appended id ascending, and a sort.
"""

from __future__ import annotations

from functools import lru_cache

from django.core.files.storage import default_storage
from django.db import models
from django.utils import timezone


@lru_cache(maxsize=50_000)
def media_url(key: str) -> str:
    """A stored file's URL. Files are never rewritten, so each key's URL is built once, as
    pinboard builds them: the comparison is about reading data, not joining strings."""
    return default_storage.url(key)


class Pinner(models.Model):
    # The database's case-insensitive collation makes both unique in any case, as
    # pinboard's casefolded username and email lookups do.
    username = models.CharField(max_length=30, unique=True)
    email = models.EmailField(unique=True)
    display_name = models.CharField(max_length=50, blank=True, default="")
    about = models.TextField(blank=True, default="")
    password = models.CharField(max_length=128)
    created_at = models.DateTimeField(default=timezone.now)
    # The stored files of the avatar's two squares (pinboard's ``avatar`` by size); "": none.
    avatar_small_key = models.CharField(max_length=255, blank=True, default="")
    avatar_large_key = models.CharField(max_length=255, blank=True, default="")
    follower_count = models.IntegerField(default=0, db_default=0)
    following_count = models.IntegerField(default=0, db_default=0)
    # public boards and their pins only: a secret board is its owner's alone
    board_count = models.IntegerField(default=0, db_default=0)
    pin_count = models.IntegerField(default=0, db_default=0)
    like_count = models.IntegerField(default=0, db_default=0)

    def __str__(self) -> str:
        return self.username

    def avatar_urls(self) -> dict[int, str]:
        """The avatar's URLs by side in pixels (60, 120); empty without one."""
        if not self.avatar_small_key:
            return {}
        return {60: media_url(self.avatar_small_key), 120: media_url(self.avatar_large_key)}


class Board(models.Model):
    owner = models.ForeignKey(Pinner, on_delete=models.CASCADE, related_name="boards")
    name = models.CharField(max_length=100)
    slug = models.SlugField(max_length=100, db_index=False)  # (owner, slug) is unique
    description = models.TextField(blank=True, default="")
    secret = models.BooleanField(default=False)  # seen by its owner only
    created_at = models.DateTimeField(default=timezone.now)
    pin_count = models.IntegerField(default=0, db_default=0)
    # The board's own followers, plus its owner's (following a pinner follows their
    # boards), less those who unfollowed it.
    follower_count = models.IntegerField(default=0, db_default=0)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["owner", "slug"], name="board_slug")]
        indexes = [models.Index(fields=["owner", "created_at"], name="board_owner_newest")]

    def __str__(self) -> str:
        return self.name


class Pin(models.Model):
    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="pins")
    owner = models.ForeignKey(Pinner, on_delete=models.CASCADE, related_name="pins")
    description = models.TextField(blank=True, default="")
    link = models.URLField(max_length=2048, blank=True, default="")
    image_key = models.CharField(max_length=255)
    thumbnail_key = models.CharField(max_length=255)
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    thumbnail_width = models.PositiveIntegerField()
    thumbnail_height = models.PositiveIntegerField()
    # The grid's thumbnail for sharper screens (srcset), when the image is wide enough.
    thumbnail_2x_key = models.CharField(max_length=255, blank=True, default="")
    thumbnail_2x_width = models.PositiveIntegerField(null=True, blank=True)
    saved_from = models.ForeignKey(
        "self", null=True, blank=True, on_delete=models.SET_NULL, related_name="saves"
    )
    created_at = models.DateTimeField(default=timezone.now)
    like_count = models.IntegerField(default=0, db_default=0)
    save_count = models.IntegerField(default=0, db_default=0)
    comment_count = models.IntegerField(default=0, db_default=0)

    class Meta:
        indexes = [
            models.Index(fields=["board", "created_at"], name="pin_board_newest"),
            models.Index(fields=["owner", "created_at"], name="pin_owner_newest"),
        ]

    def __str__(self) -> str:
        return f"pin {self.pk}"

    @property
    def image_url(self) -> str:
        return media_url(self.image_key)

    @property
    def thumbnail_url(self) -> str:
        return media_url(self.thumbnail_key)

    @property
    def thumbnail_2x_url(self) -> str | None:
        return media_url(self.thumbnail_2x_key) if self.thumbnail_2x_key else None


class Like(models.Model):
    user = models.ForeignKey(Pinner, on_delete=models.CASCADE, related_name="likes")
    pin = models.ForeignKey(Pin, on_delete=models.CASCADE, related_name="likes")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["user", "pin"], name="like_once")]
        indexes = [models.Index(fields=["pin", "created_at"], name="like_pin_newest")]

    def __str__(self) -> str:
        return f"{self.user_id} likes {self.pin_id}"


class Comment(models.Model):
    pin = models.ForeignKey(Pin, on_delete=models.CASCADE, related_name="comments")
    author = models.ForeignKey(Pinner, on_delete=models.CASCADE, related_name="comments")
    text = models.TextField()
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        indexes = [models.Index(fields=["pin", "created_at"], name="comment_pin_oldest")]

    def __str__(self) -> str:
        return f"comment {self.pk} on {self.pin_id}"


class UserFollow(models.Model):
    """Following a pinner follows all their boards, less those unfollowed one by one."""

    follower = models.ForeignKey(Pinner, on_delete=models.CASCADE, related_name="following")
    followed = models.ForeignKey(Pinner, on_delete=models.CASCADE, related_name="followers")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["follower", "followed"], name="user_follow_once")
        ]

    def __str__(self) -> str:
        return f"{self.follower_id} follows {self.followed_id}"


class BoardFollow(models.Model):
    """A board followed on its own, by someone who does not follow its owner."""

    follower = models.ForeignKey(Pinner, on_delete=models.CASCADE, related_name="board_follows")
    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="followers")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["follower", "board"], name="board_follow_once")
        ]

    def __str__(self) -> str:
        return f"{self.follower_id} follows board {self.board_id}"


class BoardUnfollow(models.Model):
    """A board of a followed pinner that the follower stopped following."""

    user = models.ForeignKey(Pinner, on_delete=models.CASCADE, related_name="board_unfollows")
    board = models.ForeignKey(Board, on_delete=models.CASCADE, related_name="unfollowers")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["user", "board"], name="board_unfollow_once")
        ]

    def __str__(self) -> str:
        return f"{self.user_id} unfollows board {self.board_id}"


class ApiToken(models.Model):
    """An API token, kept as the SHA-256 of what the client sends (as DRF-style tables do)."""

    key_hash = models.CharField(max_length=64, unique=True)
    user = models.ForeignKey(Pinner, on_delete=models.CASCADE, related_name="api_tokens")
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"token {self.pk} of {self.user_id}"
