"""What the command says of an error: its first line, and whether it is the user's Ctrl-C
however it came back (DuckDB's interrupt, a compiled module's broken import)."""

from __future__ import annotations

import pytest

from workbench import errors


def test_an_import_broken_by_a_ctrl_c_is_an_interrupt_when_the_command_saw_one(monkeypatch):
    # numpy's words when a Ctrl-C lands in its import of `datetime`: no KeyboardInterrupt chained
    broken = ImportError('PyCapsule_Import could not import module "datetime"')
    monkeypatch.setattr(errors, "_interrupted", False)
    assert not errors.is_interrupt(broken)
    with pytest.raises(KeyboardInterrupt):
        errors.note_interrupt()
    assert errors.is_interrupt(broken)


def test_an_import_error_caused_by_a_keyboard_interrupt_is_one(monkeypatch):
    monkeypatch.setattr(errors, "_interrupted", False)
    try:
        try:
            raise KeyboardInterrupt
        except KeyboardInterrupt as interrupt:
            raise ImportError("Encountered an error while initializing the extension") from interrupt
    except ImportError as exc:
        assert errors.is_interrupt(exc)
    assert not errors.is_interrupt(ImportError("No module named 'nothing_here'"))


def test_an_error_s_first_line_is_its_message_s_or_its_type_s():
    assert errors.first_line(ValueError("one\ntwo")) == "one"
    assert errors.first_line(ValueError()) == "ValueError"
