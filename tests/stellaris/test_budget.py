"""Every country's budget lines (`stellaris_budget`), their queries and their charts.

On the corpus save, the expected lines come from a small brace scanner written here
(zipfile and regular expressions, never the workbench's parser or locator); on synthetic
saves, from the generator's own campaign (the budgets it wrote)."""

import random
import re
import zipfile

import duckdb
import polars as pl
import pytest

import workbench
from tests.conftest import rows
from tests.figures import assert_rendered, views
from tests.stellaris.conftest import CORPUS_PLAYER
from workbench.errors import WorkbenchError
from workbench.plots import save as save_chart
from workbench.plots.budget import TOP_CATEGORIES, budget_breakdown
from workbench.plots.economy import KEY_RESOURCES, economy_nets
from workbench.stellaris import queries, synth
from workbench.stellaris.synth_campaign import SAVES_PER_CAMPAIGN

# --- an independent reading of the corpus save ------------------------------------------------

STRING_OR_BRACE = re.compile(rb'"(?:[^"\\]|\\.)*"|[{}]')
KEYED_BLOCK = re.compile(rb'"(?:[^"\\]|\\.)*"|([A-Za-z0-9_.]+)[ \t\r\n]*=[ \t\r\n]*\{|[{}]')
AMOUNT = re.compile(rb"([A-Za-z0-9_]+)[ \t\r\n]*=[ \t\r\n]*(-?\d+(?:\.\d+)?)\b")


def block_end(data: bytes, start: int) -> int:
    """The byte after the `}` that closes the block opening at `start`."""
    depth = 0
    for match in STRING_OR_BRACE.finditer(data, start):
        if match.group() == b"{":
            depth += 1
        elif match.group() == b"}":
            depth -= 1
            if depth == 0:
                return match.end()
    raise AssertionError(f"the block at byte {start} never closes")


def blocks_in(data: bytes, span: tuple[int, int]) -> dict[str, list[tuple[int, int]]]:
    """The `key={...}` blocks directly inside the block `span`, every one of each key."""
    found: dict[str, list[tuple[int, int]]] = {}
    position, depth, end = span[0] + 1, 0, span[1] - 1
    while (match := KEYED_BLOCK.search(data, position, end)) is not None:
        position = match.end()
        if match.group(1) is not None and depth == 0:
            opened = match.end() - 1
            position = block_end(data, opened)
            found.setdefault(match.group(1).decode(), []).append((opened, position))
        elif match.group() == b"{" or match.group(1) is not None:
            depth += 1
        elif match.group() == b"}":
            depth -= 1
    return found


def top_level_block(data: bytes, key: bytes) -> tuple[int, int]:
    for match in re.finditer(rb"(?m)^" + key + rb"[ \t]*=[ \t\r\n]*\{", data):
        if data.count(b"{", 0, match.start()) == data.count(b"}", 0, match.start()):
            opened = match.end() - 1
            return opened, block_end(data, opened)
    raise AssertionError(f"no top-level {key!r}")


def scalar_in(data: bytes, span: tuple[int, int], key: bytes) -> bytes | None:
    """The first `key="..."` directly inside `span` (brace balance 1 from its start)."""
    for match in re.finditer(rb"\b" + key + rb'="([^"]*)"', data[span[0] : span[1]]):
        at = span[0] + match.start()
        if data.count(b"{", span[0], at) - data.count(b"}", span[0], at) == 1:
            return match.group(1)
    return None


