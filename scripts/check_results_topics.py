#!/usr/bin/env python3
"""Fails when docs/RESULTS.md loses a topic, or a topic loses what makes it reproducible.

docs/results-topics.txt lists the topics (the "## " headings of RESULTS.md), one a line. Each
listed topic must be in RESULTS.md, and its section (the heading up to the next "## ") must name
- a date (YYYY-MM-DD),
- a host (a lent machine such as `nvidia-h200` or `nvidia-h200-x2`, or the development machine),
- a command that reproduces it (in backquotes, starting with `ferry`, `scripts/...`, `python3`,
  `ctest`, `cmake`, `pip` or `pytest`, after any VAR=value settings).
A line "guide: TOPIC" lists a topic that explains how to read the others and records no
measurement: it must be present, and needs no date, host or command. A topic of RESULTS.md
missing from the list fails too, so a new topic is listed when it is written and a topic is
removed from both files in one commit, on purpose.

    python3 scripts/check_results_topics.py [--results docs/RESULTS.md] [--topics docs/results-topics.txt]

Prints one line per problem and exits 1 when there is any; 2 when a file cannot be read.
"""
from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = "guide: "
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")
HOST = re.compile(r"`nvidia-h[12]00(-x\d+)?`|\bdevelopment machine\b|\bdev machine\b")
COMMAND = re.compile(r"`(?:[A-Z_][A-Z0-9_]*=(?:\"[^\"`]*\"|\S+)\s+)*"
                     r"(?:ferry\s+\w|scripts/\S|python3?\s+\S|ctest\b|cmake\b|pip\s+install\b|pytest\b)[^`]*`")


def read_topics(text):
    """[(topic, is_guide)] from the list's text; blank lines and lines starting '#' are skipped."""
    topics = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        guide = line.startswith(GUIDE)
        topics.append((line[len(GUIDE):].strip() if guide else line, guide))
    return topics


def sections(text):
    """{heading: its text up to the next heading} of every "## " heading."""
    found, heading, body = {}, None, []
    for line in text.splitlines():
        if line.startswith("## "):
            if heading is not None:
                found[heading] = "\n".join(body)
            heading, body = line[3:].strip(), []
        elif heading is not None:
            body.append(line)
    if heading is not None:
        found[heading] = "\n".join(body)
    return found


def problems(results_text, topics_text, results_name="docs/RESULTS.md", topics_name="docs/results-topics.txt"):
    """One line per problem: a listed topic missing or without a date, host or command; a topic
    of RESULTS.md that the list does not name."""
    found = sections(results_text)
    listed = read_topics(topics_text)
    out = []
    for topic, guide in listed:
        if topic not in found:
            out.append(f"{results_name}: topic '{topic}' is missing (listed in {topics_name}); restore it, or remove it "
                       f"from both files on purpose")
            continue
        if guide:
            continue
        body = found[topic]
        lacks = [what for what, pattern in (("date (YYYY-MM-DD)", DATE), ("host", HOST),
                                            ("command in backquotes", COMMAND)) if not pattern.search(body)]
        if lacks:
            out.append(f"{results_name}: topic '{topic}' names no {', no '.join(lacks)}")
    names = {topic for topic, _ in listed}
    for heading in found:
        if heading not in names:
            out.append(f"{results_name}: topic '{heading}' is not listed in {topics_name}; add it there")
    return out


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--results", type=Path, default=ROOT / "docs" / "RESULTS.md")
    parser.add_argument("--topics", type=Path, default=ROOT / "docs" / "results-topics.txt")
    args = parser.parse_args(argv)
    try:
        results_text = args.results.read_text(encoding="utf-8")
        topics_text = args.topics.read_text(encoding="utf-8")
    except OSError as e:
        print(f"check_results_topics.py: cannot read {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    found = problems(results_text, topics_text, str(args.results), str(args.topics))
    for line in found:
        print(line)
    if not found:
        print(f"{args.results}: all {len(read_topics(topics_text))} listed topics present, each with a date, a host "
              f"and a command")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
