#!/usr/bin/env python3
"""Throughput on one GPU against two, per strategy, from the reports of the multi and
multi-resnet sets (mlp-1gpu.json beside mlp-2gpu.json, and so on):

    scaling_summary.py OUTDIR
"""
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
def results(name):
    p = out / f"{name}.json"
    if not p.exists(): return {}
    return {r["strategy"]: r for r in json.loads(p.read_text())["results"]}
for one, two in [("mlp-1gpu", "mlp-2gpu"), ("mlp-1gpu-c4", "mlp-2gpu-c8"),
                 ("mlp-small-1gpu", "mlp-small-2gpu"), ("resnet50-0", "resnet50-0-1")]:
    a, b = results(one), results(two)
    for strategy in a:
        if strategy not in b: continue
        ra, rb = a[strategy], b[strategy]
        if ra.get("refused") or rb.get("refused"):
            print(f"{one} vs {two} {strategy}: refused: {ra.get('refused') or rb.get('refused')}")
            continue
        ok = ra["output_matches"] and rb["output_matches"]
        print(f"{ra['engine']} {strategy}: {ra['throughput_per_s']:.0f}/s on 1 GPU, {rb['throughput_per_s']:.0f}/s on "
              f"{len(rb.get('devices', []))} GPUs = {rb['throughput_per_s'] / ra['throughput_per_s']:.2f}x"
              f"{'' if ok else '  (OUTPUT CHECK FAILED)'}; notes: {'; '.join(n for n in rb['notes'] if 'per GPU' in n)}")
