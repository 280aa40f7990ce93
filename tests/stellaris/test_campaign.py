"""The synthetic campaign: its quirks, its manifest, and the economy figure it becomes."""

import hashlib
import random
import zipfile
from pathlib import Path

import duckdb
import pytest

import workbench
from tests.conftest import rows
from tests.figures import assert_rendered, check_economy, spec_of
from workbench.errors import WorkbenchError
from workbench.plots import economy_nets, save
from workbench.stellaris import clausewitz, synth
from workbench.stellaris.summary import summary


@pytest.fixture(scope="module")
def ingested(campaign_dir, tmp_path_factory):
    out, entries = campaign_dir
    db = tmp_path_factory.mktemp("db") / "w.duckdb"
    report = workbench.ingest([out], db=db)
    return db, report, entries


def test_a_folder_of_autosaves_becomes_a_twelve_point_series(ingested, campaign):
    db, report, _ = ingested
    assert not report.failed
    series = rows(
        db,
        "SELECT series, count(*), count(DISTINCT day) FROM stellaris_snapshots WHERE origin = 'save' GROUP BY series",
    )
    assert series == [(campaign.slug, 12, 12)]
    energy = rows(
        db,
        "SELECT r.game_date, r.net FROM stellaris_resources r JOIN stellaris_snapshots s "
        "USING (source_id, locator) WHERE s.origin = 'save' AND r.resource = 'energy' ORDER BY r.day",
    )
    assert [date for date, _ in energy] == [state.date for state in campaign.states]
    assert [net for _, net in energy] == pytest.approx([state.net["energy"] for state in campaign.states], abs=0.01)
    assert any(net < 0 for _, net in energy) and any(net > 0 for _, net in energy)
    assert rows(db, "SELECT count(DISTINCT resource) FROM stellaris_resources")[0][0] >= 15


def test_every_manifest_fault_is_found_where_it_was_put(ingested):
    db, _, entries = ingested
    found = set(
        rows(
            db,
            "SELECT s.path, v.locator, v.field, v.rule FROM violations v JOIN sources s "
            "USING (source_id) WHERE v.severity = 'error'",
        )
    )
    expected = {
        (entry["path"], fault["locator"], fault["field"], fault["rule"])
        for entry in entries
        for fault in entry["faults"]
    }
    assert expected and found == expected


def test_the_real_world_drift_is_reported_as_info(ingested):
    db, _, _ = ingested
    drift = set(rows(db, "SELECT locator, field, rule FROM violations WHERE severity = 'info'"))
    assert {
        ("tool get_planets", "total_pops", "undocumented_key"),
        ("tool get_resources", "monthly_net", "undocumented_key"),
        ("tool get_armies", "(record)", "unknown_tool"),
        ("bundle", "generated_at", "undocumented_key"),
    } <= drift
    assert ("undocumented_value",) in set(rows(db, "SELECT rule FROM violations WHERE locator = 'tool get_leaders'"))


def test_every_file_is_counted_and_every_record_kept(ingested):
    db, report, entries = ingested
    assert len(report.files) == len(entries) and all(f.status == "ingested" for f in report.files)
    for file in report.files:
        stored = rows(db, "SELECT records, rejected FROM sources WHERE source_id = ?", [file.source_id])[0]
        rejects = rows(db, "SELECT count(*) FROM rejects WHERE source_id = ?", [file.source_id])[0][0]
        assert stored == (file.records, file.rejected) and rejects == file.rejected
        if file.path.endswith(".sav"):
            assert (file.records, file.rejected) == (1, 0)


