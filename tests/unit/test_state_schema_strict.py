"""Every field a parser writes is in the state schema (and so in ``fabline.state_types``).

The shipped schema lets a document carry fields it does not list (a user's own tooling may add
some). fabline's own parsers may not: every parser of every platform runs over every sample in
``tests/samples`` and every local case in ``tests/parsers/local``, and every fragment one accepts
is validated with the schema made strict (no property beyond those listed, wherever an object lists
them). The simulator's outputs for a leaf, a spine and a host of each switch platform are parsed,
merged and finished as a collection does, and checked the same way.
"""

from __future__ import annotations

import copy
from functools import cache
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from fabline.errors import ParseError
from fabline.platforms import PLATFORMS, ParseContext
from fabline.platforms.dispatch import checked_merge, run_parser
from fabline.state import schema_document
from tests.conftest import REPO_ROOT, sample_files, samples_dir

LOCAL = REPO_ROOT / "tests" / "parsers" / "local"


def strict(node: Any) -> Any:
    """The schema with ``additionalProperties: false`` on every object that lists its properties."""
    if isinstance(node, dict):
        if "properties" in node and "additionalProperties" not in node:
            node["additionalProperties"] = False
        for value in node.values():
            strict(value)
    elif isinstance(node, list):
        for value in node:
            strict(value)
    return node


@cache
def validator() -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(strict(copy.deepcopy(schema_document())))


def problems(body: dict[str, Any], where: str) -> list[str]:
    doc = {"schema": "fabline.state/1", "name": "x", **body}
    return [
        f"{where}: {'.'.join(map(str, e.absolute_path)) or '$'}: {e.message}"
        for e in validator().iter_errors(doc)
    ]


def _outputs() -> list[Path]:
    return [samples_dir() / rel for rel in sample_files()] + sorted(
        p for p in LOCAL.rglob("*") if p.is_file()
    )


@pytest.mark.parametrize("platform", sorted(PLATFORMS))
def test_every_field_a_parser_writes_is_in_the_schema(platform: str) -> None:
    spec = PLATFORMS[platform]
    found: list[str] = []
    accepted = 0
    for path in _outputs():
        text = path.read_text("utf-8", errors="replace")
        for command in spec.commands:
            params = dict.fromkeys(command.parameters, "Ethernet0")
            line = command.render(**params)
            try:
                fragment = run_parser(
                    command.parser, text, ParseContext(platform, line, params), validate=False
                )
            except ParseError:
                continue
            accepted += 1
            found += problems(fragment, f"{path.relative_to(REPO_ROOT)} as {command.template!r}")
    assert accepted >= 5, f"{platform}: only {accepted} outputs parsed (is the sample walk broken?)"
    assert not found, "\n".join(found[:20])


def outputs(sim: Any, name: str) -> list[tuple[str, str]]:
    """(command, output) of every command the collection profile runs, as the simulator answers (bench/parse_bench.py)."""
    from fabline.collect.allowlist import split_by_release
    from fabline.collect.profiles import PROFILES
    from fabline.sim.render import render

    dev = sim.devices[name]
    profile = PROFILES[dev.platform]
    state = dev.state()
    release = state.get("facts", {}).get("os_version")

    def sent(templates: Any) -> list[str]:
        return split_by_release(dev.platform, templates, release)[0]

    lines = sent(profile.device_commands)
    ports = [i for i in state.get("interfaces", {}) if profile.wants_interface(i)]
    lines += [t.format(interface=i) for t in sent(profile.interface_commands) for i in ports]
    rdma = [
        b["nic"]["rdma_device"] for b in state["interfaces"].values() if "rdma_device" in b.get("nic", {})
    ]
    lines += [t.format(rdma_device=r) for t in sent(profile.rdma_commands) for r in rdma]
    return [(line, dev.answer(line, render).out) for line in lines]


@pytest.mark.parametrize("platform", ["sonic", "cumulus", "arista_eos", "cisco_nxos"])
def test_every_field_of_a_simulated_collection_is_in_the_schema(platform: str) -> None:
    from fabline import synthetic
    from fabline.sim.server import Simulator

    fabric = synthetic.rail_fabric(16, radix=8, leaf_platforms=(platform,), spine_platforms=(platform,))
    sim = Simulator(fabric)
    found: list[str] = []
    for role in ("leaf", "spine", "host"):
        name = next(d.name for d in fabric.devices if d.role == role)
        spec = PLATFORMS[sim.devices[name].platform]
        fragments = []
        for line, out in outputs(sim, name):
            command, params = spec.match(line)
            try:
                fragments.append(
                    run_parser(command.parser, out, ParseContext(spec.id, line, params), validate=False)
                )
            except ParseError as exc:
                raise AssertionError(f"{name}: {exc}") from None
        merged, refused = checked_merge(fragments)
        assert not refused
        state = spec.finish(merged)
        assert len(state.get("interfaces", {})) >= 2
        found += problems(state, f"{name} ({spec.id})")
    assert not found, "\n".join(found[:20])


def test_the_strict_schema_refuses_an_unlisted_field() -> None:
    """The walk above can fail: a field the schema does not list is found, at any depth."""
    assert problems({"interfaces": {"e1": {"mtu": 9000}}}, "ok") == []
    found = problems({"interfaces": {"e1": {"optics": {"vendor": "x", "colour": "blue"}}}}, "bad")
    assert found and "'colour' was unexpected" in found[0]
    assert "interfaces.e1.optics" in found[0]
