#!/usr/bin/env python3
"""Replace everything after the `## Results` heading of docs/BENCHMARKS.md with a run's
results.md (and the hand-written notes file, if given).

usage: update-doc.py <results.md> [<notes.md>]
"""
import pathlib
import sys

doc = pathlib.Path(__file__).resolve().parents[3] / "docs/BENCHMARKS.md"
text = doc.read_text()
head = text.split("\n## Results", 1)[0].rstrip() + "\n"
results = pathlib.Path(sys.argv[1]).read_text().strip()
notes = pathlib.Path(sys.argv[2]).read_text().strip() + "\n\n" if len(sys.argv) > 2 else ""
doc.write_text(head + "\n## Results\n\n" + notes + results + "\n")
