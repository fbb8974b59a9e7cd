#!/usr/bin/env python3
"""Merges ferry bench JSON reports into one (the first report's machine and date, every result),
so runs at several batch sizes plot as one sweep with scripts/plot_bench.py.

Usage: python3 scripts/merge_reports.py out.json in1.json in2.json ...
"""
import json
import sys

if len(sys.argv) < 3:
    sys.exit(__doc__)
reports = [json.load(open(path, encoding="utf-8")) for path in sys.argv[2:]]
merged = dict(reports[0])
merged["command"] = " ; ".join(r.get("command", "") for r in reports)
merged["results"] = [result for r in reports for result in r.get("results", [])]
with open(sys.argv[1], "w", encoding="utf-8") as out:
    json.dump(merged, out, indent=2)
    out.write("\n")
