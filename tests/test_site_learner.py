"""What a learner meets on the built site: no solution, no raw Markdown, nothing clipped.

* No solution text is reachable: no page of the learner's site, and not its search index, holds a
  line that only a reference solution has (its lines that no committed stub holds, long enough to be
  its own; the few single lines a lesson teaches on purpose are listed in TAUGHT, with their pages),
  and no link points at a solution page or file. The same test finds every solution in the
  instructor's edition.
* Every page's text is rendered: no table left as pipes, no `**bold**`, `--8<--` or macro
  (`{{`, `{%`) outside code.
* Each exercise page shows its stub as the last commit holds it, whatever the working file says.
* In headless Chromium, every page at 1280 px and at 390 px (a phone): at 1280 no code block or table
  is wider than its box, and no line of a stub wraps; at 390 wider content sits only inside a box that
  scrolls sideways, and nothing is wider than the screen. Screenshots of a few pages at both widths
  go to build/screenshots/.

The build and the browser are tests/conftest.py's fixtures, shared with tests/test_site.py; the browser
test skips when Chromium, chromedriver or selenium is missing, except in CI (CI=true).
"""

from __future__ import annotations

import html
import json
import re
import subprocess
from pathlib import Path

import pytest

import site_helpers as helpers
from docs.scripts import committed_stub
from grader.catalogue import EXERCISES
from site_helpers import ROOT, SCREENSHOTS

#: Lines with fewer letters and digits are idioms any kernel has (`mask = offsets < n`) or a title's
#: underline, not the solution's own.
DISTINCTIVE_CHARACTERS = 30


def _squash(text: str) -> str:
    return " ".join(text.split())


def page_text(markup: str) -> str:
    """The words of an HTML page or fragment, tags removed, entities decoded, whitespace squashed.
    Inside a code block a tag is removed without a space: Pygments wraps every token in one."""
    markup = re.sub(r"<pre\b.*?</pre>", lambda block: re.sub(r"<[^>]+>", "", block[0]), markup, flags=re.S)
    return _squash(html.unescape(re.sub(r"<[^>]+>", " ", markup)))


def _committed_stubs() -> str:
    texts = []
    for exercise in EXERCISES:
        text = committed_stub.committed_text(exercise.learner_file)
        texts.append(text if text is not None else (ROOT / exercise.learner_file).read_text(encoding="utf-8"))
    return _squash("\n".join(texts))


def solution_only_lines(exercise, stubs: str | None = None) -> list[str]:
    """The lines of ``exercise``'s solution that no committed stub holds and that are long enough to be
    the solution's own (comments and docstrings included: a solution's explanation is part of it)."""
    stubs = _committed_stubs() if stubs is None else stubs
    solution = (ROOT / exercise.solution_file).read_text(encoding="utf-8")
    lines = {_squash(line) for line in solution.splitlines()}
    return sorted(line for line in lines
                  if line not in stubs and len(re.findall(r"\w", line)) >= DISTINCTIVE_CHARACTERS)


#: Single lines a lesson teaches on purpose, and the pages that show them (the search index shows them
#: too, since it indexes those pages). Nothing else of a solution may be on the site.
TAUGHT = {
    # Chapter 1 teaches the launch before exercise 1 with a kernel of its own (a "double"): its
    # program's first index is the idiom every elementwise kernel shares, and hint 1 says it too.
    "offsets = pid * BLOCK_SIZE + tl.arange(0, BLOCK_SIZE)": {"chapters/01_memory_bound/index.html"},
    'x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))':
        {"chapters/04_fused_softmax/index.html"},  # the masked load: -inf is the identity of max
    'm_ref = tl.where(m_new == float("-inf"), 0.0, m_new)':  # the guard for a block of -inf
        {"chapters/06_online_softmax/index.html",
         "exercises/ex05_online_softmax/index.html"},  # a hint, and the grader's message quoting it
    # Exercise 8's page sketches the split kernel's tile loop; this is its page-number load.
    "table + (tokens // PAGE_SIZE) * stride_tp, mask=valid, other=0":
        {"exercises/ex08_decode/index.html"},
}


