"""`workbench compact` and the manifest's protocol, on trees made here by hand (no Spark):
small parts merged per table and format, a merged part written again without a file's
rows, each file listing the parts that hold its rows, and bad trees refused in one line."""

import os
import subprocess
import sys
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from workbench import cli
from workbench.spark import compact, manifest

FILES = {1: ["g2", "g1", "g3"], 2: ["g1", "g1"], 3: ["g3", None]}  # source id -> each row's game


def _tree(root: Path, files: dict[int, list] = FILES) -> Path:
    """A tree as an ingest leaves it: each file's `sources` row and decisions in parts of
    their own, listed."""
    rows = {}
    for source_id, games in files.items():
        path = f"/logs/{source_id}.decisions.jsonl"
        part, source = (f"{table}/format=arena/s{source_id}-run_0.parquet" for table in ("decisions", "sources"))
        for written in (part, source):
            (root / written).parent.mkdir(parents=True, exist_ok=True)
        values = ", ".join(
            f"({source_id}, {('NULL' if g is None else repr(g))}, 'line {n}')" for n, g in enumerate(games, 1)
        )
        duckdb.sql(
            f"COPY (SELECT * FROM (VALUES {values}) v(source_id, game_id, locator)) TO '{root / part}' (FORMAT parquet)"
        )
        duckdb.sql(f"COPY (SELECT {source_id} AS source_id, '{path}' AS path) TO '{root / source}' (FORMAT parquet)")
        rows[path] = {
            "path": path,
            "format": "arena",
            "source_id": source_id,
            "size": 1,
            "mtime_ns": 1,
            "sha256": "x",
            "records": len(games),
            "rejected": 0,
            "parts": [part, source],
            "ctime_ns": 1,
            "part_stamps": [manifest.stamp(root / part), manifest.stamp(root / source)],
        }
    manifest.write_manifest(root, rows)
    return root


def _listed(root: Path, table: str = "decisions") -> dict[str, list[str]]:
    return {
        path: [part for part in row["parts"] if part.startswith(f"{table}/")]
        for path, row in manifest.read_manifest(root).items()
    }


def _rows(root: Path) -> list[tuple]:
    parts = sorted({str(root / p) for parts in _listed(root).values() for p in parts})
    return sorted(
        duckdb.sql("SELECT source_id, game_id, locator FROM read_parquet($p)", params={"p": parts}).fetchall(), key=str
    )


def _expected(files: dict[int, list] = FILES) -> list[tuple]:
    return sorted(((s, g, f"line {n}") for s, games in files.items() for n, g in enumerate(games, 1)), key=str)


def test_small_parts_of_a_format_merge_into_one_that_every_file_lists(tmp_path, capsys):
    root = _tree(tmp_path / "lake")
    assert cli.main(["compact", "--parquet", str(root)]) == 0
    assert capsys.readouterr().out == "decisions: 3 parts -> 1\nsources: 3 parts -> 1\n"
    listed = _listed(root)
    [merged] = {part for parts in listed.values() for part in parts}
    assert all(parts == [merged] for parts in listed.values())
    assert merged.startswith("decisions/format=arena/c-") and manifest.PART.fullmatch(merged)
    assert _rows(root) == _expected()
    games = pq.read_table(root / merged, columns=["game_id"])["game_id"].to_pylist()
    assert games == ["g2", "g1", "g3", "g1", "g1", "g3", None]  # the parts' rows, part after part
    assert sorted(p.name for p in (root / "decisions" / "format=arena").iterdir()) == [Path(merged).name]


def test_one_part_or_none_is_left_as_it_is(tmp_path, capsys):
    root = _tree(tmp_path / "lake", {1: ["g1"]})
    before = _listed(root)
    assert cli.main(["compact", "--parquet", str(root)]) == 0
    assert capsys.readouterr().out.startswith("nothing to merge")
    assert _listed(root) == before


def test_a_folder_merges_on_its_own_past_the_threshold_only(tmp_path, monkeypatch):
    root = _tree(tmp_path / "lake")
    present = {p for parts in _listed(root).values() for p in parts}  # only the decisions' parts
    monkeypatch.setattr(compact, "AUTOMATIC", 3)  # three small parts: not more than it
    assert compact.merged(root, manifest.read_manifest(root), present, "run") == {}
    monkeypatch.setattr(compact, "AUTOMATIC", 2)
    assert len(compact.merged(root, manifest.read_manifest(root), present, "run")) == 3  # each of the three


