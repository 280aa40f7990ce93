"""Stellaris dates (360-day calendar) and readable names from name templates."""

import pytest

from workbench.stellaris.dates import date_text, day_number
from workbench.stellaris.names import render, words_of


def test_day_numbers_sort_where_text_does_not():
    assert day_number("2312.01.01") == 2312 * 360
    assert day_number("2200.12.30") - day_number("2200.01.01") == 359
    assert day_number("2201.01.01") - day_number("2200.12.30") == 1
    assert day_number("999.01.01") < day_number("1000.01.01")
    assert date_text(day_number("2342.06.15")) == "2342.06.15"


@pytest.mark.parametrize("text", ["2200.13.01", "2200.02.31", "2200.00.10", "2200-01-01", "unknown", "", None, 2200])
def test_what_is_not_a_stellaris_date(text):
    assert day_number(text) is None


def test_templates_render_with_their_variables():
    empire = {
        "key": "%ADJECTIVE%",
        "variables": [
            {"key": "adjective", "value": {"key": "SPEC_Bilnoc"}},
            {"key": "1", "value": {"key": "Autocracy"}},
        ],
    }
    assert render(empire) == "Bilnoc Autocracy"
    war = {
        "key": "war_vs_adjectives",
        "variables": [
            {"key": "1", "value": {"key": "NAME_ADJ_Chosen"}},
            {
                "key": "2",
                "value": {"key": "%ADJECTIVE%", "variables": [{"key": "adjective", "value": {"key": "SPEC_Bilnoc"}}]},
            },
            {"key": "3", "value": {"key": "Xeno_Purification_War"}},
        ],
    }
    assert render(war) == "Chosen-Bilnoc Xeno Purification War"
    assert render("Plain Name") == "Plain Name" and render(None) == ""


def test_keys_read_as_words():
    assert words_of("SPEC_Bilnoc_planet") == "Bilnoc"
    assert words_of("MOL4_PLANET_LonesomeRetreat") == "Lonesome Retreat"
    assert words_of("NAME_Sol") == "Sol"