def test_every_solution_has_lines_of_its_own():
    """The leak test below is only as good as its list: every solution must give it lines to look for,
    and every line a lesson may show must still be a solution's own (else drop it from TAUGHT)."""
    stubs = _committed_stubs()
    own = {exercise.number: solution_only_lines(exercise, stubs) for exercise in EXERCISES}
    for number, lines in own.items():
        assert len(lines) >= 5, f"exercise {number}'s solution has almost no line that its stub lacks"
    for line in TAUGHT:
        assert any(line in lines for lines in own.values()), f"TAUGHT lists a line no solution has: {line}"


def site_texts(site: Path) -> dict[str, str]:
    """The text of every page of a built site, and of its search index, by path."""
    texts = {page.relative_to(site).as_posix(): page_text(page.read_text(encoding="utf-8"))
             for page in site.rglob("*.html")}
    index = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    texts["search/search_index.json"] = " ".join(page_text(f"{doc['title']} {doc['text']}")
                                                 for doc in index["docs"])
    assert len(texts) > 20 and len(texts["search/search_index.json"]) > 100_000, "the site looks empty"
    return texts


def solution_text_in(texts: dict[str, str]) -> list[tuple[int, str, str]]:
    """(exercise, page, line) for each solution-only line a page holds, lines TAUGHT on their pages apart."""
    stubs = _committed_stubs()
    found = []
    for exercise in EXERCISES:
        for line in solution_only_lines(exercise, stubs):
            allowed = TAUGHT[line] | {"search/search_index.json"} if line in TAUGHT else set()
            found += [(exercise.number, where, line) for where, text in texts.items()
                      if line in text and where not in allowed]
    return found


def test_no_solution_text_is_reachable_from_the_learners_site(built_site):
    leaks = [f"{where}: {line[:70]!r} (solution of exercise {number})"
             for number, where, line in solution_text_in(site_texts(built_site))]
    assert not leaks, "the learner's site holds solution text:\n" + "\n".join(sorted(leaks)[:40])
    assert not list(built_site.glob("solutions")), "the learner's site has a solutions folder"
    links = [f"{page.relative_to(built_site)}: {target}" for page in built_site.rglob("*.html")
             for target in re.findall(r'\bhref="([^"]*)"', page.read_text(encoding="utf-8"))
             if re.search(r"(^|/)solutions/", target)]
    assert not links, "links to a solution page or file:\n" + "\n".join(links[:20])


def test_the_leak_test_finds_every_solution_in_the_instructors_edition(tmp_path):
    result = helpers.build_site(tmp_path / "site", "mkdocs-instructor.yml")
    assert result.returncode == 0, f"{result.stdout[-3000:]}\n{result.stderr[-3000:]}"
    found = solution_text_in(site_texts(tmp_path / "site"))
    for exercise in EXERCISES:
        page = exercise.docs_page.replace("exercises/", "solutions/").replace(".md", "/index.html")
        on_page = {line for number, where, line in found if where == page}
        in_index = {line for number, where, line in found if where == "search/search_index.json"
                    and number == exercise.number}
        assert on_page >= set(solution_only_lines(exercise)) - set(TAUGHT), f"{page} misses lines"
        assert in_index, f"the instructor's search index has no line of exercise {exercise.number}"


def test_the_leak_test_sees_a_solution_line_in_a_page_and_in_the_index(tmp_path):
    """page_text finds a line through Pygments' spans and the index's escapes, as the test above needs."""
    from pygments import highlight
    from pygments.formatters import HtmlFormatter
    from pygments.lexers import PythonLexer

    line = next(line for line in solution_only_lines(EXERCISES[0]) if "(" in line)
    assert line in page_text(highlight(f"if True:\n    {line}\n", PythonLexer(), HtmlFormatter()))
    assert line in page_text(json.loads(json.dumps({"text": html.escape(line)}))["text"])


# ------------------------------------------------------------------------------------------------
# Rendered text
# ------------------------------------------------------------------------------------------------

#: What is left of Markdown or of a macro that did not render, in a page's text outside code and math.
UNRENDERED = {
    "a table row left as pipes": re.compile(r"^\s*\|.*\|\s*$|\|\s*:?-{3,}:?\s*\|", re.MULTILINE),
    "**bold** left as asterisks": re.compile(r"\*\*[^*\s][^*\n]*\*\*"),
    "a --8<-- include": re.compile(r"--8<--"),
    "a macro left as {{ or {%": re.compile(r"\{\{|\{%"),
}


