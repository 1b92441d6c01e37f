"""The benchmark table of docs/benchmarks/summary.md, from the JSON the benchmarks left in bench/out/.

    .venv/bin/python -m bench report [--write]

Prints Markdown: one row per figure, with its baseline from the same run, the ratio, the target and
whether it was met. Missing results (a benchmark not run yet) are left out with a note. `--write` also
puts the table into docs/benchmarks/summary.md, between its `<!-- bench:start -->` and `<!-- bench:end -->`
markers (`make bench` does): the prose around the table is written by hand, the table never is.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from typing import Any

from bench.lib.common import OUT, ROOT
from bench.lib.report_search import keyword_held_rows, met, vector_rows

SUMMARY = ROOT / "docs" / "benchmarks" / "summary.md"
MARKERS = re.compile(r"(<!-- bench:start -->\n).*?(<!-- bench:end -->)", re.S)


def _load(name: str) -> dict[str, Any] | None:
    path = OUT / f"{name}.json"
    return json.loads(path.read_text()) if path.exists() else None


def _import_rows(i: dict[str, Any]) -> list[list[str]]:
    imp, enc, plain = i["embed_import"], i["raw_encode"], i["no_embed_import"]
    rss, per = i["peak_rss_mib"], i["db_mb_per_1k_messages"]
    return [
        [
            f"Import with embeddings, {imp['messages']:,} messages",
            f"{imp['messages_per_cpu_s']:.1f} msg per CPU-s ({imp.get('backend', 'onnx')})",
            f"the encoder alone: {enc['messages_per_cpu_s']:.1f} msg per CPU-s",
            f"{i['ratio_import_to_encode']:.2f}x",
            ">= 0.8x",
            met(i["targets"]["import_ge_0.8x_raw_encode"]),
        ],
        *(
            [
                [
                    "Import with embeddings, new vs old path",
                    f"{imp['messages_per_cpu_s']:.1f} msg per CPU-s",
                    f"sentence-transformers: {i['old_path_import']['messages_per_cpu_s']:.1f}",
                    f"{i['ratio_new_to_old_per_cpu_s']:.2f}x",
                    ">= 3x",
                    met(i["targets"].get("import_ge_3x_old_path_per_cpu_s", False)),
                ]
            ]
            if i.get("old_path_import")
            else []
        ),
        [
            f"Import `--no-embed`, {plain['messages']:,} messages",
            f"{plain['messages_per_s']:,.0f} msg/s",
            "-",
            "-",
            ">= 5,000 msg/s",
            met(i["targets"]["no_embed_ge_5000_msgs_per_s"]),
        ],
        [
            f"chat.db per 1,000 messages, import of {imp['messages']:,}",
            f"{per['with_vectors_mb']:.2f} MB with vectors (incl. the bit tables' fixed ~3 MB)",
            f"{per['without_vectors_mb']:.2f} MB without ({plain['messages']:,} messages)",
            "-",
            "(reported)",
            "-",
        ],
        [
            "Peak RSS while importing",
            f"{rss['import_with_model']:.0f} MiB with the model ({imp['messages']:,} messages)",
            f"{rss['import_no_embed']:.0f} MiB without ({plain['messages']:,})",
            "-",
            "(reported)",
            "-",
        ],
    ]


def _reimport_rows(r: dict[str, Any]) -> list[list[str]]:
    ms, before = r["reimport_write_thread_ms"], r["reimport_plus_all_messages_check_ms"]
    return [
        [
            f"Re-import of {r['threads']} unchanged threads x {r['messages_per_thread']} messages",
            f"{ms:.1f} ms, {r['reimport_statements']} SQL statements",
            f"plus the old every-message check: {before:.1f} ms",
            f"{before / ms:.1f}x" if ms else "-",
            f"<= {r['target_ms']} ms",
            met(ms <= r["target_ms"]),
        ]
    ]


def _transcript_rows(r: dict[str, Any]) -> list[list[str]]:
    s, total = r["session"], r["import_and_summary_s"]
    again = r["reimport_unchanged"]
    load = r["load_avg_before"][0], r["load_avg_after"][0]
    return [
        [
            f"Claude Code session, {s['turns']:,} turns / {s['tool_calls']:,} tool calls / "
            f"{s['bytes'] / 1e6:.0f} MB: import with embeddings + summary",
            f"{total:.0f} s ({r['import_and_summary_cpu_s']:.0f} CPU s; load {load[0]:.0f} -> {load[1]:.0f})",
            f"the model alone on the same texts: {r['baseline_encode_alone_s']:.0f} s",
            f"import alone {r['import_vs_encode_alone']:.2f}x",
            f"< {r['target_s']} s",
            met(total < r["target_s"]),
        ],
        [
            "Same session re-imported unchanged",
            f"{again['s'] * 1000:.1f} ms, {again['rows_written']} rows written",
            f"parsing it again: {again['baseline_full_parse_s'] * 1000:.0f} ms",
            "-",
            "writes nothing",
            met(again["rows_written"] == 0),
        ],
    ]


def _startup_rows(t: dict[str, Any]) -> list[list[str]]:
    f, idle = t["first_paint_ms"], t["idle_with_model"]
    return [
        [
            f"TUI first paint, {t['database']['messages'] // 1000}k messages / {t['database']['memories'] // 1000}k "
            "memories",
            f"{f['memapp_p50']:.0f} ms (threads listed at {t['threads_listed_ms_p50']:.0f} ms)",
            f"minimal Textual app: {f['minimal_p50']:.0f} ms",
            f"{f['ratio']:.2f}x",
            "<= 1.5x, no model before paint",
            met(
                t["targets"]["first_paint_le_1.5x_minimal"] and t["targets"]["model_not_loaded_before_paint"]
            ),
        ],
        [
            "RSS, TUI idle with the model loaded",
            f"{idle['rss_mib']:.0f} MiB"
            + (", torch not imported" if idle.get("torch_imported") is False else ""),
            "-",
            "-",
            "<= 400 MiB, no torch",
            met(t["targets"].get("idle_rss_le_400MiB_no_torch", False)),
        ],
    ]


def _context_rows(c: dict[str, Any]) -> list[list[str]]:
    ctx = c["context"]
    return [
        [
            f"Context build, {c['budget']:,}-token budget, {c['messages']:,}-message thread",
            f"{ctx['latest_user_message']['p50_ms']:.1f} ms p50 ({ctx['query']['p50_ms']:.1f} ms with a query)",
            "-",
            "-",
            "<= 50 ms",
            met(c["targets"]["p50_le_50ms"]),
        ]
    ]


def _quality_rows(q: dict[str, Any]) -> list[list[str]]:
    if q.get("set") == "longmem":
        return _longmem_rows(q)
    h, v, k = q["hybrid"], q["vector"], q["keyword"]
    return [
        [
            f"Search quality, {q['dataset']['questions']} questions over {q['dataset']['messages']} messages "
            "(bench/eval)",
            f"hybrid recall@10 {h['recall@10']:.3f}, MRR {h['mrr']:.3f}",
            f"vector-only {v['recall@10']:.3f} / keyword-only {k['recall@10']:.3f}",
            "-",
            "hybrid beats both",
            met(h["recall@10"] > max(v["recall@10"], k["recall@10"])),
        ]
    ]


def _cold_rows(c: dict[str, Any]) -> list[list[str]]:
    r, ratio, demo = c["runs"], c["ratios"], c.get("demo_load")

    def cpu(key: str) -> str:
        v = r[key]["cpu_s"]
        return f"{v['median']:.2f} s CPU ({v['min']:.2f}-{v['max']:.2f})"

    rows = [
        [
            "Cold `memapp search QUERY` (hybrid)",
            cpu("search") + f", {r['search']['rss_mib']['median']:.0f} MiB",
            f"`--keyword-only`: {cpu('keyword')}",
            f"{ratio['search_vs_keyword_only']:.2f}x",
            "<= 2.5x",
            met(c["targets"]["search_le_2.5x_keyword"]),
        ],
        [
            "Cold `memapp memory add`",
            cpu("add"),
            f"embedding disabled: {cpu('add_off')}",
            f"{ratio['memory_add_vs_embedding_disabled']:.2f}x",
            "<= 2.5x",
            met(c["targets"]["memory_add_le_2.5x_disabled"]),
        ],
    ]
    if demo:
        rows.append(
            [
                "Load demo into a new chat.db",
                f"{demo['shipped_vectors']['wall_s']:.1f} s ({demo['shipped_vectors']['cpu_s']:.1f} s CPU), no model",
                f"the model embedding it: {demo['embedded_by_the_model']['wall_s']:.1f} s",
                "-",
                "<= 5 s",
                met(c["targets"].get("demo_load_le_5s", False)),
            ]
        )
    if "old" in r:
        rows.append(
            [
                "Cold search through sentence-transformers (old path)",
                cpu("old") + f", {r['old']['rss_mib']['median']:.0f} MiB",
                "-",
                "-",
                "(reported)",
                "-",
            ]
        )
    return rows


def _longmem_rows(q: dict[str, Any]) -> list[list[str]]:
    """bench/eval/longmem: the test half against issue 14's targets, the tuning half beside it."""
    rows = []
    for split in ("test", "tune"):
        s = q["splits"].get(split)
        if s is None:
            continue
        o = s["overall"]
        h, k, v, b = (o[n]["recall@10"] for n in ("hybrid", "keyword", "vector", "bm25"))
        worst = min(d["hybrid"]["recall@10"] - d["keyword"]["recall@10"] for d in s["by_kind"].values())
        rows.append(
            [
                f"Search quality, longmem {split} half ({o['hybrid']['n']} answerable questions)",
                f"hybrid recall@10 {h:.3f}, MRR {o['hybrid']['mrr']:.3f}",
                f"keyword {k:.3f} / vector {v:.3f} / plain BM25 {b:.3f}",
                f"{h - max(k, v):+.3f}",
                ">= best single + 0.08, >= keyword on every kind" if split == "test" else "(tuning half)",
                met(h >= max(k, v) + 0.08 and worst >= 0) if split == "test" else "-",
            ]
        )
        if split == "test":
            na = s["no_answer"]
            rows.append(
                [
                    f"No-answer questions returning any result, longmem test half ({na['n']})",
                    f"{na['false_hit_rate']:.2f}",
                    f"keyword {na['false_hit_rate_by_retriever']['keyword']:.2f}",
                    "-",
                    "<= 0.10",
                    met(na["false_hit_rate"] <= 0.10),
                ]
            )
    return rows


