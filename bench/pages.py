"""Page latency and SQL round trips at 10,000 and at 1,000,000 pins, served by gunicorn on MariaDB.

What it does, end to end:

1. Starts a private MariaDB (toolkit/servers.py), or uses ``--mysql-address``, and
   writes a topology file: 64 shards on two host names that both point at that
   one server, ``lookup_shards`` 64. Runs ``manage.py migrate`` and
   ``manage.py shardstore init`` with ``PINBOARD_TOPOLOGY`` and a temporary
   ``PINBOARD_VAR_DIR``.
2. Loads pinners and boards (2,000 pinners on random shards, 10 boards each,
   with their username, email and board-slug lookups), then pins up to 10,000
   in all. The bulk goes in (bench/bulkload.py) as multi-row INSERTs straight
   into the shard tables (pins, board_has_pins + pin_owned_by_board,
   user_has_pins, user_has_boards, mapping_counts) with exactly the rows and
   JSON the site's actions write: objects colocated with their owner,
   sequences in microseconds, one real image stored once and shared by every
   pin. The probe pinner, its 10 boards, the newest pins of its boards, a few
   comments, likes and follows are made through the real actions (sign_up,
   create_board, create_pin, add_comment, like, follow_user). Mapping counts
   are then checked against the rows.
3. Serves the site with gunicorn and measures, for the probe's profile
   ``/<username>/``, board ``/<username>/<slug>/`` and pin ``/pin/<id>/``: p50
   and p99 over ``--requests`` sequential keep-alive requests (pages taken in
   turn), and the SQL round trips of each page counted in-process with
   ``get_store().count_queries()`` through Django's test client on the same store.
   The cache pools live in a private memcached and the follower graph in a
   private Redis (toolkit/servers.py), shared by every process, so each page is
   measured twice: "cold" (pools emptied, untimed, before every request: every
   read goes to MySQL, which is what grows with data) and "warm" (steady state).
   Before each measurement it waits until MariaDB is idle after the bulk load.
4. Grows the same store to ``--pins-large`` (default 1,000,000) pins on the
   other pinners' boards (the probe pages show the same content at both
   sizes: only the amount of data around them changes), restarts gunicorn and
   measures again. Prints the table and p50(large)/p50(small) per page
   (acceptance: at most 1.3).

    python bench/pages.py                              # the full run (about 10 minutes here)
    python bench/pages.py --pins-large 100000          # a quick run
    python bench/pages.py --mysql-address mysql://root@127.0.0.1:3306   # an empty server

Pages are requested signed out. Settings are ``pinboard.settings.prod`` by
default (DEBUG off; the base settings have no environment switch for DEBUG,
and prod differs from base in its secret key and HTTPS-only settings: requests
carry ``X-Forwarded-Proto: https``, as the load balancer's do);
``--settings pinboard.settings.dev`` measures with DEBUG on.
"""

from __future__ import annotations

import argparse
import http.client
import json
import math
import os
import random
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import unquote, urlsplit

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import MySQLdb  # noqa: E402

from bench.bulkload import (  # noqa: E402
    BOARD_NAMES,
    DAY,
    Loader,
    load_pinners,
    load_pins,
    table_sizes,
    verify,
)
from shardstore import Topology  # noqa: E402
from toolkit.servers import DIE_WITH_PARENT  # noqa: E402
from toolkit.site_processes import GUNICORN_CONF  # noqa: E402

#: MariaDB options added to toolkit/servers.py's own (which run it in /dev/shm with
#: innodb_flush_log_at_trx_commit=0, no doublewrite, no binlog).
MARIADB_ARGS = [
    "--innodb-buffer-pool-size=2G",
    "--innodb-log-file-size=512M",
    "--max-allowed-packet=64M",
]
#: What the load balancer adds to every request it forwards: production settings
#: redirect plain HTTP to HTTPS.
BEHIND_TLS = {"X-Forwarded-Proto": "https"}


# -- processes ----------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def manage(env: dict[str, str], *args: str) -> None:
    subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, check=True)


