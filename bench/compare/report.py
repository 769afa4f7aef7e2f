"""The comparison's report: plots (PNG), the tables of docs/benchmarks.md, and a summary
that checks the targets.

The tables go between the ``<!-- results -->`` and ``<!-- /results -->`` lines of
docs/benchmarks.md, so a run rewrites its figures and leaves the prose around them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .sizes import growth

BEGIN, END = "<!-- results -->", "<!-- /results -->"
#: The builds, in the order the tables show them: pinboard, the plain ORM build, the ORM
#: build with cacheops.
BUILDS = ("pinboard", "orm", "cached")
NAMES = {"pinboard": "pinboard", "orm": "plain ORM", "cached": "cached ORM"}
#: The targets: pinboard's req/s over the plain ORM build's, warm and cold, and over the
#: cached one's, warm; pinboard's requests/s in the mixed workload over the cached build's;
#: p50 at the largest size over p50 at the smallest, served alongside (sizes.py); a
#: worker's RSS at the end of the mix over its RSS at 1 min; a cold home feed's SQL statements.
WARM_RATIO, WARM_CACHED_RATIO, COLD_RATIO, MIXED_CACHED_RATIO = 2.0, 1.5, 1.5, 1.5
SIZE_RATIO, RSS_RATIO, FEED_SQL = 1.1, 1.2, 4
#: A warm HTML page's req/s over the hand-built page's (bench/compare/raw.py).
RAW_RATIO = 1.0


def write(results: dict[str, Any], out: Path, doc: Path | None) -> None:
    plot_throughput(results, out / "throughput.png")
    plot_sizes(results, out / "p50-by-size.png")
    if doc is None:
        return
    text = doc.read_text()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    doc.write_text(f"{head}{BEGIN}\n{tables(results)}\n{END}{tail}")


# -- figures ----------------------------------------------------------------------------


def ratio(results: dict[str, Any], op: str, mode: str, other: str = "orm") -> float:
    """pinboard's req/s over ``other``'s."""
    sides = results["throughput"][op]
    theirs = sides[other][mode]["rps"]
    return sides["pinboard"][mode]["rps"] / theirs if theirs else float("inf")


def builds(results: dict[str, Any]) -> list[str]:
    """The builds this run measured, pinboard first."""
    measured = next(iter(results["throughput"].values()))
    return [side for side in BUILDS if side in measured]


def operation_targets(results: dict[str, Any], op: str) -> dict[str, tuple[str, bool]]:
    """The targets of one operation, by name: what was measured, and whether it met it.
    CPU time per request is pinboard's at or below every other build's, warm and cold."""
    sides = results["throughput"][op]
    found = {}
    warm, cold = ratio(results, op, "warm"), ratio(results, op, "cold")
    found["warm/plain"] = (f"warm {warm:.2f}x the plain ORM (>= {WARM_RATIO})", warm >= WARM_RATIO)
    if "cached" in sides:
        r = ratio(results, op, "warm", "cached")
        found["warm/cached"] = (f"warm {r:.2f}x the cached ORM (>= {WARM_CACHED_RATIO})",
                                r >= WARM_CACHED_RATIO)  # fmt: skip
    found["cold/plain"] = (f"cold {cold:.2f}x the plain ORM (>= {COLD_RATIO})", cold >= COLD_RATIO)
    others = [side for side in builds(results) if side != "pinboard"]
    cpu = {
        mode: [sides[side][mode]["cpu_ms"] for side in builds(results)]
        for mode in sides["pinboard"]
    }
    shown = "; ".join(
        f"{mode} " + " / ".join(f"{ms:.2f}" for ms in each) for mode, each in cpu.items()
    )
    found["cpu"] = (f"CPU ms/req {shown} (pinboard / {' / '.join(NAMES[s] for s in others)};"
                    " pinboard's to be the least)", all(each[0] <= min(each[1:]) for each in cpu.values()))  # fmt: skip
    mixed = results.get("mixed", {})
    if "cached" in mixed and op in mixed["cached"]["operations"]:
        ours = mixed["pinboard"]["operations"].get(op)
        theirs = mixed["cached"]["operations"][op]
        if ours:
            found["mixed p99"] = (f"mixed p99 {ours['p99_ms']} ms, the cached ORM's "
                                  f"{theirs['p99_ms']} ms", ours["p99_ms"] <= theirs["p99_ms"])  # fmt: skip
    return found


def mixed_targets(mixed: dict[str, Any]) -> list[tuple[str, bool]]:
    """The mixed workload's throughput over the cached build's, and each operation's p99 no
    worse than the cached build's (reads and writes alike)."""
    if "cached" not in mixed:
        return []
    ours, theirs = mixed["pinboard"], mixed["cached"]
    r = ours["requests_per_second"] / theirs["requests_per_second"]
    found = [(f"mixed workload: {r:.2f}x the cached ORM's requests/s (>= {MIXED_CACHED_RATIO})",
              r >= MIXED_CACHED_RATIO)]  # fmt: skip
    for op, figures in ours["operations"].items():
        other = theirs["operations"].get(op)
        if other:
            found.append((f"mixed workload, {op}: p99 {figures['p99_ms']} ms, the cached ORM's "
                          f"{other['p99_ms']} ms", figures["p99_ms"] <= other["p99_ms"]))  # fmt: skip
    return found


