#!/usr/bin/env python3
"""The false and true difference rates of `ferry bench compare` from the aa set's runs:

    aa_summary.py OUTDIR

OUTDIR holds aa-runs.txt (the runs in order: A1 B1 A2 ...) and aa-compare-X-Y.json for each pair
compared. A/A pairs (consecutive A runs) give the false rate over every cell; each A run next to a
B run (10% slower) gives the true rate over the cells of 16 MB and up.
"""
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
runs = (out / "aa-runs.txt").read_text().split()
big = 16 << 20
measured = ("same", "better", "worse")
def load(x, y):
    p = out / f"aa-compare-{x}-{y}.json"
    return [c for c in json.loads(p.read_text())["cells"] if c["verdict"] in measured] if p.exists() else None
a_runs = [r for r in runs if r.startswith("A")]
false_calls = false_total = true_calls = true_total = 0
nearest = []
for x, y in zip(a_runs, a_runs[1:]):
    cells = load(x, y)
    if cells is None: continue
    called = [c for c in cells if c["verdict"] != "same"]
    false_calls += len(called); false_total += len(cells)
    nearest += [(abs(c["change"]) / c["threshold"] if c["threshold"] > 0 else 0, f"{x}/{y}", c) for c in cells]
    print(f"A/A {x} vs {y}: {len(called)} of {len(cells)} cells called different"
          + "".join(f"\n    {c['label']}: {100 * c['change']:+.1f}% (threshold {100 * c['threshold']:.1f}%)" for c in called))
for x, y in zip(runs, runs[1:]):
    if x[0] == y[0]: continue
    cells = load(x, y)
    if cells is None: continue
    expected = "worse" if y.startswith("B") else "better"  # B is 10% slower: its latency is higher
    large = [c for c in cells if c["input_bytes"] >= big]
    found = [c for c in large if c["verdict"] == expected]
    true_calls += len(found); true_total += len(large)
    print(f"A/B {x} vs {y} (expected: {expected}): {len(found)} of {len(large)} cells of 16 MB and up"
          + "".join(f"\n    missed {c['label']}: {100 * c['change']:+.1f}% (threshold {100 * c['threshold']:.1f}%)"
                    for c in large if c["verdict"] != expected))
if false_total:
    print(f"false difference rate (A/A, every cell): {false_calls} of {false_total} = "
          f"{100 * false_calls / false_total:.1f}% (target: at most 5%)")
if true_total:
    print(f"true difference rate (A/B and B/A, 10%, cells of 16 MB and up): {true_calls} of {true_total} = "
          f"{100 * true_calls / true_total:.1f}% (target: at least 95%)")
nearest.sort(key=lambda n: -n[0])
print("A/A cells by |change| / threshold, largest first:")
for ratio, pair, c in nearest[:8]:
    print(f"  {ratio:.2f} {pair} {c['label']}: {100 * c['change']:+.1f}%, noise {100 * c['noise_a']:.2f}% / "
          f"{100 * c['noise_b']:.2f}%{' (between trials)' if c['between_trials'] else ''}")
