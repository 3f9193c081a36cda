"""The install commands on the setup page are the README's, the ones CI runs (.ci/run reads the README's
`ci:install` block): a learner who follows the site installs what the course is tested with."""

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


def test_every_install_on_the_setup_page_is_the_readmes_or_its_gpu_form():
    readme = readme_install_lines()
    # README: "on a GPU machine, install the CUDA build of torch you use first and drop [the pin]".
    gpu_forms = {re.sub(r"torch==\S+\s+", "", line) for line in readme} | {"pip install torch"}
    allowed = set(readme) | gpu_forms
    extra = [line for line in setup_install_lines() if line not in allowed]
    assert not extra, (f"docs/setup.md installs differently from README.md's ci:install block: {extra}; "
                       f"README runs {readme}")
