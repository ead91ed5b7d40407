"""`vinestream report OUT [--html FILE]`: one self-contained HTML page with plots of a results directory.

Everything comes from the output directory alone (:func:`vinestream.read_results`): the summary
(one row per epoch), the job outputs, the dead letters and ``_run.json``.  Plots are drawn with
matplotlib (the ``report`` extra) and inlined as base64 PNG, so the page is one file that can be
mailed or attached to a ticket.

Sections: headline numbers; throughput (events/s per epoch, from ``wall_time``) and graph size
over epochs; per-phase latency; memory (structure reserved/used, process RSS); the jobs' results
(top PageRank vertices at the last epoch, the BFS depth histogram, triangles over time); dead
letters by reason; the run's settings.
"""
from __future__ import annotations

import base64
import collections
import datetime as dt
import html
import io
import json
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from vinestream.connectors.parquet import read_results
from vinestream.stream.app.preflight import check_writable_file
from vinestream.stream.errors import UsageError

PHASES = ("resolve", "vertices", "csr", "delete", "insert", "edges")   # edges: both edge phases as one
JOB_PHASES = ("pagerank", "bfs", "triangles")
_COLORS = ["#2f6f9f", "#e07b39", "#4a9d5b", "#b64a4a", "#7d5ba6", "#8c6d31", "#d16ba5", "#5f6b6d"]


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise UsageError("vinestream report needs matplotlib: pip install 'vinestream[report]' "
                         "(or pip install matplotlib)") from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    plt.rcParams.update({"figure.dpi": 110, "axes.spines.top": False, "axes.spines.right": False,
                         "axes.grid": True, "grid.alpha": 0.25, "font.size": 9, "axes.titlesize": 10,
                         "axes.prop_cycle": matplotlib.cycler(color=_COLORS)})
    return plt


def _png(fig) -> str:
    buf = io.BytesIO()
    fig.tight_layout()
    fig.savefig(buf, format="png")
    fig.clf()
    import matplotlib.pyplot as plt
    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _col(table: pa.Table, name: str) -> np.ndarray | None:
    if name not in table.column_names:
        return None
    values = pc.cast(table.column(name), pa.float64())
    return np.asarray(pc.fill_null(values, np.nan).to_numpy(zero_copy_only=False), dtype=np.float64)


def _events_per_second(summary: pa.Table) -> np.ndarray | None:
    """Per epoch: its events over the wall time since the previous epoch ended (the first: its phases)."""
    events, wall = _col(summary, "events"), _col(summary, "wall_time")
    if events is None or wall is None or len(events) == 0:
        return None
    dt_s = np.diff(wall, prepend=np.nan)
    phase_ms = sum((np.nan_to_num(_col(summary, name)) for name in summary.column_names if name.endswith("_ms")),
                   np.zeros(len(events)))
    first = phase_ms[0] / 1e3 if len(phase_ms) else np.nan      # the first epoch: its phases and jobs
    dt_s[0] = first if first > 0 else np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        rate = events / dt_s
    rate[~np.isfinite(rate)] = np.nan
    return rate


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{n:,.1f} {unit}" if unit != "B" else f"{n:,.0f} B"
        n /= 1024
    return str(n)


def _figure(plt, width=6.4, height=3.0):
    return plt.figure(figsize=(width, height))