def test_saves_have_the_real_structure(campaign_dir, campaign):
    out, _ = campaign_dir
    path = out / campaign.slug / f"autosave_{campaign.states[5].date}.sav"
    with zipfile.ZipFile(path) as archive:
        assert [i.filename for i in archive.infolist()] == ["meta", "gamestate"]
        assert {i.date_time for i in archive.infolist()} == {(1980, 1, 1, 0, 0, 0)}
        text = archive.read("gamestate")
    assert not text.startswith(b"{") and b"\nplayer=\n{\n\t\n\t{\n" in text
    assert b'trait="trait_quick_learners"\n\t\t\ttrait="trait_talented"' in text  # repeated keys
    assert b"=none\n" in text and b"4294967295" in text and b'key="%ADJECTIVE%"' in text
    assert b"\n560=\n" in text and b"_planets\n=0" in text  # the corpus' indentation quirks
    document = clausewitz.parse(text)
    [player] = document["player"]
    assert player["country"] == campaign.player_id != 0 and "0" in document["country"]


def test_the_same_seed_gives_the_same_bytes(tmp_path):
    def digest(folder):
        entries = synth.generate(folder, 1, random.Random("same"))
        return {
            Path(e["path"]).relative_to(folder).as_posix(): hashlib.sha256(Path(e["path"]).read_bytes()).hexdigest()
            for e in entries
        }

    first, second = digest(tmp_path / "a"), digest(tmp_path / "b")
    assert first == second and len(first) >= 12 + 1
    assert digest(tmp_path / "c") == first
    other = synth.generate(tmp_path / "d", 1, random.Random("other"))
    saves = {hashlib.sha256(Path(e["path"]).read_bytes()).hexdigest() for e in other if e["path"].endswith(".sav")}
    assert len(saves) == 12 and saves.isdisjoint(first.values())


def test_scale_multiplies_campaigns(tmp_path):
    entries = synth.generate(tmp_path, 2, random.Random("scale"))
    saves = [e for e in entries if e["path"].endswith(".sav")]
    assert len(saves) == 24 and len({Path(e["path"]).parent for e in saves}) == 2
    assert all(e["format"] == "stellaris" and Path(e["path"]).is_relative_to(tmp_path) for e in entries)


def test_economy_figure_from_the_campaign(ingested, campaign, tmp_path):
    db, _, _ = ingested
    con = duckdb.connect(str(db), read_only=True)
    try:
        chart = economy_nets(con)
        spec = chart.to_dict()
        values = check_economy(spec, con)
        assert {v["resource"] for v in values} >= {"energy", "alloys", "consumer_goods"}
        assert any(v["deficit"] for v in values)
        # The saves' energy line is the campaign's own story, month by month.
        energy = sorted(
            (v["day"], v["game_date"], v["net"], v["deficit"])
            for v in values
            if (v["series"], v["origin"], v["resource"]) == (campaign.slug, "save", "energy")
        )
        assert [date for _, date, _, _ in energy] == [state.date for state in campaign.states]
        assert [net for _, _, net, _ in energy] == pytest.approx(
            [state.net["energy"] for state in campaign.states], abs=0.01
        )
        assert [deficit for *_, deficit in energy] == [state.net["energy"] < 0 for state in campaign.states]
        for suffix in (".png", ".svg"):
            assert_rendered(save(chart, tmp_path / f"economy{suffix}"))
        assert spec_of(save(chart, tmp_path / "economy.html"))["datasets"] == spec["datasets"]
        folder = str(Path(rows_path(db)).parent)
        picked = check_economy(
            economy_nets(con, resources=["energy"], source=folder).to_dict(),
            con,
            series=campaign.slug,
            resources=["energy"],
        )
        assert {(v["series"], v["origin"], v["resource"]) for v in picked} == {(campaign.slug, "save", "energy")}
        assert len(picked) == len(campaign.states)
        with pytest.raises(WorkbenchError, match="no resource named gold"):
            economy_nets(con, resources=["gold"])
        assert summary(con) and all(line.startswith("stellaris ") for line in summary(con))
    finally:
        con.close()


def rows_path(db):
    return rows(db, "SELECT path FROM sources WHERE path LIKE '%.sav' LIMIT 1")[0][0]


def test_economy_figure_without_stellaris_data_says_so(tmp_path):
    con = workbench.connect(tmp_path / "empty.duckdb")
    try:
        with pytest.raises(WorkbenchError, match="no Stellaris economy in this database"):
            economy_nets(con)
    finally:
        con.close()
