"""The course site: it builds strictly, its generated parts are current, and it works in a browser.

* `mkdocs build --strict` passes (broken links, missing snippets and bad nav entries fail it).
* The nav has a page for every exercise in the catalogue, with its stub; no page names a solution
  (tests/test_site_learner.py checks the built site holds none of its text).
* The plot script regenerates every plot from the committed measurements, and picks up benchmark files.
* The masking chapter's grader messages and the online-softmax numbers are current.
* The access maps on the pages are current: recorded again, their data equals the committed data.
* In headless Chromium, against the built site served on 127.0.0.1: key pages render their math (KaTeX)
  and plots, load nothing from outside, and the two calculators give the numbers computed here.
  Screenshots go to build/screenshots/ (ignored by git).

The browser tests skip when Chromium, chromedriver or selenium is missing, except in CI (CI=true),
where they fail instead: a CI run must never pass by skipping the browser.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

import site_helpers as helpers
from site_helpers import DOCS, ROOT, SCREENSHOTS

PLOT_SCRIPT = helpers.PLOT_SCRIPT
MASKING_SCRIPT = DOCS / "scripts" / "masking_pitfalls.py"
ACCESS_MAP_SCRIPT = DOCS / "scripts" / "access_maps.py"
ACCESS_MAPS = DOCS / "assets" / "access-maps"
BY_HAND_SCRIPT = DOCS / "scripts" / "online_softmax_by_hand.py"
DECODE_MERGE_SCRIPT = DOCS / "scripts" / "decode_merge_by_hand.py"
MEASUREMENTS = DOCS / "measurements"
PLOTS = DOCS / "assets" / "plots"
MESSAGES = DOCS / "assets" / "messages"


# ------------------------------------------------------------------------------------------------
# The build
# ------------------------------------------------------------------------------------------------


# `built_site` is tests/conftest.py's: one build for the whole run, which every site test reads.


def test_strict_build_passes(built_site):
    for page in ("index.html", "chapters/01_memory_bound/index.html", "chapters/07_amdahl/index.html",
                 "grading/index.html", "reference/catalogue/index.html"):
        assert (built_site / page).is_file(), f"{page} missing from the built site"


# The bytes calculator of chapter 1 starts from a measured row: exercise 3's softmax at 4096 x 4096 fp32.
SOFTMAX_FILE = json.loads((MEASUREMENTS / "h200-ex03-softmax.json").read_text())
SOFTMAX_ROW = next(r for r in SOFTMAX_FILE["rows"]
                   if (r["kernel"], r["M"], r["N"], r["dtype"]) == ("solution", 4096, 4096, "fp32"))
CALCULATOR_DEFAULTS = (SOFTMAX_FILE["meta"]["ceiling_gbps"], SOFTMAX_ROW["ms"] * 1000)


def test_bytes_calculator_defaults_are_the_row_the_chapter_names(built_site):
    html = (built_site / "chapters/01_memory_bound/index.html").read_text()
    gbps = re.search(r'id="bytes-gbps"[^>]*value="([^"]+)"', html)
    measured = re.search(r'id="bytes-measured"[^>]*value="([^"]+)"', html)
    assert gbps and measured, "chapter 1's bytes calculator lost its bandwidth or time input"
    assert (float(gbps[1]), float(measured[1])) == pytest.approx(CALCULATOR_DEFAULTS, rel=1e-6), \
        "the calculator's defaults are not the ceiling and time of h200-ex03-softmax.json's 4096 x 4096 fp32 row"


def test_site_bundles_katex_and_loads_nothing_from_a_cdn(built_site):
    html = (built_site / "chapters/01_memory_bound/index.html").read_text()
    assert "assets/katex/katex.min.js" in html and "assets/katex/katex.min.css" in html
    assert not re.search(r'<(?:script|link)[^>]+(?:src|href)="(?:https?:)?//', html), \
        "a page loads a script or stylesheet from another host: the site must work offline"
    css = (DOCS / "assets/katex/katex.min.css").read_text()
    for font in set(re.findall(r"fonts/(KaTeX_[\w-]+\.woff2)", css)):
        assert (DOCS / "assets/katex/fonts" / font).is_file(), f"KaTeX font {font} is not bundled"


# ------------------------------------------------------------------------------------------------
# The nav against the exercise catalogue
# ------------------------------------------------------------------------------------------------


def test_no_page_shows_raw_markdown(built_site):
    """Captions and tables render their Markdown: no "[text](link)" or `code` left as plain text."""
    raw = []
    for page in sorted(built_site.rglob("*.html")):
        if "reference" in page.parts or page.name == "404.html":
            continue
        html = page.read_text()
        html = re.sub(r"<(pre|code|script|style|textarea)\b.*?</\1>", " ", html, flags=re.S)
        text = re.sub(r"<[^>]+>", " ", html)
        found = re.findall(r"\]\([\w./#-]+\)", text)
        # Backticks: in captions and table headers (grader messages quoted in tables keep theirs).
        for part in re.findall(r"<(?:figcaption|th)\b.*?</(?:figcaption|th)>", html, flags=re.S):
            found += re.findall(r"`[^`\s][^`]*`", re.sub(r"<[^>]+>", " ", part))
        raw += [f"{page.relative_to(built_site)}: {f[:80]!r}" for f in found]
    assert not raw, "Markdown shown as text:\n" + "\n".join(raw)


def test_every_table_has_a_header():
    """A Markdown table's first row is its header: an empty one renders as a blank bar."""
    empty = []
    for page in sorted(DOCS.rglob("*.md")):
        lines = page.read_text().splitlines()
        for number, (line, below) in enumerate(zip(lines, lines[1:]), 1):
            if re.fullmatch(r"\|?[\s|:-]*\|[\s|:-]*", below) and "-" in below and line.startswith("|") \
                    and not line.replace("|", "").strip():
                empty.append(f"{page.relative_to(DOCS)}:{number}")
    assert not empty, f"tables with an empty header row: {empty}"