def corpus_budgets(gamestate: bytes) -> dict[int, dict]:
    """Per country id: its `type` and its current month's lines summed per (category,
    resource) as [income, expenses]."""
    country = top_level_block(gamestate, b"country")
    budgets = {}
    for key, [entry, *_] in blocks_in(gamestate, country).items():
        lines: dict[tuple[str, str], list[float]] = {}
        for budget in blocks_in(gamestate, entry).get("budget", [])[:1]:
            for month in blocks_in(gamestate, budget).get("current_month", [])[:1]:
                sides = blocks_in(gamestate, month)
                for side, column in (("income", 0), ("expenses", 1)):
                    for part in sides.get(side, []):
                        for category, spans in blocks_in(gamestate, part).items():
                            for start, end in spans:
                                for resource, amount in AMOUNT.findall(gamestate[start:end]):
                                    line = lines.setdefault((category, resource.decode()), [0.0, 0.0])
                                    line[column] += float(amount)
        kind = scalar_in(gamestate, entry, b"type")
        budgets[int(key)] = {"type": kind.decode() if kind else None, "lines": lines}
    return budgets


@pytest.fixture(scope="module")
def corpus(corpus_save, tmp_path_factory):
    """(database with the corpus save, the scanner's budgets, the meta's name)."""
    with zipfile.ZipFile(corpus_save) as archive:
        gamestate, meta = archive.read("gamestate"), archive.read("meta")
    db = tmp_path_factory.mktemp("corpus") / "w.duckdb"
    [file] = workbench.ingest([corpus_save], db=db).files
    assert file.status == "ingested", file.message
    name = re.search(rb'(?m)^name="([^"]*)"', meta).group(1).decode()
    return db, corpus_budgets(gamestate), name


def stored_lines(db, country_id) -> dict[tuple[str, str], tuple[float, float]]:
    return {
        (c, r): (i, e)
        for c, r, i, e in rows(
            db, "SELECT category, resource, income, expenses FROM stellaris_budget WHERE country_id = ?", [country_id]
        )
    }


def test_corpus_budget_lines_equal_an_independent_scan(corpus):
    db, scanned, _ = corpus
    empires = [cid for cid, found in scanned.items() if found["type"] == "default" and cid != CORPUS_PLAYER]
    assert len(empires) >= 2
    for country_id in [CORPUS_PLAYER, *empires]:
        expected = scanned[country_id]["lines"]
        stored = stored_lines(db, country_id)
        assert expected and stored.keys() == expected.keys(), country_id
        for key, (income, expenses) in expected.items():
            assert stored[key] == pytest.approx((income, expenses), abs=1e-9), (country_id, key)


def test_corpus_every_country_with_lines_is_kept_with_its_type(corpus):
    db, scanned, _ = corpus
    with_lines = {cid for cid, found in scanned.items() if found["lines"]}
    stored = dict(rows(db, "SELECT DISTINCT country_id, country_type FROM stellaris_budget"))
    assert stored.keys() == with_lines
    assert stored == {cid: scanned[cid]["type"] for cid in with_lines}
    # fallen empires and other kinds of country are kept, told apart by their type
    assert {"default", "fallen_empire", "enclave"} <= set(stored.values())
    lines = rows(db, "SELECT count(*), count(DISTINCT country_id) FROM stellaris_budget")[0]
    assert lines[0] == sum(len(scanned[cid]["lines"]) for cid in with_lines) and lines[1] == len(with_lines)


def test_corpus_player_totals_equal_stellaris_resources(corpus):
    db, _, name = corpus
    compared = rows(
        db,
        """
        SELECT r.resource, r.income, r.expenses, coalesce(b.income, 0), coalesce(b.expenses, 0)
        FROM stellaris_resources r LEFT JOIN (
            SELECT resource, sum(income) AS income, sum(expenses) AS expenses FROM stellaris_budget
            WHERE is_player GROUP BY resource) b USING (resource)""",
    )
    assert len(compared) >= 15
    for resource, income, expenses, line_income, line_expenses in compared:
        assert (line_income, line_expenses) == pytest.approx((income, expenses), abs=1e-4), resource
    players = rows(
        db, "SELECT DISTINCT country_id, country_name, series, game_date FROM stellaris_budget WHERE is_player"
    )
    assert players == [(CORPUS_PLAYER, name, "stellaris", "2312.01.01")]


