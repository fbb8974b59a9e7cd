#!/usr/bin/env python3
"""One markdown table from the CSV files perf_analyzer wrote (-f) in one run of a serve set of
scripts/gpu_host.sh, so a run's raw tool output is kept as one file:

    summarise_perf_analyzer.py [--batch MODEL=N ...] [--title TEXT] DIR [DIR...] > perf_analyzer.md

Each DIR holds files named [pa-]MODEL-PROTOCOL[-SHM]-cC.csv (SHM: none, system or cuda; absent:
none), as plot_serve.py reads them. A later DIR's file of the same model, protocol, path and
concurrency replaces an earlier one's and is marked with a dagger (a re-measurement). infer/s is
perf_analyzer's (images for a batched model); req/s divides it by the model's batch (--batch,
default 1). Server stages are per request, in microseconds, from perf_analyzer's server-side
statistics.
"""
import argparse
import csv
import pathlib
import re
import sys

NAME = re.compile(r"(?:pa-)?(?P<model>[\w.]+?)-(?P<protocol>http|grpc)(?:-(?P<shm>none|body|system|cuda))?"
                  r"-c(?P<c>\d+)\.csv")
PATH_ORDER = {"body": 0, "system": 1, "cuda": 2}


def read_rows(folders):
    rows = {}
    for index, folder in enumerate(folders):
        for path in sorted(pathlib.Path(folder).glob("*.csv")):
            m = NAME.fullmatch(path.name)
            records = list(csv.DictReader(path.open())) if m else []
            if not records:
                continue
            shm = m["shm"] if m["shm"] not in (None, "none") else "body"
            rows[(m["model"], m["protocol"], shm, int(m["c"]))] = (records[0], index > 0)
    return rows


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--batch", action="append", default=[], metavar="MODEL=N")
    parser.add_argument("--title", default="perf_analyzer against ferry serve")
    parser.add_argument("folders", nargs="+")
    args = parser.parse_args(argv)
    batch = {}
    for item in args.batch:
        model, _, n = item.partition("=")
        if not n.isdigit() or int(n) < 1:
            parser.error(f"--batch {item}: expected MODEL=N with N a positive integer")
        batch[model] = int(n)
    rows = read_rows(args.folders)
    if not rows:
        sys.exit(f"no perf_analyzer CSV files named MODEL-PROTOCOL[-SHM]-cC.csv in {', '.join(args.folders)}")
    print(f"# {args.title}\n")
    print("| model | batch | protocol | tensors | clients | infer/s | req/s | p50 ms | p99 ms | queue µs "
          "| compute_input µs | compute_infer µs | compute_output µs |")
    print("|---|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for key in sorted(rows, key=lambda k: (k[0], k[1], PATH_ORDER[k[2]], k[3])):
        model, protocol, shm, clients = key
        r, later = rows[key]
        b = batch.get(model, 1)
        rate = float(r["Inferences/Second"])
        mark = "†" if later else ""
        print(f"| {model} | {b} | {protocol} | {shm} | {clients} | {rate:.0f}{mark} | {rate / b:.1f} "
              f"| {float(r['p50 latency']) / 1000:.2f} | {float(r['p99 latency']) / 1000:.2f} | {r['Server Queue']} "
              f"| {r['Server Compute Input']} | {r['Server Compute Infer']} | {r['Server Compute Output']} |")
    if any(later for _, later in rows.values()):
        print("\n† re-measured in a later folder's run")


if __name__ == "__main__":
    main(sys.argv[1:])
