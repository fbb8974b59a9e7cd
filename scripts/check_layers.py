#!/usr/bin/env python3
"""Fails when a project include runs up ferry's layers.

Each layer uses only the layers below it:

    apps   python          (siblings: the CLI and the Python package)
    frontend               (what both share: bench's flags as options, info's record, ...)
    bench   info   serve   (siblings: none includes another)
    session
    engines
    memory             (strategies are chosen and refused by what the device can do)
    device
    core

and engines do not include memory either (APART below).

Inside serve the same holds for its folders, floors from the bottom up (SERVE_FLOORS):

    server.cpp/.hpp         (src/serve itself: the whole server)
    transport               (listening, the HTTP and gRPC front ends)
    service                 (what both front ends ask of the server)
    control                 (the repository and model control, composing the floors below)
    scheduling  execution   (queueing and batching; running a batch)
    shm  config  admission  observability  codec
    vocabulary              (requests, answers, errors, a model's signature: includes nothing of serve)

each folder a floor of its own (a serve file includes its own folder's files and lower floors'
only), so serve's folders draw no cycle, and a new folder is placed on purpose.

Every `#include "..."` in src/, include/ferry/, apps/ and python/src/ is resolved to a file of the tree; an
include whose file sits in a higher layer, or in a sibling, is reported as
`file:line: <layer> includes "<path>" of <layer>`. Includes that resolve to no file of the tree
(third-party and generated headers) are not the check's business.

A file's layer is its folder: src/<layer>/..., apps/... (apps), python/... (python: the Python
package is an application of the library, as the CLI is, and neither includes the other's files),
include/ferry/<layer>/... for every public header. A header directly in include/ferry/ belongs to
no layer and is an error, so a new header is placed on purpose.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

RANK = {"core": 0, "device": 1, "memory": 2, "engines": 3, "session": 4, "bench": 5, "info": 5, "serve": 5,
        "frontend": 6, "apps": 7, "python": 7}

# serve's folders from the bottom up; "" is src/serve itself (server.*), above them all.
SERVE_FLOORS = ["vocabulary", "codec", "observability", "admission", "config", "shm", "execution", "scheduling",
                "control", "service", "transport", ""]

# Pairs the ranks would allow that the design keeps apart: engines stand on core and device only,
# so a backend never sees how I/O memory was allocated (strategies and engines meet in session).
APART = {("engines", "memory")}

SCANNED = ("src", "include/ferry", "apps", "python/src")
SUFFIXES = {".hpp", ".h", ".cpp", ".cu", ".cuh"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


class UnknownLayer(Exception):
    pass


def layer_of(root: Path, path: Path) -> str | None:
    """The layer of a file of the tree, None for files outside the layered folders."""
    parts = path.relative_to(root).parts
    if parts[0] in ("apps", "python"):
        return parts[0]
    if parts[0] == "src" and len(parts) > 2 and parts[1] in RANK:
        return parts[1]
    if parts[:2] == ("include", "ferry"):
        if len(parts) > 3 and parts[2] in RANK:
            return parts[2]
        raise UnknownLayer(f"{path.relative_to(root)}: a public header with no layer: put it in "
                           "include/ferry/<layer>/, the folder of the layer whose sources implement it")
    return None


def resolve(root: Path, including: Path, name: str) -> Path | None:
    # The search order of the build: the including file's folder, then include/ and src/.
    for base in (including.parent, root / "include", root / "src"):
        candidate = (base / name).resolve()
        if candidate.is_file() and root in candidate.parents:
            return candidate
    return None


def serve_floor(root: Path, path: Path) -> str:
    """The serve folder of a file of src/serve ("" for src/serve itself)."""
    parts = path.relative_to(root / "src" / "serve").parts
    if len(parts) == 1:
        return ""
    if parts[0] not in SERVE_FLOORS:
        raise UnknownLayer(f"{path.relative_to(root)}: a serve folder with no floor: add '{parts[0]}' to "
                           "SERVE_FLOORS in scripts/check_layers.py, above the folders it includes")
    return parts[0]


def serve_problem(root: Path, path: Path, target: Path, line: str) -> str | None:
    """Why a serve file may not include another serve file, or None."""
    serve = root / "src" / "serve"
    if serve not in path.parents or serve not in target.parents:
        return None
    source, to = serve_floor(root, path), serve_floor(root, target)
    if SERVE_FLOORS.index(to) <= SERVE_FLOORS.index(source):
        return None
    return (f'{path.relative_to(root)}: serve/{source or "(server)"} includes "{line}" of serve/{to or "(server)"} '
            "(a higher floor)")


def allowed(from_layer: str, to_layer: str) -> bool:
    if (from_layer, to_layer) in APART:
        return False
    return from_layer == to_layer or RANK[to_layer] < RANK[from_layer]


def check(root: Path) -> list[str]:
    root = root.resolve()
    problems: list[str] = []
    for folder in SCANNED:
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in SUFFIXES or not path.is_file():
                continue
            try:
                from_layer = layer_of(root, path)
            except UnknownLayer as e:
                problems.append(str(e))
                continue
            if from_layer is None:
                continue
            text = path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), start=1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                target = resolve(root, path, match.group(1))
                if target is None:
                    continue
                try:
                    to_layer = layer_of(root, target)
                except UnknownLayer as e:
                    problems.append(str(e))
                    continue
                if to_layer == "serve" and from_layer == "serve":
                    try:
                        problem = serve_problem(root, path, target, match.group(1))
                    except UnknownLayer as e:
                        problem = str(e)
                    if problem:
                        problems.append(problem.replace(": serve/", f":{number}: serve/", 1))
                    continue
                if to_layer is None or allowed(from_layer, to_layer):
                    continue
                if (from_layer, to_layer) in APART:
                    relation = "kept apart"
                elif RANK[to_layer] == RANK[from_layer]:
                    relation = "a sibling"
                else:
                    relation = "a higher layer"
                problems.append(f'{path.relative_to(root)}:{number}: {from_layer} includes '
                                f'"{match.group(1)}" of {to_layer} ({relation})')
    return sorted(set(problems))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--root", type=Path, default=Path(__file__).resolve().parent.parent,
                        help="the repository root (default: this script's repository)")
    args = parser.parse_args()
    problems = check(args.root)
    for problem in problems:
        print(problem)
    if problems:
        print(f"{len(problems)} include(s) break the layering (core <- device <- memory <- engines <- session "
              "<- bench, info, serve <- frontend <- apps, python)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
