#!/usr/bin/env python3
"""The torch-graphs set's reports side by side (graphs/MODEL[-graph]-c1|c16.json): per cell the
CPU's enqueue and the GPU's compute per request (medians, µs), images per second (batch 16), the
enqueue as a share of the compute, whether every checked output matched the plain reference, and
what the cell says of its graphs.

    torch_graphs_summary.py OUTDIR/graphs
"""
import json
import pathlib
import sys

BATCH = 16
folder = pathlib.Path(sys.argv[1])


def median(r, key):
    series = r.get(key) or {}
    return series.get("median") if series.get("count") else None


def us(value):
    return "-" if value is None else f"{value:.0f}"


print(f"{'cell':<34} {'strategy':<8} {'enqueue µs':>10} {'compute µs':>10} {'enq/comp':>8} {'img/s':>8}  check  graphs")
for model in ("resnet50", "mobilenet-v3-small"):
    for clients in ("c1", "c16"):
        for graph in ("", "-graph"):
            name = f"{model}{graph}-{clients}"
            path = folder / f"{name}.json"
            if not path.exists():
                print(f"{name:<34} (no report)")
                continue
            for r in json.loads(path.read_text())["results"]:
                if r.get("refused"):
                    print(f"{name:<34} {r['strategy']:<8} refused: {r['refused']}")
                    continue
                enqueue, compute = median(r, "enqueue_us"), median(r, "compute_us")
                share = f"{100 * enqueue / compute:.0f}%" if enqueue and compute else "-"
                rate = r.get("throughput_per_s") or 0
                check = "ok" if r.get("output_checked") and r.get("output_matches") else (
                    "FAIL" if r.get("output_checked") else "none")
                notes = "; ".join(n for n in r.get("notes", []) if "graph" in n.lower()) or (
                    "graphs" if r.get("graph") else "")
                print(f"{name:<34} {r['strategy']:<8} {us(enqueue):>10} {us(compute):>10} {share:>8} "
                      f"{rate * BATCH:>8.0f}  {check:<5}  {notes}")