SIMPLE_ADJECTIVE = re.compile(
    rb'^\{\s*key="%ADJECTIVE%"\s*variables=\s*\{\s*'
    rb'\{\s*key="adjective"\s*value=\s*\{\s*key="([A-Za-z]+)_([A-Za-z]+)"\s*\}\s*\}\s*'
    rb'\{\s*key="1"\s*value=\s*\{\s*key="([A-Za-z]+)"\s*\}\s*\}\s*\}\s*\}$'
)


def test_corpus_ai_names_are_read_from_their_templates(corpus_save, corpus):
    """An `%ADJECTIVE%` name whose variables are plain keys (`SPEC_Tycan`, `Nation`) reads
    as the adjective's own word and the noun: "Tycan Nation"."""
    db, _, _ = corpus
    with zipfile.ZipFile(corpus_save) as archive:
        gamestate = archive.read("gamestate")
    expected = {}
    for key, [entry, *_] in blocks_in(gamestate, top_level_block(gamestate, b"country")).items():
        for start, end in blocks_in(gamestate, entry).get("name", [])[:1]:
            if match := SIMPLE_ADJECTIVE.match(gamestate[start:end]):
                expected[int(key)] = f"{match.group(2).decode()} {match.group(3).decode()}"
    names = dict(rows(db, "SELECT DISTINCT country_id, country_name FROM stellaris_budget WHERE NOT is_player"))
    others = {cid: text for cid, text in expected.items() if cid != CORPUS_PLAYER}
    assert len(others) >= 3 and {cid: names[cid] for cid in others} == others
    assert all(name and "%" not in name and "{" not in name for name in names.values())


def test_corpus_breakdown_sums_to_the_scanned_totals(corpus):
    db, scanned, _ = corpus
    con = duckdb.connect(str(db), read_only=True)
    try:
        snapshot, bars = queries.breakdown_bars(con, resources=["energy"], top=TOP_CATEGORIES)
    finally:
        con.close()
    lines = scanned[CORPUS_PLAYER]["lines"]
    income = sum(i for (_, r), (i, _) in lines.items() if r == "energy")
    expenses = sum(e for (_, r), (_, e) in lines.items() if r == "energy")
    assert snapshot["country_id"] == CORPUS_PLAYER
    by_side = {side: bars.filter(bars["side"] == side) for side in ("income", "expenses")}
    assert by_side["income"]["amount"].sum() == pytest.approx(income, abs=1e-6)
    assert by_side["expenses"]["amount"].sum() == pytest.approx(-expenses, abs=1e-6)
    # the corpus empire pays energy to many categories: the smallest are summed as `other`
    spent = by_side["expenses"]
    assert len(spent) == TOP_CATEGORIES + 1 and spent["category"].to_list()[-1] == "other"
    paying = sum(1 for (_, r), (_, e) in lines.items() if r == "energy" and e > 0)
    assert spent["lines"].sum() == paying > TOP_CATEGORIES + 1
    assert bars["net"].unique().to_list() == [pytest.approx(income - expenses, abs=1e-6)]


# --- synthetic saves: the generator's budgets are the expected values ---------------------------


def generated_lines(campaign, state, country_id) -> dict[tuple[str, str], tuple[float, float]]:
    """The lines the generator wrote for a country at a state: (category, resource) ->
    (income, expenses), 0 on the side that does not name the resource."""
    if country_id == campaign.player_id:
        income, expenses = state.income, state.expenses
    else:
        income, expenses = synth.rival_budget(campaign, country_id, state)
    lines: dict[tuple[str, str], list[float]] = {}
    for column, part in enumerate((income, expenses)):
        for category, amounts in part.items():
            for resource, amount in amounts.items():
                lines.setdefault((category, resource), [0.0, 0.0])[column] += amount
    return {key: tuple(value) for key, value in lines.items()}


def generated_net(campaign, state, country_id, resource) -> float:
    lines = generated_lines(campaign, state, country_id)
    return sum(i - e for (_, r), (i, e) in lines.items() if r == resource)


