"""The TypedDict view of the state (fabline.state_types) and the shipped JSON Schema stay equal."""

from __future__ import annotations

import json
import types
import typing
from typing import Any, Literal, get_args, get_origin, get_type_hints, is_typeddict

import pytest

from fabline import state_types
from fabline.state import schema_document
from fabline.synthetic import lab_fabric, states
from tests.conftest import REPO_ROOT

SHIPPED = json.loads((REPO_ROOT / "src/fabline/schemas/state-1.schema.json").read_text("utf-8"))
JSON_TYPES = {"string": str, "integer": int, "number": float, "boolean": bool, "null": type(None)}


def differences(schema: dict[str, Any], hint: Any, path: str) -> list[str]:
    """Where a JSON Schema node and a type annotation disagree (empty when they match)."""
    if is_typeddict(hint):
        return _object(schema, hint, path)
    if "const" in schema:
        return [] if hint is str and isinstance(schema["const"], str) else [f"{path}: const vs {hint}"]
    if "enum" in schema:
        if get_origin(hint) is Literal:
            return (
                [] if list(get_args(hint)) == schema["enum"] else [f"{path}: enum {schema['enum']} vs {hint}"]
            )
        return [f"{path}: enum vs {hint}"]
    kind = schema.get("type")
    if kind == "array":
        if get_origin(hint) is not list:
            return [f"{path}: array vs {hint}"]
        return differences(schema["items"], get_args(hint)[0], f"{path}[]")
    if kind == "object":
        if get_origin(hint) is not dict or get_args(hint)[0] is not str:
            return [f"{path}: object of values vs {hint}"]
        if "additionalProperties" not in schema and "properties" not in schema:  # free-form
            return [] if get_args(hint)[1] is Any else [f"{path}: free-form object vs {hint}"]
        return differences(schema["additionalProperties"], get_args(hint)[1], f"{path}.*")
    kinds = kind if isinstance(kind, list) else [kind]
    wanted = {JSON_TYPES[k] for k in kinds}
    got = set(get_args(hint)) if get_origin(hint) in (typing.Union, types.UnionType) else {hint}
    return [] if wanted == got else [f"{path}: {kinds} vs {hint}"]


def _object(schema: dict[str, Any], cls: Any, path: str) -> list[str]:
    hints = get_type_hints(cls)
    props = schema.get("properties", {})
    out = [f"{path}.{k}: in the schema, not in {cls.__name__}" for k in props.keys() - hints.keys()]
    out += [f"{path}.{k}: in {cls.__name__}, not in the schema" for k in hints.keys() - props.keys()]
    if set(schema.get("required", ())) != set(cls.__required_keys__):
        out.append(f"{path}: required {schema.get('required')} vs {sorted(cls.__required_keys__)}")
    for key in props.keys() & hints.keys():
        if path == "$" and key == "platform":
            continue  # the registry's ids (a platform registered at run time is valid): str
        out += differences(props[key], hints[key], f"{path}.{key}")
    return out


def test_the_typed_state_is_the_json_schema() -> None:
    assert differences(SHIPPED, state_types.State, "$") == []
    assert get_type_hints(state_types.State)["platform"] is str


def test_the_comparison_sees_a_difference() -> None:
    """A field that differs is reported (so the test above cannot pass vacuously)."""

    class Narrow(typing.TypedDict, total=False):
        mtu: str
        extra: int

    found = differences(SHIPPED["properties"]["interfaces"]["additionalProperties"], Narrow, "$.if")
    assert "$.if.mtu: ['integer'] vs <class 'str'>" in found
    assert "$.if.extra: in Narrow, not in the schema" in found
    assert any("in the schema, not in Narrow" in f for f in found)


@pytest.mark.parametrize("doc", list(states(lab_fabric()))[:3], ids=lambda d: d["name"])
def test_synthetic_states_fit_both(doc: dict[str, Any]) -> None:
    import jsonschema

    jsonschema.validate(doc, schema_document())
    typed: state_types.State = doc  # a plain dict, as at run time
    assert typed["schema"] == "fabline.state/1"
