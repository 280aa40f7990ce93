"""What a figure says, read from its Vega-Lite spec, and checked against the database by
queries written here, independently of the plotting code.

A figure test reads the spec (`chart.to_dict()`, a saved `.json`, or the spec embedded
in a saved `.html`) and checks its marks, its encoded fields, its data's rows and some
of their values. Rendered files (PNG, SVG, PDF) are only checked to be what their
suffix says, by their first bytes.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from pathlib import Path

from tests.intervals import clustered_by_hand

EMOTIONS = ("fear", "anger", "shame", "confidence", "tilt")
MAGIC = {".png": b"\x89PNG\r\n\x1a\n", ".svg": b"<svg", ".pdf": b"%PDF-"}
HTML_SPEC = re.compile(r"const spec = (\{.*\});\n\s*const embedOpt", re.S)


# --- files -----------------------------------------------------------------------------------


def assert_rendered(path: Path) -> None:
    """A PNG, SVG or PDF file that is one: its magic bytes, and a complete SVG or PDF."""
    path = Path(path)
    data = path.read_bytes()
    assert data.startswith(MAGIC[path.suffix.lower()]), (path, data[:16])
    if path.suffix.lower() == ".svg":
        assert data.rstrip().endswith(b"</svg>"), path
    if path.suffix.lower() == ".pdf":
        assert b"%%EOF" in data[-1024:], path


def spec_of(path: Path) -> dict:
    """The Vega-Lite spec of a saved `.json`, or the one a saved `.html` embeds."""
    path = Path(path)
    text = path.read_text()
    if path.suffix.lower() == ".json":
        return json.loads(text)
    assert text.lstrip().lower().startswith("<!doctype html") or text.lstrip().startswith("<html"), path
    found = HTML_SPEC.search(text)
    assert found, f"{path} embeds no Vega-Lite spec"
    assert "<script" not in found.group(1)  # the embedded spec cannot open or close a script
    return json.loads(found.group(1))


# --- the spec ----------------------------------------------------------------------------------


@dataclass
class View:
    """A unit view: its mark, encoded fields by channel, its data's rows, and the title
    of the panel it is drawn in."""

    title: str | None
    mark: str
    fields: dict[str, str | None]
    aggregates: dict[str, str | None]
    rows: list[dict]
    transform: list[dict]
    tooltip: list[str]


def views(spec: dict) -> list[View]:
    """Every unit view of a (layered, concatenated, faceted) spec, in order."""
    datasets = spec.get("datasets", {})
    found: list[View] = []

    def walk(node: dict, data: str | None, title: str | None) -> None:
        data = node.get("data", {}).get("name", data) if isinstance(node.get("data"), dict) else data
        own = node.get("title")
        title = (own.get("text") if isinstance(own, dict) else own) or title
        if "mark" in node:
            mark = node["mark"] if isinstance(node["mark"], str) else node["mark"]["type"]
            encoding = node.get("encoding", {})
            tooltip = encoding.get("tooltip", [])
            found.append(
                View(
                    title=title,
                    mark=mark,
                    fields={channel: enc.get("field") for channel, enc in encoding.items() if isinstance(enc, dict)},
                    aggregates={
                        channel: enc.get("aggregate") for channel, enc in encoding.items() if isinstance(enc, dict)
                    },
                    rows=datasets[data] if data else [],
                    transform=node.get("transform", []),
                    tooltip=[t["field"] if isinstance(t, dict) else t.split(":")[0] for t in tooltip],
                )
            )
        for key in ("layer", "vconcat", "hconcat", "concat"):
            for child in node.get(key, []):
                walk(child, data, title)
        if "spec" in node:
            walk(node["spec"], data, title)

    walk(spec, None, None)
    return found


def panel(spec: dict, title: str) -> list[View]:
    found = [v for v in views(spec) if v.title == title]
    assert found, f"no panel titled {title!r}; panels: {sorted({str(v.title) for v in views(spec)})}"
    return found


def title_of(spec: dict) -> str:
    title = spec["title"]
    return title["text"] if isinstance(title, dict) else title


def close(a, b, tolerance: float = 1e-9) -> bool:
    return a is not None and b is not None and math.isclose(a, b, rel_tol=1e-9, abs_tol=tolerance)


# --- emotions: one panel per emotion, lines of players, attack markers, eliminations -----------


def check_emotions(spec: dict, con, game_id: str | None = None, players=None, cursor: bool = False) -> str:
    """The emotion trajectories of a game, checked against `damage_emotions` and
    `damage_events`. Returns the game's id (read from the title when not given)."""
    title = title_of(spec)
    found = re.fullmatch(r"Emotions in (.+) \(▼ attack received, ✕ eliminated: the line ends\)", title)
    assert found, title
    game_id = game_id or found.group(1)
    assert found.group(1) == game_id
    panels = spec["vconcat"]
    assert len(panels) == len(EMOTIONS)
    expected_marks = ["line", "point", "point", "rule"] if cursor else ["line", "point", "point"]
    every = views(spec)
    assert [v.mark for v in every] == expected_marks * len(EMOTIONS)
    lines, hits, crosses = (every[i :: len(expected_marks)] for i in range(3))
    players = (
        list(players)
        if players
        else [
            p
            for (p,) in con.execute(
                "SELECT DISTINCT player_id FROM damage_emotions WHERE game_id = ? ORDER BY 1", [game_id]
            ).fetchall()
        ]
    )
    # Where players left the game (seed 003, section 5.11; the real simulator's
    # `bankroll_eliminated` too): their lines end there, at a cross.
    left_at = (
        "SELECT json_extract_string(payload, '$.player_id') AS player_id, min(seq) AS out FROM damage_events "
        "WHERE game_id = $game AND type IN ('player_eliminated', 'bankroll_eliminated') GROUP BY player_id"
    )
    out = dict(con.execute(left_at, {"game": game_id}).fetchall())

    # Lines: at most 600 points per player, so vectors are averaged over buckets of
    # ceil(lines spanned / 600) log lines.
    first, last = con.execute("SELECT min(seq), max(seq) FROM damage_emotions WHERE game_id = ?", [game_id]).fetchone()
    bucket = max(1, math.ceil((last - first + 1) / 600))
    for emotion, line, cross in zip(EMOTIONS, lines, crosses):
        assert (line.fields["x"], line.fields["y"], line.fields["color"]) == ("seq", "value", "player_id")
        assert {r["emotion"] for r in line.rows} == {emotion}
        expected = {
            (player, seq): value
            for player, seq, value in con.execute(
                f"SELECT player_id, min(seq), avg({emotion}) "
                f"FROM damage_emotions LEFT JOIN ({left_at}) USING (player_id) "
                f"WHERE game_id = $game AND list_contains($players, player_id) AND {emotion} IS NOT NULL "
                f"AND (out IS NULL OR seq <= out) GROUP BY player_id, seq // $bucket",
                {"game": game_id, "players": players, "bucket": bucket},
            ).fetchall()
        }
        last = {player: expected[player, seq] for player, seq in sorted(expected)}
        ends = {(player, seq): last[player] for player, seq in out.items() if player in last}
        wanted = expected | ends  # each eliminated player's line held at its last value up to where it left
        drawn = {(r["player_id"], r["seq"]): r["value"] for r in line.rows}
        assert len(line.rows) == len(drawn) and drawn.keys() == wanted.keys(), emotion
        assert all(close(drawn[k], wanted[k]) for k in wanted), emotion
        assert {(r["player_id"], r["seq"]): r["value"] for r in cross.rows} == ends, emotion
        per_player = {}
        for player, _ in drawn:
            per_player[player] = per_player.get(player, 0) + 1
        assert set(per_player) == set(players) and max(per_player.values()) <= 600 + 1  # and the end
    # Markers: every attack of a team on one of this emotion's values.
    for emotion, hit in zip(EMOTIONS, hits):
        assert (hit.fields["x"], hit.fields["y"], hit.fields["color"]) == ("seq", "value", "player_id")
        attacks = con.execute(
            "SELECT seq, target, value FROM ("
            "  SELECT seq, json_extract_string(payload, '$.mode') AS mode,"
            "         json_extract_string(payload, '$.emotion') AS emotion,"
            "         json_extract_string(payload, '$.target_player_id') AS target,"
            "         TRY_CAST(json_extract_string(payload, '$.target_emotions.' ||"
            "                  json_extract_string(payload, '$.emotion')) AS DOUBLE) AS value"
            "  FROM damage_events WHERE game_id = ? AND type = 'affect_resolved')"
            "WHERE mode = 'attack_team' AND emotion = ? AND value IS NOT NULL AND list_contains(?, target)",
            [game_id, emotion, players],
        ).fetchall()
        drawn = [(r["seq"], r["player_id"], r["value"]) for r in hit.rows]
        assert len(drawn) == len(attacks), emotion
        for (seq, player, value), (seq_, player_, value_) in zip(sorted(drawn), sorted(attacks)):
            assert (seq, player) == (seq_, player_) and close(value, value_), emotion
    return game_id


