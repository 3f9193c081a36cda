#!/usr/bin/env python3
"""The access maps on the course site, drawn from the course's own files.

Each map is what ``grade show N --from FILE`` draws for one file: a solution, a known-wrong
variant (an exercise folder's ``wrong/``) or a correct variant (its ``natural/``), called once in Triton's
interpreter on the input its exercise's spec chooses (``show_inputs``). This script records
them the way `grade show`'s child process does (`grader.learner.show_child.record`) and writes,
for each, ``NAME.svg`` (the drawing the pages show) and ``NAME.json`` (the map's data):

    python docs/scripts/access_maps.py             # rewrites docs/assets/access-maps/
    python docs/scripts/access_maps.py --check     # records again; fails if a committed map differs
    python docs/scripts/access_maps.py --out DIR   # writes elsewhere

The site test (tests/test_site.py) runs ``--check``: it compares the maps' data, not pixels, so a
change in the kernels, the specs' inputs or the recorder shows up as a stale map. Runs on a CPU
in about half a minute; needs torch, triton and matplotlib.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported: the same on every machine
ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from grader.learner import mode  # noqa: E402

mode.select(force_interpreter=True)

from grader import catalogue  # noqa: E402
from grader.commands import access_figure
from grader.learner.access_map import AccessMap  # noqa: E402
from grader.learner.show_child import record  # noqa: E402

DEFAULT_OUT = ROOT / "docs" / "assets" / "access-maps"

#: name -> (exercise, file): each file's map on its exercise's default show input.
MAPS = {
    "ex01-solution": (1, "solutions/ex01_vector_add.py"),
    "ex01-no-tail-mask": (1, "grader/exercises/ex01_vector_add/wrong/no_tail_mask.py"),
    "ex01-mask-off-by-one": (1, "grader/exercises/ex01_vector_add/wrong/mask_off_by_one.py"),
    "ex01-grid-one-block-short": (1, "grader/exercises/ex01_vector_add/wrong/grid_one_block_short.py"),
    "ex01-reads-past-end": (1, "grader/exercises/ex01_vector_add/wrong/reads_past_end.py"),
    "ex03-solution": (3, "solutions/ex03_softmax.py"),
    "ex03-no-other-inf": (3, "grader/exercises/ex03_softmax/wrong/no_other_inf.py"),
    "ex03-assumes-contiguous": (3, "grader/exercises/ex03_softmax/wrong/assumes_contiguous.py"),
    "ex03-output-uses-input-stride": (3, "grader/exercises/ex03_softmax/wrong/output_uses_input_stride.py"),
    "ex07-solution": (7, "solutions/ex07_flash_attention.py"),
    "ex07-every-key-block-masked": (7, "grader/exercises/ex07_flash_attention/natural/every_key_block_masked.py"),
    "ex07-mask-after-max": (7, "grader/exercises/ex07_flash_attention/wrong/mask_after_max.py"),
}


def recorded(name: str) -> dict:
    """The JSON payload for one map: which file, which exercise, and the map's data."""
    number, path = MAPS[name]
    exercise = catalogue.get(number)
    payload = record(str(exercise.spec_file), str(ROOT / path), exercise.function, None)
    if "map" not in payload:
        raise RuntimeError(f"{name}: {payload}")
    return {"exercise": number, "file": path, "command": f"grade show {number} --from {path}", "map": payload["map"]}


def draw(payload: dict, svg: Path) -> None:
    exercise = catalogue.get(payload["exercise"])
    access_figure.save(AccessMap.from_dict(payload["map"]), svg,
                       title=f"Exercise {exercise.number} · what `{exercise.function}` touched ({_short(payload['file'])})")


def _short(path: str) -> str:
    """``wrong/no_tail_mask.py`` for grader/exercises/ex01_vector_add/wrong/no_tail_mask.py: the title fits."""
    return "/".join(Path(path).parts[-2:])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Record and draw the access maps of the course site.")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for NAME.svg and NAME.json")
    parser.add_argument("--check", action="store_true",
                        help="record again and compare with the committed .json files; write nothing")
    parser.add_argument("names", nargs="*", help=f"only these maps (default: all of {', '.join(MAPS)})")
    args = parser.parse_args(argv)
    names = args.names or list(MAPS)
    unknown = [n for n in names if n not in MAPS]
    if unknown:
        parser.error(f"no map named {', '.join(unknown)}")
    stale = []
    for name in names:
        payload = json.loads(json.dumps(recorded(name)))  # as the file holds it
        target = args.out / f"{name}.json"
        if args.check:
            committed = json.loads(target.read_text()) if target.is_file() else None
            if committed != payload:
                stale.append(name)
            if not (args.out / f"{name}.svg").is_file():
                stale.append(f"{name}.svg")
            continue
        args.out.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(payload, indent=None, separators=(",", ":")) + "\n")
        draw(payload, args.out / f"{name}.svg")
        print(f"{name}: {payload['command']}")
    if args.check and not args.names:
        stale += [f"{p.name} (not in MAPS)" for p in sorted(args.out.glob("*.json")) if p.stem not in MAPS]
    if stale:
        print(f"stale access maps: {', '.join(stale)}; run python docs/scripts/access_maps.py", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
