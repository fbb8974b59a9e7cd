#!/usr/bin/env python3
"""Says why tests skipped: reads the JUnit file ctest writes (--output-junit) and prints one line
per reason with its count, most first, so a run's skips are read on the console instead of in
Testing/Temporary/LastTest.log:

    test: 314 of 1187 tests skipped
      313 skipped: no CUDA device: no NVIDIA driver is installed (...)
        1 skipped: root reads files whatever their mode

    python3 scripts/skip_summary.py build/Testing/ctest-junit.xml

A skip's reason is the test's own words: the message of a GoogleTest GTEST_SKIP (the line after
"FILE:LINE: Skipped"), the "no CUDA device: ..." line of the GPU tests, or a script's line
starting "skipped: " (the tests that skip by exit code 77); else "no reason given", with ctest's
note of how it saw the skip. Prints nothing when nothing skipped; exits 2 when the file cannot be read.
"""
import collections
import re
import sys
import xml.etree.ElementTree as ElementTree

GTEST_SKIP = re.compile(r":\d+: Skipped$")


def reason(output, fallback):
    """The reason a skipped test gives in its output, or `fallback`."""
    lines = [line.strip() for line in output.splitlines()]
    for i, line in enumerate(lines):
        if GTEST_SKIP.search(line):
            message = next((l for l in lines[i + 1:] if l), "")
            if message and not message.startswith("[  SKIPPED ]"):
                return message
    for line in lines:
        if line.startswith("no CUDA device: "):
            return line
    for line in lines:
        if line.lower().startswith("skipped: "):
            return line[len("skipped: "):]
    return fallback


def skips(path):
    """(tests run or skipped, [(test name, reason)]) from ctest's JUnit file."""
    root = ElementTree.parse(path).getroot()
    cases = root.iter("testcase")
    total, skipped = 0, []
    for case in cases:
        total += 1
        marker = case.find("skipped")
        if marker is None:
            continue
        output = case.findtext("system-out") or ""
        how = marker.get("message")
        skipped.append((case.get("name", "?"), reason(output, f"no reason given (ctest: {how})" if how else
                                                      "no reason given")))
    return total, skipped


def main(argv):
    if len(argv) != 2:
        print("usage: python3 scripts/skip_summary.py CTEST_JUNIT.xml", file=sys.stderr)
        return 2
    try:
        total, skipped = skips(argv[1])
    except (OSError, ElementTree.ParseError) as e:
        print(f"skip_summary.py: cannot read {argv[1]}: {e}", file=sys.stderr)
        return 2
    if not skipped:
        return 0
    by_reason = collections.Counter(why for _, why in skipped)
    print(f"test: {len(skipped)} of {total} tests skipped")
    width = len(str(by_reason.most_common(1)[0][1]))
    for why, count in sorted(by_reason.items(), key=lambda item: (-item[1], item[0])):
        print(f"  {count:>{width}} skipped: {why}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
