"""Rendered Cumulus ``startup.yaml`` files are valid NVUE for the release they name (issue 15, item 8).

Each file is checked against NVIDIA's NVUE object model of that release: the ``nvueschema``
package carries Pydantic models generated from the OpenAPI spec NVIDIA publishes per release
(``nvueschema.models.v5_X``). Those models ignore unknown keys by default; here every model of the
release is made strict (``extra="forbid"``), so a key the release does not have is an error, as it
is for ``nv config apply``. The release boundaries the template follows (5.3: cable length moves
from ``qos roce`` to the PFC profile; 5.6: per-port PFC watchdog; 5.15: ``state: enabled`` knobs,
``auto-negotiate enabled|disabled``, ``ipv4``) are all rendered and checked, and the rendered file
reads back through the parser of ``nv config show -o json`` (the ``check --intended`` loop).
"""

from __future__ import annotations

import functools
import importlib
from pathlib import Path
from typing import Any

import pytest
import yaml
from pydantic import BaseModel, ValidationError

from fabline.design.model import load_design
from fabline.design.render import render_design
from fabline.errors import ConfigError
from fabline.platforms.base import release_key
from fabline.platforms.cumulus import PLATFORM, read_startup_yaml

ROOT = Path(__file__).resolve().parents[2]
DESIGN = ROOT / "tests" / "golden" / "configs" / "design.yml"
TEMPLATES = ROOT / "templates"
#: The golden design's Cumulus switches.
CUMULUS = ("spine-001", "leaf-r1-000")
#: Every boundary of the template (first release of each form, the one before it), the newest
#: model nvueschema has, and the release fabline models by default.
RELEASES = ("5.3.0", "5.5.0", "5.6.0", "5.9.0", "5.14.0", "5.15.0", "5.18.0", PLATFORM.os_version)


@functools.cache
def strict_model(release: str) -> type[BaseModel]:
    """NVUE's configuration model of a release, with unknown keys made errors."""
    major, minor = release.split(".")[:2]
    module = importlib.import_module(f"nvueschema.models.v{major}_{minor}")
    models = [
        c for c in vars(module).values()
        if isinstance(c, type) and issubclass(c, BaseModel) and c.__module__ == module.__name__
    ]  # fmt: skip
    for model in models:
        model.model_config["extra"] = "forbid"
    for model in models:  # children are defined first: rebuild in that order
        model.model_rebuild(force=True)
    root: type[BaseModel] = module.NvueConfig
    return root


def render(tmp: Path, release: str) -> dict[str, str]:
    design = load_design(DESIGN)
    design.os_version["cumulus"] = release
    render_design(design, TEMPLATES, tmp)
    return {name: (tmp / name / "startup.yaml").read_text() for name in CUMULUS}


@pytest.fixture(scope="module", params=sorted(set(RELEASES)))
def rendered(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> tuple[str, dict[str, str]]:
    release = str(request.param)
    return release, render(tmp_path_factory.mktemp(f"nvue-{release}"), release)


def _set(text: str) -> dict[str, Any]:
    doc = yaml.safe_load(text)
    assert isinstance(doc, list) and set(doc[0]) == {"header"} and set(doc[1]) == {"set"}
    body: dict[str, Any] = doc[1]["set"]
    return body


def test_rendered_file_is_valid_nvue_of_its_release(rendered: tuple[str, dict[str, str]]) -> None:
    release, files = rendered
    model = strict_model(release)
    for name, text in files.items():
        assert yaml.safe_load(text)[0]["header"]["version"] == f"Cumulus Linux {release}", name
        model.model_validate(_set(text))  # raises on an unknown key or a value the release refuses


def test_rendered_file_reads_back(rendered: tuple[str, dict[str, str]]) -> None:
    release, files = rendered
    state = read_startup_yaml(files["leaf-r1-000"])
    assert state["qos"]["roce"]["enabled"] is True and state["qos"]["roce"]["mode"] == "lossless"
    linked = [b for n, b in state["interfaces"].items() if n.startswith("swp") and b.get("admin_up")]
    assert linked
    for body in linked:
        assert (body["mtu"], body["speed_gbps"], body["fec"], body["autoneg"]) == (9216, 400, "rs", False)
        assert body["pfc_priorities"] == [3] and body["dscp_to_priority"]["26"] == 3
    watchdog = state["qos"].get("pfc_watchdog", {}).get("enabled")
    assert watchdog is (release_key(release) >= (5, 6, 0)), release  # type: ignore[operator]


@pytest.mark.parametrize(
    ("release", "path", "key", "value"),
    [
        ("5.9.0", ("qos", "roce"), "cable-length", 40),  # 5.0-5.2 only
        ("5.15.0", ("qos", "roce"), "enable", "on"),  # renamed "state" in 5.15
        ("5.5.0", ("interface", "swp1", "qos"), "pfc-watchdog", {"state": "enable"}),  # 5.6+
    ],
)
def test_a_key_the_release_lacks_is_an_error(
    tmp_path: Path, release: str, path: tuple[str, ...], key: str, value: Any
) -> None:
    body = _set(render(tmp_path, release)["leaf-r1-000"])
    node = body
    for part in path:
        node = node.setdefault(part, {})
    node[key] = value
    with pytest.raises(ValidationError) as info:
        strict_model(release).model_validate(body)
    assert key in str(info.value)


@pytest.mark.parametrize(("release", "why"), [("5.2.0", "5.3 and later"), ("five", "no release number")])
def test_a_release_the_template_cannot_render_is_refused(tmp_path: Path, release: str, why: str) -> None:
    design = tmp_path / "design.yml"
    design.write_text(DESIGN.read_text() + f"os_version: {{cumulus: {release}}}\n")
    with pytest.raises(ConfigError, match="os_version") as info:
        load_design(design)
    assert why in str(info.value) and "cumulus" in str(info.value)
