"""Long jobs cut into chunks by shard: what each kind of job does, one chunk at a time.

A job (a reconcile of every shard, a follower-graph rebuild, a backfill) is too
long for one process to run start to end without a crash somewhere. So a job
kind says two things, and nothing about queues or progress:

* how to cut the work into chunks (``chunks``): by shard, since a shard is the
  unit the data plane already works in (every row lives on exactly one, and a
  shard keeps its number when it moves to another host). A chunk is one shard
  or a short run of shards on one range;
* how to run one chunk (``run_chunk``), returning a small summary of counts
  (``{"checked": 1200, "repaired": 3}``).

Running a chunk twice must be harmless: a chunk whose worker died is run again,
and the site may re-deliver one that already finished. The kind here (reconcile)
only makes a shard agree with its source of truth, so a second run finds nothing to do.

Whoever runs the chunks keeps the job's state (the site: Celery tasks and the
control database, ``pinboard/ops/jobs.py``); this module needs neither.

A new kind (a backfill, the cleanup of the tables a split leaves behind) is a
``register(JobKind(...))`` in its own module: the library's are listed in
``KIND_MODULES`` so that ``kinds()`` imports them, a user's (the social model's
``social.jobs``, the site's backfills) are imported by ``load``::

    def drop_renamed(context: JobContext, chunk: Chunk, params: Params) -> Summary:
        ...  # for shard in chunk.shards: drop what is left there; return {"dropped": n}

    register(JobKind("cleanup", "Drop the tables a split left behind", drop_renamed))
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .exceptions import ShardStoreError
from .interface import StoreInterface
from .reconcile import reconcile
from .redis_shards import RedisShards

Params = Mapping[str, Any]
Summary = dict[str, int]

#: Modules that register more job kinds, imported by ``kinds()`` (after this one).
KIND_MODULES: tuple[str, ...] = ("shardstore.control.split_cleanup",)

#: Shards per chunk unless a job says otherwise: one shard is a few seconds of work on a
#: full shard, and a chunk that fails or is re-run costs no more than that.
SHARDS_PER_CHUNK = 1
MAX_SHARDS_PER_CHUNK = 64


class JobError(ShardStoreError, ValueError):
    """An unknown kind, or parameters a kind cannot take."""


@dataclass(frozen=True)
class Chunk:
    """Shards ``first`` to ``last``, both included: the unit of work, of retry and of progress."""

    first: int
    last: int

    @property
    def shards(self) -> range:
        return range(self.first, self.last + 1)

    @property
    def label(self) -> str:
        return (
            f"shard {self.first}" if self.first == self.last else f"shards {self.first}-{self.last}"
        )


@dataclass
class JobContext:
    """What a chunk runs against: the store as the site writes through it (so repairs
    invalidate caches), and the site's Redis, opened only if a kind asks for it."""

    store: StoreInterface
    redis_factory: Callable[[], RedisShards] | None = None
    _redis: RedisShards | None = field(default=None, repr=False)
    #: An operator's connection to a MySQL server by address (for kinds that change
    #: servers themselves, such as the cleanup after a split); None: the address's own.
    mysql: Callable[[str], Any] | None = None
    #: Where the backups are (the cleanup's chunks check a backup of what they drop).
    backups: Any = None

    @property
    def redis(self) -> RedisShards:
        if self._redis is None:
            if self.redis_factory is None:
                raise JobError("this job needs Redis, and none was given")
            self._redis = self.redis_factory()
        return self._redis


ChunkRunner = Callable[[JobContext, Chunk, Params], Summary]
Cutter = Callable[[JobContext, Params], list[Chunk]]


