#!/usr/bin/env python3
"""The seed's claim at 16 and 64 clients, one row per batch and client count, from the reports
the seed-claim set wrote (seed-bB-cC-one.json: managed-prefetch and pinned in one context;
seed-bB-cC-auto.json: pinned with --inflight auto):

    seed_claim_summary.py OUTDIR
"""
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
print("batch clients | managed-prefetch 1 ctx | pinned 1 ctx | pinned inflight auto (slots) | best / seed | failed")
for c in (16, 64):
    for batch in (8, 16, 32):
        row, failed = {}, []
        for how in ("one", "auto"):
            p = out / f"seed-b{batch}-c{c}-{how}.json"
            if not p.exists():
                failed.append(f"{how}: no report"); continue
            for r in json.loads(p.read_text())["results"]:
                key = f"{r['strategy']}-{how}"
                if r.get("refused"):
                    if r.get("failed"): failed.append(f"{key}: {r['refused']}")
                    row[key] = None; continue
                noise = max(r["throughput_noise"], r.get("throughput_trial_noise", 0))
                row[key] = (r["throughput_per_s"], noise, r["inflight"], r["output_matches"])
        def cell(key):
            v = row.get(key)
            if v is None: return "-"
            return f"{v[0]:.0f} ±{100 * v[1]:.1f}%" + ("" if v[3] else " (CHECK FAILED)") + (f" ({v[2]})" if key.endswith("auto") else "")
        seed, best = row.get("managed-prefetch-one"), row.get("pinned-auto")
        ratio = f"{best[0] / seed[0]:.2f}x" if seed and best else "-"
        print(f"{batch:5} {c:7} | {cell('managed-prefetch-one'):>22} | {cell('pinned-one'):>12} | "
              f"{cell('pinned-auto'):>28} | {ratio:>11} | {'; '.join(failed) or 'none'}")