def rendered_text(markup: str) -> str:
    """A page's text outside code, scripts and math, one line per block of its HTML."""
    markup = re.sub(r"<(pre|code|script|style|textarea)\b.*?</\1>", " ", markup, flags=re.S)
    markup = re.sub(r'<(span|div) class="arithmatex">.*?</\1>', " ", markup, flags=re.S)
    markup = re.sub(r"<(?:p|li|td|th|tr|h\d|div|br|dd|dt)\b", "\n\\g<0>", markup)
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def test_no_page_shows_unrendered_markdown_or_macros(built_site):
    found = []
    for page in sorted(built_site.rglob("*.html")):
        text = rendered_text(page.read_text(encoding="utf-8"))
        for what, pattern in UNRENDERED.items():
            found += [f"{page.relative_to(built_site)}: {what}: {match.group(0).strip()[:80]!r}"
                      for match in pattern.finditer(text)]
    assert not found, "pages with unrendered text:\n" + "\n".join(found[:40])


def test_the_unrendered_check_sees_a_table_broken_by_a_blank_line():
    import markdown

    broken = markdown.markdown("| a | b |\n|---|---|\n| 1 | 2 |\n\n| 3 | 4 |\n", extensions=["tables"])
    text = rendered_text(broken)
    assert UNRENDERED["a table row left as pipes"].search(text)
    assert not UNRENDERED["a table row left as pipes"].search(rendered_text(markdown.markdown(
        "| a | b |\n|---|---|\n| 1 | 2 |\n| 3 | 4 |\n", extensions=["tables"])))


# ------------------------------------------------------------------------------------------------
# The stub as committed
# ------------------------------------------------------------------------------------------------


def _git(folder: Path, *args: str) -> None:
    subprocess.run(["git", "-c", "user.name=course", "-c", "user.email=course@localhost", *args],
                   cwd=folder, check=True, capture_output=True)


def test_the_stub_block_shows_the_committed_file_not_the_edited_one(tmp_path):
    exercise = EXERCISES[0]
    stub = tmp_path / exercise.learner_file
    stub.parent.mkdir(parents=True)
    stub.write_text('def add(x, y):\n    raise NotImplementedError("not implemented yet")\n')
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-A")
    _git(tmp_path, "commit", "-q", "-m", "stub")
    stub.write_text("def add(x, y):\n    return my_own_kernel(x, y)\n")
    block = committed_stub.stub_block(exercise, root=tmp_path)
    assert block.startswith(f'```python title="{exercise.learner_file}"\n')
    assert "not implemented yet" in block and "my_own_kernel" not in block
    # No git history: the working file, and the title says so.
    (tmp_path / ".git").rename(tmp_path / "not-git")
    block = committed_stub.stub_block(exercise, root=tmp_path)
    assert "my_own_kernel" in block and committed_stub.WORKING_COPY_NOTE in block.splitlines()[0]


def test_a_stub_with_a_fence_inside_gets_a_longer_fence():
    block = committed_stub.fenced('"""Run:\n\n```bash\ngrade exercise 1\n```\n"""', "exercises/x.py")
    assert block.startswith('````python') and block.endswith("\n````")


#: The widest line of a stub or a solution: what a code block shows unwrapped at 1280 px.
COLUMNS = 88


def test_stubs_solutions_and_the_template_fit_88_columns():
    from tools import new_exercise

    files = sorted([*(ROOT / "exercises").glob("*.py"), *(ROOT / "solutions").glob("*.py")])
    texts = {path.relative_to(ROOT).as_posix(): path.read_text(encoding="utf-8") for path in files}
    assert len(texts) >= 2 * len(EXERCISES)
    for path in sorted((ROOT / "tools" / "exercise_template").iterdir()):
        texts[path.relative_to(ROOT).as_posix()] = path.read_text(encoding="utf-8")
    # What the template becomes for a two-digit exercise with a long name: the stub and the solution.
    kernel = (ROOT / "tools" / "exercise_template" / "kernel.py").read_text(encoding="utf-8")
    filled = kernel.replace("${function}", "cross_entropy_loss").replace("$function", "cross_entropy_loss")
    filled = filled.replace("$number", "12")
    for part in ("stub", "solution"):
        texts[f"a new exercise's {part}"] = new_exercise.keep(filled, part)
    long = [f"{name}:{number}: {len(line)} columns" for name, text in texts.items()
            for number, line in enumerate(text.splitlines(), 1) if len(line) > COLUMNS]
    assert not long, f"lines over {COLUMNS} columns:\n" + "\n".join(long)