def test_parts_past_the_target_size_are_merged_in_batches_of_it(tmp_path, monkeypatch):
    root = _tree(tmp_path / "lake")
    sizes = [(root / p[0]).stat().st_size for p in _listed(root).values()]
    monkeypatch.setattr(compact, "TARGET_BYTES", max(sizes) * 2)  # two parts fit, three do not
    compact.compact(root)
    assert len({p for parts in _listed(root).values() for p in parts}) == 2
    assert _rows(root) == _expected()


def test_a_file_leaving_a_merged_part_takes_only_its_own_rows(tmp_path):
    root = _tree(tmp_path / "lake")
    compact.compact(root)
    listed = manifest.read_manifest(root)
    leaving = compact.Leaving()
    leaving.add(listed.pop("/logs/2.decisions.jsonl"))
    compact.switch(root, listed, leaving.parts_rewritten(root, listed, "run"))
    assert _rows(root) == _expected({1: FILES[1], 3: FILES[3]})
    assert len({p for parts in _listed(root).values() for p in parts}) == 1
    assert len(list((root / "decisions" / "format=arena").iterdir())) == 1  # the merged part before is gone


def test_a_part_no_file_lists_any_more_is_removed_not_rewritten(tmp_path):
    root = _tree(tmp_path / "lake")
    listed = manifest.read_manifest(root)
    leaving = compact.Leaving()
    leaving.add(listed.pop("/logs/2.decisions.jsonl"))
    assert leaving.parts_rewritten(root, listed, "run") == {
        "decisions/format=arena/s2-run_0.parquet": [],
        "sources/format=arena/s2-run_0.parquet": [],
    }


def test_a_compaction_cut_short_before_the_manifest_leaves_it_and_the_rows_as_they_were(tmp_path, monkeypatch):
    root = _tree(tmp_path / "lake")
    before = _listed(root)

    def cut_short(*args):
        raise KeyboardInterrupt

    monkeypatch.setattr(compact, "write_manifest", cut_short)
    with pytest.raises(KeyboardInterrupt):
        compact.compact(root)
    monkeypatch.undo()
    assert _listed(root) == before and _rows(root) == _expected()
    compact.compact(root)  # the merged part left unlisted is removed first
    assert len(list((root / "decisions" / "format=arena").iterdir())) == 1 and _rows(root) == _expected()


@pytest.mark.parametrize(
    "make, said",
    [
        (lambda p: None, "is not a folder"),
        (lambda p: p.write_text("x"), "is not a folder"),
        (lambda p: p.mkdir(), "has no _manifest.parquet"),
        (lambda p: (p.mkdir(), (p / "_manifest.parquet").write_text("garbage")), "is not a manifest"),
    ],
)
def test_what_is_not_a_tree_an_ingest_keeps_is_refused_in_one_line(tmp_path, capsys, make, said):
    target = tmp_path / "lake"
    make(target)
    assert cli.main(["compact", "--parquet", str(target)]) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1


def test_a_tree_another_ingest_is_writing_is_left_alone(tmp_path, capsys):
    root = _tree(tmp_path / "lake")
    with manifest.locked(root):
        assert cli.main(["compact", "--parquet", str(root)]) == 2
    assert "another ingest or compact is writing" in capsys.readouterr().err


def test_a_part_removed_takes_the_game_folder_it_leaves_empty_not_its_tables(tmp_path):
    """A part of the layout before sits in a game's folder: removed, the folder goes too,
    up to its format's, which another part still holds; a table's folder stays."""
    root = tmp_path / "lake"
    alone = "decisions/format=arena/game_id=g1/s1-run_0.parquet"
    shared = [
        "decisions/format=arena/game_id=g2/s2-run_0.parquet",
        "decisions/format=arena/game_id=g2/s3-run_0.parquet",
    ]
    for part in [alone, *shared]:
        (root / part).parent.mkdir(parents=True, exist_ok=True)
        (root / part).write_bytes(b"")
    manifest.unlink_part(root, alone)
    manifest.unlink_part(root, shared[0])
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == [
        "decisions",
        "decisions/format=arena",
        "decisions/format=arena/game_id=g2",
        shared[1],
    ]
    manifest.unlink_part(root, shared[1])
    assert sorted(p.relative_to(root).as_posix() for p in root.rglob("*")) == ["decisions"]


def test_two_prunes_of_a_merged_part_leave_the_third_files_rows(tmp_path):
    """Each removal writes its part again under a name of its own: a second one under the
    first's name wrote over it, then removed it, and a file left untouched lost its rows."""
    from workbench.spark import load

    root = _tree(tmp_path / "lake")
    compact.compact(root)
    for gone in ("/logs/1.decisions.jsonl", "/logs/2.decisions.jsonl"):
        load._forget(root, manifest.read_manifest(root), [gone])
    assert _rows(root) == _expected({3: FILES[3]})
    assert all((root / part).is_file() for parts in _listed(root).values() for part in parts)