def test_every_exercise_has_a_page_in_the_nav():
    from grader.catalogue import EXERCISES

    pages = helpers.nav_pages(helpers.load_nav())
    exercise_pages = {p for p in pages if re.fullmatch(r"exercises/ex\d\d_\w+\.md", p)}
    for exercise in EXERCISES:
        assert exercise.docs_page in pages, f"exercise {exercise.number} ({exercise.docs_page}) is not in the nav"
        text = (DOCS / exercise.docs_page).read_text()
        assert "{{ stub() }}" in text, f"{exercise.docs_page} does not show its stub"
        # The solution is earned: the page points at `grade solution N`, never at a page or a file.
        assert exercise.solution_file not in text and not re.search(r"\]\([^)]*solutions/", text), \
            f"{exercise.docs_page} names its reference solution's file or links a solution"
        assert f"`grade solution {exercise.number}`" in text, \
            f"{exercise.docs_page} does not say that `grade solution {exercise.number}` shows the reference"
    catalogued = {e.docs_page for e in EXERCISES}
    assert exercise_pages <= catalogued, f"nav pages for exercises not in the catalogue: {exercise_pages - catalogued}"


def test_every_snippet_target_exists():
    """Each `--8<-- "path"` in the docs names a file (the build fails on a missing one: check_paths)."""
    missing = []
    for page in DOCS.rglob("*.md"):
        for target in re.findall(r'--8<-- "([^"]+)"', page.read_text()):
            path = target.split(":", 1)[0]
            if not (ROOT / path).is_file():
                missing.append(f"{page.relative_to(ROOT)} -> {path}")
    assert not missing, "snippets that name missing files:\n" + "\n".join(missing)


# ------------------------------------------------------------------------------------------------
# Generated content
# ------------------------------------------------------------------------------------------------


def _run(*args, timeout=120):
    return subprocess.run([sys.executable, *map(str, args)], cwd=ROOT, capture_output=True, text=True,
                          timeout=timeout)


