"""Compares transfer strategies on this machine with ferry.bench and plots the result.

    python examples/python/compare_strategies.py --engine reduce --size 0.6MB,4MB,19MB,64MB \
        --strategy pinned,mapped,managed,managed-prefetch,device --out strategies.png

Each strategy's median request latency by input size (with the device-resident floor for
scale); strategies this GPU refuses are listed with the reason. The report is plain data, so
``report.to_pandas()`` (with pandas installed) or ``json.dump(report, ...)`` keep it.
"""
from __future__ import annotations

import argparse
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")  # files only: no display needed
import matplotlib.pyplot as plt  # noqa: E402

import ferry  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--engine", default="reduce")
    parser.add_argument("--size", default="0.6MB,4MB,19MB,64MB")
    parser.add_argument("--strategy", default="pageable,pinned,mapped,managed,managed-prefetch,device")
    parser.add_argument("--max-time", type=float, default=2.0, help="seconds of measuring per cell at most")
    parser.add_argument("--out", default="strategies.png")
    args = parser.parse_args()

    report = ferry.bench(engine=args.engine, size=args.size, strategy=args.strategy, max_time=args.max_time)
    curves: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for cell in report.results:
        if cell["refused"]:
            print(f"{cell['strategy']} at {cell['input_bytes']} bytes: refused: {cell['refused']}")
            continue
        curves[cell["strategy"]].append((cell["input_bytes"], cell["latency_us"]["median"]))

    figure, axes = plt.subplots(figsize=(7, 4.5))
    for strategy, points in sorted(curves.items()):
        points.sort()
        axes.plot([b / 1e6 for b, _ in points], [us for _, us in points], marker="o", label=strategy)
    axes.set(xscale="log", yscale="log", xlabel="input size (MB)", ylabel="median request latency (us)",
             title=f"{args.engine} on {report['machine'].get('gpu_name', 'this GPU')}")
    axes.legend()
    axes.grid(True, which="both", alpha=0.3)
    figure.tight_layout()
    figure.savefig(args.out, dpi=120)
    print(f"fastest: {report['winner']}; plot written to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
