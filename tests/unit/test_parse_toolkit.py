"""The shared parsing toolkit (fabline.platforms.toolkit): properties its fast paths must keep."""

from __future__ import annotations

import random

from fabline.platforms.toolkit import _assign, _row_reader, dash_tables


def test_the_row_fast_path_assigns_every_token_as_the_overlap_rule_does() -> None:
    """Cutting a row at the dash runs' ends gives the cells the token-by-token overlap rule gives."""
    rnd = random.Random(12)
    for _ in range(20_000):
        spans, pos = [], rnd.randint(0, 3)
        for _ in range(rnd.randint(1, 5)):
            width = rnd.randint(1, 8)
            spans.append((pos, pos + width))
            pos += width + rnd.randint(1, 4)
        line = "".join(rnd.choice("ab  -\t") for _ in range(rnd.randint(0, pos + 6)))
        assert _row_reader(spans)(line) == _assign(line, spans), (line, spans)


def test_a_wide_value_overhanging_its_column_stays_in_it() -> None:
    table = dash_tables(["Interface    Oper  Description", "-----------  ----  -----------",
                         "Ethernet100  up    to spine-1 port 3", "Ethernet0      down  x"])[0]  # fmt: skip
    assert table.rows == (
        {"Interface": "Ethernet100", "Oper": "up", "Description": "to spine-1 port 3"},
        {"Interface": "Ethernet0", "Oper": "down", "Description": "x"},
    )
