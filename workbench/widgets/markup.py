"""HTML pieces the widgets share: the style of a wrapped block of log text, JSON
pretty-printing, and a list of findings. Every text from a log is escaped."""

from __future__ import annotations

import html
import json
from collections.abc import Sequence

WRAPPED = "white-space:pre-wrap;overflow-wrap:anywhere;margin:2px 0 4px 12px;font-size:12px"


def pretty(text: str) -> str:
    """`text` pretty-printed where it is JSON, else as it is."""
    try:
        return json.dumps(json.loads(text), indent=1, ensure_ascii=False)
    except ValueError:
        return text


def findings_html(findings: Sequence[dict]) -> str:
    """Findings as a list: severity, rule, field path and message, escaped.

    Args:
        findings: dicts with `severity`, `rule`, `field` and `message`.

    Returns:
        HTML: an unordered list, one item per finding.
    """
    return (
        "<ul style='margin:2px 0'>"
        + "".join(
            f"<li><b>{html.escape(f['severity'])}</b> {html.escape(f['rule'])} at <code>{html.escape(f['field'])}</code>: "
            f"{html.escape(f['message'])}</li>"
            for f in findings
        )
        + "</ul>"
    )
