#!/usr/bin/env python3
"""The false and true difference rates of `ferry bench compare` from the aa set's runs, on both
figures compare judges (end to end, and the GPU's own time per request):

    aa_summary.py OUTDIR

OUTDIR holds aa-runs.txt (the runs in order: A1 B1 A2 ...) and aa-compare-X-Y.json for each pair
compared. A/A pairs (consecutive A runs) give the false rate over every cell, on each figure; each
A run next to a B run (--slowdown 10: 10% slower on both figures) gives the true rate over the
cells of 16 MB and up, on the GPU figure with the end-to-end rate beside it. The true rate on the
GPU is counted over the cells whose GPU figure is the GPU's own; the cells whose figure the host
takes part in (compare's "gpu_host_part": pageable, staged and managed copies, spans as short as
the host's launches) are counted beside it; the A/A rate on the GPU is given over every cell and
over the cells whose figure is its own. Comparisons written before the GPU figure existed (no
"gpu" in their cells) count end to end only, and say so.
"""
import json
import pathlib
import sys

BIG = 16 << 20
MEASURED = ("same", "better", "worse")


def load(out, x, y):
    p = out / f"aa-compare-{x}-{y}.json"
    if not p.exists():
        return None
    return [c for c in json.loads(p.read_text())["cells"] if c["verdict"] in MEASURED]


def gpu_of(cell):
    """The cell's GPU comparison, or None where a report had no GPU figure."""
    return cell.get("gpu") or None


def own_gpu(cell):
    """Whether the cell's GPU figure is the GPU's own (the host takes no part in it)."""
    return gpu_of(cell) is not None and not cell.get("gpu_host_part")


def beyond(figure):
    """|change| / threshold: 1 and more is a difference."""
    return abs(figure["change"]) / figure["threshold"] if figure["threshold"] > 0 else 0


def rate(calls, total):
    return f"{calls} of {total} = {100 * calls / total:.1f}%" if total else "unknown (no cell with the figure)"


def by_strategy(out, runs):
    """The A/B comparisons' GPU figure of the cells of 16 MB and up, per strategy: its noise in
    each run, how often the 10% was found, and how much slower B came out than its A neighbour."""
    groups = {}
    for x, y in zip(runs, runs[1:]):
        if x[0] == y[0]:
            continue
        cells = load(out, x, y) or []
        expected = "worse" if y.startswith("B") else "better"
        for c in cells:
            if c["input_bytes"] < BIG or not gpu_of(c):
                continue
            g = c["gpu"]
            # B's time over A's, whichever of the two came first.
            slower = g["change"] if y.startswith("B") else 1 / (1 + g["change"]) - 1
            entry = groups.setdefault(c["label"].split(" / ")[-1], {"noise": [], "found": 0, "total": 0,
                                                                    "slower": [], "own": own_gpu(c)})
            entry["noise"] += [g["noise_a"], g["noise_b"]]
            entry["found"] += g["verdict"] == expected
            entry["total"] += 1
            entry["slower"].append(slower)
    if not groups:
        return
    print("A/B on the GPU, cells of 16 MB and up, by strategy (noise per run; found; B slower than A by):")
    for strategy, e in groups.items():
        print(f"  {strategy}{'' if e['own'] else ' (h)'}: {100 * min(e['noise']):.1f}-{100 * max(e['noise']):.1f}%; "
              f"{e['found']} of {e['total']}; {100 * min(e['slower']):+.1f} to {100 * max(e['slower']):+.1f}%")


