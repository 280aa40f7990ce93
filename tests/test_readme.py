"""The README's two commands are the ones CI and newcomers run."""

import re

from tests.conftest import ROOT


def readme_commands() -> list[str]:
    return re.findall(r"```bash\n(.+?)\n```", (ROOT / "README.md").read_text())


def test_readme_starts_with_install_demo_and_install_test():
    demo, test = readme_commands()[:2]
    assert demo.endswith("workbench demo") and "pip install" in demo
    assert "pip install" in test and "'.[dev]'" in test and "pytest" in test


def test_ci_runs_the_readme_test_command_verbatim():
    ci = (ROOT / ".ci" / "run").read_text().strip().splitlines()
    assert ci[-1] == readme_commands()[1]


def test_getting_started_documents_every_command():
    from workbench.cli import _parser

    commands = _parser()._subparsers._group_actions[0].choices
    text = (ROOT / "docs" / "getting-started.md").read_text()
    for name in commands:
        assert f"`workbench {name}" in text, name


def test_the_readme_is_a_front_page():
    # what it is, the two commands and a worked example on the first screen, then links
    text = (ROOT / "README.md").read_text()
    assert len(text.splitlines()) <= 200
    first_screen = "\n".join(text.splitlines()[:50])
    assert "workbench demo" in first_screen and "pytest" in first_screen and "workbench scorecard" in first_screen
    for link in __import__("re").findall(r"\]\(((?:docs/)?[\w/.-]+\.md)", text):
        assert (ROOT / link).is_file(), link
