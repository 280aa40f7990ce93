"""Emotion vectors of Damage lines, found wherever they are.

An emotion vector is any JSON object that carries the five keys of seed 003's
`EmotionState` (the key list comes from the model, so it is declared once), at any
depth of a line: `hand_started.players[].emotions`, `affect_resolved.target_emotions`,
`direct_emoter_attack_resolved.before` / `.after`, or a place no version of the game has
used yet. Nothing here lists places.

It runs in DuckDB over each chunk's rows (`tables.CHUNK`), set-based, with no Python per
line:

1. Lines whose payload (or undocumented envelope keys) does not even contain the five
   key names are skipped by a substring test (DuckDB re-serialises JSON, so an escaped
   key such as `"\\u0066ear"` reaches it as `"fear"`).
2. For each event type, DuckDB gives the structure (`json_structure`: keys at every
   depth, arrays as their element) of one of its lines; Python walks these few
   structures and lists the JSON paths of the objects that hold the five keys, as a
   holder and a step: `$.players[*]` + `.emotions`.
3. DuckDB reads every line of the type along those paths in one parse (`from_json` into
   a struct generated from the paths, every value kept as raw JSON), unnests them, and
   keeps the objects that really carry the five keys.
4. Soundness check: a line is done when the vectors found in it are as many as the
   times its text holds the rarest of the five keys (`"confidence":`, say, when a
   `deltas` object also holds `"tilt":`). Every vector holds each key once, so if one
   were missed, that count would be higher. (DuckDB writes JSON compact, so every
   object key shows as `"key":`; text inside a string can only add to the count, as
   its quotes are escaped.)
   The other lines go round again with the paths of one of them added; after a few
   rounds, what is left (say, a key holding an object in one element of an array and a
   number in another, which `json_structure` cannot type) is walked node by node with
   `json_tree`: slower, exact. Real logs are done in the first round.
"""

from __future__ import annotations

import json
import re

import duckdb

from workbench.damage.models import EMOTIONS
from workbench.damage.tables import CHUNK, EMOTION_VECTORS
from workbench.schema import relation_on, run_on

_KEYS = ", ".join(f"'{k}'" for k in EMOTIONS)
_NUMBER = "('UBIGINT', 'BIGINT', 'HUGEINT', 'UHUGEINT', 'DOUBLE')"
_PLAIN_KEY = re.compile(r"[A-Za-z][A-Za-z0-9_]*\Z")  # written unquoted in a JSON path (as json_tree does)


def _contains_all(column: str) -> str:
    # Each name with its closing quote: a needle that starts with a quote is slower to
    # find in JSON text, which is full of them; what it lets through, the rounds sort out.
    return " AND ".join(f"contains({column}::VARCHAR, '{k}\"')" for k in EMOTIONS)


def _occurrences(key: str) -> str:
    """How many times the text of a document holds `key` as an object key."""
    counted = f'"{key}":'
    return f"(strlen(doc::VARCHAR) - strlen(replace(doc::VARCHAR, '{counted}', ''))) // {len(counted)}"


# For one document of each type and place (the longest, likely the one with the most
# vectors), its `json_structure`: an aggregate, not a sort of the documents.
SHAPES = """
SELECT type, envelope, json_structure(arg_max(doc, length(doc::VARCHAR)))::VARCHAR AS shape
FROM emotion_docs GROUP BY type, envelope
"""

# The JSON documents of a chunk that may hold a vector: payloads, and the envelope keys
# the seed does not list (`extra`). A payload goes along with an envelope vector: its
# `target_player_id` / `player_id` may say whose vector that is (`payload` is set only
# there). Each key is a filter of its own: DuckDB looks for the next only in the
# documents that hold the ones before.
DOCS = f"""
SELECT seq, game_id, turn, coalesce(type, '?') AS type, false AS envelope, payload AS doc, NULL::JSON AS payload
FROM {CHUNK} WHERE {_contains_all("payload")}
UNION ALL
SELECT seq, game_id, turn, coalesce(type, '?') AS type, true AS envelope, extra AS doc, payload
FROM {CHUNK} WHERE extra IS NOT NULL AND {_contains_all("extra")}
"""
ROUNDS = 3
# Any of the five counts will do (each is at least the number of vectors); the keys
# that other objects of the real game (`deltas`) do not use come first, so the others
# are counted only where needed: a CASE, since DuckDB evaluates every operand of an OR
# that is not a filter.
_RAREST_FIRST = sorted(EMOTIONS, key=lambda k: k in ("tilt", "fear", "confidence"))
COVERED = (
    "CASE "
    + " ".join(f"WHEN coalesce(len(vectors), 0) = {_occurrences(k)} THEN true" for k in _RAREST_FIRST)
    + " ELSE false END"
)