def _plots(summary: pa.Table, results: dict, top: int) -> list[tuple[str, str, str]]:
    """(title, caption, base64 PNG) of every plot the directory has data for."""
    plt = _pyplot()
    out = []
    epoch = _col(summary, "epoch")
    if epoch is None or not len(epoch):
        return out
    rate = _events_per_second(summary)
    if rate is not None and np.isfinite(rate).any():
        fig = _figure(plt)
        ax = fig.add_subplot(111)
        ax.plot(epoch, rate, marker="o", ms=3, lw=1.2)
        ax.set_xlabel("epoch (batch)")
        ax.set_ylabel("events / s")
        ax.set_ylim(bottom=0)
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.set_title("Throughput per epoch")
        out.append(("Throughput", "events of each epoch over the wall time since the previous epoch ended",
                    _png(fig)))
    vertices, edges = _col(summary, "vertices"), _col(summary, "edges")
    if vertices is not None or edges is not None:
        fig = _figure(plt)
        ax = fig.add_subplot(111)
        if vertices is not None:
            ax.plot(epoch, vertices, label="vertices", lw=1.5)
        if edges is not None:
            ax.plot(epoch, edges, label="edges", lw=1.5)
        expired = _col(summary, "expired")
        if expired is not None:
            ax.plot(epoch, np.cumsum(np.nan_to_num(expired)), label="edges expired (cumulative, --edge-ttl)",
                    lw=1, ls="--")
        ax.set_xlabel("epoch")
        ax.set_ylabel("count")
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.legend(frameon=False)
        ax.set_title("Graph size")
        out.append(("Graph size", "live vertices and edges after each epoch", _png(fig)))
    phases = [p for p in (*PHASES, *JOB_PHASES) if f"{p}_ms" in summary.column_names]
    if phases:
        fig = _figure(plt, height=3.3)
        ax = fig.add_subplot(111)
        values = np.vstack([np.nan_to_num(_col(summary, f"{p}_ms")) for p in phases])
        ax.stackplot(epoch, values, labels=phases, alpha=0.85)
        ax.set_xlabel("epoch")
        ax.set_ylabel("milliseconds")
        ax.legend(frameon=False, ncol=4, fontsize=8, loc="upper left")
        ax.set_title("Latency per epoch, by phase (stacked)")
        out.append(("Latency by phase", "each phase of each epoch; jobs run every --jobs-every epochs", _png(fig)))
    mem = [(name, _col(summary, name)) for name in ("reserved_bytes", "used_bytes", "rss_bytes")]
    mem = [(n, v) for n, v in mem if v is not None and np.isfinite(v).any()]
    if mem:
        fig = _figure(plt)
        ax = fig.add_subplot(111)
        labels = {"reserved_bytes": "structure reserved", "used_bytes": "structure used",
                  "rss_bytes": "process resident (RSS, right axis)"}
        lines = []
        right = ax.twinx() if any(n == "rss_bytes" for n, _ in mem) else None
        for i, (name, values) in enumerate(mem):
            target = right if name == "rss_bytes" else ax
            lines += target.plot(epoch, values / 2**20, label=labels[name], lw=1.5, color=_COLORS[i])
        ax.set_xlabel("epoch")
        ax.set_ylabel("structure MiB")
        ax.set_ylim(bottom=0)
        if right is not None:
            right.set_ylabel("process MiB")
            right.set_ylim(bottom=0)
            right.grid(False)
        ax.legend(lines, [ln.get_label() for ln in lines], frameon=False, loc="lower right")
        ax.set_title("Memory")
        out.append(("Memory", "the structure's reserved and used bytes, and the process's resident memory",
                    _png(fig)))
    pagerank = results.get("pagerank")
    if pagerank is not None and pagerank.num_rows:
        last = pc.max(pagerank.column("epoch")).as_py()
        at = pagerank.filter(pc.equal(pagerank.column("epoch"), last))
        best = at.sort_by([("rank", "descending")]).slice(0, top)
        fig = _figure(plt, height=max(2.4, 0.18 * best.num_rows + 0.8))
        ax = fig.add_subplot(111)
        labels = [str(v) for v in best.column("vertex").to_pylist()][::-1]
        ax.barh(labels, best.column("rank").to_numpy()[::-1], color=_COLORS[0])
        ax.set_xlabel("PageRank")
        ax.set_title(f"Top {best.num_rows} vertices by PageRank, epoch {last}")
        ax.grid(axis="y", alpha=0)
        out.append(("Top PageRank vertices", f"at the last written epoch ({last}) of {at.num_rows:,} vertices",
                    _png(fig)))
    bfs = results.get("bfs")
    if bfs is not None and bfs.num_rows:
        last = pc.max(bfs.column("epoch")).as_py()
        dist = bfs.filter(pc.equal(bfs.column("epoch"), last)).column("distance").to_numpy()
        reached = dist[dist >= 0]
        fig = _figure(plt)
        ax = fig.add_subplot(111)
        if len(reached):
            depth, count = np.unique(reached, return_counts=True)
            ax.bar(depth, count, color=_COLORS[1])
        ax.set_xlabel("hops from the source(s)")
        ax.set_ylabel("vertices")
        ax.set_title(f"BFS depth histogram, epoch {last}: {len(reached):,} of {len(dist):,} vertices reached")
        out.append(("BFS depths", "hop distance of every reached vertex at the last written epoch", _png(fig)))
    triangles = _col(summary, "triangles")
    if triangles is not None and np.isfinite(triangles).any():
        fig = _figure(plt)
        ax = fig.add_subplot(111)
        ok = np.isfinite(triangles)
        ax.plot(epoch[ok], triangles[ok], marker="o", ms=3, lw=1.2, color=_COLORS[2])
        ax.set_xlabel("epoch")
        ax.set_ylabel("triangles")
        ax.yaxis.set_major_formatter(plt.FuncFormatter(lambda v, _: f"{v:,.0f}"))
        ax.set_title("Triangles over time")
        out.append(("Triangles", "triangles of the undirected graph after each epoch the job ran", _png(fig)))
    return out


