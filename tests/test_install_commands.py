"""The install commands on the setup page and the hosted-notebook cells of the GPU page are the README's,
the ones CI runs (.ci/run reads the README's `ci:install` block): a learner who follows the site installs
what the course is tested with."""

from __future__ import annotations

import re

from site_helpers import DOCS, ROOT


def readme_install_lines() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    block = re.search(r"<!-- ci:install -->(.*?)<!-- /ci:install -->", readme, re.S)
    assert block, "README.md lost its ci:install block, which .ci/run executes"
    return [line.strip() for line in block.group(1).splitlines()
            if line.strip() and not line.strip().startswith("```")]


def setup_install_lines() -> list[str]:
    """Every `pip install` and `python -m venv` line in docs/setup.md's code blocks, comments dropped."""
    setup = (DOCS / "setup.md").read_text()
    lines = []
    for block in re.findall(r"```bash\n(.*?)```", setup, re.S):
        for line in block.splitlines():
            command = line.split("#", 1)[0].strip()
            if command.startswith(("pip install", "python -m venv")):
                lines.append(command)
    return lines


def test_setup_page_runs_the_readme_install_for_a_cpu():
    setup = setup_install_lines()
    for line in readme_install_lines():
        assert line in setup, f"docs/setup.md does not run README's install line {line!r}"


def gpu_forms(readme: list[str]) -> set[str]:
    """README: "on a GPU machine, install the CUDA build of torch you use first and drop [the pin]"."""
    return {re.sub(r"torch==\S+\s+", "", line) for line in readme} | {"pip install torch"}


def notebook_cells() -> list[str]:
    """The shell lines (``!...``) and ``%cd`` of docs/gpus.md's Python cells, as a notebook runs them."""
    page = (DOCS / "gpus.md").read_text()
    return [line.strip() for block in re.findall(r"```python\n(.*?)```", page, re.S)
            for line in block.splitlines() if line.strip().startswith(("!", "%cd"))]


def test_every_install_on_the_setup_page_is_the_readmes_or_its_gpu_form():
    readme = readme_install_lines()
    allowed = set(readme) | gpu_forms(readme)
    extra = [line for line in setup_install_lines() if line not in allowed]
    assert not extra, (f"docs/setup.md installs differently from README.md's ci:install block: {extra}; "
                       f"README runs {readme}")


def test_the_notebook_cells_install_the_readmes_gpu_form_into_the_setup_pages_folder():
    """A hosted notebook's torch already has CUDA: its cell is the README's install without the CPU pin, and
    it clones into the folder docs/setup.md clones into and then changes into it."""
    cells = notebook_cells()
    installs = [line[1:].strip() for line in cells if line.startswith("!pip ")]
    allowed = {line for line in gpu_forms(readme_install_lines())
               if line.startswith("pip install ") and line != "pip install torch"}
    assert installs and all(line in allowed for line in installs), (
        f"docs/gpus.md's notebook installs {installs}; the README's GPU form is {sorted(allowed)}")
    setup = (DOCS / "setup.md").read_text()
    clones = [line[1:].strip() for line in cells if line.startswith("!git clone")]
    assert clones and all(f"{clone} && cd {clone.split()[-1]}" in setup for clone in clones), clones
    assert [f"%cd {clone.split()[-1]}" for clone in clones] == [line for line in cells if line.startswith("%cd")]
    from grader.commands.cli import build_parser

    for line in (line for line in cells if line.startswith("!grade")):
        build_parser().parse_args(line.split()[1:])  # a command the CLI has, with arguments it takes