def test_exercise_pages_show_the_committed_stub(built_site):
    for exercise in EXERCISES:
        committed = committed_stub.committed_text(exercise.learner_file)
        if committed is None:
            pytest.skip("no git history: the pages show the working files")
        markup = (built_site / exercise.docs_page.replace(".md", "/index.html")).read_text(encoding="utf-8")
        blocks = [page_text(code) for code in re.findall(r"<pre\b.*?</pre>", markup, flags=re.S)]
        assert _squash(committed) in blocks, f"{exercise.docs_page} does not show the committed stub"


# ------------------------------------------------------------------------------------------------
# In a browser: nothing clipped at 1280 px or at 390 px
# ------------------------------------------------------------------------------------------------

#: Returns what is clipped on the page, one sentence each. `wide` is true at desktop width, where a
#: code block or a table may not scroll at all; on a phone it may, inside its own scrolling box.
CLIPPED_JS = r"""
const wide = arguments[0];
// On a phone the layout viewport grows to fit content wider than the screen: measure against the screen.
const viewport = Math.min(document.documentElement.clientWidth, arguments[1]);
const article = document.querySelector("article") || document.body;
const found = [];
const name = e => e.tagName.toLowerCase() + (e.id ? "#" + e.id : "") +
  (e.className && typeof e.className === "string" ? "." + e.className.trim().split(/\s+/).join(".") : "");
const where = e => { const h = [...document.querySelectorAll("article h1, article h2, article h3")]
  .filter(x => x.compareDocumentPosition(e) & Node.DOCUMENT_POSITION_FOLLOWING).pop();
  return h ? " under '" + h.textContent.replace("¶", "").trim().slice(0, 50) + "'" : ""; };
const scrolls = e => ["auto", "scroll"].includes(getComputedStyle(e).overflowX);
// A code block scrolls in its `code`, a table in Material's scroll wrapper; a `pre` itself holds the
// annotations' tooltips, which may reach past it.
const boxes = article.querySelectorAll(
  "pre, pre > code, table, .md-typeset__scrollwrap, .md-typeset__table, .highlight, .tabbed-set, " +
  ".admonition, details, figure, img, .arithmatex, .calculator, p, li");
for (const e of boxes) {
  if (e.closest(".katex, .md-annotation")) continue;
  const over = e.matches("pre") ? 0 : e.scrollWidth - e.clientWidth;
  const code = e.matches("pre > code, table, .md-typeset__scrollwrap, .md-typeset__table");
  if (over > 1 && e.clientWidth > 0) {
    if (wide && code) found.push(`${name(e)}${where(e)}: ${over}px wider than its box`);
    else if (!scrolls(e) && getComputedStyle(e).overflowX !== "visible")
      found.push(`${name(e)}${where(e)}: ${over}px hidden, in a box that does not scroll`);
  }
  const right = e.getBoundingClientRect().right;
  if (right > viewport + 1) {
    let a = e.parentElement, held = false;
    while (a && a !== document.body) {
      if (scrolls(a) && a.getBoundingClientRect().right <= viewport + 1) { held = true; break; }
      a = a.parentElement;
    }
    if (!held) found.push(`${name(e)}${where(e)}: ends ${Math.round(right - viewport)}px past the screen`);
  }
}
if (document.documentElement.scrollWidth > viewport + 1)
  found.push(`the page is ${document.documentElement.scrollWidth - viewport}px wider than the screen`);
// A stub is wrapped to 88 columns so that it shows unwrapped at desktop width.
if (wide) for (const block of article.querySelectorAll(".highlight")) {
  const title = block.querySelector(".filename");
  if (!title || !title.textContent.startsWith("exercises/")) continue;
  const wrapped = [...block.querySelectorAll("code > span[id^='__span']")]
    .filter(line => line.getClientRects().length > 1).length;
  if (wrapped) found.push(`${wrapped} lines of the stub ${title.textContent} wrap`);
}
return found;
"""

