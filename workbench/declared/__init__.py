"""A game of one's own, declared in one TOML file: no Python, no package.

    name = "mygame"
    files = "*.mygame.jsonl"          # which files are its (a glob of their names)
    schema = "mygame.schema.json"     # a JSON Schema of one line, beside this file
                                      # (or an inline [schema] table)
    [fields]                          # where each thing is in a line: dotted paths
    game = "match.id"
    turn = "turn"
    player = "seat"
    model = "agent.model"
    action = "move"

Each line is a record, and a decision of its player: valid when it meets the schema.
Each schema error is a finding on its line, naming the field path and what was
expected; a line that is not a JSON object is rejected with its text. `workbench ingest
PATH --spec FILE.toml` reads such files; a TOML file in a declared-formats folder
(`$WORKBENCH_FORMATS`, else `~/.config/workbench/formats`) is found by every command
(`workbench formats` lists them). The rows go to `<name>_records`, the decisions to
`decisions`, so every analysis, figure, comparison and the record browser take them.
"""

from workbench.declared.load import declared_format
from workbench.declared.spec import Spec, declared_folders, read_spec

__all__ = ["Spec", "declared_folders", "declared_format", "read_spec"]