def test_a_merged_part_that_cannot_be_written_again_leaves_the_tree_as_it_was(tmp_path, monkeypatch):
    """A full disk while a file leaves a merged part: the file stays listed with its rows,
    not reported removed while they stay in the part."""
    from workbench.errors import WorkbenchError
    from workbench.spark import load

    root = _tree(tmp_path / "lake")
    compact.compact(root)
    before = _listed(root)

    def full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(compact, "_rewrite", full)
    with pytest.raises(WorkbenchError, match="No space left on device.*the tree is as it was"):
        load._forget(root, manifest.read_manifest(root), ["/logs/2.decisions.jsonl"])
    assert _listed(root) == before and _rows(root) == _expected()


def test_a_tree_whose_path_has_glob_characters_merges_only_its_own_parts(tmp_path):
    """`lake[1]` beside `lake1`: a path read as a glob named the other tree."""
    _tree(tmp_path / "lake1", {7: ["g7"]})
    root = _tree(tmp_path / "lake[1]")
    compact.compact(root)
    assert _rows(root) == _expected()


def test_parts_larger_than_memory_would_hold_merge_a_row_group_at_a_time(tmp_path):
    """10M real events (ten parts of about 8 MB) ran a merge sorting them all at once out
    of its memory. Here 3 parts of 600,000 rows of 131 characters each (some 240 MB of
    rows): the merge, in a process of its own, takes less than 100 MB beyond what the
    same process takes to open the tree, and keeps each part's rows in their order."""
    root = _tree(tmp_path / "lake", {1: ["g1"], 2: ["g2"], 3: ["g3"]})
    for part in sorted(root.glob("decisions/format=arena/*.parquet")):
        source_id = int(part.name[1])
        duckdb.sql(
            f"COPY (SELECT {source_id} AS source_id, 'g' || lpad((i // 1000)::TEXT, 4, '0') AS game_id, "
            f"repeat(md5((i + {source_id})::TEXT), 4) || i AS locator FROM range(600000) r(i) ORDER BY i) "
            f"TO '{part}' (FORMAT parquet)"
        )
    rows = manifest.read_manifest(root)
    for row in rows.values():
        row["part_stamps"] = [manifest.stamp(root / part) for part in row["parts"]]
    manifest.write_manifest(root, rows)
    before = duckdb.sql(
        f"SELECT count(*), sum(hash(source_id, game_id, locator)) FROM read_parquet('{root}/decisions/*/*.parquet')"
    ).fetchall()

    def peak(step: str) -> int:
        run = (
            f"import resource; from workbench.spark import compact, manifest; from pathlib import Path; "
            f"root = Path({str(root)!r}); manifest.read_manifest(root); {step}; "
            f"print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)"
        )
        done = subprocess.run([sys.executable, "-c", run], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-2000:]
        return int(done.stdout)

    opened, merged = peak("None"), peak("compact.compact(root)")
    assert merged - opened < 100_000, f"{(merged - opened) / 1000:.0f} MB"  # ru_maxrss is in KB
    [part] = {p for parts in _listed(root).values() for p in parts}
    table = duckdb.sql(f"SELECT source_id, game_id FROM read_parquet('{root / part}')")
    assert (
        duckdb.sql(
            f"SELECT count(*), sum(hash(source_id, game_id, locator)) FROM read_parquet('{root / part}')"
        ).fetchall()
        == before
    )
    order = table.fetchall()
    assert order == sorted(order)  # part after part, each by game


def test_thousands_of_parts_merge_a_batch_at_a_time(tmp_path, monkeypatch):
    monkeypatch.setattr(compact, "BATCH_PARTS", 2)
    root = _tree(tmp_path / "lake")
    compact.compact(root)
    assert len({p for parts in _listed(root).values() for p in parts}) == 2  # 3 parts: a batch of 2, one left
    assert _rows(root) == _expected()