def rival_names(campaign) -> dict[int, str]:
    """How the game shows each rival's `%ADJECTIVE%` name: the species, then the noun."""
    names = {}
    for number, (country_id, species) in enumerate(campaign.rivals.items()):
        template = synth.rival_name(campaign, number, species)
        noun = next(v["value"]["key"] for v in template["variables"] if v["key"] == "1")
        names[country_id] = f"{species} {noun}"
    return names


@pytest.fixture(scope="module")
def campaign_db(campaign_dir, campaign, tmp_path_factory):
    """The campaign's twelve autosaves, ingested."""
    out, _ = campaign_dir
    db = tmp_path_factory.mktemp("budget") / "w.duckdb"
    report = workbench.ingest([out / campaign.slug], db=db)
    assert [f.status for f in report.files] == ["ingested"] * SAVES_PER_CAMPAIGN
    return db


@pytest.fixture
def con(campaign_db):
    connection = duckdb.connect(str(campaign_db), read_only=True)
    yield connection
    connection.close()


def test_countries_are_the_empires_with_budget_lines(con, campaign):
    found = queries.countries(con)
    assert set(found["country_id"]) == {campaign.player_id, *campaign.rivals}  # not 44 (no amount), 45 (no budget)
    assert found["is_player"].to_list() == [True] + [False] * len(campaign.rivals)  # the player first
    assert found.row(0, named=True)["country_name"] == campaign.empire_name  # as the save's meta names it
    names = dict(zip(found["country_id"], found["country_name"]))
    assert {cid: names[cid] for cid in campaign.rivals} == rival_names(campaign)
    types = dict(zip(found["country_id"], found["country_type"]))
    assert types[synth.FALLEN_EMPIRE] == "fallen_empire"
    assert {types[cid] for cid in found["country_id"] if cid != synth.FALLEN_EMPIRE} == {"default"}
    assert set(found["snapshots"]) == {SAVES_PER_CAMPAIGN}
    assert set(found["first_date"]) == {campaign.states[0].date}
    assert set(found["last_date"]) == {campaign.states[-1].date}


def test_budget_lines_equal_the_generated_budgets(con, campaign):
    for state in (campaign.states[0], campaign.states[5], campaign.states[-1]):
        for country_id in (campaign.player_id, *campaign.rivals):
            lines = queries.budget_lines(con, country=country_id, date=state.date)
            stored = {(r["category"], r["resource"]): (r["income"], r["expenses"]) for r in lines.iter_rows(named=True)}
            expected = generated_lines(campaign, state, country_id)
            assert stored.keys() == expected.keys(), (state.date, country_id)
            for key, amounts in expected.items():
                assert stored[key] == pytest.approx(amounts, abs=1e-6), (state.date, country_id, key)
            assert (lines["balance"] - (lines["income"] - lines["expenses"])).abs().max() < 1e-9


def test_budget_lines_filters(con, campaign):
    rival = next(iter(rival_names(campaign).items()))
    by_name = queries.budget_lines(con, country=rival[1].upper(), resources="energy")  # names match case aside
    assert set(by_name["country_id"]) == {rival[0]} and set(by_name["resource"]) == {"energy"}
    assert by_name["game_date"].n_unique() == SAVES_PER_CAMPAIGN
    everyone = queries.budget_lines(con, date=campaign.states[3].date)
    assert set(everyone["country_id"]) == {campaign.player_id, *campaign.rivals}
    assert queries.budget_lines(con, date="1999.01.01").is_empty()
    assert queries.budget_lines(con, resources=["no_such_resource"]).is_empty()


