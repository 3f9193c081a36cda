#!/usr/bin/env python3
"""Write docs/assets/traffic-table.txt: the bytes each reference solution moves, counted in Triton's interpreter.

    python docs/scripts/traffic_table.py            # rewrites docs/assets/traffic-table.txt
    python docs/scripts/traffic_table.py --out F    # writes elsewhere

Each exercise's `traffic` check is run on its solution (the same check `grade exercise N` runs);
the grading page includes the table. tests/test_course.py checks each row against a fresh grading
run, so the table cannot drift from what the grader counts.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from grader.learner.traffic import format_bytes  # noqa: E402

OUT = ROOT / "docs" / "assets" / "traffic-table.txt"
HEADER = ("| exercise | tensors (bytes loaded / stored) | launches | moved | minimum | ratio |\n"
          "|---|---|---|---|---|---|\n")


def row(number: int, title: str, traffic: dict) -> str:
    """One table row from a traffic record (the `traffic` field of `grade exercise N --json`)."""
    parts = []
    for name, t in traffic["tensors"].items():
        size = f" of {format_bytes(t['size'])}" if t.get("size") else ""
        parts.append(f"`{name}`{size}: {format_bytes(t['loaded'])} / {format_bytes(t['stored'])}")
    return (f"| {number} · {title} | {'; '.join(parts)} | {len(traffic['launches'])} | "
            f"{traffic['moved_bytes']:,} B | {traffic['minimum_bytes']:,} B | "
            f"{traffic['ratio']:.2f} |")


def main(argv: list[str] | None = None) -> int:
    from grader import catalogue
    from grader.commands import isolation

    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    lines = []
    for exercise in catalogue.EXERCISES:
        if not exercise.spec_file.is_file() or "def test_traffic" not in exercise.spec_file.read_text():
            continue
        run = isolation.run_checks(exercise, exercise.solution_path, seed=1, interpreter=True, select="traffic")
        record = run.extra("traffic")
        if record is None:
            print(f"exercise {exercise.number}: no traffic recorded ({[c.message for c in run.checks]})", file=sys.stderr)
            return 1
        lines.append(row(exercise.number, exercise.slug, record))
        print(lines[-1])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(HEADER + "\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