@pytest.mark.parametrize(
    "spoil, said",
    [
        (lambda row: row.update(part_stamps=row["part_stamps"][:1]), "2 parts and 1 stamps"),
        (
            lambda row: row.update(parts=["_staging/format=arena/s1-run_0.parquet", *row["parts"]], part_stamps=None),
            "is not a part of a table",
        ),
        (
            lambda row: row.update(parts=["decisions/format=arena/c-?.parquet", *row["parts"]], part_stamps=None),
            "is not a part of a table",
        ),
    ],
)
def test_a_manifest_an_ingest_would_not_write_is_refused_before_anything_is_removed(tmp_path, capsys, spoil, said):
    root = _tree(tmp_path / "lake")
    listed = manifest.read_manifest(root)
    spoil(listed["/logs/1.decisions.jsonl"])
    manifest.write_manifest(root, listed)
    on_disk = sorted(root.rglob("*.parquet"))
    assert cli.main(["compact", "--parquet", str(root)]) == 2
    assert said in capsys.readouterr().err
    assert sorted(root.rglob("*.parquet")) == on_disk


def test_files_named_as_parts_outside_the_tables_folders_are_not_removed(tmp_path):
    root = _tree(tmp_path / "lake")
    kept = [
        root / "backup-1" / "decisions" / "format=arena" / "s1-run_0.parquet",
        root / ".snapshots" / "daily" / "c-notes.parquet",
    ]
    for path in kept:
        path.parent.mkdir(parents=True)
        path.write_text("mine")
    compact.compact(root)
    assert all(path.read_text() == "mine" for path in kept)


def test_a_lone_part_of_the_layout_before_rewritten_is_said_not_nothing_to_merge(tmp_path, capsys):
    root = _tree(tmp_path / "lake", {1: ["g1"]})
    [(path, [flat])] = _listed(root).items()
    part = "decisions/format=arena/game_id=g1/s1-run_0.parquet"
    (root / part).parent.mkdir(parents=True)
    duckdb.sql(
        f"COPY (SELECT 1 AS source_id, 'g1' AS game_id_full, 'line 1' AS locator) TO '{root / part}' (FORMAT parquet)"
    )
    (root / flat).unlink()
    rows = manifest.read_manifest(root)
    rows[path]["parts"] = [part if p == flat else p for p in rows[path]["parts"]]
    rows[path]["part_stamps"] = [manifest.stamp(root / p) for p in rows[path]["parts"]]
    manifest.write_manifest(root, rows)
    assert cli.main(["compact", "--parquet", str(root)]) == 0
    assert capsys.readouterr().out == "decisions: 1 parts -> 1 (in this layout)\n"
    [merged] = _listed(root)[path]
    assert "game_id=" not in merged and _rows(root) == [(1, "g1", "line 1")]


def test_parts_changed_since_they_were_written_are_left_and_said(tmp_path, capsys):
    """A tree copied without its files' times (`cp -r`), or a part written over: its parts
    are not merged, and compact says why rather than that there was nothing to merge."""
    root = _tree(tmp_path / "lake")
    for part in sorted(root.glob("decisions/format=arena/*.parquet"))[:2]:
        os.utime(part, ns=(1, 1))
    assert cli.main(["compact", "--parquet", str(root)]) == 0
    out = capsys.readouterr().out
    assert out == (
        "sources: 3 parts -> 1\n2 parts are not as the ingest wrote them (copied or changed since) and "
        "were left: the next `workbench ingest --engine spark` into the tree reads their files again\n"
    )


def test_a_part_whose_columns_cannot_be_read_as_declared_stops_the_merge_in_one_line(tmp_path, capsys):
    root = _tree(tmp_path / "lake")
    part = sorted(root.glob("decisions/format=arena/*.parquet"))[0]
    duckdb.sql(f"COPY (SELECT 'one' AS source_id, 'g1' AS game_id, 'line 1' AS locator) TO '{part}' (FORMAT parquet)")
    rows = manifest.read_manifest(root)
    for row in rows.values():
        row["part_stamps"] = [manifest.stamp(root / p) for p in row["parts"]]
    manifest.write_manifest(root, rows)
    before = _listed(root)
    assert cli.main(["compact", "--parquet", str(root)]) == 2
    err = capsys.readouterr().err
    assert "cannot merge the parts of" in err and "the tree is as it was" in err and err.count("\n") == 1
    assert _listed(root) == before


def test_a_process_that_read_a_manifest_exits_cleanly(tmp_path):
    """Read through a Python file object, the manifest left Arrow's threads to abort the
    process at exit ("terminate called without an active exception", exit 134), one run
    in three; ten runs would have shown it 98 times in 100."""
    root = _tree(tmp_path / "lake")
    read = (
        f"from pathlib import Path; from workbench.spark import manifest; manifest.read_manifest(Path({str(root)!r}))"
    )
    for _ in range(10):
        done = subprocess.run([sys.executable, "-c", read], capture_output=True, text=True)
        assert done.returncode == 0, done.stderr[-500:]