def test_country_nets_sum_the_lines_of_each_country(con, campaign):
    chosen = list(rival_names(campaign).values())[:2]
    nets = queries.country_nets(con, chosen, ["energy", "alloys"])
    ids = [cid for cid, name in rival_names(campaign).items() if name in chosen]
    assert set(nets["country_id"]) == set(ids)  # the player only when asked for
    assert len(nets) == len(ids) * 2 * SAVES_PER_CAMPAIGN
    states = {state.date: state for state in campaign.states}
    for row in nets.iter_rows(named=True):
        expected = generated_net(campaign, states[row["game_date"]], row["country_id"], row["resource"])
        assert row["net"] == pytest.approx(expected, abs=1e-6), row
        assert row["deficit"] == (row["net"] < 0) and row["year"] == pytest.approx(row["day"] / 360)
    with_player = queries.country_nets(con, chosen, "energy", with_player=True)
    assert set(with_player["country_id"]) == {campaign.player_id, *ids}
    assert set(with_player.filter(with_player["is_player"])["country"]) == {f"{campaign.empire_name} (player)"}
    assert set(queries.country_nets(con, resources="energy")["country_id"]) == {campaign.player_id, *campaign.rivals}


def test_country_nets_points_per_line_are_bounded_both_ways(con, campaign):
    few = queries.country_nets(con, [0], "energy", max_points=4)
    assert 2 <= len(few) <= 5  # buckets of days: about 4 points, never one per save
    # 12 yearly saves span 11 * 360 + 1 days: buckets of a quarter of that, counted from day 0
    width = -(-(11 * 360 + 1) // 4)
    first_bucket = few.row(0, named=True)
    held = [s for s in campaign.states if int(s.date[:4]) * 360 // width == first_bucket["day"] // width]
    assert 1 <= len(held) < SAVES_PER_CAMPAIGN
    assert first_bucket["net"] == pytest.approx(
        sum(generated_net(campaign, s, 0, "energy") for s in held) / len(held), abs=1e-6
    )
    assert len(queries.country_nets(con, [0], "energy", max_points=400)) == SAVES_PER_CAMPAIGN


def test_an_unknown_country_is_a_one_line_error(con):
    for unknown in ("No Such Empire", 987654, ["Nope"]):
        with pytest.raises(WorkbenchError) as raised:
            queries.country_nets(con, unknown)
        message = str(raised.value)
        assert "\n" not in message and "no country" in message and "known:" in message
    with pytest.raises(WorkbenchError, match="not True"):
        queries.country_ids(con, [True])


# --- the charts ------------------------------------------------------------------------------


def line_rows(spec: dict) -> list[dict]:
    [line] = [v for v in views(spec) if v.mark == "line"]
    return line.rows, line


def test_economy_nets_compares_the_player_with_chosen_countries(con, campaign, tmp_path):
    names = rival_names(campaign)
    rival_a, rival_b = list(names)[:2]
    chart = economy_nets(con, ["energy", "alloys"], countries=[names[rival_a], rival_b])
    spec = chart.to_dict()
    drawn, line = line_rows(spec)
    assert line.fields["color"] == "country"
    labels = {row["country"] for row in drawn}
    assert labels == {f"{campaign.empire_name} (player)", names[rival_a], names[rival_b]}
    states = {state.date: state for state in campaign.states}
    for row in drawn:
        expected = generated_net(campaign, states[row["game_date"]], row["country_id"], row["resource"])
        assert row["net"] == pytest.approx(expected, abs=1e-6)
    assert len(drawn) == 3 * 2 * SAVES_PER_CAMPAIGN
    assert_rendered(save_chart(chart, tmp_path / "nets.svg"))


def test_economy_nets_without_countries_is_one_line_per_series(con):
    drawn, line = line_rows(economy_nets(con, "energy").to_dict())
    assert (line.fields["color"], line.fields["strokeDash"]) == ("series", "origin")
    assert "country" not in drawn[0] and len(drawn) == SAVES_PER_CAMPAIGN


def test_economy_nets_unknown_country(con):
    with pytest.raises(WorkbenchError, match="no country named 'Atlantis'") as raised:
        economy_nets(con, countries=["Atlantis"])
    assert "\n" not in str(raised.value)


def breakdown_rows(chart) -> tuple[dict, list[dict]]:
    spec = chart.to_dict()
    [bars] = [v for v in views(spec) if v.mark == "bar"]
    assert (bars.fields["x"], bars.fields["y"], bars.fields["color"]) == ("side", "amount", "category")
    assert spec["facet"]["field"] == "resource"
    return spec, bars.rows


def test_budget_breakdown_of_the_player_at_the_latest_save(con, campaign, tmp_path):
    chart = budget_breakdown(con, resources="all")
    spec, drawn = breakdown_rows(chart)
    latest = campaign.states[-1]
    title = spec["title"]["text"]
    assert campaign.empire_name in title and latest.date in title
    expected = generated_lines(campaign, latest, campaign.player_id)
    for resource in {r for _, r in expected}:
        income = sum(i for (_, r), (i, _) in expected.items() if r == resource)
        expenses = sum(e for (_, r), (_, e) in expected.items() if r == resource)
        mine = [row for row in drawn if row["resource"] == resource]
        assert sum(row["amount"] for row in mine if row["side"] == "income") == pytest.approx(income, abs=1e-6)
        assert sum(row["amount"] for row in mine if row["side"] == "expenses") == pytest.approx(-expenses, abs=1e-6)
        assert [row["net"] for row in mine] == [pytest.approx(income - expenses, abs=1e-6)] * len(mine)
    # the generator spreads a resource over at most 3 categories per side: all named in
    # their panels, and the 12 largest of all in the legend
    assert {(row["category"], row["resource"]) for row in drawn if row["category"] != "other"} <= set(expected)
    assert len({row["category"] for row in drawn} - {"other"}) == 12
    assert_rendered(save_chart(chart, tmp_path / "breakdown.svg"))


def test_budget_breakdown_of_a_rival_at_a_date(con, campaign):
    rival_id, name = next(iter(rival_names(campaign).items()))
    first = campaign.states[0]
    _, drawn = breakdown_rows(budget_breakdown(con, country=name, resources=["energy", "minerals"], date=first.date))
    assert {row["resource"] for row in drawn} == {"energy", "minerals"}
    expected = generated_lines(campaign, first, rival_id)
    for row in drawn:
        income, expenses = expected[(row["category"], row["resource"])]
        assert row["amount"] == pytest.approx(income if row["side"] == "income" else -expenses, abs=1e-6)
    by_id = breakdown_rows(budget_breakdown(con, country=rival_id, resources=["energy", "minerals"], date=first.date))
    strip = lambda found: [{k: v for k, v in row.items() if k != "net"} for row in found]  # noqa: E731
    assert strip(by_id[1]) == strip(drawn)  # the same country by id (nets summed in any order)


@pytest.mark.parametrize("top", [1, 2, 3])
def test_breakdown_names_the_top_categories_and_sums_the_rest(con, campaign, top):
    """A side with at most `top` + 1 categories has them all named (`other` would stand
    for one); with more, the `top` largest are named and the rest summed as `other`."""
    snapshot, bars = queries.breakdown_bars(con, top=top)
    expected = generated_lines(campaign, campaign.states[-1], campaign.player_id)
    assert snapshot["country_id"] == campaign.player_id and snapshot["game_date"] == campaign.states[-1].date
    lumped = 0
    for (resource, side), group in bars.group_by(["resource", "side"]):
        column = 0 if side == "income" else 1
        amounts = sorted((a[column] for (_, r), a in expected.items() if r == resource and a[column] > 0), reverse=True)
        named = group.filter(group["category"] != "other")
        if len(amounts) <= top + 1:
            assert len(named) == len(group) == len(amounts) and group["lines"].to_list() == [1] * len(amounts)
        else:
            lumped += 1
            other = group.filter(group["category"] == "other")
            assert len(named) == top and other["lines"].to_list() == [len(amounts) - top]
            assert other["amount"].to_list() == [pytest.approx(sum(amounts[top:]) * (1 if column == 0 else -1))]
        assert sorted(named["amount"].abs().to_list(), reverse=True) == pytest.approx(amounts[: len(named)])
    # the generator spreads a resource over 1 to 3 categories per side: only top 1 lumps
    assert (lumped > 0) == (top == 1)


@pytest.mark.parametrize(
    "arguments, message",
    [
        ({"country": "No Such Empire"}, "no country named 'No Such Empire'"),
        ({"date": "1999.01.01"}, "no budget of the player on '1999.01.01'; its dates: "),
        ({"resources": ["no_such_resource"]}, "nothing to plot"),
    ],
)
def test_budget_breakdown_says_why_there_is_nothing_to_plot(con, arguments, message):
    with pytest.raises(WorkbenchError, match=re.escape(message)) as raised:
        budget_breakdown(con, **arguments)
    assert "\n" not in str(raised.value)


def test_an_empty_database_has_nothing_to_plot(tmp_path):
    con = workbench.connect(tmp_path / "empty.duckdb")
    try:
        assert queries.countries(con).is_empty()
        with pytest.raises(WorkbenchError, match="only saves hold"):
            budget_breakdown(con)
        with pytest.raises(WorkbenchError, match="no country budgets in this database"):
            economy_nets(con, countries=["Anyone"])
    finally:
        con.close()


def test_extractor_outputs_give_no_budget_lines(campaign_dir, campaign, tmp_path):
    """Extractor outputs hold per-resource totals, no categories: the player's totals go
    to stellaris_resources, nothing to stellaris_budget."""
    out, _ = campaign_dir
    db = tmp_path / "w.duckdb"
    workbench.ingest([out / f"{campaign.slug}_extractor", out / f"{campaign.slug}_history.db"], db=db)
    assert rows(db, "SELECT count(*) FROM stellaris_resources")[0][0] > 0
    assert rows(db, "SELECT count(*) FROM stellaris_budget") == [(0,)]


# --- a country whose budget cannot be read ------------------------------------------------------


def test_an_unreadable_ai_budget_is_reported_and_the_save_still_loads(campaign, tmp_path):
    state = campaign.states[2]
    text = synth.gamestate(campaign, state, random.Random("broken"), [])
    entry = text.index("\n\t12=\n\t{")
    income = text.index("\t\t\t\tincome=\n\t\t\t\t{\n", entry) + len("\t\t\t\tincome=\n\t\t\t\t{\n")
    text = text[:income] + "\t\t\t\t\tbroken=\n" + text[income:]  # `broken=none=...`: an `=` without a key
    path = tmp_path / "autosave_2203.01.01.sav"
    synth.write_save(path, synth.meta(campaign, state), text)
    [file] = workbench.ingest([path], db=tmp_path / "w.duckdb").files
    assert file.status == "ingested" and file.records == 1
    [finding] = [v for v in file.violations if v.rule == "unreadable_budget"]
    assert (finding.locator, finding.severity, finding.field) == ("country 12", "warning", "budget.current_month")
    countries = {cid for (cid,) in rows(tmp_path / "w.duckdb", "SELECT DISTINCT country_id FROM stellaris_budget")}
    assert countries == {campaign.player_id, *campaign.rivals} - {12}


def test_the_economy_figure_shows_key_and_deficit_resources_first_and_all_on_request(con):
    from workbench.plots import economy_nets

    known = sorted(r for (r,) in con.execute("SELECT DISTINCT resource FROM stellaris_resources").fetchall())
    first = economy_nets(con).to_dict()
    every = economy_nets(con, resources="all").to_dict()
    drawn = {r["resource"] for r in views(every)[1].rows}
    assert drawn == set(known) and len(known) > 8
    shown = {r["resource"] for r in views(first)[1].rows}
    assert shown < drawn and {"energy", "minerals", "alloys"} <= shown
    assert first["title"]["subtitle"][1].startswith(f"{len(drawn - shown)} more resources")
    # beyond 4 panels, the grid of 3, 4 or 5 columns with the fewest empty cells, 4 first on a tie
    empty = {columns: -len(known) % columns for columns in (4, 3, 5)}
    assert every["columns"] == min(empty, key=empty.get)
    one = economy_nets(con, resources=["energy"]).to_dict()
    assert one["columns"] == 1


def test_budget_breakdown_shows_the_key_resources_first(con):
    _, drawn = breakdown_rows(budget_breakdown(con))
    budgeted = {r for (r,) in con.execute("SELECT DISTINCT resource FROM stellaris_budget WHERE is_player").fetchall()}
    key = {"energy", "minerals", "food", "alloys", "consumer_goods", "unity", "influence", "trade"}
    assert {row["resource"] for row in drawn} == key & budgeted and budgeted - key


# --- one colour per category ------------------------------------------------------------


@pytest.fixture(scope="module")
def sample_con(sample, tmp_path_factory):
    """The demo's Stellaris files (seed 7): the player's budget names 19 categories among the key resources."""
    db = tmp_path_factory.mktemp("sample_budget") / "w.duckdb"
    workbench.ingest([sample / "stellaris"], db=db)
    connection = duckdb.connect(str(db), read_only=True)
    yield connection
    connection.close()


def category_colours(spec: dict) -> tuple[list[str], list[str]]:
    """The bars' colour scale: (domain, range)."""
    bars = next(layer for layer in spec["spec"]["layer"] if layer["mark"]["type"] == "bar")
    scale = bars["encoding"]["color"]["scale"]
    return scale["domain"], scale["range"]


def legend_by_hand(bars, most: int) -> set[str]:
    """The categories a legend of `most` names: those the panels name, largest first by
    their amounts summed over the panels (income and expenses alike), ties by name."""
    sizes = {}
    for row in bars.iter_rows(named=True):
        if row["category"] != "other":
            sizes[row["category"]] = sizes.get(row["category"], 0.0) + abs(row["amount"])
    return set(sorted(sizes, key=lambda name: (-sizes[name], name))[:most])


@pytest.mark.parametrize("resources", [None, "all"])
def test_a_legend_names_the_12_largest_categories_and_the_rest_join_other(sample_con, resources):
    """The demo's budget names 19 and more categories in its panels: the legend names 12,
    each in a colour of its own, and every panel's sides still sum to the budget's."""
    from workbench.plots.budget import LEGEND_MOST, OTHER_COLOR

    assert LEGEND_MOST == 12
    _, panels = queries.breakdown_bars(sample_con, resources=list(KEY_RESOURCES) if resources is None else None)
    assert panels.filter(pl.col("category") != "other")["category"].n_unique() > 12
    spec, drawn = breakdown_rows(budget_breakdown(sample_con, resources=resources))
    domain, colours = category_colours(spec)
    assert set(domain) == legend_by_hand(panels, 12) | {"other"} == {row["category"] for row in drawn}
    assert len(domain) == 13 and domain[-1] == "other"
    assert len(set(colours[:-1])) == 12 and colours[-1] == OTHER_COLOR and OTHER_COLOR not in colours[:-1]
    for (resource, side), group in panels.group_by(["resource", "side"]):
        mine = [row for row in drawn if row["resource"] == resource and row["side"] == side]
        assert sum(row["amount"] for row in mine) == pytest.approx(group["amount"].sum(), abs=1e-6)
        assert sum(row["lines"] for row in mine) == group["lines"].sum()
        others = [row for row in mine if row["category"] == "other"]
        assert len(others) <= 1 and all(row["rank"] == max(r["rank"] for r in drawn) for row in others)
    again = category_colours(budget_breakdown(sample_con, resources=resources).to_dict())
    assert dict(zip(*again)) == dict(zip(domain, colours))  # the same colour for a category every time


def test_a_legend_of_12_or_fewer_categories_is_drawn_as_the_panels_name_them(con):
    """The generated campaign's player names at most 12 categories for energy and
    minerals: nothing joins `other`."""
    _, panels = queries.breakdown_bars(con, resources=["energy", "minerals"])
    assert 1 < panels["category"].n_unique() <= 12 and "other" not in set(panels["category"])
    spec, drawn = breakdown_rows(budget_breakdown(con, resources=["energy", "minerals"]))
    assert sorted(category_colours(spec)[0]) == sorted(set(panels["category"]))
    assert len(drawn) == panels.height