def table() -> str | None:
    rows: list[list[str]] = []
    missing, first = [], None
    for name, make in (
        ("search", vector_rows),
        ("import", _import_rows),
        ("reimport", _reimport_rows),
        ("transcript", _transcript_rows),
        ("keyword_held", keyword_held_rows),
        ("startup", _startup_rows),
        ("cold", _cold_rows),
        ("context", _context_rows),
        ("eval_search", _quality_rows),
    ):
        data = _load(name)
        if data is None:
            missing.append(name)
            continue
        first = first or (data if "machine" in data else None)
        rows += make(data)
    if first is None:
        return None
    m = first["machine"]
    lines = [
        f"Measured {first['date']} on {m['cpus']} cores ({m['cpu'] or 'unknown CPU'}), Python {m['python']}, "
        f"SQLite {m['sqlite']}, with `make bench`.",
        "",
        "| Figure | Measured | Baseline, same run | Ratio | Target | Met |",
        "|---|---|---|---|---|---|",
    ]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    if missing:
        lines += ["", f"(not run: {', '.join(missing)})"]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--write", action="store_true", help=f"also put the table into {SUMMARY.name}")
    args = parser.parse_args(argv)
    text = table()
    if text is None:
        print("no results in bench/out/: run `make bench` first", file=sys.stderr)
        return 1
    print(text, end="")
    if args.write:
        page = SUMMARY.read_text(encoding="utf-8")
        if not MARKERS.search(page):
            print(
                f"{SUMMARY.relative_to(ROOT)} has no <!-- bench:start --> / <!-- bench:end --> markers",
                file=sys.stderr,
            )
            return 1
        SUMMARY.write_text(
            MARKERS.sub(lambda m: m.group(1) + text + m.group(2), page, count=1), encoding="utf-8"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