ARRAY = "[*]"  # a step into every element of an array


def vector_paths(shape, steps: tuple = ()):
    """The steps (keys, and ARRAY) to every object of a `json_structure` that holds the
    five keys, in document order. A path through a key that is read as a value
    (`player_id`, an emotion) is left to the walk."""
    if isinstance(shape, dict):
        if all(k in shape for k in EMOTIONS) and not _READ_AS_VALUES.intersection(steps):
            yield steps
        for key, inner in shape.items():
            yield from vector_paths(inner, (*steps, key))
    elif isinstance(shape, list) and shape:
        yield from vector_paths(shape[0], (*steps, ARRAY))


def _paths_in(shape: str) -> list[tuple]:
    """`vector_paths` of a `json_structure`; none for one too deep to walk in Python
    (its documents are left to the exact walk)."""
    try:
        return list(vector_paths(json.loads(shape)))
    except RecursionError:
        return []


def origin(event_type: str, envelope: bool, steps: tuple) -> str:
    """`hand_started.players[].emotions`: keys written as json_tree writes them."""
    written = "".join("[]" if step == ARRAY else _key(step) for step in steps)
    return event_type + (".$" if envelope else "") + written


def _key(key: str) -> str:
    if _PLAIN_KEY.match(key):
        return "." + key
    return '."' + key.replace("\\", "\\\\").replace('"', '\\"') + '"'


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _field(expr: str, key: str) -> str:
    return f'{expr}."' + key.replace('"', '""') + '"'


_VECTOR_KEYS = [*EMOTIONS, "player_id"]
_READ_AS_VALUES = {*_VECTOR_KEYS, "target_player_id"}


def _add(spec: dict, steps: tuple, apply: bool) -> bool:
    """Whether the path fits `spec` (what DuckDB reads a line into with `from_json`):
    the objects along it, `player_id` wherever a holder or a vector may carry it, the
    vector's values as raw JSON. With `apply`, add it."""
    node = spec
    for i, step in enumerate(steps):
        if step == ARRAY:
            continue
        depth = 0
        while i + 1 + depth < len(steps) and steps[i + 1 + depth] == ARRAY:
            depth += 1
        inner = node.get(step)
        if inner is None:
            if not apply:
                return True  # the rest is new
            inner = {"player_id": "JSON"}
            wrapped: dict | list = inner
            for _ in range(depth):
                wrapped = [wrapped]
            node[step] = wrapped
        else:
            for _ in range(depth):
                if not isinstance(inner, list):
                    return False
                inner = inner[0]
            if not isinstance(inner, dict):
                return False
        node = inner
    if any(isinstance(node.get(key), (dict, list)) for key in _VECTOR_KEYS):
        return False
    if apply:
        node.update({key: "JSON" for key in _VECTOR_KEYS})
    return True


def _spec_groups(paths) -> list[tuple[dict, list]]:
    """The paths of one type in groups that one `from_json` can read (a key that holds
    an object on one path and a list on another needs two)."""
    groups: list[tuple[dict, list]] = []
    for steps in paths:
        for spec, members in groups:
            if _add(spec, steps, apply=False):
                _add(spec, steps, apply=True)
                members.append(steps)
                break
        else:
            spec = {"target_player_id": "JSON", "player_id": "JSON"}
            _add(spec, steps, apply=True)
            groups.append((spec, [steps]))
    return groups


def _vectors(expr: str, steps: tuple, found_at: str, held: str = "NULL", root: bool = True, level: int = 0) -> str:
    """A list of the objects at `steps` under the struct `expr` (see `_item`), each with
    the `player_id` of its holder (the nearest enclosing object; not the document itself)."""
    if not steps:
        return f"[{_item(expr, held, found_at)}]"
    step, rest = steps[0], steps[1:]
    if step == ARRAY:
        x = f"x{level}"
        return f"flatten(list_transform({expr}, lambda {x}: {_vectors(x, rest, found_at, held, False, level + 1)}))"
    if all(s == ARRAY for s in rest):  # the last key: `expr` holds the vector
        held = "NULL" if root else f"{expr}.player_id"
    return _vectors(_field(expr, step), rest, found_at, held, False, level)


def _string_of(expr: str) -> str:
    return f"CASE WHEN starts_with({expr}::VARCHAR, '\"') THEN json_extract_string({expr}, '$') END"


