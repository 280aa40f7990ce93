"""Real saves: the corpus save, synthetic saves, and files that are not saves at all."""

import re
import struct
import zipfile
from pathlib import Path

import pytest

import workbench
from tests.conftest import rows
from tests.stellaris.conftest import CORPUS_PLAYER, synthetic_save, write_zip
from workbench.errors import UnreadableFile
from workbench.stellaris import save, save_zip
from workbench.stellaris.dates import day_number
from workbench.stellaris.reader import read_save


def balance_sums_by_lines(gamestate: bytes, player_id: int) -> dict[str, float]:
    """The game's own `balance` of the player's current month, summed per resource by
    reading lines, independently of the workbench's parser."""
    country = gamestate.index(b"\ncountry=\n{")
    start = gamestate.index(b"\n\t%d=\n\t{" % player_id, country)
    month = gamestate.index(b"\n\t\t\tcurrent_month=", start)
    balance = gamestate.index(b"\n\t\t\t\tbalance=", month)
    end = gamestate.index(b"\n\t\t\t\textra_income=", balance)
    sums: dict[str, float] = {}
    for resource, amount in re.findall(rb"\n\t{6}(\w+)=(-?[\d.]+)", gamestate[balance:end]):
        sums[resource.decode()] = sums.get(resource.decode(), 0.0) + float(amount)
    return sums


def test_corpus_save_snapshot(corpus_save):
    snapshot = save.read_snapshot(save_zip.open_save(corpus_save))
    assert snapshot.player_id == CORPUS_PLAYER
    assert snapshot.date == "2312.01.01"
    # the readable name is the save's meta name; the country's own template is kept beside it
    assert snapshot.empire_name == "United Nations of Earth 2"
    assert snapshot.empire_name_key == "%ADJECTIVE%"
    assert snapshot.outputs["get_wars"]["player_at_war"] and snapshot.outputs["get_wars"]["count"] == 2
    assert snapshot.outputs["get_player_status"]["colonies"]["total_population"] == 11120
    assert snapshot.violations == []


def test_corpus_save_nets_equal_the_games_own_balance(corpus_save, tmp_path):
    with zipfile.ZipFile(corpus_save) as archive:
        expected = balance_sums_by_lines(archive.read("gamestate"), CORPUS_PLAYER)
    db = tmp_path / "w.duckdb"
    report = workbench.ingest([corpus_save], db=db)
    [file] = report.files
    assert (file.status, file.records, file.rejected) == ("ingested", 1, 0)
    assert [v for v in file.violations if v.severity == "error"] == []
    nets = dict(rows(db, "SELECT resource, net FROM stellaris_resources WHERE net <> 0 OR income <> 0"))
    assert expected and set(expected) == set(nets)
    for resource, balance in expected.items():
        assert nets[resource] == pytest.approx(balance, abs=0.01), resource
    assert nets["energy"] < 0  # the corpus empire runs an energy deficit
    snapshot = rows(db, "SELECT player_id, game_date, day, series, origin FROM stellaris_snapshots")
    assert snapshot == [(CORPUS_PLAYER, "2312.01.01", day_number("2312.01.01"), "stellaris", "save")]
    stockpile = rows(db, "SELECT stockpile FROM stellaris_resources WHERE resource = 'minerals'")
    assert stockpile == [(19855.09442,)]


def test_derived_outputs_are_validated_and_stored(corpus_save):
    extraction = read_save(corpus_save, "corpus")
    assert {o["tool"]: o["valid"] for o in extraction.tool_outputs} == {
        "get_player_status": True,
        "get_resources": True,
        "get_wars": True,
    }


def test_the_player_is_read_by_id_not_as_country_zero(tmp_path):
    path, campaign = synthetic_save(tmp_path / "autosave.sav", state_index=3)
    snapshot = save.read_snapshot(save_zip.open_save(path))
    assert snapshot.player_id == campaign.player_id != 0
    assert snapshot.net == campaign.states[3].net  # country 0 has an economy of its own
    assert snapshot.empire_name == campaign.empire_name


def test_a_damaged_budget_and_a_foreign_planet_are_reported(tmp_path):
    path, campaign = synthetic_save(tmp_path / "broken_budget.sav", state_index=7)
    snapshot = save.read_snapshot(save_zip.open_save(path))
    [violation] = snapshot.violations
    assert (violation.locator, violation.field, violation.rule) == (
        f"country {campaign.player_id}",
        "budget.current_month.balance.energy",
        "invariant_net_monthly",
    )
    path, campaign = synthetic_save(tmp_path / "foreign_planet.sav", state_index=4)
    snapshot = save.read_snapshot(save_zip.open_save(path))
    [violation] = snapshot.violations
    assert (violation.field, violation.rule) == ("owner", "invariant_player_id")
    assert snapshot.outputs["get_player_status"]["colonies"]["total_count"] == len(campaign.states[4].colonies) - 1


def test_a_gamestate_without_the_players_country_is_a_rejected_record(tmp_path):
    meta = b'version="v"\nname="x"\ndate="2250.01.01"\n'
    gamestate = (
        b'date="2250.01.01"\nplayer=\n{\n\t{\n\t\tname="p"\n\t\tcountry=5\n\t}\n}\ncountry=\n{\n\t0=\n\t{\n\t}\n}\n'
    )
    path = write_zip(tmp_path / "orphan.sav", {"meta": meta, "gamestate": gamestate})
    db = tmp_path / "w.duckdb"
    [file] = workbench.ingest([path], db=db).files
    assert (file.status, file.records, file.rejected) == ("ingested", 0, 1)
    assert [(v.locator, v.rule) for v in file.violations] == [("save", "no_snapshot")]
    assert "no entry for the player's id 5" in file.violations[0].message
    [(raw,)] = rows(db, "SELECT raw FROM rejects")
    assert raw.startswith('version="v"')