def _headline(summary: pa.Table, dead: pa.Table) -> list[tuple[str, str]]:
    def total(name):
        v = _col(summary, name)
        return float(np.nansum(v)) if v is not None else None
    rows = [("epochs", f"{summary.num_rows:,}")]
    events = total("events")
    if events is not None:
        rows.append(("events applied", f"{events:,.0f}"))
    rows.append(("dead letters", f"{dead.num_rows:,}"))
    for name in ("vertices", "edges", "triangles"):
        v = _col(summary, name)
        if v is not None and np.isfinite(v).any():
            rows.append((f"{name} at the end", f"{v[np.isfinite(v)][-1]:,.0f}"))
    wall = _col(summary, "wall_time")
    if wall is not None and len(wall) > 1 and events:
        span = wall[-1] - wall[0]
        rate = _events_per_second(summary)
        if rate is not None and np.isfinite(rate).any():
            rows.append(("median events / s", f"{np.nanmedian(rate):,.0f}"))
        rows.append(("run time (first to last epoch)", f"{span:,.1f} s"))
    rss = _col(summary, "rss_bytes")
    if rss is not None and np.isfinite(rss).any():
        rows.append(("peak process memory", _fmt_bytes(np.nanmax(rss))))
    return rows


_CSS = """
body{font-family:-apple-system,'Segoe UI',Roboto,Helvetica,Arial,sans-serif;margin:0;background:#f5f6f8;color:#1f2933}
header{background:#1f3b57;color:#fff;padding:18px 32px}header h1{margin:0;font-size:22px}
header p{margin:4px 0 0;opacity:.85;font-size:13px}main{padding:20px 32px;max-width:1400px}
.cards{display:flex;flex-wrap:wrap;gap:12px;margin-bottom:18px}
.card{background:#fff;border-radius:8px;padding:10px 16px;box-shadow:0 1px 2px rgba(0,0,0,.08);min-width:150px}
.card .v{font-size:20px;font-weight:600}.card .k{font-size:12px;color:#52606d}
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(560px,1fr));gap:16px}
figure{background:#fff;margin:0;border-radius:8px;padding:10px;box-shadow:0 1px 2px rgba(0,0,0,.08)}
figure img{width:100%}figcaption{font-size:12px;color:#52606d;padding:4px 6px}
table{border-collapse:collapse;background:#fff;font-size:12px;margin:8px 0 18px}
td,th{border-bottom:1px solid #e4e7eb;padding:4px 10px;text-align:left}th{background:#eef1f4}
h2{font-size:16px;margin:22px 0 8px}footer{font-size:11px;color:#7b8794;padding:12px 32px}
"""


def _table_html(rows, header=None) -> str:
    head = "" if header is None else "<tr>" + "".join(f"<th>{html.escape(str(h))}</th>" for h in header) + "</tr>"
    body = "".join("<tr>" + "".join(f"<td>{html.escape(str(c))}</td>" for c in row) + "</tr>" for row in rows)
    return f"<table>{head}{body}</table>"