def test_plot_script_regenerates_every_plot(committed_plots):
    _, drawn = committed_plots  # drawn in this process, as the script runs
    produced = {p.name for p in drawn.glob("*.svg")}
    committed = {p.name for p in PLOTS.glob("*.svg")}
    assert produced == committed, f"committed plots differ from what the script draws: {produced ^ committed}"
    for name in produced:
        root = ET.parse(drawn / name).getroot()
        assert root.tag.endswith("svg"), name
    stale = sorted(name for name in produced if (drawn / name).read_bytes() != (PLOTS / name).read_bytes())
    assert not stale, f"committed plots differ from what the script draws: {stale}; run python {PLOT_SCRIPT.relative_to(ROOT)}"
    assert (drawn / "SOURCES.md").read_text() == (PLOTS / "SOURCES.md").read_text(), \
        "docs/assets/plots is stale: run python docs/scripts/plot_measurements.py"


def test_plot_script_prefers_benchmark_files(tmp_path):
    """A file in the benchmark format (here a synthetic one) is plotted, and replaces the baseline."""
    data = tmp_path / "data"
    data.mkdir()
    for baseline in MEASUREMENTS.glob("h200-*-2026-11-30.json"):
        shutil.copy(baseline, data)
    rows = [{"kernel": kernel, "M": 4096, "N": n, "ms": 0.01 * n / 1024, "gbps": gbps, "fraction": gbps / 4000}
            for kernel, base in (("solution", 3000.0), ("torch", 2000.0), ("compile", 1500.0), ("naive", 500.0))
            for n, gbps in ((1024, base * 0.7), (4096, base))]
    meta = {"gpu": "Synthetic GPU", "torch": "0", "triton": "0", "driver": "0", "date": "2000-01-01",
            "ceiling_gbps": 4000.0, "spec_gbps": 4500.0, "command": "test"}
    (data / "synthetic-ex03-softmax.json").write_text(json.dumps({"meta": meta, "rows": rows}))
    (data / "notes.json").write_text(json.dumps({"unrelated": True}))
    out = tmp_path / "plots"
    result = _run(PLOT_SCRIPT, "--measurements", data, "--out", out)
    assert result.returncode == 0, result.stderr
    assert "notes.json" in result.stderr  # ignored, with a note
    assert (out / "ex03_bandwidth.svg").is_file()
    sources = (out / "SOURCES.md").read_text()
    assert "| `softmax_comparison.svg` | `synthetic-ex03-softmax.json` |" in sources
    assert "Synthetic GPU" in (out / "softmax_comparison.svg").read_text()


def test_plot_script_keeps_sweeps_out_of_the_exercise_plots(tmp_path):
    """A tuning sweep that names an exercise (h200-tiles-ex02.json) must not stand in for its benchmark
    file, whatever the order of the names; the variants figure reads exercise 7's variants file."""
    data = tmp_path / "data"
    data.mkdir()

    def write(name, gpu, rows):
        (data / name).write_text(json.dumps({"meta": {"gpu": gpu, "ceiling_gbps": 1000.0}, "rows": rows}))

    rows = [{"kernel": "solution", "n": n, "ms": 1.0, "gbps": 900.0, "fraction": 0.9} for n in (1 << 20, 1 << 24)]
    write("mine-ex01-vector-add.json", "Main GPU", rows)
    write("mine-tiles-ex01.json", "Sweep GPU", rows)  # sorts after the main file
    write("mine-ex07-attention-variants.json", "Variants GPU", [
        {"kernel": "solution", "causal": False, "ms": 2.0, "tflops": 400.0, "ratio_to_sdpa": 0.8},
        {"kernel": "broken", "causal": False, "ms": None, "wrong": True, "max_abs_error": 0.1,
         "sdpa_max_abs_error": 1e-4}])
    out = tmp_path / "plots"
    result = _run(PLOT_SCRIPT, "--measurements", data, "--out", out)
    assert result.returncode == 0, result.stderr
    sources = (out / "SOURCES.md").read_text()
    assert "| `ex01_bandwidth.svg` | `mine-ex01-vector-add.json` |" in sources
    assert "mine-tiles-ex01.json" not in sources
    assert "| `ex07_d128_variants.svg` | `mine-ex07-attention-variants.json` |" in sources
    assert "wrong result" in (out / "ex07_d128_variants.svg").read_text()


