"""The notebooks' widgets: step through a Damage game, find and read records, go from a
chart's mark to the records behind it, compare two models' decisions, and show charts
and tables without network access. The widgets and the HTML of what they show are
importable from `workbench.widgets` itself (`__all__`); ipywidgets, Altair and itables
load only when a widget is built.

| module | holds |
| --- | --- |
| `scrubber` | `ReplayScrubber` (and `GameReplay`, the replay it views); its panes: `state_html`, `event_html` |
| `record_browser` | `RecordBrowser`; as HTML: `record_html`, `decision_html` (with its trace), `records_html` |
| `drilldown` | `DrillDown`; what a chart's marks stand for: `scorecard_filters`, `attack_filters`, ... |
| `side_by_side` | `SideBySide`: two models' decisions on the turns they shared |
| `game_picker` | `GamePicker`: a Damage game, its players and a range of its lines |
| `charts` | `enable_offline_charts`, `live_chart`, `has_anywidget` |
| `sortable_table` | `table`: a frame as a paged, sortable table; `selectable_table`: one with a row to select |
| `markup` | the HTML pieces the others share: `findings_html`, `WRAPPED`, `pretty` |
"""

from __future__ import annotations

# GameReplay is public here too: callers that step through a game import it with the scrubber.
from workbench.damage.replay import GameReplay
from workbench.widgets.charts import enable_offline_charts, has_anywidget, live_chart
from workbench.widgets.drilldown import (
    DrillDown,
    attack_filters,
    decision_filters,
    economy_filters,
    emotion_filters,
    family_filters,
    mistake_filters,
    scorecard_filters,
)
from workbench.widgets.game_picker import GamePicker
from workbench.widgets.markup import findings_html
from workbench.widgets.record_browser import (
    RecordBrowser,
    decision_html,
    record_html,
    records_html,
)
from workbench.widgets.scrubber import ReplayScrubber, event_html, state_html
from workbench.widgets.side_by_side import SideBySide
from workbench.widgets.sortable_table import table

__all__ = [
    "DrillDown",
    "GamePicker",
    "GameReplay",
    "RecordBrowser",
    "ReplayScrubber",
    "SideBySide",
    "attack_filters",
    "decision_filters",
    "decision_html",
    "economy_filters",
    "emotion_filters",
    "enable_offline_charts",
    "event_html",
    "family_filters",
    "findings_html",
    "has_anywidget",
    "live_chart",
    "mistake_filters",
    "record_html",
    "records_html",
    "scorecard_filters",
    "state_html",
    "table",
]