# --- files that are not readable saves --------------------------------------------------------


def patch_sizes(path: Path, member: str, size: int) -> None:
    """Rewrite the uncompressed size a zip declares for `member` (local and central headers)."""
    data = bytearray(path.read_bytes())
    name = member.encode()
    for signature, size_at, name_at in ((b"PK\x03\x04", 22, 30), (b"PK\x01\x02", 24, 46)):
        position = data.find(signature)
        while position != -1:
            if data[position + name_at : position + name_at + len(name)] == name:
                struct.pack_into("<I", data, position + size_at, size)
            position = data.find(signature, position + 1)
    path.write_bytes(bytes(data))


def test_a_zip_declaring_more_than_the_bound_is_refused_before_unpacking(tmp_path, monkeypatch):
    path, _ = synthetic_save(tmp_path / "bomb.sav")
    patch_sizes(path, "gamestate", 600 * 1024 * 1024)

    def never_opened(*args, **kwargs):
        raise AssertionError("a member was unpacked")

    monkeypatch.setattr(zipfile.ZipFile, "open", never_opened)
    with pytest.raises(UnreadableFile) as refused:
        save_zip.open_save(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: refused before unpacking") and "600 MB, over the 512 MB bound" in message
    assert "\n" not in message


def test_a_zip_lying_about_its_sizes_is_refused_without_unpacking_it_all(tmp_path, monkeypatch):
    monkeypatch.setattr(save_zip, "MAX_UNPACKED", 1 << 20)
    path = write_zip(tmp_path / "liar.sav", {"meta": b"x", "gamestate": b"\0" * (8 << 20)})
    patch_sizes(path, "gamestate", 1000)  # declares 1000 bytes, inflates to 8 MB
    seen = []
    real_read = zipfile.ZipExtFile.read

    def counting_read(self, n=-1):
        data = real_read(self, n)
        seen.append(len(data))
        return data

    monkeypatch.setattr(zipfile.ZipExtFile, "read", counting_read)
    with pytest.raises(UnreadableFile, match="cannot be unpacked"):
        save_zip.open_save(path)
    assert sum(seen) <= 1 << 20  # never more than the bound came out


def test_the_stream_cap_stops_a_member_at_the_bytes_left(tmp_path, monkeypatch):
    monkeypatch.setattr(save_zip, "READ_CHUNK", 512)
    path = write_zip(tmp_path / "big.sav", {"gamestate": b"a" * 3000})
    with zipfile.ZipFile(path) as archive:
        with pytest.raises(UnreadableFile, match="`gamestate` unpacks past the 512 MB bound"):
            save_zip._read_member(archive, archive.getinfo("gamestate"), 2000, path, lambda n: None)
        data = save_zip._read_member(archive, archive.getinfo("gamestate"), 3000, path, lambda n: None)
    assert data == b"a" * 3000


@pytest.mark.parametrize(
    "content, reason",
    [
        (b"this is not a zip archive", "not a zip archive"),
        (b"", "not a zip archive"),
    ],
)
def test_a_sav_that_is_not_a_zip_is_unreadable(tmp_path, content, reason):
    path = tmp_path / "fake.sav"
    path.write_bytes(content)
    with pytest.raises(UnreadableFile, match=reason):
        save_zip.open_save(path)


def test_a_zip_without_gamestate_is_unreadable(tmp_path):
    path = write_zip(tmp_path / "meta_only.sav", {"meta": b'date="2200.01.01"', "../../evil": b"x"})
    with pytest.raises(UnreadableFile, match=r"no `gamestate` member \(it holds \.\./\.\./evil, meta\)"):
        save_zip.open_save(path)
    assert not (tmp_path.parent / "evil").exists()  # member names are never paths


def test_bad_saves_fail_alone_and_good_ones_land(tmp_path):
    folder = tmp_path / "campaign"
    folder.mkdir()
    for index in (0, 1, 2):
        synthetic_save(folder / f"autosave_{index}.sav", state_index=index)
    (folder / "corrupt.sav").write_bytes(b"PK\x03\x04 truncated")
    write_zip(folder / "no_gamestate.sav", {"meta": b"x"})
    good = (folder / "autosave_1.sav").read_bytes()
    (folder / "truncated.sav").write_bytes(good[: len(good) // 2])
    db = tmp_path / "w.duckdb"
    report = workbench.ingest([folder], db=db)
    status = {Path(f.path).name: f.status for f in report.files}
    assert status == {
        "autosave_0.sav": "ingested",
        "autosave_1.sav": "ingested",
        "autosave_2.sav": "ingested",
        "corrupt.sav": "failed",
        "no_gamestate.sav": "failed",
        "truncated.sav": "failed",
    }
    for failed in report.failed:
        assert failed.message.startswith(failed.path + ": ") and "\n" not in failed.message
    assert rows(db, "SELECT count(*) FROM stellaris_snapshots")[0][0] == 3
    assert rows(db, "SELECT count(*) FROM sources")[0][0] == 3  # failed files leave nothing behind