class Gunicorn:
    """gunicorn serving pinboard.wsgi; stopped by its own PID.

    Started from the main thread behind ``DIE_WITH_PARENT`` (setpriv), so it gets SIGTERM
    if this benchmark dies, with no Python run in the forked child (a preexec_fn there
    could close the bulk loader's connections, held by other threads).
    """

    def __init__(self, env: dict[str, str], workers: int, threads: int, log: Path) -> None:
        self.port = free_port()
        self._log = open(log, "ab")  # noqa: SIM115 - closed in stop()
        self.process = subprocess.Popen(
            [
                *DIE_WITH_PARENT,
                sys.executable,
                "-m",
                "gunicorn",
                "pinboard.wsgi",
                "-c",
                str(GUNICORN_CONF),
                "-w",
                str(workers),
                "--threads",
                str(threads),
                "-b",
                f"127.0.0.1:{self.port}",
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env={"PINBOARD_GUNICORN_ACCESS_LOG": "", **env},  # no access log under load
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, path: str, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited with {self.process.returncode}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", path, headers=BEHIND_TLS)
                if conn.getresponse().status == 200:
                    conn.close()
                    return
                conn.close()
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("gunicorn did not answer in time")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()  # SIGTERM to our own child (the master stops its workers)
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._log.close()


# -- after a load -------------------------------------------------------------


def settle(loader: Loader, pid: int | None, limit: float = 120) -> str:
    """Wait until MariaDB is idle (under 5% of a CPU over 2 s) and has purged the load's undo
    log, so background work after a bulk load does not compete with the measurement."""
    cursor = loader.conn.cursor()
    started = time.monotonic()
    while True:
        cursor.execute("SHOW GLOBAL STATUS LIKE 'Innodb_history_list_length'")
        history = int(cursor.fetchone()[1])
        before = cpu_seconds(pid)
        time.sleep(2)
        busy = (cpu_seconds(pid) - before) / 2 if pid is not None else 0.0
        waited = time.monotonic() - started
        if (busy < 0.05 and history < 1000) or waited > limit:
            return f"{waited:.0f}s until MariaDB at {busy:.0%} CPU, history length {history}"


def cpu_seconds(pid: int | None) -> float:
    """User + system CPU time of a process (MariaDB), from /proc."""
    if pid is None:
        return float("nan")
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return float("nan")
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- the probe: made through the site's actions ---------------------------------


def make_probe(
    owner_of: dict[int, int], rng: random.Random, *, boards: int
) -> tuple[dict, list[dict]]:
    """The probe pinner and its boards (the first is the probe board), through
    sign_up and create_board; their newest pins come later, through create_pin."""
    from pinboard.boards.actions import create_board
    from pinboard.users.actions import sign_up

    user = sign_up("probe_ada", "probe_ada@example.com", "pinboard-bench")
    made = [create_board(user["id"], "Probe board", "The board the benchmark reads")]
    for name in rng.sample(BOARD_NAMES, boards - 1):
        made.append(create_board(user["id"], name, ""))
    for board in made:
        owner_of[board["id"]] = user["id"]
    return user, made


def finish_probe(
    user: dict, boards: list[dict], others: list[int], image_file, *, real_pins: int
) -> dict:
    """The newest pins through create_pin, and a few comments, likes and follows."""
    from pinboard.follows.actions import follow_user
    from pinboard.likes.actions import like
    from pinboard.pins.actions import add_comment, create_pin

    probe_board, *rest = boards
    pins = [
        create_pin(
            user["id"], probe_board["id"], image_file(), f"Probe pin {i}", "https://example.com/"
        )
        for i in range(real_pins)
    ]
    for board in rest:  # each cover is a pin made by the site
        create_pin(user["id"], board["id"], image_file(), f"{board['name']} cover", "")
    probe_pin = pins[-1]
    for i, other in enumerate(others[:3]):
        add_comment(other, probe_pin["id"], ["Love this!", "Saving for later.", "So good."][i])
        like(other, probe_pin["id"])
        follow_user(other, user["id"])
    return probe_pin


# -- measuring ----------------------------------------------------------------


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]


def clear_caches() -> bool:
    """Empty the site's cache pools (memcached: one flush_all); False if it has none."""
    from pinboard.store import get_store

    pools = getattr(get_store(), "pools", None)
    if not pools:
        return False
    for pool in {id(p): p for p in pools.values()}.values():
        pool.clear()
    return True


def latencies(
    port: int, pages: dict[str, str], requests: int, warmup: int, *, cold: bool
) -> dict[str, list]:
    """Milliseconds per request, pages in turn, on one keep-alive connection; with ``cold``
    the cache pools are emptied (untimed) before every request."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    times: dict[str, list[float]] = {name: [] for name in pages}
    reconnects = 0

    def get(path: str) -> float:
        nonlocal conn, reconnects
        for attempt in range(2):
            try:
                start = time.perf_counter()
                conn.request("GET", path, headers=BEHIND_TLS)
                response = conn.getresponse()
                body = response.read()
                elapsed = time.perf_counter() - start
                break
            except (http.client.RemoteDisconnected, ConnectionError):
                if attempt:
                    raise
                conn.close()
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                reconnects += 1
        if response.status != 200 or not body:
            raise RuntimeError(f"GET {path}: {response.status}")
        return elapsed * 1000

    for _ in range(warmup):
        for path in pages.values():
            if cold:
                clear_caches()
            get(path)
    for _ in range(requests):
        for name, path in pages.items():
            if cold:
                clear_caches()
            times[name].append(get(path))
    conn.close()
    if reconnects:
        print(f"  ({reconnects} keep-alive reconnects)", file=sys.stderr)
    return times


def sql_round_trips(
    pages: dict[str, str], *, cold: bool
) -> dict[str, tuple[int, list[str], bytes]]:
    """Round trips of each page through Django's test client, in this process, on the same
    store: right after the cache pools are emptied (``cold``), or on a second request."""
    from django.test import Client

    from pinboard.store import get_store

    client = Client(headers=BEHIND_TLS)
    found = {}
    for name, path in pages.items():
        client.get(path, HTTP_HOST="127.0.0.1")  # connections (and caches) warm
        if cold:
            clear_caches()
        with get_store().count_queries() as queries:
            response = client.get(path, HTTP_HOST="127.0.0.1")
        if response.status_code != 200:
            raise RuntimeError(f"test client GET {path}: {response.status_code}")
        found[name] = (queries.count, list(queries.statements), response.content)
    return found


def check_pages(found: dict[str, tuple[int, list[str], bytes]], boards: int) -> list[str]:
    notes = []
    profile, board = found["profile"][2], found["board"][2]
    if (n := profile.count(b'class="board-card"')) != boards:
        notes.append(f"profile shows {n} board cards, expected {boards}")
    if (n := board.count(b'class="pin"')) != 50:
        notes.append(f"board page shows {n} pins, expected 50")
    return notes


def measure(
    label: str, env: dict[str, str], pages: dict[str, str], args: argparse.Namespace, tmp: Path,
    boards: int, mariadb_pid: int | None,
) -> dict[str, dict]:  # fmt: skip
    """``{cache mode: {page: figures}}``; modes "cold" and "warm" when the site has cache
    pools that this process can empty (memcached), else one mode, "-"."""
    modes = ["cold", "warm"] if clear_caches() else ["-"]
    found = {mode: sql_round_trips(pages, cold=mode == "cold") for mode in modes}
    for note in check_pages(found[modes[0]], boards):
        print(f"  PROBLEM at {label}: {note}")
    server = Gunicorn(env, args.workers, args.threads, tmp / f"gunicorn-{label}.log")
    times = {}
    try:
        server.wait_ready(pages["profile"])
        for mode in modes:
            started, cpu = time.monotonic(), cpu_seconds(mariadb_pid)
            times[mode] = latencies(
                server.port, pages, args.requests, args.warmup, cold=mode == "cold"
            )
            elapsed, cpu = time.monotonic() - started, cpu_seconds(mariadb_pid) - cpu
            print(f"  {label} {mode}: {args.requests} x {len(pages)} requests in {elapsed:.1f}s; "
                  f"MariaDB used {cpu:.1f} CPU s meanwhile")  # fmt: skip
    finally:
        server.stop()
    return {
        mode: {
            name: {
                "p50": statistics.median(times[mode][name]),
                "p99": percentile(times[mode][name], 0.99),
                "sql": found[mode][name][0],
                "statements": found[mode][name][1],
                "bytes": len(found[mode][name][2]),
            }
            for name in pages
        }
        for mode in modes
    }


# -- main -----------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--mysql-address", help="mysql://root@127.0.0.1:PORT of an empty server")
    parser.add_argument("--pins-small", type=int, default=10_000)
    parser.add_argument("--pins-large", type=int, default=1_000_000)
    parser.add_argument("--users", type=int, default=2_000)
    parser.add_argument("--boards-per-user", type=int, default=10)
    parser.add_argument("--shards", type=int, default=64)
    parser.add_argument("--probe-board-pins", type=int, default=200, help="pins on the probe board")
    parser.add_argument("--probe-real-pins", type=int, default=12, help="of which via create_pin")
    parser.add_argument(
        "--requests", type=int, default=500, help="timed requests per page and size"
    )
    parser.add_argument("--warmup", type=int, default=20, help="untimed requests per page first")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=4)
    parser.add_argument("--batch", type=int, default=5_000, help="rows per INSERT")
    parser.add_argument("--load-threads", type=int, default=2, help="connections running INSERTs")
    parser.add_argument("--settings", default="pinboard.settings.prod")
    parser.add_argument("--seed", type=int, default=2012)
    parser.add_argument("--memcached", help="host:port of the cache pools (default: start one; "
                        "'' for the site's in-process pools)")  # fmt: skip
    parser.add_argument("--redis-url", help="the follower graph's Redis (default: start one; "
                        "'' for the in-process default)")  # fmt: skip
    args = parser.parse_args()
    if not args.pins_small < args.pins_large:
        parser.error("--pins-large must be above --pins-small")
    run_started = time.monotonic()

    with tempfile.TemporaryDirectory(prefix="pinboard-bench-pages-") as directory:
        tmp = Path(directory)
        server = None
        if args.mysql_address:
            address = args.mysql_address
        else:
            from toolkit.servers import MariaDBServer

            if not MariaDBServer.available():
                print(f"mysql: {MariaDBServer.available().reason}", file=sys.stderr)
                return 1
            server = MariaDBServer(extra_args=MARIADB_ARGS).start()
            address = f"mysql://root@{server.address}"
        helpers = []  # private memcached and Redis, stopped by their PIDs at the end
        try:
            extra_env = side_servers(args, helpers)
            return run(args, tmp, address, server, run_started, extra_env)
        except BaseException:
            if server is not None:
                log = server.log_path.read_text(errors="replace").splitlines()[-30:]
                print("--- last lines of the MariaDB log ---", *log, sep="\n", file=sys.stderr)
            raise
        finally:
            for helper in helpers:
                helper.stop()
            if server is not None:
                server.stop()


def side_servers(args: argparse.Namespace, started: list) -> dict[str, str]:  # type: ignore[type-arg]
    """The cache pools' memcached and the follower graph's Redis, shared by every process.

    Without memcached each gunicorn worker keeps its own in-process pools, which this
    process cannot empty, so only warm figures could be measured.
    """
    from toolkit.servers import MemcachedServer, RedisServer

    env = {}
    memcached = args.memcached
    if memcached is None and MemcachedServer.available():
        server = MemcachedServer(extra_args=["-m", "512"]).start()
        started.append(server)
        memcached = server.address
    if memcached:
        env["PINBOARD_MEMCACHED"] = memcached
    redis_url = args.redis_url
    if redis_url is None and RedisServer.available():
        server = RedisServer().start()
        started.append(server)
        redis_url = server.url
    if redis_url:
        env["PINBOARD_REDIS_URL"] = redis_url
    return env


def run(args, tmp: Path, address: str, server, run_started: float, extra_env: dict) -> int:  # type: ignore[no-untyped-def]
    url = urlsplit(address)
    params = {
        "host": url.hostname or "127.0.0.1", "port": url.port or 3306,
        "user": unquote(url.username or "root"), "password": unquote(url.password or ""),
        "charset": "utf8mb4", "autocommit": True,
    }  # fmt: skip
    probe_conn = MySQLdb.connect(**params)
    cursor = probe_conn.cursor()
    cursor.execute("SHOW DATABASES LIKE 'db00000'")
    if cursor.fetchall():
        print(f"{address} already has shard databases; give an empty server", file=sys.stderr)
        return 1
    cursor.execute("SELECT VERSION()")
    version = cursor.fetchone()[0]
    settings_shown = []
    for name in ("innodb_buffer_pool_size", "innodb_log_file_size", "innodb_flush_log_at_trx_commit",
                 "innodb_doublewrite", "innodb_file_per_table", "max_allowed_packet", "log_bin"):  # fmt: skip
        cursor.execute("SHOW VARIABLES LIKE %s", (name,))
        for key, value in cursor.fetchall():
            settings_shown.append(f"{key}={value}")
    probe_conn.close()

    half = args.shards // 2
    hosts = {"db1": address, "db2": address} if args.shards > 1 else {"db1": address}
    ranges = (
        [{"range": [0, half - 1], "master": "db1"}, {"range": [half, args.shards - 1], "master": "db2"}]
        if args.shards > 1
        else [{"range": [0, 0], "master": "db1"}]
    )  # fmt: skip
    topology_doc = {
        "version": 1, "shard_count": args.shards, "hosts": hosts, "ranges": ranges,
        "open": [[0, args.shards - 1]], "lookup_shards": args.shards,
    }  # fmt: skip
    topology_file = tmp / "topology.json"
    topology_file.write_text(json.dumps(topology_doc, indent=2))
    topology = Topology.load(topology_file)
    var_dir = tmp / "var"
    env = {
        **os.environ,
        "PINBOARD_TOPOLOGY": str(topology_file),
        "PINBOARD_VAR_DIR": str(var_dir),
        "DJANGO_SETTINGS_MODULE": args.settings,
        "PINBOARD_SECRET_KEY": secrets.token_urlsafe(48),
        "PYTHONPATH": str(ROOT),
        **extra_env,
    }
    print(f"MariaDB {version} at {address}" + (f" (private, pid {server.pid})" if server else ""))
    print("  " + " ".join(settings_shown))
    print(f"topology: {args.shards} shards on hosts {', '.join(hosts)} (one server), "
          f"lookup_shards {args.shards}; settings {args.settings}")  # fmt: skip
    print(f"cache pools: memcached {extra_env.get('PINBOARD_MEMCACHED') or 'none (in-process)'}; "
          f"follower graph: {extra_env.get('PINBOARD_REDIS_URL') or 'in-process Redis'}")  # fmt: skip
    started = time.monotonic()
    manage(env, "migrate", "--verbosity", "0")
    manage(env, "shardstore", "init")
    print(f"migrate + shardstore init: {time.monotonic() - started:.1f}s")

    os.environ.update(env)
    mariadb_pid = server.pid if server is not None else None
    import django

    django.setup()
    from django.conf import settings
    from django.contrib.auth.hashers import make_password

    from pinboard.pins.demo_images import demo_image
    from pinboard.pins.images import store_image

    print(f"DEBUG={settings.DEBUG}")
    rng = random.Random(args.seed)
    picture = demo_image(random.Random(args.seed), "bench.png").read()

    def image_file():  # type: ignore[no-untyped-def]
        from django.core.files.uploadedfile import SimpleUploadedFile

        return SimpleUploadedFile("bench.png", picture, content_type="image/png")

    image = store_image(image_file())  # stored once; every pin shares its files
    loader = Loader(params, args.batch, args.load_threads)
    now = time.time_ns() // 1000
    try:
        # -- small: pinners, the probe, pins up to --pins-small -----------------
        started = time.monotonic()
        password = make_password("pinboard-bench")  # one hash (salt included) for every bulk pinner
        owner_of = load_pinners(
            loader, topology, rng, users=args.users, boards_per_user=args.boards_per_user,
            password=password, now=now,
        )  # fmt: skip
        bulk_boards = list(owner_of)
        pinners_time = time.monotonic() - started
        print(f"load pinners: {args.users:,} pinners, {len(bulk_boards):,} boards "
              f"in {pinners_time:.1f}s")  # fmt: skip

        started = time.monotonic()
        user, boards = make_probe(owner_of, rng, boards=args.boards_per_user)
        others = list(dict.fromkeys(owner_of[b] for b in rng.sample(bulk_boards, 10)))
        real_pins = args.probe_real_pins + len(boards) - 1
        probe_plan = {boards[0]["id"]: args.probe_board_pins - args.probe_real_pins}
        for board in boards[1:]:
            probe_plan[board["id"]] = rng.randint(5, 40) - 1
        probe_total = sum(probe_plan.values()) + real_pins
        bulk = args.pins_small - probe_total
        if bulk < 0:
            raise SystemExit(f"--pins-small must be at least {probe_total} (the probe's pins)")
        plan = Counter(rng.choices(bulk_boards, k=bulk))
        plan.update(probe_plan)
        window = (now - 365 * DAY, now - DAY)  # bulk pins are older than the probe's real ones
        loader.new_phase()
        load_pins(loader, plan, owner_of, image, rng, window=window, label="small")
        clear_caches()  # the bulk rows went around the cache pools
        probe_pin = finish_probe(user, boards, others, image_file, real_pins=args.probe_real_pins)
        small_time = time.monotonic() - started
        print(f"load to {args.pins_small:,} pins: {small_time:.1f}s "
              f"(probe pinner, boards and {real_pins} pins through the actions)")  # fmt: skip
        problems = verify(loader, topology)

        pages = {
            "profile": f"/{user['username']}/",
            "board": f"/{user['username']}/{boards[0]['slug']}/",
            "pin": f"/pin/{probe_pin['id']}/",
        }
        image_path = Path(settings.MEDIA_ROOT) / image["key"]
        if not image_path.is_file():
            problems.append(f"image file {image_path} is missing")
        print(f"probe pages: {', '.join(pages.values())}; image {image['key']}")
        print(f"settle: {settle(loader, mariadb_pid)}")
        results = {
            args.pins_small: measure("small", env, pages, args, tmp, len(boards), mariadb_pid)
        }

        # -- large: grow the same store ------------------------------------------
        started = time.monotonic()
        grow = args.pins_large - args.pins_small
        loader.new_phase()
        load_pins(
            loader, Counter(rng.choices(bulk_boards, k=grow)), owner_of, image, rng,
            window=window, label="large",
        )  # fmt: skip
        clear_caches()
        large_time = time.monotonic() - started
        print(f"load {grow:,} more pins (to {args.pins_large:,}): {large_time:.1f}s "
              f"({grow / large_time:,.0f} pins/s, each with 3 mapping rows and their counts)")  # fmt: skip
        started = time.monotonic()
        problems += verify(loader, topology)
        print(f"verify counts and inverses: {time.monotonic() - started:.1f}s; "
              f"shard tables: {table_sizes(loader)}")  # fmt: skip
        print(f"settle: {settle(loader, mariadb_pid)}")
        results[args.pins_large] = measure("large", env, pages, args, tmp, len(boards), mariadb_pid)
    finally:
        loader.close()

    # -- report -----------------------------------------------------------------
    small, large = args.pins_small, args.pins_large
    modes = list(results[small])
    print()
    print(
        f"{'pins':>10} {'page':<8} {'cache':<5} {'p50 ms':>8} {'p99 ms':>8} {'SQL':>4} {'bytes':>7}"
    )
    for size, by_mode in results.items():
        for mode, pages_found in by_mode.items():
            for name, r in pages_found.items():
                print(f"{size:>10,} {name:<8} {mode:<5} {r['p50']:>8.2f} {r['p99']:>8.2f} "
                      f"{r['sql']:>4} {r['bytes']:>7,}")  # fmt: skip
    print()
    print(f"{'page':<8} {'cache':<5} {'p50 ratio':>9} {'p99 ratio':>9}"
          "  (large/small; acceptance: p50 ratio <= 1.30)")  # fmt: skip
    worst = 0.0
    for mode in modes:
        for name in pages:
            a, b = results[small][mode][name], results[large][mode][name]
            ratio, ratio99 = b["p50"] / a["p50"], b["p99"] / a["p99"]
            worst = max(worst, ratio)
            verdict = "ok" if ratio <= 1.3 else "OVER 1.3"
            print(f"{name:<8} {mode:<5} {ratio:>9.2f} {ratio99:>9.2f}  {verdict}")
            if a["statements"] != b["statements"]:
                problems.append(
                    f"{name} ({mode}): SQL statements differ between {small:,} and {large:,} pins"
                )
    print()
    for name in pages:
        statements = results[large][modes[0]][name]["statements"]
        print(f"{name} page, {modes[0]} cache: {len(statements)} round trips at {large:,} pins")
        for sql in statements:
            print(f"  {' '.join(sql.split())[:150]}")
    print()
    print(f"{args.requests} timed requests per page, cache mode and size (after {args.warmup} "
          f"warm-up rounds), sequential on one keep-alive connection, pages in turn; gunicorn "
          f"-w {args.workers} --threads {args.threads}. cold = cache pools emptied (memcached "
          "flush_all, untimed) before every request: every read goes to MySQL; warm = steady "
          "state. SQL = shardstore round trips of one signed-out request (count_queries, "
          "Django test client in this process, same store and pools).")  # fmt: skip
    print(f"loads: pinners {pinners_time:.1f}s, to {small:,} pins {small_time:.1f}s, "
          f"to {large:,} pins {large_time:.1f}s; whole run {time.monotonic() - run_started:.0f}s")  # fmt: skip
    for problem in problems:
        print(f"PROBLEM: {problem}")
    if not problems:
        print("data check: every mapping count equals its rows; every board_has_pins row has "
              "its inverse")  # fmt: skip
    return 0 if worst <= 1.3 and not problems else 1


if __name__ == "__main__":
    sys.exit(main())
