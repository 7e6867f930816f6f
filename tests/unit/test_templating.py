"""One templating helper: inventory variables and baseline values share the environment and filters."""

from __future__ import annotations

from pathlib import Path

import pytest

from fabline.inventory import load_inventory
from fabline.templating import FILTERS, TemplateValueError, render


@pytest.mark.parametrize(
    ("template", "value", "expected"),
    [
        ("{{ flag | bool }}", "yes", True),
        ("{{ flag | bool }}", "off", False),
        ("{{ flag | ternary(3, 4) }}", True, 3),
        ("{{ flag | d(7) }}", 5, 5),
        ("{{ flag | mandatory }}", "x", "x"),
    ],
)
def test_the_same_filters_in_inventory_vars_and_baseline_values(
    tmp_path: Path, template: str, value: object, expected: object
) -> None:
    inv_file = tmp_path / "hosts.yml"
    inv_file.write_text(
        "leaf:\n  hosts:\n    leaf1:\n      fabline_role: leaf\n      fabline_platform: sonic\n"
        f"      flag: {value!r}\n      derived: {template!r}\n",
        "utf-8",
    )
    from_inventory = load_inventory(inv_file).device("leaf1").vars["derived"]
    from_baseline = render(template, {"flag": value})
    assert from_inventory == from_baseline == expected
    assert type(from_inventory) is type(expected)


def test_every_shared_filter_is_ansibles() -> None:
    assert set(FILTERS) == {"bool", "ternary", "mandatory"}


def test_baseline_values_cannot_read_the_environment() -> None:
    # An expected value is printed in every report: no env lookup from a baseline.
    with pytest.raises(TemplateValueError):
        render("{{ lookup('env', 'HOME') }}", {})


def test_value_templates_are_compiled_once_and_shared_by_inventory_and_baseline() -> None:
    """One native-value rule (``compile_value``): a baseline value's template is compiled once,
    and inventory variables use the same filters and the same single-expression rule."""
    from fabline.inventory.varstemplates import VarsTemplater
    from fabline.templating import _TEXT_ENV, compile_value

    text = "{{ flag | bool }}"
    assert render(text, {"flag": "on"}) is True
    first = _TEXT_ENV.value_templates[text]
    assert render(text, {"flag": "off"}) is False and _TEXT_ENV.value_templates[text] is first
    assert compile_value(_TEXT_ENV, text) is first and first.single and first.names == {"flag"}
    host_vars = VarsTemplater().render_vars(
        "gpu1", {"flag": "yes", "on": text, "n": " {{ 3 + 4 }} "}, {}, dict
    )
    assert host_vars["on"] is True and host_vars["n"] == 7