def raw_ratios(results: dict[str, Any]) -> dict[str, float]:
    """pinboard's warm req/s over the hand-built page's, for each HTML page (from the runs
    that alternated the two)."""
    return {
        op: sides["raw"]["site"]["rps"] / sides["raw"]["warm"]["rps"]
        for op, sides in results["throughput"].items()
        if "raw" in sides
    }


def rss_ratio(results: dict[str, Any]) -> float | None:
    samples = results.get("mixed", {}).get("pinboard", {}).get("worker_rss", [])
    after_one = [s for s in samples if s["minute"] >= 0.99]
    if len(after_one) < 2:
        return None
    return samples[-1]["mb"] / after_one[0]["mb"]


def checks(results: dict[str, Any]) -> list[tuple[str, bool]]:
    """Each target, and whether this run met it."""
    found = []
    for op in results["throughput"]:
        for name, (what, ok) in operation_targets(results, op).items():
            if name != "mixed p99":  # in mixed_targets, with the writes'
                found.append((f"{op}: {what}", ok))
    found += mixed_targets(results.get("mixed", {}))
    feed = results["statements"].get("home feed", {}).get("pinboard")
    if feed:
        ok = 0 <= feed["cold"] <= FEED_SQL and feed["warm"] == 0
        found.append(
            (f"home feed SQL: cold {feed['cold']} (<= {FEED_SQL}), warm {feed['warm']}", ok)
        )
    for op in results["throughput"]:
        for mode in ("warm", "cold"):
            r = growth(results, op, "pinboard", mode)
            if r is not None:
                found.append((f"{op}: p50 {mode} largest/smallest {r:.2f} (<= {SIZE_RATIO})",
                              r <= SIZE_RATIO))  # fmt: skip
    for op, r in raw_ratios(results).items():
        found.append((f"{op}: {r:.2f}x the hand-built page (>= {RAW_RATIO})", r >= RAW_RATIO))
    rss = rss_ratio(results)
    if rss is not None:
        found.append((f"worker RSS end/1 min {rss:.2f} (<= {RSS_RATIO})", rss <= RSS_RATIO))
    redis = results.get("redis_check")
    if redis:
        differ = redis["graph_differ"] + redis["feeds_differ"]
        found.append((f"Redis after the mix: {redis['graph_keys']:,} graph keys and"
                      f" {redis['feeds']:,} feeds against MySQL, {differ} differ", differ == 0))  # fmt: skip
    return found


def summary(results: dict[str, Any]) -> str:
    lines = [f"{'ok ' if ok else 'NO '} {what}" for what, ok in checks(results)]
    met = sum(ok for _, ok in checks(results))
    return "\n".join([*lines, f"{met} of {len(lines)} targets met"])


# -- tables ------------------------------------------------------------------------------


