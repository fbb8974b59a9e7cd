#!/usr/bin/env python3
"""Says why tests skipped: reads the JUnit file ctest writes (--output-junit), and pytest's of
the python.tests run where given (--junitxml), and prints one line per reason with its count, most
first, so a run's skips are read on the console instead of test by test:

    test: 314 of 1187 tests skipped, and 9 of 90 pytest tests inside python.tests
      313 skipped: no CUDA device: no NVIDIA driver is installed (...)
        9 skipped: ...
        1 skipped: root reads files whatever their mode

    python3 scripts/skip_summary.py build/Testing/ctest-junit.xml [build/Testing/pytest-junit.xml]

A skip's reason is the test's own words: the message of a GoogleTest GTEST_SKIP (the line after
"FILE:LINE: Skipped"), the "no CUDA device: ..." line of the GPU tests, or a script's line
starting "skipped: " (the tests that skip by exit code 77); else "no reason given", with ctest's
note of how it saw the skip; a pytest skip's is its message. The pytest file counts only where
ctest ran python.tests (a file left from an earlier run is not read). No line is wider than 160
characters (a long reason goes on under itself). Prints nothing when nothing skipped; exits 2
when a file cannot be read.
"""
import collections
import re
import sys
import textwrap
import xml.etree.ElementTree as ElementTree

GTEST_SKIP = re.compile(r":\d+: Skipped$")
PYTHON_TESTS = "python.tests"  # the ctest test that runs pytest
WIDTH = 160


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
    """(tests run or skipped, [(test name, reason)], whether python.tests ran) from ctest's JUnit file."""
    root = ElementTree.parse(path).getroot()
    total, skipped, python_ran = 0, [], False
    for case in root.iter("testcase"):
        total += 1
        marker = case.find("skipped")
        if marker is None:
            python_ran = python_ran or case.get("name") == PYTHON_TESTS
            continue
        output = case.findtext("system-out") or ""
        how = marker.get("message")
        skipped.append((case.get("name", "?"), reason(output, f"no reason given (ctest: {how})" if how else
                                                      "no reason given")))
    return total, skipped, python_ran


def pytest_skips(path):
    """(tests, [(test name, reason)]) from pytest's JUnit file."""
    root = ElementTree.parse(path).getroot()
    total, skipped = 0, []
    for case in root.iter("testcase"):
        total += 1
        marker = case.find("skipped")
        if marker is not None:
            why = (marker.get("message") or "").strip()
            why = why[len("Skipped: "):] if why.startswith("Skipped: ") else why
            skipped.append((f"{case.get('classname', '?')}.{case.get('name', '?')}", why or "no reason given"))
    return total, skipped


def reason_lines(count, width_of_count, why):
    """The line(s) of one reason, each at most WIDTH characters."""
    head = f"  {count:>{width_of_count}} skipped: "
    return textwrap.wrap(why, WIDTH, initial_indent=head, subsequent_indent=" " * len(head),
                         break_long_words=True, break_on_hyphens=False) or [head.rstrip()]


def main(argv):
    if len(argv) not in (2, 3):
        print("usage: python3 scripts/skip_summary.py CTEST_JUNIT.xml [PYTEST_JUNIT.xml]", file=sys.stderr)
        return 2
    path = argv[1]
    try:
        total, skipped, python_ran = skips(path)
        pytest_total, pytest_skipped = 0, []
        if len(argv) == 3 and python_ran:
            path = argv[2]
            pytest_total, pytest_skipped = pytest_skips(path)
    except (OSError, ElementTree.ParseError) as e:
        print(f"skip_summary.py: cannot read {path}: {e}", file=sys.stderr)
        return 2
    if not skipped and not pytest_skipped:
        return 0
    by_reason = collections.Counter(why for _, why in skipped + pytest_skipped)
    header = f"test: {len(skipped)} of {total} tests skipped"
    if pytest_total:
        header += f", and {len(pytest_skipped)} of {pytest_total} pytest tests inside {PYTHON_TESTS}"
    print(header)
    width = len(str(by_reason.most_common(1)[0][1]))
    for why, count in sorted(by_reason.items(), key=lambda item: (-item[1], item[0])):
        print("\n".join(reason_lines(count, width, why)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
