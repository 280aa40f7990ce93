"""Aliases (`workbench.naming`): one model under several names, read from a dict, a JSON
object or a CSV file, chains followed to their end, and the dated snapshots that look
like one model found but never merged unasked. Expected values are written out by hand;
the SQL of an alias map is run by DuckDB."""

import duckdb
import pytest

from workbench.errors import WorkbenchError
from workbench.naming import alias_sql, look_alike, look_alike_lines, read_aliases, two_models

# --- reading aliases ----------------------------------------------------------------------------


def test_aliases_from_a_dict_a_json_object_and_a_csv_file_are_one_mapping(tmp_path):
    expected = {"claude-3-5-haiku-20241022": "claude-3-5-haiku", "gpt-4o-2024-08-06": "gpt-4o"}
    (tmp_path / "aliases.json").write_text(
        '{"claude-3-5-haiku-20241022": "claude-3-5-haiku", "gpt-4o-2024-08-06": "gpt-4o"}'
    )
    (tmp_path / "aliases.csv").write_text(
        "name,model\nclaude-3-5-haiku-20241022,claude-3-5-haiku\ngpt-4o-2024-08-06,gpt-4o\n"
    )
    assert read_aliases(dict(expected)) == expected
    assert read_aliases(tmp_path / "aliases.json") == expected
    assert read_aliases(str(tmp_path / "aliases.csv")) == expected
    assert read_aliases(None) == {} and read_aliases({}) == {}


def test_a_chain_of_names_ends_at_its_model_and_a_circle_is_refused():
    # a -> b -> c: a and b are both c; c names itself
    assert read_aliases({"a": "b", "b": "c"}) == {"a": "c", "b": "c"}
    assert read_aliases({"a": "b", "b": "c", "c": "c"}) == {"a": "c", "b": "c", "c": "c"}
    with pytest.raises(WorkbenchError) as raised:
        read_aliases({"a": "b", "b": "a"})
    assert str(raised.value) == (
        "aliases: 'a' -> 'b' -> 'a' goes round in a circle; map each name to the one model it is"
    )


def test_a_name_given_two_models_or_no_text_is_refused(tmp_path):
    (tmp_path / "twice.json").write_text('{"x": "a", "x": "b"}')  # JSON allows it; the second would win
    with pytest.raises(WorkbenchError, match="'x' is given two models, 'a' and 'b'"):
        read_aliases(tmp_path / "twice.json")
    (tmp_path / "twice.csv").write_text("name,model\nx,a\nx,b\n")
    with pytest.raises(WorkbenchError, match="'x' is given two models, 'a' and 'b'"):
        read_aliases(tmp_path / "twice.csv")
    read_aliases({"x": "a", "y": "a"})  # two names of one model: what aliases are for
    for bad in ({"x": 3}, {"x": " "}, {"": "a"}, {"x": None}):
        with pytest.raises(WorkbenchError, match="each name and model must be non-empty text"):
            read_aliases(bad)
    (tmp_path / "columns.csv").write_text("alias,target\nx,a\n")
    with pytest.raises(WorkbenchError, match="a CSV file with the columns name,model"):
        read_aliases(tmp_path / "columns.csv")
    (tmp_path / "list.json").write_text('["x", "a"]')
    with pytest.raises(WorkbenchError, match="a JSON object"):
        read_aliases(tmp_path / "list.json")
    with pytest.raises(WorkbenchError, match="aliases must be a dict or a file"):
        read_aliases([("x", "a")])


# --- two models, and the SQL of a name ----------------------------------------------------------


def test_two_models_are_the_models_the_names_stand_for_and_must_differ():
    aliases = {"m-b-2024": "m-b"}
    assert two_models("m-a", "m-b-2024", aliases, "a comparison") == ("m-a", "m-b")
    with pytest.raises(WorkbenchError) as raised:
        two_models("m-b", "m-b-2024", aliases, "a comparison")
    assert (
        str(raised.value) == "a comparison needs two different models, 'm-b' and 'm-b-2024' are one model under "
        "the aliases"
    )
    with pytest.raises(WorkbenchError) as raised:
        two_models("m-a", "m-a", {}, "side by side")
    assert str(raised.value) == "side by side needs two different models, not 'm-a' twice"


def test_the_sql_of_an_alias_map_gives_each_name_its_model_in_duckdb():
    aliases = read_aliases({"o'brien-1": "o'brien", "gpt-4o-2024-08-06": "gpt-4o"})
    names = ["o'brien-1", "o'brien", "gpt-4o-2024-08-06", "gpt-4o", "other"]
    con = duckdb.connect()
    try:
        got = con.execute(
            f"SELECT {alias_sql(aliases, 'name')} FROM unnest($names) AS t(name)", {"names": names}
        ).fetchall()
    finally:
        con.close()
    assert [model for (model,) in got] == ["o'brien", "o'brien", "gpt-4o", "gpt-4o", "other"]
    assert alias_sql({}, "coalesce(model, agent_id)") == "coalesce(model, agent_id)"  # no aliases: the name itself


# --- names that look like one model -------------------------------------------------------------


@pytest.mark.parametrize(
    "names, aliases, pairs",
    [
        (
            ["claude-3-5-haiku", "claude-3-5-haiku-20241022", "gpt-4o"],
            {},
            [("claude-3-5-haiku-20241022", "claude-3-5-haiku")],
        ),
        (
            ["gpt-4o", "gpt-4o-2024-08-06", "gpt-4o@20240806"],
            {},
            [("gpt-4o-2024-08-06", "gpt-4o"), ("gpt-4o@20240806", "gpt-4o")],
        ),
        (["claude-3-5-haiku", "claude-3-5-haiku-20241022"], {"claude-3-5-haiku-20241022": "claude-3-5-haiku"}, []),
        (["gpt-4o-20241022"], {}, []),  # a dated name alone: nothing to merge it with
        (["model-2024", "model"], {}, []),  # a year is not a date
        (["llama3.1:8b", "llama3.1:70b", "qwen2.5:14b"], {}, []),
    ],
)
def test_names_that_look_like_one_model_are_found_and_never_merged_unasked(names, aliases, pairs):
    assert look_alike(names, aliases) == pairs


def test_what_is_said_of_look_alikes_names_each_pair_and_the_aliases_that_merge_them():
    pairs = [("claude-3-5-haiku-20241022", "claude-3-5-haiku"), ("gpt-4o-2024-08-06", "gpt-4o")]
    assert look_alike_lines(pairs) == [
        "claude-3-5-haiku-20241022 looks like a dated snapshot of claude-3-5-haiku, counted apart",
        "gpt-4o-2024-08-06 looks like a dated snapshot of gpt-4o, counted apart",
        (
            'to count them as one model: write {"claude-3-5-haiku-20241022": "claude-3-5-haiku", '
            '"gpt-4o-2024-08-06": "gpt-4o"} to aliases.json and pass --aliases aliases.json'
        ),
    ]
    assert look_alike_lines([]) == []
