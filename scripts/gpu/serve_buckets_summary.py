#!/usr/bin/env python3
"""The summary of scripts/gpu/serve-buckets.sh, from the files it wrote in one folder:
perf_analyzer's CSVs (CONFIG-bB-cC.csv, CONFIG-mixed-bB-cC.csv), `ferry bench`'s JSON of each
package at batch 1 (bench-MODEL-b1.json), the engine runs by bucket (CONFIG-buckets.txt) and the
answer checks (checks.txt). Prints markdown: the front end's own round trip (frontend_grpc-b1-c1,
frontend_http-b1-c1: a 4 KB `touch`), then per model, each config's figures and the checks the
buckets are held to (batch 1 alone within 1.15x of the bench floor; 64 single-image clients and the
mixed pair at 90% or more of 16 clients at batch 16), then the batcher's delays against the
latency targets.

    serve_buckets_summary.py FOLDER > summary.md
"""
import csv
import json
import pathlib
import re
import sys

CONFIGS = ("b16_before", "b16", "b64_before", "b64")
WAITS = (("b64", "delay 0"), ("b64_d100", "delay 100 us"), ("b64_d1000", "delay 1000 us"),
         ("b64_t5", "target 5 ms"), ("b64_t20", "target 20 ms"))


def pa(folder, stem):
    """(images/s, p50 ms, p99 ms) of one perf_analyzer CSV, or None."""
    path = folder / f"{stem}.csv"
    if not path.exists():
        return None
    rows = list(csv.DictReader(path.open()))
    if not rows:
        return None
    r = rows[0]
    return float(r["Inferences/Second"]), float(r["p50 latency"]) / 1e3, float(r["p99 latency"]) / 1e3


def server_ms(folder, stem):
    """The server's own average latency of a perf_analyzer run (its statistics), or None."""
    path = folder / f"{stem}.txt"
    m = re.search(r"Avg request latency: (\d+) usec", path.read_text()) if path.exists() else None
    return int(m[1]) / 1e3 if m else None


def bench_floor_ms(folder, model):
    path = folder / f"bench-{model}-b1.json"
    if not path.exists():
        return None
    for r in json.loads(path.read_text()).get("results", []):
        if r.get("strategy") == "device" and r.get("latency_us"):
            return r["latency_us"]["median"] / 1e3
    return None


def fmt(v, digits=0):
    return "—" if v is None else f"{v:.{digits}f}"


def ratio(a, b):
    return None if a is None or b is None or b == 0 else a / b


def verdict(value, limit, at_most):
    if value is None:
        return "not measured"
    ok = value <= limit if at_most else value >= limit
    return f"{value:.2f} ({'met' if ok else 'MISSED'})"


def model_section(folder, model):
    floor = bench_floor_ms(folder, model)
    lines = [f"## {model}", "",
             f"`ferry bench --batch 1 --graph --strategy device`: median {fmt(floor, 3)} ms a request", "",
             "| config | b1 x1 p50 ms | b1 x1 / bench | b1 x1 in the server ms (/ bench) | b1 x16 img/s | b1 x64 img/s "
             "| b1 x64 p99 ms | b16 x16 img/s | b1 x64 / b16 x16 "
             "| mixed img/s (b1 x32 + b16 x4) | mixed / b16 x16 | p99 ms b1 / b16 | runs by bucket, padded rows |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---|"]
    for config in CONFIGS:
        name = f"{model}_{config}"
        one, some = pa(folder, f"{name}-b1-c1"), pa(folder, f"{name}-b1-c16")
        many, sixteen = pa(folder, f"{name}-b1-c64"), pa(folder, f"{name}-b16-c16")
        small, large = pa(folder, f"{name}-mixed-b1-c32"), pa(folder, f"{name}-mixed-b16-c4")
        mixed = small[0] + large[0] if small and large else None
        buckets = folder / f"{name}-buckets.txt"
        runs = ", ".join(f"{b}: {n}" for b, n in re.findall(r'bucket="(\d+)"\} (\d+)', buckets.read_text())) \
            if buckets.exists() else ""
        padded = re.search(r"ferry_padded_rows_total\{[^}]*\} (\d+)", buckets.read_text()) if buckets.exists() else None
        b16 = sixteen[0] if sixteen else None
        inside = server_ms(folder, f"{name}-b1-c1")
        inside_ratio = ratio(inside, floor)
        lines.append(
            f"| {config} | {fmt(one and one[1], 3)} | {verdict(ratio(one and one[1], floor), 1.15, True)} "
            f"| {fmt(inside, 3)} ({fmt(inside_ratio, 2)}) "
            f"| {fmt(some and some[0])} | {fmt(many and many[0])} | {fmt(many and many[2], 2)} | {fmt(b16)} "
            f"| {verdict(ratio(many and many[0], b16), 0.9, False)} | {fmt(mixed)} "
            f"| {verdict(ratio(mixed, b16), 0.9, False)} "
            f"| {fmt(small and small[2], 2)} / {fmt(large and large[2], 2)} | {runs}; padded {padded[1] if padded else '—'} |")
    lines += ["", "Batch 1 x 64 clients, max_batch 64, by how the batcher waits:", "",
              "| batcher | img/s | p50 ms | p99 ms |", "|---|---:|---:|---:|"]
    for config, label in WAITS:
        r = pa(folder, f"{model}_{config}-b1-c64")
        lines.append(f"| {label} | {fmt(r and r[0])} | {fmt(r and r[1], 2)} | {fmt(r and r[2], 2)} |")
    return lines + [""]


def front_end_lines(folder):
    """The front end's own round trip: a 4 KB `touch` at batch 1 from one client (FRONTEND-b1-c1.csv
    per protocol), the client's p50 beside the server's own latency; none when not measured."""
    rows = []
    for stem, label in (("frontend_grpc", "gRPC, CUDA shared memory"), ("frontend_http", "HTTP, in the body")):
        r = pa(folder, f"{stem}-b1-c1")
        if r:
            inside = server_ms(folder, f"{stem}-b1-c1")
            outside = None if inside is None else r[1] - inside
            rows.append(f"| {label} | {fmt(r[1], 3)} | {fmt(inside, 3)} | {fmt(outside, 3)} |")
    if not rows:
        return []
    return ["## The front end's own round trip", "",
            "A 4 KB `touch` on the GPU, one client at batch 1: what any model's request pays outside the server's "
            "statistics.", "", "| path | p50 ms | in the server ms | outside ms |", "|---|---:|---:|---:|",
            *rows, ""]


def main(argv):
    if len(argv) != 1:
        sys.exit("usage: serve_buckets_summary.py FOLDER")
    folder = pathlib.Path(argv[0])
    named = (re.match(r"(.+?)_b(?:16|64)(?:_[a-z0-9]+)?-", p.name) for p in folder.glob("*.csv"))
    models = sorted({m[1] for m in named if m})
    if not models:
        sys.exit(f"{folder}: no perf_analyzer CSV of a serve-buckets run (MODEL_b16-b1-c1.csv, MODEL_b64-...)")
    lines = ["# Batch buckets under real traffic", "", *front_end_lines(folder)]
    for model in models:
        lines += model_section(folder, model)
    checks = folder / "checks.txt"
    lines += ["## Answers against eager PyTorch", "", "```",
              checks.read_text().strip() if checks.exists() else "not checked", "```"]
    print("\n".join(lines))


if __name__ == "__main__":
    main(sys.argv[1:])