def tables(results: dict[str, Any]) -> str:
    setup = results["setup"]
    sizes = sorted(results["sizes"], key=int)
    out = [
        f"MariaDB {setup['mariadb']}, {setup['cpus']} CPUs, gunicorn {setup['gunicorn']}, "
        f"wrk {setup['connections']} connections; {setup['pinners']:,} pinners, "
        f"{setup['boards']:,} boards, {int(sizes[-1]):,} pins on {setup['shards']} shards; "
        f"whole run {results.get('seconds', 0) / 60:.0f} min.",
        "",
        "### Throughput at the largest size (wrk, random entities)",
        "",
        "| operation | build | warm req/s | p50 ms | p99 ms | CPU ms/req | bytes | errors "
        "| cold req/s | p50 ms | p99 ms | CPU ms/req | errors | SQL cold | SQL warm |",
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for op, sides in results["throughput"].items():
        for side in builds(results):
            w, c = sides[side]["warm"], sides[side]["cold"]
            sql = results["statements"][op][side]
            out.append(
                f"| {op} | {NAMES[side]} | {w['rps']:,.0f} | {w['p50_ms']:.1f} | {w['p99_ms']:.1f} "
                f"| {w['cpu_ms']:.2f} | {w['bytes']:,} | {w['errors']} | {c['rps']:,.0f} "
                f"| {c['p50_ms']:.1f} | {c['p99_ms']:.1f} | {c['cpu_ms']:.2f} | {c['errors']} "
                f"| {sql['cold']} | {sql['warm']} |"
            )
    out += target_table(results)
    out += ["", "### HTML pages against the hand-built page (warm req/s, median of alternating runs)", "",
            "| page | pinboard | hand-built | ratio |", "|---|--:|--:|--:|"]  # fmt: skip
    for op, r in raw_ratios(results).items():
        sides = results["throughput"][op]
        out.append(f"| {op} | {sides['raw']['site']['rps']:,.0f} "
                   f"| {sides['raw']['warm']['rps']:,.0f} | {r:.2f}x |")  # fmt: skip
    out += ["", "### p50 (ms) against data size: the probes' pages, one request at a time", ""]
    out += size_tables(results)
    if "mixed" in results:
        out += mixed_tables(results["mixed"])
    out += ["", "### Targets", ""]
    out += [f"- {'met' if ok else '**not met**'}: {what}" for what, ok in checks(results)]
    return "\n".join(out)


def target_table(results: dict[str, Any]) -> list[str]:
    """pinboard's req/s over each ORM build's, and each operation's targets, met or missed."""
    cached = "cached" in builds(results)
    columns = {
        "warm/plain": f"warm >= {WARM_RATIO}x plain",
        "warm/cached": f"warm >= {WARM_CACHED_RATIO}x cached",
        "cold/plain": f"cold >= {COLD_RATIO}x plain",
        "cpu": "CPU ms/req the least",
        "mixed p99": "mixed p99 <= cached",
    }
    if not cached:
        del columns["warm/cached"], columns["mixed p99"]
    out = ["", "### pinboard over the ORM builds (req/s), and the targets per operation", "",
           "| operation | warm / plain | cold / plain | " + ("warm / cached | cold / cached | " if cached else "")
           + " | ".join(columns.values()) + " |",
           "|---|" + "--:|" * (2 + 2 * cached) + "---|" * len(columns)]  # fmt: skip
    for op in results["throughput"]:
        ratios = [ratio(results, op, mode, other) for other in builds(results)[1:]
                  for mode in ("warm", "cold")]  # fmt: skip
        met = operation_targets(results, op)
        verdicts = [("met" if met[name][1] else "**missed**") if name in met else "-"
                    for name in columns]  # fmt: skip
        out.append(f"| {op} | " + " | ".join(f"{r:.2f}x" for r in ratios) + " | "
                   + " | ".join(verdicts) + " |")  # fmt: skip
    return out


def size_tables(results: dict[str, Any]) -> list[str]:
    sizes = sorted(results["sizes"], key=int)
    if len(sizes) == 1:
        return [f"One size ({int(sizes[0]):,} pins): see results.json."]
    noise = [
        found[mode]["p50"] / found["reference"][mode]["p50"]
        for sides in results["sizes"][sizes[0]].values()
        for found in sides.values()
        for mode in ("warm", "cold")
    ]
    out = [f"Each path in turn on the growing data set and on a copy of the "
            f"{int(sizes[0]):,}-pin data set served alongside (its p50 in brackets); the "
            "ratio is the largest size's over the copy's, taken in the same minutes. At "
            f"{int(sizes[0]):,} pins, where both hold the same data, the ratio is "
            f"{min(noise):.2f} to {max(noise):.2f}: the method's own noise.", ""]  # fmt: skip
    head = " | ".join(f"{int(s):,} pins" for s in sizes)
    out += [f"| operation | build | cache | {head} | largest/smallest |",
            "|---|---|---|" + "--:|" * (len(sizes) + 1)]  # fmt: skip
    for op in results["sizes"][sizes[0]]:
        for side in builds(results):
            for mode in ("warm", "cold"):
                cells = " | ".join(
                    f"{found[mode]['p50']:.2f} ({found['reference'][mode]['p50']:.2f})"
                    for found in (results["sizes"][s][op][side] for s in sizes)
                )
                out.append(f"| {op} | {NAMES[side]} | {mode} | {cells} "
                           f"| {growth(results, op, side, mode):.2f} |")  # fmt: skip
    return out


def mixed_tables(mixed: dict[str, Any]) -> list[str]:
    out = ["", "### Mixed workload (90% reads, 10% writes; 16 clients)", ""]
    for side, run in mixed.items():
        out.append(f"{NAMES[side]}: {run['requests_per_second']:,.0f} requests/s over "
                   f"{run['minutes']:g} min.")  # fmt: skip
    out += ["", "| operation | build | requests | errors | p50 ms | p95 ms | p99 ms |",
            "|---|---|--:|--:|--:|--:|--:|"]  # fmt: skip
    for op in mixed["pinboard"]["operations"]:
        for side, run in mixed.items():
            r = run["operations"].get(op)
            if r:
                out.append(f"| {op} | {NAMES[side]} | {r['requests']:,} | {r['errors']} "
                           f"| {r['p50_ms']} | {r['p95_ms']} | {r['p99_ms']} |")  # fmt: skip
    samples = mixed["pinboard"]["worker_rss"]
    out += ["", "pinboard's workers' RSS (MB, both workers): " + ", ".join(
        f"{s['mb']:.0f} at {s['minute']:.0f} min" for s in samples)]  # fmt: skip
    if mixed["pinboard"]["workers_restarted"]:
        out.append("(a worker was restarted during the run: the RSS figures are not comparable)")
    return out


# -- plots -------------------------------------------------------------------------------


def plot_throughput(results: dict[str, Any], file: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ops = list(results["throughput"])
    fig, axes = plt.subplots(1, 2, figsize=(13, 5), sharey=False)
    sides = builds(results)
    bar = 0.8 / len(sides)
    for ax, mode in zip(axes, ("warm", "cold"), strict=True):
        for i, side in enumerate(sides):
            values = [results["throughput"][op][side][mode]["rps"] for op in ops]
            ax.barh([y + i * bar for y in range(len(ops))], values, height=bar, label=NAMES[side])
        ax.set_yticks([y + 0.4 - bar / 2 for y in range(len(ops))], ops)
        ax.invert_yaxis()
        ax.set_xlabel("requests per second")
        ax.set_title(f"{mode} (caches {'emptied' if mode == 'cold' else 'filled'})")
        ax.legend()
    fig.tight_layout()
    fig.savefig(file, dpi=90)
    plt.close(fig)


def plot_sizes(results: dict[str, Any], file: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    sizes = sorted(results["sizes"], key=int)
    ops = list(results["sizes"][sizes[0]])
    sides = builds(results)
    fig, axes = plt.subplots(2, len(sides), figsize=(6.5 * len(sides), 9), squeeze=False)
    for row, mode in zip(axes, ("warm", "cold"), strict=True):
        for ax, side in zip(row, sides, strict=True):
            for op in ops:
                ax.plot([int(s) for s in sizes],
                        [results["sizes"][s][op][side][mode]["p50"] for s in sizes],
                        marker="o", label=op)  # fmt: skip
            ax.set_xscale("log")
            ax.set_xlabel("pins")
            ax.set_ylabel(f"p50 ms ({mode})")
            ax.set_title(f"{NAMES[side]}, {mode}")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(file, dpi=90)
    plt.close(fig)
