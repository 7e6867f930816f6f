"""The shared parsing toolkit (fabline.platforms.toolkit): properties its fast paths must keep."""

from __future__ import annotations

import random

from fabline.platforms import arista_eos_names, cisco_nxos_names
from fabline.platforms.toolkit import _assign, _row_reader, dash_tables, port_blocks, text_blocks


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


def test_port_blocks_name_ports_canonically_and_keep_only_state_interfaces() -> None:
    """NX-OS and EOS heads in short form; loopbacks and sub-interfaces left out, block text kept."""
    nxos = "Eth1/1 is up\n  MTU 9216 bytes\nlo0 is up\nEth1/2.5 is up\nPo12 is down\n  MTU 1500 bytes\n"
    blocks = text_blocks(nxos, r"^(?P<name>\S+) is (?P<state>up|down)")
    got = [(name, head["state"], block.split()) for name, head, block in
           port_blocks(blocks, cisco_nxos_names.canonical_name, cisco_nxos_names.kept)]  # fmt: skip
    assert got == [
        ("Ethernet1/1", "up", ["MTU", "9216", "bytes"]),
        ("port-channel12", "down", ["MTU", "1500", "bytes"]),
    ]
    eos = "Interface Et3/1 detected 1 LLDP neighbors:\n x\nInterface Vl10 detected 1 LLDP neighbors:\n"
    blocks = text_blocks(eos, r"^Interface (\S+) detected (\d+)")
    assert [
        n for n, _, _ in port_blocks(blocks, arista_eos_names.canonical_name, arista_eos_names.kept, 1)
    ] == ["Ethernet3/1"]
