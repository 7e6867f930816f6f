"""A clone is enough: the tests' real samples are in the repository, with their provenance.

Nothing tracked may point outside the clone (the project once read a sample folder beside it, which
nobody who downloads fabline has), and every sample file has exactly one provenance row.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.conftest import REPO_ROOT, SAMPLES, sample_files

# Written so that this file does not match itself.
OUTSIDE = re.compile(r"\.\./shared|shared[/]samples|/work[/]shared")
_SKIP_DIRS = frozenset({".git", ".venv", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"})


def _repository_files() -> list[Path]:
    """The tracked files (``git ls-files``), or every file of the tree outside a git checkout (sdist)."""
    if (REPO_ROOT / ".git").exists():
        listed = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "ls-files", "-z"], capture_output=True, check=True, timeout=60
        ).stdout.decode()
        return [REPO_ROOT / name for name in listed.split("\0") if name]
    return [
        p
        for p in REPO_ROOT.rglob("*")
        if p.is_file() and not _SKIP_DIRS & set(p.relative_to(REPO_ROOT).parts)
    ]


def test_no_repository_file_refers_outside_the_clone() -> None:
    files = _repository_files()
    assert len(files) > 300  # the listing worked (the samples alone are over 160 files)
    offenders = []
    for path in files:
        if not path.is_file():  # deleted in the work tree, still in the index
            continue
        text = path.read_bytes().decode("utf-8", errors="replace")
        for number, line in enumerate(text.splitlines(), 1):
            if OUTSIDE.search(line):
                offenders.append(f"{path.relative_to(REPO_ROOT)}:{number}: {line.strip()[:100]}")
    assert not offenders, "files referring outside the clone:\n" + "\n".join(offenders)


def test_the_pattern_finds_what_it_must() -> None:
    """The check above can fail: each form of an outside reference is caught."""
    up, name = "..", "shared"  # built at run time so that this file does not match itself
    for line in (
        f"see {up}/{name}/DOMAIN.md",
        f"Path('{up}/{name}')",
        f"in {name}/samples/x",
        f"/work/{name}/x",
    ):
        assert OUTSIDE.search(line), line
    assert not OUTSIDE.search("tests/samples/sonic/x.txt")


def _manifest_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in (SAMPLES / "MANIFEST.md").read_text("utf-8").splitlines():
        if not line.startswith("| ") or line.startswith(("| file ", "|---")):
            continue
        # Cells may contain an escaped pipe (``\\|``, e.g. ``show version \\| json``).
        cells = [c.strip().replace("\\|", "|") for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        assert len(cells) == 7, f"MANIFEST.md: row has {len(cells)} columns, expected 7: {line[:80]}"
        assert cells[0] not in rows, f"MANIFEST.md: {cells[0]} has two rows"
        rows[cells[0]] = cells
    return rows


def test_every_sample_has_one_manifest_row_and_every_row_a_file() -> None:
    rows = _manifest_rows()
    files = sample_files()
    assert len(files) >= 164
    assert sorted(rows) == files, {
        "files without a row": sorted(set(files) - set(rows)),
        "rows without a file": sorted(set(rows) - set(files)),
    }
    for name, (_, repo, where, _commit, licence, command, _notes) in rows.items():
        assert "/" in repo and where and licence and command, f"MANIFEST.md: {name}: incomplete provenance"


def test_licences_that_require_a_notice_have_one() -> None:
    """Apache-2.0, MIT and GPL texts ship beside the samples that use them."""
    licences = {cells[4] for cells in _manifest_rows().values()}
    texts = {p.name for p in (SAMPLES / "LICENSES").iterdir()}
    notice = (SAMPLES / "NOTICE.md").read_text("utf-8")
    if any(lic.startswith("Apache-2.0") for lic in licences):
        assert "Apache-2.0.txt" in texts
    if any(lic.startswith("GPL-3.0") for lic in licences):
        assert "GPL-3.0.txt" in texts
    for repo in sorted({cells[1] for cells in _manifest_rows().values() if cells[4].startswith("MIT")}):
        assert f"MIT-{repo.replace('/', '-')}.txt" in texts, repo
        assert repo in notice, repo
