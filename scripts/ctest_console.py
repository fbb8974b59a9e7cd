#!/usr/bin/env python3
"""Shows ctest's output on the console without what buries its summary, and keeps all of it in a
log file: every line goes to LOG; the console gets each test's result line but not the result
lines of skipped tests, the "Start" lines, or ctest's closing list of the tests that did not run
(scripts/skip_summary.py counts the skips by reason instead), and no line wider than 160
characters: a result line too wide loses the middle of the test's name ("..."), keeping its
result; any other line (a failed test's output) goes on in the next line.

    ctest ... 2>&1 | python3 scripts/ctest_console.py build/Testing/test.log

Reads until its input ends, so ctest is never stopped by a closed pipe.
"""
import re
import sys

WIDTH = 160
RESULT = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: ")
SKIPPED_RESULT = re.compile(r"^\s*\d+/\d+ Test\s+#\d+: .*\*\*\*Skipped\b")
KEPT_END = 32  # of a result line cut short: " ...   Passed    0.01 sec" and more
START = re.compile(r"^\s*Start\s+\d+: ")
DID_NOT_RUN = "The following tests did not run:"
LISTED_TEST = re.compile(r"^\s+\d+ - ")  # "\t 12 - Name (Skipped)" in ctest's closing lists


def fit(line, width=WIDTH):
    """`line` as console lines of at most `width` characters: a test's result line loses the
    middle ("..."), keeping the test number and the result; any other line is wrapped."""
    if len(line) <= width:
        return [line]
    if RESULT.match(line):
        return [line[:width - KEPT_END - 3] + "..." + line[-KEPT_END:]]
    return [line[i:i + width] for i in range(0, len(line), width)]


class Console:
    """Decides, line by line, what of ctest's output the console shows."""

    def __init__(self):
        self.in_did_not_run = False

    def shown(self, line):
        """The console's lines for `line` (without its newline): none to leave it to the log."""
        if self.in_did_not_run:
            if LISTED_TEST.match(line):
                return []
            self.in_did_not_run = False
        if line.strip() == DID_NOT_RUN:
            self.in_did_not_run = True
            return []
        if SKIPPED_RESULT.match(line) or START.match(line):
            return []
        return fit(line)


def main(argv):
    if len(argv) != 2:
        print("usage: ctest ... 2>&1 | python3 scripts/ctest_console.py LOG", file=sys.stderr)
        return 2
    console = Console()
    stdin = open(sys.stdin.fileno(), encoding="utf-8", errors="replace", newline="\n", closefd=False)
    try:
        log = open(argv[1], "w", encoding="utf-8")
    except OSError as e:
        print(f"ctest_console.py: cannot write {argv[1]}: {e.strerror}; the console shows everything", file=sys.stderr)
        log = None
    for raw in stdin:
        line = raw.rstrip("\n")
        if log:
            log.write(line + "\n")
            log.flush()
        for shown in console.shown(line) if log else fit(line):
            print(shown, flush=True)
    if log:
        log.close()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
