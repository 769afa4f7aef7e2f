"""The secret key: from the environment, or (outside production) made once per install.

Django signs CSRF tokens, password-reset links and session HMACs with
``SECRET_KEY``, so a key anyone can read lets them forge those for every install
that uses it. The embedded default therefore makes a random key on its first
start and keeps it in ``VAR_DIR/secret_key`` (mode 0600, never committed:
``var/`` is git-ignored). Production takes ``PINBOARD_SECRET_KEY`` and refuses
to start without a strong one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from pathlib import Path

from django.core.exceptions import ImproperlyConfigured

KEY_FILE_NAME = "secret_key"
MIN_LENGTH = 50
MIN_DISTINCT = 5  # as Django's deploy check (security.W009) asks


def new_key() -> str:
    """A fresh key: 64 URL-safe characters (384 random bits)."""
    return secrets.token_urlsafe(48)


def check_strong(key: str | None, origin: str) -> str:
    """``key`` if it is long, varied and not public; ImproperlyConfigured naming ``origin``."""
    if not key:
        raise ImproperlyConfigured(
            f"{origin} is not set: production needs a secret key of {MIN_LENGTH}+ random"
            ' characters (python -c "import secrets; print(secrets.token_urlsafe(48))")'
        )
    if len(key) < MIN_LENGTH or len(set(key)) < MIN_DISTINCT:
        raise ImproperlyConfigured(
            f"{origin} is too weak: it must be at least {MIN_LENGTH} characters, at least"
            f" {MIN_DISTINCT} of them different"
        )
    if key.startswith("django-insecure-"):  # startproject's key, published with the project
        raise ImproperlyConfigured(f"{origin} is a key published in the source; make a new one")
    return key


def production_key(key: str | None) -> str:
    """Production's key (``PINBOARD_SECRET_KEY``), checked; never a file or a default."""
    return check_strong(key, "PINBOARD_SECRET_KEY")


def key_file(path: Path) -> str:
    """The key kept in ``path``, creating it if absent.

    The new key is written in full to a private temporary file, then hard-linked
    into place, which fails if ``path`` exists: of two processes starting at once
    one link wins, the other reads the winner's key, and no process ever reads a
    half-written file.
    """
    if not path.exists():
        temporary = path.with_name(f".{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as out:
                out.write(new_key() + "\n")
                out.flush()
                os.fsync(out.fileno())
            with contextlib.suppress(FileExistsError):  # another process made it first
                os.link(temporary, path)
        finally:
            temporary.unlink()
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise ImproperlyConfigured(
            f"{path} is readable by other users (mode {mode:o}); run: chmod 600 {path}"
        )
    return check_strong(path.read_text().strip(), str(path))
