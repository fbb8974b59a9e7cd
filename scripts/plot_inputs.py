"""Reads `ferry bench` reports for the plot scripts (scripts/plot_*.py), in every form this
repository keeps them:
- a report as ferry wrote it (`ferry bench --json R.json`): a JSON object with "results";
- the reports.json scripts/collect_reports.py writes ({"NAME": report, ...}): all its reports, or
  one of them as `reports.json#NAME`;
- `reports.md#NAME`, the link docs/RESULTS.md gives: NAME from the reports.json beside it.
Anything else is refused in one line naming the file and what was expected (plot_inputs.Refused,
which each script prints as "SCRIPT: MESSAGE" and exits 2 with).
"""
import json
import pathlib


class Refused(Exception):
    """A file that is not what a plot script reads; the message is one line naming it."""


EXPECTED = ("a ferry bench report (ferry bench --json) or the reports.json of scripts/collect_reports.py "
            "(whole, or one report as reports.json#NAME)")


def _split(spec):
    """(path, NAME or None) of PATH or PATH#NAME; reports.md#NAME reads the reports.json beside it."""
    path, _, name = str(spec).partition("#")
    path = pathlib.Path(path)
    if path.suffix == ".md" and name:
        path = path.with_suffix(".json")
    return path, name or None


def _load(path):
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as e:
        raise Refused(f"cannot read {path}: {e.strerror}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError:
        raise Refused(f"{path} is not JSON: expected {EXPECTED}") from None


def is_report(data):
    return isinstance(data, dict) and isinstance(data.get("results"), list)


def is_collected(data):
    return isinstance(data, dict) and bool(data) and all(is_report(v) for v in data.values())


def read_reports(spec):
    """[(name, report)] of one argument: a report (named by its file), every report of a collected
    file, or its one report named after '#'."""
    path, name = _split(spec)
    data = _load(path)
    if is_report(data):
        if name:
            raise Refused(f"{path} is one report, not a collection: give {path} without #{name}")
        return [(path.stem, data)]
    if is_collected(data):
        if name is None:
            return sorted(data.items())
        if name not in data:
            raise Refused(f"{path} has no report '{name}': it holds {', '.join(sorted(data))}")
        return [(name, data[name])]
    what = "a calibration profile (ferry calibrate)" if isinstance(data, dict) and "curves" in data else "neither"
    raise Refused(f"{path} is {what}: expected {EXPECTED}")


def read_one_report(spec):
    """(name, report) of an argument that must be one report: a report, reports.json#NAME, or a
    collected file that holds only one."""
    reports = read_reports(spec)
    if len(reports) != 1:
        path, _ = _split(spec)
        names = ", ".join(name for name, _ in reports)
        raise Refused(f"{path} holds {len(reports)} reports; name one as {path}#NAME ({names})")
    return reports[0]


def measured(results):
    """The results that were measured: not refused, not failed."""
    return [r for r in results if not r.get("refused") and not r.get("failed")]
