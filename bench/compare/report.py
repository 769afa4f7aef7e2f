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
#: The targets: pinboard's req/s over the ORM build's, warm and cold; p50 at the largest
#: size over p50 at the smallest, served alongside (sizes.py); a worker's RSS at the end of
#: the mix over its RSS at 1 min.
WARM_RATIO, COLD_RATIO, SIZE_RATIO, RSS_RATIO, FEED_SQL = 2.0, 1.0, 1.1, 1.2, 6
#: A warm HTML page's req/s over the hand-built page's (bench/compare/raw.py).
RAW_RATIO = 0.8


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


def ratio(results: dict[str, Any], op: str, mode: str) -> float:
    sides = results["throughput"][op]
    orm = sides["orm"][mode]["rps"]
    return sides["pinboard"][mode]["rps"] / orm if orm else float("inf")


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
        warm, cold = ratio(results, op, "warm"), ratio(results, op, "cold")
        found.append((f"{op}: warm {warm:.2f}x (>= {WARM_RATIO})", warm >= WARM_RATIO))
        found.append((f"{op}: cold {cold:.2f}x (>= {COLD_RATIO})", cold >= COLD_RATIO))
    feed = results["statements"].get("home feed", {}).get("pinboard")
    if feed:
        ok = 0 <= feed["cold"] <= FEED_SQL and feed["warm"] == 0
        found.append((f"home feed SQL: cold {feed['cold']}, warm {feed['warm']}", ok))
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
        for side in ("pinboard", "orm"):
            w, c = sides[side]["warm"], sides[side]["cold"]
            sql = results["statements"][op][side]
            out.append(
                f"| {op} | {side} | {w['rps']:,.0f} | {w['p50_ms']:.1f} | {w['p99_ms']:.1f} "
                f"| {w['cpu_ms']:.2f} | {w['bytes']:,} | {w['errors']} | {c['rps']:,.0f} "
                f"| {c['p50_ms']:.1f} | {c['p99_ms']:.1f} | {c['cpu_ms']:.2f} | {c['errors']} "
                f"| {sql['cold']} | {sql['warm']} |"
            )
    out += ["", "### pinboard over the ORM build (req/s)", "", "| operation | warm | cold |",
            "|---|--:|--:|"]  # fmt: skip
    for op in results["throughput"]:
        out.append(
            f"| {op} | {ratio(results, op, 'warm'):.2f}x | {ratio(results, op, 'cold'):.2f}x |"
        )
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
        for side in ("pinboard", "orm"):
            for mode in ("warm", "cold"):
                cells = " | ".join(
                    f"{found[mode]['p50']:.2f} ({found['reference'][mode]['p50']:.2f})"
                    for found in (results["sizes"][s][op][side] for s in sizes)
                )
                out.append(f"| {op} | {side} | {mode} | {cells} "
                           f"| {growth(results, op, side, mode):.2f} |")  # fmt: skip
    return out


def mixed_tables(mixed: dict[str, Any]) -> list[str]:
    out = ["", "### Mixed workload (90% reads, 10% writes; 16 clients)", ""]
    for side, run in mixed.items():
        out.append(f"{side}: {run['requests_per_second']:,.0f} requests/s over "
                   f"{run['minutes']:g} min.")  # fmt: skip
    out += ["", "| operation | build | requests | errors | p50 ms | p95 ms | p99 ms |",
            "|---|---|--:|--:|--:|--:|--:|"]  # fmt: skip
    for op in mixed["pinboard"]["operations"]:
        for side, run in mixed.items():
            r = run["operations"].get(op)
            if r:
                out.append(f"| {op} | {side} | {r['requests']:,} | {r['errors']} "
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
    for ax, mode in zip(axes, ("warm", "cold"), strict=True):
        for i, side in enumerate(("pinboard", "orm")):
            values = [results["throughput"][op][side][mode]["rps"] for op in ops]
            ax.barh([y + i * 0.4 for y in range(len(ops))], values, height=0.4, label=side)
        ax.set_yticks([y + 0.2 for y in range(len(ops))], ops)
        ax.invert_yaxis()
        ax.set_xlabel("requests per second")
        ax.set_title(f"{mode} (memcached {'flushed' if mode == 'cold' else 'filled'})")
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
    fig, axes = plt.subplots(2, 2, figsize=(13, 9))
    for row, mode in zip(axes, ("warm", "cold"), strict=True):
        for ax, side in zip(row, ("pinboard", "orm"), strict=True):
            for op in ops:
                ax.plot([int(s) for s in sizes],
                        [results["sizes"][s][op][side][mode]["p50"] for s in sizes],
                        marker="o", label=op)  # fmt: skip
            ax.set_xscale("log")
            ax.set_xlabel("pins")
            ax.set_ylabel(f"p50 ms ({mode})")
            ax.set_title(f"{side}, {mode}")
            ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(file, dpi=90)
    plt.close(fig)