#: label -> (width, height, mobile): a desktop with a classic scroll bar, and a phone.
WIDTHS = {"1280": (1280, 900, False), "390": (390, 844, True)}
#: Pages photographed at both widths, scrolled to what used to be cut off.
SCREENSHOT_PAGES = {"chapters/04_fused_softmax/": "the-torchcompile-cliff-and-its-cause",
                    "exercises/ex08_decode/": "the-schedule", "measurements/": "provenance"}


def _open(driver, path: str) -> None:
    from selenium.webdriver.support.ui import WebDriverWait

    driver.get(driver.base_url + path)
    # Images loaded, and KaTeX (which renders after load) has left no formula as TeX.
    WebDriverWait(driver, 20, poll_frequency=0.05).until(lambda d: d.execute_script(
        "return document.readyState === 'complete' && "
        "Array.from(document.images).every(i => i.complete) && "
        "Array.from(document.querySelectorAll('.arithmatex')).every(e => e.querySelector('.katex'))"))


def _set_width(driver, width: int, height: int, mobile: bool) -> None:
    driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", {
        "width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})


@pytest.mark.long  # 72 pages, each laid out twice: 36 s alone, 57 s beside the other worker (47 and 84-94 s before)
def test_no_code_block_or_table_is_clipped(built_site, browser):
    """Each page is loaded once and laid out at both widths. (Loading every other page at 390 px and
    resizing it to 1280, one resize a page instead of two, saves ~10 s but is not the same test: a page
    loaded as a phone and widened to 1280 px measured 62 px wider than the screen.)"""
    pages = sorted(p.parent.relative_to(built_site).as_posix() + "/"
                   for p in built_site.rglob("index.html"))
    pages = ["" if page == "./" else page for page in pages]
    assert len(pages) > 20
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    clipped = []
    # Search plays no part in a page's layout. Its worker builds an index of the whole site on every page load:
    # blocked. The page itself fetches and reads the 0.8 MB index: it gets one with the same settings and no
    # page (blocking it instead leaves Material's scripts failing, and pages hundreds of pixels wide at 390 px).
    # Both together took the 72 pages from 45-55 s to 34 s here, with the same findings.
    index = json.loads((built_site / "search" / "search_index.json").read_text(encoding="utf-8"))
    browser.replacements["/search/search_index.json"] = json.dumps({"config": index["config"], "docs": []}).encode()
    browser.execute_cdp_cmd("Network.enable", {})
    browser.execute_cdp_cmd("Network.clearBrowserCache", {})
    browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": ["*/assets/javascripts/workers/search.*"]})
    try:
        for page in pages:
            for number, (label, (width, height, mobile)) in enumerate(WIDTHS.items()):
                _set_width(browser, width, height, mobile)
                if number == 0:
                    _open(browser, page)
                clipped += [f"{page or 'home'} at {label} px: {what}"
                            for what in browser.execute_script(CLIPPED_JS, width > 600, width)]
                if page in SCREENSHOT_PAGES:
                    browser.execute_script("document.getElementById(arguments[0]).scrollIntoView()",
                                           SCREENSHOT_PAGES[page])
                    name = page.strip("/").replace("/", "-")
                    browser.save_screenshot(str(SCREENSHOTS / f"{name}-{label}.png"))
        served = browser.execute_script("const r = new XMLHttpRequest(); r.open('GET', arguments[0], false); "
                                        "r.send(); return JSON.parse(r.responseText).docs.length",
                                        browser.base_url + "search/search_index.json")
        assert served == 0, "the pages were given the site's whole search index, not the empty one"
    finally:
        browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
        browser.execute_cdp_cmd("Network.setBlockedURLs", {"urls": []})
        browser.replacements.clear()
        browser.execute_cdp_cmd("Network.clearBrowserCache", {})  # the next test's pages fetch the real index
    assert not clipped, "clipped content:\n" + "\n".join(clipped[:60])