def test_plot_script_draws_from_benchmark_files_alone(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    meta = {"gpu": "Synthetic GPU", "ceiling_gbps": 1000.0}
    rows = [{"kernel": "solution", "n": n, "ms": n * 12 / 1e9 / 900 * 1e3, "gbps": 900.0, "fraction": 0.9}
            for n in (1 << 20, 1 << 24)]
    (data / "mine-ex01-vector-add.json").write_text(json.dumps({"meta": meta, "rows": rows}))
    result = _run(PLOT_SCRIPT, "--measurements", data, "--out", tmp_path / "plots")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "plots" / "ex01_bandwidth.svg").is_file()


def test_masking_messages_are_current(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    result = _run(MASKING_SCRIPT, "--out", tmp_path, timeout=300)
    assert result.returncode == 0, f"the grader accepted a wrong kernel or the script failed:\n{result.stdout}\n{result.stderr}"
    stale = [p.name for p in tmp_path.glob("*.txt") if p.read_text() != (MESSAGES / p.name).read_text()]
    assert not stale, (f"the grader's messages changed for {stale}: run python docs/scripts/masking_pitfalls.py "
                       "and check chapter 3 still describes them")
    # A vector's pitfalls are in chapter 3, a row's (they need softmax) in chapter 4.
    chapters = "".join((DOCS / "chapters" / name).read_text() for name in ("03_masking.md", "04_fused_softmax.md"))
    for message in tmp_path.glob("*.txt"):
        assert f"docs/assets/messages/{message.name}" in chapters, f"chapters 3 and 4 do not show {message.name}"


def test_access_maps_are_current():
    """Every map on the site is recorded again from the course's own files; the data must not have moved
    (compared as data, not pixels), every map has its drawing, and every drawing is on a page."""
    pytest.importorskip("torch")
    pytest.importorskip("triton")
    result = _run(ACCESS_MAP_SCRIPT, "--check", timeout=600)
    assert result.returncode == 0, (f"stale access maps: run python docs/scripts/access_maps.py\n"
                                    f"{result.stdout}\n{result.stderr}")
    names = {p.stem for p in ACCESS_MAPS.glob("*.json")}
    assert names == {p.stem for p in ACCESS_MAPS.glob("*.svg")}, "every map needs its .json and its .svg"
    pages = "\n".join(p.read_text() for p in DOCS.rglob("*.md"))
    for name in names:
        assert f"assets/access-maps/{name}.svg" in pages, f"{name}.svg is on no page"
        root = ET.parse(ACCESS_MAPS / f"{name}.svg").getroot()
        assert root.tag.endswith("svg"), name
    for page, names in (("03_masking.md", ("ex01-no-tail-mask", "ex01-grid-one-block-short")),
                        ("04_fused_softmax.md", ("ex03-no-other-inf", "ex03-assumes-contiguous"))):
        chapter = (DOCS / "chapters" / page).read_text()
        for name in names:
            assert f"access-maps/{name}.svg" in chapter, f"{page} lost the map {name}"


def test_online_softmax_numbers_in_chapter_6():
    result = _run(BY_HAND_SCRIPT)
    assert result.returncode == 0, result.stderr
    chapter = (DOCS / "chapters" / "06_online_softmax.md").read_text()
    numbers = set(re.findall(r"\d+\.\d{6}", result.stdout)) - {"0.000000"}
    missing = sorted(n for n in numbers if n not in chapter)
    assert not missing, f"chapter 6 lacks numbers the script computes: {missing}"


def test_decode_merge_by_hand_is_current():
    """Chapter 9 includes the script's output; the committed copy must be what the script prints now."""
    result = _run(DECODE_MERGE_SCRIPT)
    assert result.returncode == 0, result.stderr
    committed = DOCS / "assets" / "decode-merge-by-hand.txt"
    assert result.stdout == committed.read_text(), \
        "docs/assets/decode-merge-by-hand.txt is stale: python docs/scripts/decode_merge_by_hand.py > it"
    assert 'docs/assets/decode-merge-by-hand.txt' in (DOCS / "chapters" / "09_decode.md").read_text()


def _synthetic_decode(folder: Path) -> None:
    """Files in the shape tools/benchmarks/ex08_decode.py writes, with made-up numbers."""
    meta = {"gpu": "Synthetic GPU", "ceiling_gbps": 4000.0, "exercise": 8}
    rows = [{"kernel": "flashinfer-status", "ms": None, "version": None, "error": "import flashinfer failed"}]
    for B, S in ((1, 32768), (8, 8192), (64, 4096)):
        for kernel, fraction in (("solution-page16", 0.9), ("solution-page64", 0.91), ("sdpa-gathered", 0.3),
                                 ("per-query-head", 0.2)):
            rows.append({"kernel": kernel, "B": B, "S_k": S, "ms": 0.05, "gbps": 4000 * fraction,
                         "fraction": fraction})
    rows += [{"kernel": "solution", "B": B, "S_k": S, "sweep": True, "page_size": 16, "ms": 0.01 * S / 1024,
              "gbps": 3000.0, "fraction": 0.75} for B in (1, 8) for S in (1024, 4096)]
    (folder / "mine-ex08-decode.json").write_text(json.dumps({"meta": meta, "rows": rows}))
    steps = [{"kernel": "step", "op": name, "B": B, "S_k": 4096, "ms": 0.01, "gbps": 1000.0, "share": share}
             for B in (1, 64) for name, share in (("qkv_projection", 0.4), ("attention", 0.6))]
    (folder / "mine-ex08-decode-step.json").write_text(json.dumps({"meta": {"gpu": "Synthetic GPU"}, "rows": steps}))


def test_plot_script_draws_the_decode_figures(tmp_path):
    data = tmp_path / "data"
    data.mkdir()
    _synthetic_decode(data)
    out = tmp_path / "plots"
    result = _run(PLOT_SCRIPT, "--measurements", data, "--out", out)
    assert result.returncode == 0, result.stderr
    for name in ("decode_targets.svg", "decode_sweep.svg", "decode_step.svg"):
        assert (out / name).is_file(), name
    assert not (out / "ex08_bandwidth.svg").exists(), "exercise 8's shapes must not be joined into one line"
    sources = (out / "SOURCES.md").read_text()
    assert "| `decode_step.svg` | `mine-ex08-decode-step.json` |" in sources


def test_tolerance_table_matches_grader():
    compare = pytest.importorskip("grader.judge.compare")
    torch = pytest.importorskip("torch")
    page = (DOCS / "grading.md").read_text()
    for dtype, name in ((torch.float32, "float32"), (torch.float16, "float16"), (torch.bfloat16, "bfloat16")):
        tol = compare.DEFAULT_TOLERANCES[dtype]
        row = f"| {name} | {tol.rtol:g} | {tol.atol:g} |"
        assert row in page, f"grading.md's tolerance table disagrees with grader.judge.compare for {name}: want {row}"


# ------------------------------------------------------------------------------------------------
# In a browser
# ------------------------------------------------------------------------------------------------


# `browser` is tests/conftest.py's: one headless Chromium per worker on the built site.


def _open(driver, path: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(driver.base_url + path)
    WebDriverWait(driver, 20).until(lambda d: d.execute_script("return document.readyState") == "complete")


def _wait_for_math(driver) -> int:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 20).until(
        lambda d: d.execute_script("return document.querySelectorAll('.arithmatex .katex').length > 0"))
    return driver.execute_script("return document.querySelectorAll('.arithmatex .katex').length")


def _plots(driver) -> list[dict]:
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(driver, 20).until(lambda d: d.execute_script(
        "return Array.from(document.querySelectorAll('img.plot')).every(i => i.complete)"))
    return driver.execute_script(
        "return Array.from(document.querySelectorAll('img.plot')).map(i => ({src: i.src, w: i.naturalWidth}))")


def _external_requests(driver) -> list[str]:
    names = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
    return [n for n in names if not n.startswith(driver.base_url) and not n.startswith("data:")]


MATH_PAGES = {
    "chapters/01_memory_bound/": 2,  # page -> plots it must show
    "chapters/02_fusion/": 2,
    "chapters/04_fused_softmax/": 1,
    "chapters/05_persistent/": 1,
    "chapters/06_online_softmax/": 0,
    "chapters/07_amdahl/": 0,
    "chapters/08_flash_attention/": 2,
    "lab-notes/08_flash_attention/": 1,
    "grading/": 0,
}


@pytest.mark.parametrize("page", sorted(MATH_PAGES))
def test_page_renders_math_and_plots(browser, page):
    _open(browser, page)
    assert _wait_for_math(browser) > 0
    errors = browser.execute_script("return document.querySelectorAll('.katex-error').length")
    assert errors == 0, f"{page}: {errors} formulas failed to render"
    raw = browser.execute_script(
        "return Array.from(document.querySelectorAll('.arithmatex')).filter(e => !e.querySelector('.katex')).length")
    assert raw == 0, f"{page}: {raw} formulas left as TeX source"
    stray = browser.execute_script("""
        const article = document.querySelector('article').cloneNode(true);
        article.querySelectorAll('pre, code, .katex').forEach(e => e.remove());
        return (article.textContent.match(/\\\\[(\\[]/g) || []).length;""")
    assert stray == 0, f"{page}: TeX delimiters outside math (in raw HTML such as a figcaption?)"
    plots = _plots(browser)
    assert len(plots) == MATH_PAGES[page], f"{page}: expected {MATH_PAGES[page]} plots, found {plots}"
    broken = [p["src"] for p in plots if not p["w"]]
    assert not broken, f"{page}: plots that did not load: {broken}"
    assert not _external_requests(browser), f"{page} fetched from outside: {_external_requests(browser)}"


def test_home_and_exercise_pages_render(browser):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    _open(browser, "")
    assert "Fast memory-bound kernels" in browser.title
    browser.save_screenshot(str(SCREENSHOTS / "home.png"))
    _open(browser, "exercises/ex01_vector_add/")
    text = browser.find_element("css selector", "article").text
    assert "exercises/ex01_vector_add.py" in text and "raise NotImplementedError" in text
    assert "grade solution 1" in text
    assert "solutions/ex01_vector_add.py" not in text, "the exercise page shows the solution"
    assert not _external_requests(browser)


def test_chapter_screenshot_with_math_and_plot(browser):
    _open(browser, "chapters/01_memory_bound/")
    _wait_for_math(browser)
    _plots(browser)
    browser.execute_script("document.querySelector('img.plot').scrollIntoView({block: 'center'})")
    time.sleep(0.5)  # let the header finish its scroll transition
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    browser.save_screenshot(str(SCREENSHOTS / "chapter-01-roofline.png"))


def _set(driver, root, name: str, value) -> None:
    from selenium.webdriver.support.ui import Select

    element = root.find_element("css selector", f"[data-in={name}]")
    if element.tag_name == "select":
        Select(element).select_by_value(str(value))
    else:
        element.clear()
        element.send_keys(str(value))


def _out(root, name: str) -> tuple[str, float | None]:
    element = root.find_element("css selector", f"[data-out={name}]")
    raw = element.get_attribute("data-value")
    return element.text, (float(raw) if raw else None)


def amdahl(f: float, s: float) -> tuple[float, float, float]:
    speedup = 1 / ((1 - f) + f / s)
    ceiling = 1 / (1 - f)
    return speedup, ceiling, (speedup - 1) / (ceiling - 1)


def test_table_header_code_stays_on_one_line(browser):
    """The softmax sweeps' headers (chapter 4's lab notes, the widest tables) name `torch.softmax` and
    `torch.compile`: never broken mid-word."""
    _open(browser, "lab-notes/04_fused_softmax/")
    codes = browser.find_elements("css selector", "th code")
    assert codes, "chapter 4's lab notes have no inline code in a table header"
    for code in codes:
        lines = browser.execute_script("return arguments[0].getClientRects().length;", code)
        assert lines == 1, f"{code.text!r} is broken over {lines} lines in a table header"


@pytest.mark.parametrize("f, s", [(0.21, 1.49), (0.07, 1000), (0.6, 1.5), (0.5, 0.8)])
def test_amdahl_calculator(browser, f, s):
    _open(browser, "chapters/07_amdahl/")
    root = browser.find_element("id", "amdahl-calculator")
    _set(browser, root, "f", f)
    _set(browser, root, "s", s)
    speedup, ceiling, captured = amdahl(f, s)
    text, value = _out(root, "speedup")
    assert value == pytest.approx(speedup, rel=1e-12) and text == f"{speedup:.3f}×"
    text, value = _out(root, "ceiling")
    assert value == pytest.approx(ceiling, rel=1e-12) and text == f"{ceiling:.3f}×"
    text, value = _out(root, "captured")
    assert value == pytest.approx(captured, rel=1e-9) and text == f"{100 * captured:.1f}%"
    if (f, s) == (0.21, 1.49):  # the chapter's worked example, and the screenshot
        assert (text, _out(root, "speedup")[0], _out(root, "ceiling")[0]) == ("27.9%", "1.074×", "1.266×")
        browser.execute_script("arguments[0].scrollIntoView({block: 'center'})", root)
        time.sleep(0.5)
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        browser.save_screenshot(str(SCREENSHOTS / "amdahl-calculator.png"))


def test_amdahl_calculator_rejects_impossible_input(browser):
    _open(browser, "chapters/07_amdahl/")
    root = browser.find_element("id", "amdahl-calculator")
    _set(browser, root, "f", 1.5)
    assert "between 0 and 1" in root.find_element("css selector", "[data-out=message]").text
    assert _out(root, "speedup") == ("—", None)


@pytest.mark.parametrize("shape, itemsize, passes, gbps, measured_us", [
    ("4096 x 4096", 4, 2, *CALCULATOR_DEFAULTS),  # the chapter's default: the H200 softmax
    ("8192×1024", 2, 3, 3000, 10.0),
    ("4096 x 4096", 4, 2, 4271.6, 20.0),  # 157% of the ceiling: impossible, and said so
    ("32, 4096, 128", 1, 2, 900, None),
])
def test_bytes_calculator(browser, shape, itemsize, passes, gbps, measured_us):
    _open(browser, "chapters/01_memory_bound/")
    root = browser.find_element("id", "bytes-calculator")
    _set(browser, root, "shape", shape)
    _set(browser, root, "dtype", itemsize)
    _set(browser, root, "passes", passes)
    _set(browser, root, "gbps", gbps)
    _set(browser, root, "measured", "" if measured_us is None else measured_us)
    elements = 1
    for dim in re.findall(r"\d+", shape):
        elements *= int(dim)
    nbytes = elements * itemsize * passes
    floor_us = nbytes / (gbps * 1e9) * 1e6
    assert _out(root, "elements")[1] == elements
    text, value = _out(root, "bytes")
    assert value == nbytes and text.startswith(f"{nbytes:,} B")
    text, value = _out(root, "floor")
    assert value == pytest.approx(floor_us, rel=1e-12)
    assert text == (f"{floor_us / 1000:.3f} ms" if floor_us >= 1000 else f"{floor_us:.2f} µs")
    if measured_us is None:
        assert _out(root, "achieved")[1] is None
    else:
        achieved = nbytes / (measured_us * 1e-6) / 1e9
        text, value = _out(root, "achieved")
        assert value == pytest.approx(achieved, rel=1e-12) and text == f"{achieved:.1f} GB/s"
        text, value = _out(root, "fraction")
        assert value == pytest.approx(achieved / gbps, rel=1e-12) and text == f"{100 * achieved / gbps:.1f}%"
        message = root.find_element("css selector", "[data-out=message]").text
        if achieved > gbps:
            assert message.startswith("Impossible:") and f"{100 * achieved / gbps:.1f}%" in message, message
        else:
            assert not message, message
    if (gbps, measured_us) == CALCULATOR_DEFAULTS:  # the chapter says the defaults give back the row's fraction
        assert _out(root, "fraction")[0] == f"{100 * SOFTMAX_ROW['fraction']:.1f}%"