def by_shard(context: JobContext, params: Params) -> list[Chunk]:
    """Every shard of the shard map (or ``params["shards"] = [first, last]``), in runs of
    ``params["per_chunk"]`` shards that never cross a range: a chunk talks to one host."""
    topology = context.store.topology
    shards = params.get("shards")
    shards = (0, topology.shard_count - 1) if shards is None else shards
    per_chunk = params.get("per_chunk")
    per_chunk = SHARDS_PER_CHUNK if per_chunk is None else per_chunk
    if not isinstance(shards, list | tuple) or len(shards) != 2:
        raise JobError("shards is [first, last]")
    if not all(type(n) is int for n in (*shards, per_chunk)):
        raise JobError("shards is [first, last] and per_chunk a number of shards")
    first, last = shards
    if not 0 <= first <= last < topology.shard_count:
        raise JobError(f"shards {first}-{last}: the shard map has shards 0-{topology.shard_count - 1}")  # fmt: skip
    if not 1 <= per_chunk <= MAX_SHARDS_PER_CHUNK:
        raise JobError(f"shards per chunk: 1 to {MAX_SHARDS_PER_CHUNK}, not {per_chunk}")
    chunks = []
    shard = first
    while shard <= last:
        end = min(shard + per_chunk - 1, last, topology.range_of(shard).last)
        chunks.append(Chunk(shard, end))
        shard = end + 1
    return chunks


@dataclass(frozen=True)
class JobKind:
    """A kind of long job: its name (``manage.py shardstore job start NAME``), a line saying
    what it does, how it runs a chunk, how it cuts the work, and the parameters it takes
    beyond the common ``shards`` and ``per_chunk`` (name -> what it means)."""

    name: str
    title: str
    run_chunk: ChunkRunner
    chunks: Cutter = by_shard
    params: Mapping[str, str] = field(default_factory=dict)
    #: It drops what cannot be had back (a split's copies): the console's destructive role
    #: starts and resumes it.
    destructive: bool = False

    def check(self, params: Params) -> dict[str, Any]:
        """The job's parameters, refused with a ``JobError`` if the kind does not take one."""
        unknown = set(params) - {"shards", "per_chunk", *self.params}
        if unknown:
            takes = ", ".join(sorted({"shards", "per_chunk", *self.params}))
            raise JobError(f"{self.name} takes {takes}; not {', '.join(sorted(unknown))}")
        return dict(params)


KINDS: dict[str, JobKind] = {}


def register(kind: JobKind) -> JobKind:
    if kind.name in KINDS:
        raise ValueError(f"two job kinds are called {kind.name}")
    KINDS[kind.name] = kind
    return kind


def load(modules: Iterable[str]) -> None:
    """Import modules that register job kinds (each once: a module's import registers)."""
    for name in modules:
        importlib.import_module(name)


def kinds() -> dict[str, JobKind]:
    """Every registered kind, by name."""
    load(KIND_MODULES)
    return KINDS


def kind(name: str) -> JobKind:
    found = kinds().get(name)
    if found is None:
        raise JobError(f"no job kind {name!r}; there are: {', '.join(sorted(KINDS))}")
    return found


# -- the kinds -----------------------------------------------------------------------


def _reconcile_chunk(context: JobContext, chunk: Chunk, params: Params) -> Summary:
    """Every relation with an inverse, on the chunk's shards (shardstore/reconcile.py)."""
    store = context.store
    totals = {"checked": 0, "missing_inverse": 0, "orphan_inverse": 0}
    for relation in store.catalog.relations.values():
        if relation.inverse:
            report = reconcile(
                store, relation.name, repair=not params.get("check"), shards=chunk.shards
            )
            totals["checked"] += report.checked
            totals["missing_inverse"] += report.missing_inverse
            totals["orphan_inverse"] += report.orphan_inverse
    return totals


CHECK = "true: report only, change nothing"

register(
    JobKind(
        "reconcile",
        "Repair mapping pairs left half-written (a forward row without its inverse, or the reverse)",
        _reconcile_chunk,
        params={"check": CHECK},
    )
)


def _expire_keys_chunk(context: JobContext, chunk: Chunk, params: Params) -> Summary:
    """Delete the chunk's shards' expired idempotency keys (shardstore/idempotency.py)."""
    keys = context.store.idempotency_keys()
    return {"expired": sum(keys.expire(shard_id) for shard_id in chunk.shards)}


register(
    JobKind(
        "idempotency-expire",
        "Delete expired idempotency keys (a daily run keeps their tables to a day of creates)",
        _expire_keys_chunk,
    )
)