# --- economy: one panel per resource, one line per series, deficits marked ---------------------


# What the economy figure shows by default: these, and every resource that ran a deficit.
KEY_RESOURCES = ("energy", "minerals", "food", "alloys", "consumer_goods", "unity", "influence", "trade")


def check_economy(spec: dict, con, series=None, resources=None) -> list[dict]:
    """The monthly nets, checked against `stellaris_resources`; returns the rows drawn.
    `resources` None: the figure's default, the key resources and those in deficit."""
    assert title_of(spec) == "Monthly net per resource"
    assert spec["facet"]["field"] == "resource"
    if resources is None:
        known = {r for (r,) in con.execute("SELECT DISTINCT resource FROM stellaris_resources").fetchall()}
        in_deficit = {
            r
            for (r,) in con.execute(
                "SELECT DISTINCT resource FROM stellaris_resources WHERE coalesce(net, income - expenses) < 0"
            ).fetchall()
        }
        resources = sorted(r for r in known if r in KEY_RESOURCES or r in in_deficit)
        hidden = sorted(known - set(resources))
        # the subtitle's lines after the first name them, wrapped to the figure's width
        assert not hidden or " ".join(spec["title"]["subtitle"][1:]).endswith(": " + ", ".join(hidden))
    panels = len(resources)
    # The grid leaves no more empty cells than 3, 4 or 5 columns could (one row up to 4).
    columns = spec["columns"]
    assert columns == panels if panels <= 4 else -panels % columns == min(-panels % c for c in (3, 4, 5))
    rule, line, deficit = views(spec)
    assert (rule.mark, line.mark, deficit.mark) == ("rule", "line", "point")
    assert (line.fields["x"], line.fields["y"], line.fields["color"], line.fields["strokeDash"]) == (
        "year",
        "net",
        "series",
        "origin",
    )
    assert (deficit.fields["x"], deficit.fields["y"]) == ("year", "net")
    assert deficit.transform == [{"filter": "datum.deficit"}]
    rows = line.rows
    where, params = ["coalesce(r.net, r.income - r.expenses) IS NOT NULL"], []
    if series is not None:
        where.append("s.series = ?")
        params.append(series)
    if resources is not None:
        where.append("list_contains(?, r.resource)")
        params.append(list(resources))
    days = con.execute(
        "SELECT count(DISTINCT day) FROM stellaris_snapshots GROUP BY series ORDER BY 1 DESC LIMIT 1"
    ).fetchone()[0]
    assert days <= 400, "these checks expect one point per snapshot day"
    expected = {
        (s, o, r, d): (net, date)
        for s, o, r, d, net, date in con.execute(
            "SELECT s.series, s.origin, r.resource, r.day, avg(coalesce(r.net, r.income - r.expenses)), "
            "min(r.game_date) FROM stellaris_resources r JOIN stellaris_snapshots s USING (source_id, locator) "
            f"WHERE {' AND '.join(where)} GROUP BY ALL",
            params,
        ).fetchall()
    }
    drawn = {(r["series"], r["origin"], r["resource"], r["day"]): r for r in rows}
    assert len(rows) == len(drawn) == len(expected)
    assert drawn.keys() == expected.keys()
    for key, (net, date) in expected.items():
        row = drawn[key]
        assert close(row["net"], net, 1e-6) and row["deficit"] == (net < 0) and row["game_date"] == date, key
        assert close(row["year"], key[3] / 360.0)
    return rows


