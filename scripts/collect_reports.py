#!/usr/bin/env python3
"""Collects the ferry bench reports of one results folder into two files, so a run of many cells is
kept as one file per format instead of one pair per command:

    collect_reports.py DIR

Every NAME.json that is a bench report (it has "results") goes into DIR/reports.json as
{"NAME": report, ...}; every NAME.md and NAME.txt beside one goes into DIR/reports.md under a
heading "NAME" (a link to results/DIR/reports.md#NAME finds it), and so does every other NAME.md
(a report kept without its JSON). The originals are removed. Other files stay. Reading one back: json.load(open("reports.json"))["NAME"] is the report as ferry wrote
it (`ferry bench compare` takes it written out again to its own file).
"""
import json
import pathlib
import sys


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    folder = pathlib.Path(argv[1])
    reports_path, text_path = folder / "reports.json", folder / "reports.md"
    reports = json.loads(reports_path.read_text()) if reports_path.exists() else {}
    sections = [text_path.read_text().rstrip("\n")] if text_path.exists() else [f"# Reports: {folder.name}"]
    taken = []
    for path in sorted(folder.glob("*.json")):
        if path.name == "reports.json":
            continue
        data = json.loads(path.read_text())
        if not isinstance(data, dict) or "results" not in data:
            continue
        name = path.stem
        reports[name] = data
        taken.append(path)
        for text in (folder / f"{name}.md", folder / f"{name}.txt"):
            if text.exists():
                body = text.read_text().rstrip("\n")
                if text.suffix == ".txt":
                    body = "```\n" + body + "\n```"
                else:  # the report's own headings go one level down, under the run's name
                    body = "\n".join("#" + line if line.startswith("#") else line for line in body.splitlines())
                sections.append(f"## {name}\n\n{body}")
                taken.append(text)
    for path in sorted(folder.glob("*.md")):
        if path.name != "reports.md" and path not in taken:
            body = "\n".join("#" + line if line.startswith("#") else line for line in path.read_text().splitlines())
            sections.append(f"## {path.stem}\n\n{body}")
            taken.append(path)
    if not taken:
        sys.exit(f"collect_reports.py: no bench reports (NAME.json with results, or NAME.md) in {folder}")
    if reports:
        reports_path.write_text(json.dumps(reports, indent=1) + "\n")
    text_path.write_text("\n\n".join(sections) + "\n")
    for path in taken:
        path.unlink()
    print(f"collect_reports.py: {len(reports)} reports in {reports_path} and {text_path}")


if __name__ == "__main__":
    main(sys.argv)