def _item(vector: str, held: str, found_at: str) -> str:
    """A vector as the same struct on every path (the object at a path may also hold
    deeper paths), with its holder's `player_id` and where it was found (`found_at`:
    its path, after the type, and the path's number)."""
    return "{" + ", ".join(f"'{key}': {vector}.{key}" for key in _VECTOR_KEYS) + f", 'held': {held}, {found_at}}}"


def _root_ids(payload: str) -> str:
    """The payload's `target_player_id`, else its `player_id` (JSON strings only)."""
    target, actor = (f"json_extract({payload}, '$.{key}')" for key in ("target_player_id", "player_id"))
    return f"coalesce({_string_of(target)}, {_string_of(actor)})"


# Raw JSON text that casts to a double is a JSON number (`"0.5"`, `true` do not cast).
_COMPONENTS = ", ".join(f"TRY_CAST(f.{e}::VARCHAR AS DOUBLE) AS {e}" for e in EMOTIONS)


def _round(patterns: dict) -> str:
    """A round over the documents: the vectors at the known paths of each document's type
    and place (read in one parse per group of paths), a row each, where they are all of
    its vectors (`covered`); else one row with the document as it was, for the next round.
    Types with the same paths share their SQL (the statement is built for each chunk, and
    its size is what building it costs)."""
    sharing: dict[tuple[bool, tuple], list[str]] = {}
    for (event_type, envelope), paths in patterns.items():
        sharing.setdefault((envelope, tuple(paths)), []).append(event_type)
    parsed: list[str] = []
    found: list[str] = []
    roots: list[str] = []
    for (envelope, paths), types in sharing.items():
        these = f"type IN ({', '.join(map(_quote, types))}) AND envelope = {str(envelope).lower()}"
        items = []
        for spec, members in _spec_groups(paths):
            struct = f"s{len(parsed)}"
            parsed.append(f"CASE WHEN {these} THEN try(from_json(doc, {_quote(json.dumps(spec))})) END AS {struct}")
            items += [
                _vectors(struct, steps, f"'o': {_quote(origin('', envelope, steps))}, 'k': {paths.index(steps)}")
                for steps in members
            ]
        found.append(f"WHEN {these} THEN flatten([{', '.join(items)}])")
        if not envelope:  # every group's struct holds the root's ids
            roots.append(f"WHEN {these} THEN [{struct}.target_player_id, {struct}.player_id]")
    complete = " AND ".join(f"f.{e} IS NOT NULL" for e in EMOTIONS)
    return f"""
SELECT seq, game_id, turn, type, envelope, covered, f.k AS k1, i AS k2,
       coalesce({_string_of("f.player_id")}, {_string_of("f.held")},
                {_string_of("r[1]")}, {_string_of("r[2]")}) AS player_id, {_COMPONENTS}, type || f.o AS origin,
       CASE WHEN NOT covered THEN doc END AS doc, CASE WHEN NOT covered THEN payload END AS payload
FROM (SELECT *, unnest(listed) AS f, generate_subscripts(listed, 1) AS i
      FROM (SELECT *, CASE WHEN covered THEN vectors ELSE [NULL] END AS listed
            FROM (SELECT *, {COVERED} AS covered
                  FROM (SELECT seq, game_id, turn, type, envelope, doc, payload,
                               list_filter(CASE {" ".join(found)} END, lambda f: {complete}) AS vectors,
                               CASE WHEN envelope THEN json_extract(payload, ['$.target_player_id', '$.player_id'])
                                    {" ".join(roots)} END AS r
                        FROM (SELECT *, {", ".join(parsed)} FROM emotion_docs)))))
"""


PENDING = "SELECT seq, game_id, turn, type, envelope, doc, payload FROM emotion_round WHERE NOT covered"
# The documents where each of the five names is a key (DuckDB writes JSON compact, so a
# key shows as `"fear":`): only these may hold a vector.
MAY_HOLD = "SELECT * FROM emotion_docs WHERE " + " AND ".join(f"contains(doc::VARCHAR, '\"{k}\":')" for k in EMOTIONS)


# The exact walk, for the lines no round accounted for: every node of their documents
# with its path (`$.players[0].emotions`). The holder of a vector is its path without
# its trailing array indices and then its last key.
_TRAILING_INDICES = r"(\[[0-9]+\])+$"
_LAST_KEY = r'\.("([^"\\]|\\.)*"|[^."\[]+)$'


def _component(name: str) -> str:
    return (
        f"max_by(CASE WHEN jtype IN {_NUMBER} THEN TRY_CAST(atom AS DOUBLE) END, id) "
        f"FILTER (WHERE key = '{name}') AS {name}"
    )