def render_report(out_dir, *, top: int = 20) -> str:
    """The HTML page for results directory ``out_dir`` (a string)."""
    out_dir = Path(out_dir)
    if not out_dir.is_dir():
        raise UsageError(f"report: {out_dir} is not a directory (give the --out of a replay or run)")
    results = read_results(out_dir)
    summary = results["summary"]
    dead = results["dead_letters"]
    if summary.num_rows == 0 and dead.num_rows:
        # a run whose every row was refused: say so, not "is it an output directory?"
        reasons = collections.Counter(dead.column("reason").to_pylist()).most_common(3)
        raise UsageError(f"report: {out_dir}: the run applied no event; all {dead.num_rows:,} went to "
                         f"dead_letter.parquet ({', '.join(f'{r} x{c:,}' for r, c in reasons)}): read that file")
    if summary.num_rows == 0 and "run" in results:
        # the --out of a run that read nothing (an empty log, a topic with no message): say that
        run = results["run"].to_pylist()[0]
        inputs = ", ".join(json.loads(run.get("logs") or run.get("topics") or "[]"))   # lists come as JSON text
        raise UsageError(f"report: {out_dir}: the {run.get('command', 'run')} read no event"
                         + (f" from {inputs}" if inputs else "") + ": nothing to report")
    if summary.num_rows == 0:
        raise UsageError(f"report: {out_dir} holds no summary.parquet rows: is it the --out of a replay or run?")
    run = json.loads(json.dumps(results["run"].to_pylist()[0])) if "run" in results else {}
    plots = _plots(summary, results, top)
    # without _run.json (a directory written before it existed) the title said "vinestream run:  on "
    title = f"vinestream {run.get('command', 'run')}: {run['structure']} on {run.get('backend', '?')}" \
        if run.get("structure") else f"vinestream results: {Path(out_dir).name or out_dir}"
    cards = "".join(f'<div class="card"><div class="v">{html.escape(v)}</div>'
                    f'<div class="k">{html.escape(k)}</div></div>' for k, v in _headline(summary, dead))
    figures = "".join(f'<figure><img alt="{html.escape(t)}" src="data:image/png;base64,{b64}">'
                      f"<figcaption><b>{html.escape(t)}</b>: {html.escape(c)}</figcaption></figure>"
                      for t, c, b64 in plots)
    parts = [f"<!doctype html><html><head><meta charset='utf-8'><title>{html.escape(title)}</title>"
             f"<style>{_CSS}</style></head><body>",
             f"<header><h1>{html.escape(title)}</h1><p>{html.escape(str(out_dir))} &middot; "
             f"{summary.num_rows:,} epochs &middot; written {html.escape(str(run.get('written', '')))}</p>"
             "</header><main>",
             f"<div class='cards'>{cards}</div><div class='grid'>{figures}</div>"]
    pagerank = results.get("pagerank")
    if pagerank is not None and pagerank.num_rows:
        last = pc.max(pagerank.column("epoch")).as_py()
        best = pagerank.filter(pc.equal(pagerank.column("epoch"), last)).sort_by([("rank", "descending")]).slice(0, top)
        parts.append(f"<h2>Top {best.num_rows} PageRank vertices (epoch {last})</h2>")
        parts.append(_table_html([(i + 1, v, f"{r:.6g}") for i, (v, r) in enumerate(
            zip(best.column("vertex").to_pylist(), best.column("rank").to_pylist()))], ("#", "vertex", "rank")))
    if dead.num_rows:
        counts = pc.value_counts(dead.column("reason")).to_pylist()
        parts.append("<h2>Dead letters by reason</h2>")
        parts.append(_table_html(sorted(((c["values"], f"{c['counts']:,}") for c in counts), key=lambda r: r[0]),
                                 ("reason", "records")))
    if run:
        parts.append("<h2>Run</h2>")
        parts.append(_table_html([(k, v if not isinstance(v, (list, dict)) else json.dumps(v))
                                  for k, v in run.items() if v not in (None, "", [], {})], ("setting", "value")))
    parts.append(f"</main><footer>vinestream report &middot; generated "
                 f"{dt.datetime.now(dt.UTC).strftime('%Y-%m-%d %H:%M:%SZ')} from {html.escape(str(out_dir))} "
                 "alone (summary.parquet, job outputs, dead_letter.parquet, _run.json)</footer></body></html>")
    return "".join(parts)


def write_report(out_dir, html_path=None, *, top: int = 20) -> Path:
    """Render the report of ``out_dir`` to ``html_path`` (default ``OUT/report.html``); the path."""
    path = Path(html_path) if html_path else Path(out_dir) / "report.html"
    if path.is_dir():
        raise UsageError(f"--html {path} is a directory: give a file name such as {path / 'report.html'}")
    # a folder of it that is a file was "File exists: X", after the page was drawn
    if html_path:           # the default, OUT/report.html, is checked with OUT by render_report
        check_writable_file(path, "--html")
    page = render_report(out_dir, top=top)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(page, encoding="utf-8")
    return path
