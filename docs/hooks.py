"""MkDocs hooks: README.md and ARCHITECTURE.md, at the repository's top, are also the
site's home and Architecture pages. The pages under docs/ stand for them; their text is
read from the top, with links written from the top of the repository made the site's.

The site is read offline too, opened from disk: the offline plugin's search runs its
worker through a shim it loads from unpkg.com, so each page loads the shim kept here
(`assets/iframe-worker-shim.js`, iframe-worker 1.0.4, MIT: `assets/iframe-worker-LICENSE`)."""

from __future__ import annotations

import posixpath
import re
from pathlib import Path

TOP = Path(__file__).resolve().parents[1]
FROM_THE_TOP = {"index.md": "README.md", "architecture.md": "ARCHITECTURE.md"}
LINK_FROM_THE_TOP = re.compile(r"\]\((docs/|ARCHITECTURE\.md)")


def on_page_markdown(markdown: str, page, **_) -> str:
    top = FROM_THE_TOP.get(page.file.src_uri)
    if top is None:
        return markdown
    text = (TOP / top).read_text(encoding="utf-8")
    return LINK_FROM_THE_TOP.sub(lambda m: "](" + ("" if m.group(1) == "docs/" else "architecture.md"), text)


SHIM = "https://unpkg.com/iframe-worker/shim"
SHIM_HERE = "assets/iframe-worker-shim.js"


def on_post_build(config, **_) -> None:
    site = Path(config["site_dir"])
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        if SHIM in html:
            here = page.parent.relative_to(site).as_posix()
            page.write_text(html.replace(SHIM, posixpath.relpath(SHIM_HERE, here)), encoding="utf-8")