# --- decision quality --------------------------------------------------------------------------


def check_decisions(spec: dict, con) -> None:
    """Validity per format and per model or agent, rules and distributions, checked
    against `decisions`, `violations` and `sources`."""
    assert title_of(spec) == "Decision quality across games"
    bars, counts = panel(spec, "Validity per format")
    assert (bars.mark, counts.mark) == ("bar", "text")
    assert (bars.fields["x"], bars.fields["y"], bars.fields["color"], counts.fields["text"]) == (
        "valid_rate",
        "format",
        "format",
        "label",
    )
    # validity of the answered decisions; the calls that got no answer counted apart
    expected = con.execute(
        "SELECT format, count(*) FILTER (WHERE outcome <> 'failed'), count(*) FILTER (WHERE valid), "
        "count(*) FILTER (WHERE outcome = 'failed') FROM decisions "
        "GROUP BY format ORDER BY format"
    ).fetchall()
    assert [(r["format"], r["decisions"], r["valid"], r["failed"]) for r in bars.rows] == expected
    for row in bars.rows:
        failed = f" · {row['failed']} failed" if row["failed"] else ""
        assert (
            close(row["valid_rate"], row["valid"] / row["decisions"])
            and row["label"] == f"{row['valid']} of {row['decisions']}{failed}"
        )

    bars, whiskers, counts = panel(spec, "Validity per model or agent (with 95% intervals)")
    assert (bars.mark, whiskers.mark, counts.mark) == ("bar", "rule", "text")
    assert (whiskers.fields["x"], whiskers.fields["x2"]) == ("ci_low", "ci_high")
    assert (bars.fields["x"], bars.fields["y"]) == ("validity", "row")
    per_game = con.execute(
        "SELECT format, coalesce(model, agent_id, '(unknown)') AS who, "
        "CASE WHEN game_id IS NULL THEN 'file ' || source_id ELSE game_id END, count(*), "
        "count(*) FILTER (WHERE valid) FROM decisions WHERE outcome <> 'failed' GROUP BY ALL"
    ).fetchall()  # answered
    per_who: dict[tuple, list] = {}
    for fmt, who, _, n, valid in per_game:
        per_who.setdefault((fmt, who), []).append((n, valid))
    drawn = {(r["format"], r["model"]): r for r in bars.rows}
    assert len(drawn) == len(bars.rows)
    for fmt in {fmt for fmt, _ in per_who}:
        mine = [(who, sum(n for n, _ in games), games) for (f, who), games in per_who.items() if f == fmt]
        # the 12 busiest of each format, their names made safe for markup and shortened
        busiest = sorted(mine, key=lambda m: (-m[1], m[0]))[:12]
        assert {who for f, who in drawn if f == fmt} == {shown(who) for who, _, _ in busiest}, fmt
        for who, n, games in busiest:
            row, valid = drawn[(fmt, shown(who))], sum(v for _, v in games)
            assert (row["decisions"], row["valid"], row["games"]) == (n, valid, len(games))
            assert close(row["validity"], valid / n)
            # the 95% interval clustered by game, written out by hand
            pool = [(other, v, m) for (f, other), played in per_who.items() if f == fmt for m, v in played]
            _, (low, high) = clustered_by_hand([v for _, v in games], [m for m, _ in games], pool)
            assert close(row["ci_low"], low, 1e-9) and close(row["ci_high"], high, 1e-9)
            assert row["row"] == f"{fmt} · {shown(who)}" and row["label"] == f"n={n}"

    [rules] = panel(spec, "Most frequent violation rules") if _has_rules(con) else [None]
    if rules is not None:
        assert (rules.mark, rules.fields["x"], rules.aggregates["x"], rules.fields["y"]) == (
            "bar",
            "violations",
            "sum",
            "rule",
        )
        found = con.execute(
            "SELECT s.format, v.rule, count(*) FROM violations v JOIN sources s USING (source_id) "
            "WHERE v.severity IN ('error', 'warning') AND s.format IN (SELECT format FROM decisions) "
            "GROUP BY ALL"
        ).fetchall()
        totals = {}
        for _, rule, n in found:
            totals[rule] = totals.get(rule, 0) + n
        top = sorted(totals, key=lambda rule: (-totals[rule], rule))[:15]
        assert {r["rule"] for r in rules.rows} == set(top)
        assert sorted((r["format"], r["rule"], r["violations"]) for r in rules.rows) == sorted(
            (fmt, rule, n) for fmt, rule, n in found if rule in top
        )


def shown(name: str) -> str:
    """A name from a log as a figure shows it: no angle brackets (they could end the
    HTML export's <script>), whitespace collapsed, at most 40 characters."""
    text = " ".join(name.split()).replace("<", "\u2039").replace(">", "\u203a")
    return text if len(text) <= 40 else text[:39] + "\u2026"


def _has_rules(con) -> bool:
    return (
        con.execute(
            "SELECT count(*) FROM violations v JOIN sources s USING (source_id) WHERE v.severity IN ('error', "
            "'warning') AND s.format IN (SELECT format FROM decisions)"
        ).fetchone()[0]
        > 0
    )