def _string(key: str, where: str, nodes: str = "") -> str:
    """The last JSON string `key` among the nodes that satisfy `where`, if any."""
    return f"max_by({nodes}atom_str, {nodes}id) FILTER (WHERE {nodes}key = '{key}' AND {where})"


WALK_ROWS = rf"""
    WITH docs AS (SELECT * FROM emotion_docs),
    nodes AS (
        SELECT d.seq, d.envelope, t.key, t.type AS jtype, t.atom, t.id, t.parent, t.path,
               CASE WHEN t.type = 'VARCHAR' THEN json_extract_string(t.atom, '$') END AS atom_str
        FROM docs d, json_tree(d.doc) t
        WHERE t.key IN ({_KEYS}, 'player_id')
    ),
    vectors AS (
        SELECT seq, envelope, parent AS id, any_value(path) AS path, {", ".join(_component(e) for e in EMOTIONS)}
        FROM nodes WHERE key IN ({_KEYS})
        GROUP BY seq, envelope, parent HAVING count(DISTINCT key) = {len(EMOTIONS)}
    ),
    placed AS (
        SELECT *, regexp_replace(regexp_replace(path, '{_TRAILING_INDICES}', ''), '{_LAST_KEY}', '') AS holder
        FROM vectors
    ),
    players AS (
        SELECT p.seq, p.envelope, p.id,
               {_string("player_id", "n.path = p.path", "n.")} AS own,
               {_string("player_id", "n.path = p.holder AND p.holder <> '$'", "n.")} AS held
        FROM placed p JOIN nodes n ON n.seq = p.seq AND n.envelope = p.envelope AND n.key = 'player_id'
                                     AND n.path IN (p.path, p.holder)
        GROUP BY ALL
    )
    SELECT d.seq, d.game_id, d.turn, d.envelope, v.id AS k1, 0 AS k2,
           coalesce(pl.own, pl.held, {_root_ids("coalesce(d.payload, d.doc)")}) AS player_id,
           {", ".join("v." + e for e in EMOTIONS)},
           d.type || CASE WHEN v.envelope THEN '.$' ELSE '' END
               || regexp_replace(substr(v.path, 2), '\[[0-9]+\]', '[]', 'g') AS origin
    FROM placed v JOIN docs d ON d.seq = v.seq AND d.envelope = v.envelope
    LEFT JOIN players pl ON pl.seq = v.seq AND pl.envelope = v.envelope AND pl.id = v.id"""


def _insert(rows: str) -> str:
    """The vectors of `rows` that belong to a player, a line's rows together, ordered by
    path (in the order the paths were first seen: `before` ahead of `after`), then
    array position."""
    return EMOTION_VECTORS.insert(f"""
SELECT $source_id AS source_id, game_id, seq, turn, player_id, {", ".join(EMOTIONS)}, origin
FROM {rows} WHERE player_id IS NOT NULL
ORDER BY seq, envelope, k1, k2
""")


INSERT_FOUND = _insert("(SELECT * FROM emotion_round WHERE covered)")
INSERT_WALKED = _insert(f"({WALK_ROWS})")


def insert_vectors(con: duckdb.DuckDBPyConnection, source_id: int, first: int, last: int) -> None:
    """Add the emotion vectors of a file's rows from line `first` to `last` to
    `damage_emotions`."""
    docs = con.sql(DOCS, params={"source_id": source_id, "first": first, "last": last}).to_arrow_table()
    patterns: dict[tuple[str, bool], list[tuple]] = {}
    for _ in range(ROUNDS):
        if docs.num_rows == 0:
            return
        for sample in run_on(con, docs, SHAPES, "emotion_docs"):
            known = patterns.setdefault(sample[:2], [])
            known += [p for p in _paths_in(sample[2]) if p not in known]
        if not any(patterns.values()):
            # The documents sampled hold no vector (a line that only names the five, as
            # values or inside other keys): keep those that may, so that the next round
            # samples one of them, not the same ones again.
            docs = relation_on(con, docs, MAY_HOLD, "emotion_docs").to_arrow_table()
            continue
        found = _round({k: v for k, v in patterns.items() if v})
        # The round's outcome stays in DuckDB, its statement planned once: a relation's
        # statement is bound when it is made and again when it runs. An error rolls the
        # table back with the file.
        run_on(con, docs, f"CREATE OR REPLACE TEMP TABLE emotion_round AS {found}", "emotion_docs")
        con.execute(INSERT_FOUND, {"source_id": source_id}).fetchall()
        docs = con.sql(PENDING).to_arrow_table()
        con.execute("DROP TABLE emotion_round")
    if docs.num_rows:
        run_on(con, docs, INSERT_WALKED, "emotion_docs", {"source_id": source_id})
