"""Rendering: golden configs per platform and role, StrictUndefined errors, determinism, validity."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
import yaml

from fabline.design.model import load_design
from fabline.design.render import find_templates, render_design
from fabline.errors import ConfigError
from fabline.platforms.arista_eos_config import config_tree

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden" / "configs"
TEMPLATES = ROOT / "templates"
#: One device per platform and role of the golden design (see its header).
GOLDEN_DEVICES = {
    "spine-000": "config_db.json",
    "leaf-r0-000": "config_db.json",
    "spine-001": "startup.yaml",
    "leaf-r1-000": "startup.yaml",
    "spine-002": "startup-config",
    "leaf-r2-000": "startup-config",
    "gpu-00001": "host.yml",
}


@pytest.fixture(scope="module")
def rendered(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("configs")
    render_design(load_design(GOLDEN / "design.yml"), TEMPLATES, out)
    return out


@pytest.mark.parametrize(("device", "filename"), sorted(GOLDEN_DEVICES.items()))
def test_golden_config(rendered: Path, device: str, filename: str) -> None:
    got = (rendered / device / filename).read_text()
    golden = GOLDEN / device / filename
    if os.environ.get("FABLINE_UPDATE_GOLDEN"):
        golden.parent.mkdir(parents=True, exist_ok=True)
        golden.write_text(got)
    assert got == golden.read_text(), f"{device}/{filename} differs from the golden file"


def test_every_device_rendered_and_loads(rendered: Path) -> None:
    names = sorted(p.name for p in rendered.iterdir())
    assert len(names) == 4 + 8 + 2
    for folder in rendered.iterdir():
        (file,) = list(folder.iterdir())
        text = file.read_text()
        if file.name.endswith(".json"):
            doc = json.loads(text)
            assert doc["DEVICE_METADATA"]["localhost"]["hostname"] == folder.name
        elif file.name.endswith((".yaml", ".yml")):
            assert yaml.safe_load(text)
        else:
            assert any(n.text == f"hostname {folder.name}" for n in config_tree(text))


def test_rendering_is_deterministic(rendered: Path, tmp_path: Path) -> None:
    render_design(load_design(GOLDEN / "design.yml"), TEMPLATES, tmp_path, jobs=2)
    for folder in rendered.iterdir():
        for file in folder.iterdir():
            assert (tmp_path / folder.name / file.name).read_bytes() == file.read_bytes()


def _templates_copy(tmp_path: Path) -> Path:
    dst = tmp_path / "templates"
    shutil.copytree(TEMPLATES, dst)
    return dst


def test_undefined_variable_names_template_line_and_variable(tmp_path: Path) -> None:
    tpl = _templates_copy(tmp_path)
    path = tpl / "arista_eos" / "startup-config.j2"
    lines = path.read_text().splitlines(keepends=True)
    at = next(i for i, s in enumerate(lines) if s.startswith("hostname "))
    lines.insert(at + 1, "ntp server {{ ntp_server }}\n")
    path.write_text("".join(lines))
    with pytest.raises(ConfigError) as err:
        render_design(load_design(GOLDEN / "design.yml"), tpl, tmp_path / "out", hosts=False)
    assert err.value.file is not None and err.value.file.endswith("startup-config.j2")
    assert err.value.line == at + 2
    assert "'ntp_server'" in err.value.message


def test_undefined_attribute_is_an_error(tmp_path: Path) -> None:
    tpl = _templates_copy(tmp_path)
    path = tpl / "linux" / "host.yml.j2"
    path.write_text(path.read_text().replace("{{ q.mtu }}", "{{ q.mtu_bytes }}"))
    with pytest.raises(ConfigError, match="undefined variable 'mtu_bytes'") as err:
        render_design(load_design(GOLDEN / "design.yml"), tpl, tmp_path / "out")
    assert err.value.file is not None and err.value.file.endswith("host.yml.j2") and err.value.line


def test_syntax_error_names_line(tmp_path: Path) -> None:
    tpl = _templates_copy(tmp_path)
    path = tpl / "sonic" / "config_db.json.j2"
    path.write_text('{\n"a": 1,\n"b": "{{ device.name | }}"\n}\n')
    with pytest.raises(ConfigError, match="template syntax error") as err:
        render_design(load_design(GOLDEN / "design.yml"), tpl, tmp_path / "out")
    assert err.value.line == 3
    assert not (tmp_path / "out").exists()  # nothing written before every template compiled


def test_invalid_output_is_refused(tmp_path: Path) -> None:
    tpl = _templates_copy(tmp_path)
    path = tpl / "sonic" / "config_db.json.j2"
    path.write_text(path.read_text().replace('"LOOPBACK_INTERFACE"', '"LOOPBACK_INTERFACE" oops'))
    with pytest.raises(ConfigError, match=r"rendered config_db\.json for \S+ does not load"):
        render_design(load_design(GOLDEN / "design.yml"), tpl, tmp_path / "out")


def test_missing_platform_templates(tmp_path: Path) -> None:
    tpl = _templates_copy(tmp_path)
    shutil.rmtree(tpl / "cumulus")
    with pytest.raises(ConfigError, match="no templates for platform 'cumulus'"):
        render_design(load_design(GOLDEN / "design.yml"), tpl, tmp_path / "out")


def test_two_main_templates_refused(tmp_path: Path) -> None:
    tpl = _templates_copy(tmp_path)
    (tpl / "sonic" / "other.j2").write_text("x")
    (tpl / "sonic" / "_macros.j2").write_text("x")  # partials do not count
    with pytest.raises(ConfigError, match="exactly one main template"):
        render_design(load_design(GOLDEN / "design.yml"), tpl, tmp_path / "out")


def test_find_templates(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="templates folder not found"):
        find_templates(tmp_path / "nope")
    monkeypatch.chdir(tmp_path)
    packaged = find_templates(None)
    assert (packaged / "sonic" / "config_db.json.j2").is_file()
    (tmp_path / "templates" / "sonic").mkdir(parents=True)
    assert find_templates(None) == tmp_path / "templates"


def test_worker_errors_reach_the_caller(tmp_path: Path) -> None:
    tpl = _templates_copy(tmp_path)
    path = tpl / "cumulus" / "startup.yaml.j2"
    path.write_text(path.read_text().replace("{{ device.asn }}", "{{ device.as_number }}"))
    with pytest.raises(ConfigError, match="undefined variable 'as_number'"):
        render_design(load_design(GOLDEN / "design.yml"), tpl, tmp_path / "out", jobs=2)