def main(out):
    runs = (out / "aa-runs.txt").read_text().split()
    a_runs = [r for r in runs if r.startswith("A")]
    false_e2e = false_gpu = false_total = false_gpu_total = 0
    true_e2e = true_gpu = true_total = true_gpu_total = 0
    hosted_gpu = hosted_gpu_total = 0  # cells whose GPU figure the host takes part in
    false_own = false_own_total = 0  # A/A on the GPU, the cells whose GPU figure is its own
    nearest = []
    for x, y in zip(a_runs, a_runs[1:]):
        cells = load(out, x, y)
        if cells is None:
            continue
        called = [c for c in cells if c["verdict"] != "same"]
        with_gpu = [c for c in cells if gpu_of(c)]
        called_gpu = [c for c in with_gpu if c["gpu"]["verdict"] != "same"]
        false_e2e += len(called)
        false_total += len(cells)
        false_gpu += len(called_gpu)
        false_gpu_total += len(with_gpu)
        false_own += sum(1 for c in called_gpu if own_gpu(c))
        false_own_total += sum(1 for c in with_gpu if own_gpu(c))
        for c in cells:
            nearest.append((beyond(c), f"{x}/{y}", "end-to-end", c))
        for c in with_gpu:
            nearest.append((beyond(c["gpu"]), f"{x}/{y}", "GPU", c["gpu"] | {"label": c["label"]}))
        print(f"A/A {x} vs {y}: {len(called)} of {len(cells)} cells called different end to end, "
              f"{len(called_gpu)} of {len(with_gpu)} on the GPU"
              + "".join(f"\n    end to end {c['label']}: {100 * c['change']:+.1f}% "
                        f"(threshold {100 * c['threshold']:.1f}%)" for c in called)
              + "".join(f"\n    GPU {c['label']}: {100 * c['gpu']['change']:+.1f}% "
                        f"(threshold {100 * c['gpu']['threshold']:.1f}%)" for c in called_gpu))
    for x, y in zip(runs, runs[1:]):
        if x[0] == y[0]:
            continue
        cells = load(out, x, y)
        if cells is None:
            continue
        expected = "worse" if y.startswith("B") else "better"  # B is 10% slower on both figures
        large = [c for c in cells if c["input_bytes"] >= BIG]
        found = [c for c in large if c["verdict"] == expected]
        large_gpu = [c for c in large if own_gpu(c)]
        found_gpu = [c for c in large_gpu if c["gpu"]["verdict"] == expected]
        hosted = [c for c in large if gpu_of(c) and not own_gpu(c)]
        found_hosted = [c for c in hosted if c["gpu"]["verdict"] == expected]
        true_e2e += len(found)
        true_total += len(large)
        true_gpu += len(found_gpu)
        true_gpu_total += len(large_gpu)
        hosted_gpu += len(found_hosted)
        hosted_gpu_total += len(hosted)
        print(f"A/B {x} vs {y} (expected: {expected}), cells of 16 MB and up: {len(found_gpu)} of {len(large_gpu)} "
              f"found on the GPU where its figure is its own, {len(found_hosted)} of {len(hosted)} where the host "
              f"takes part, {len(found)} of {len(large)} end to end"
              + "".join(f"\n    missed on the GPU {c['label']}: {100 * c['gpu']['change']:+.1f}% "
                        f"(threshold {100 * c['gpu']['threshold']:.1f}%)"
                        for c in large_gpu if c["gpu"]["verdict"] != expected))
    if false_total:
        print(f"false difference rate (A/A, every cell), end to end: {rate(false_e2e, false_total)}; "
              f"on the GPU: {rate(false_gpu, false_gpu_total)} (target: at most 5%)")
        if false_own_total:
            print(f"  on the GPU, over the cells whose figure is its own: {rate(false_own, false_own_total)}")
    if true_total:
        print(f"true difference rate (A/B and B/A, 10%, cells of 16 MB and up), on the GPU: "
              f"{rate(true_gpu, true_gpu_total)}; end to end: {rate(true_e2e, true_total)} (target: at least 95%)")
        if hosted_gpu_total:
            print(f"  beside it, on the GPU where the host takes part in the figure: {rate(hosted_gpu, hosted_gpu_total)}")
    by_strategy(out, runs)
    if (false_total or true_total) and not (false_gpu_total or true_gpu_total):
        print("no comparison carries the GPU figure (reports written before it): end to end only")
    nearest.sort(key=lambda n: -n[0])
    print("A/A cells by |change| / threshold, largest first:")
    for ratio, pair, figure, c in nearest[:8]:
        print(f"  {ratio:.2f} {pair} {figure} {c['label']}: {100 * c['change']:+.1f}%, "
              f"noise {100 * c['noise_a']:.2f}% / {100 * c['noise_b']:.2f}%"
              f"{' (between trials)' if c['between_trials'] else ''}")


if __name__ == "__main__":
    main(pathlib.Path(sys.argv[1]))
