"""Apply a remediation folder's per-device changes over real SSH, as an operator would.

fabline never applies anything; the closed-loop tests do it here, per platform, the way the
change files say: SONiC patches into ``config apply-patch /dev/stdin``, the Cumulus ``nv`` script,
EOS/NX-OS configuration-mode lines in an interactive session, the host script.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import paramiko


def _client(address: tuple[str, int], password: str) -> paramiko.SSHClient:
    client = paramiko.SSHClient()
    client.set_missing_host_key_policy(paramiko.AutoAddPolicy())
    client.connect(address[0], address[1], username="admin", password=password, look_for_keys=False,
                   allow_agent=False, timeout=10)  # fmt: skip
    return client


def run(
    address: tuple[str, int], password: str, command: str, stdin: str | None = None
) -> tuple[str, str, int]:
    """One exec-channel command (with ``stdin`` sent and closed); stdout, stderr, exit status."""
    client = _client(address, password)
    try:
        chan_in, chan_out, chan_err = client.exec_command(command, timeout=20)
        if stdin is not None:
            try:
                chan_in.write(stdin)
                chan_in.channel.shutdown_write()
            except OSError:
                pass  # a read-only device answers without reading its input and closes the channel
        out = chan_out.read().decode()
        err = chan_err.read().decode()
        return out, err, chan_out.channel.recv_exit_status()
    finally:
        client.close()


def interactive(address: tuple[str, int], password: str, lines: list[str]) -> str:
    """Type ``lines`` into an interactive CLI session and return everything it printed."""
    client = _client(address, password)
    try:
        chan = client.invoke_shell(width=200, height=0)
        chan.settimeout(20)
        out = b""
        for line in ["terminal length 0", *lines, "exit"]:
            chan.send((line + "\n").encode())
            time.sleep(0.01)
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            data = chan.recv(65536)
            if not data:
                break
            out += data
        return out.decode("utf-8", "replace")
    finally:
        client.close()


def apply_folder(folder: Path, addresses: dict[str, tuple[str, int]], password: str) -> dict[str, list[str]]:
    """Apply every device change of a remediation folder; returns what each device answered."""
    doc: dict[str, Any] = json.loads((folder / "remediation.json").read_text())
    answers: dict[str, list[str]] = {}
    for change in doc["changes"]:
        name, platform = change["device"], change["platform"]
        files = {f: (folder / "devices" / f).read_text() for f in change["files"]}
        got: list[str] = []
        if platform == "sonic":
            for f in (f"{name}.patch.json", f"{name}.disruptive.patch.json"):
                if f in files:
                    out, err, code = run(
                        addresses[name], password, "sudo config apply-patch /dev/stdin", files[f]
                    )
                    assert code == 0, (name, f, out, err)
                    got.append(out)
        elif platform == "cumulus":
            out, err, code = run(addresses[name], password, files[f"{name}.nv.sh"])
            assert code == 0 and "Error" not in err, (name, out, err)
            got.append(out)
        elif platform in ("arista_eos", "cisco_nxos"):
            for f in (f"{name}.cli.txt", f"{name}.disruptive.cli.txt"):
                if f in files:
                    lines = [
                        ln for ln in files[f].splitlines() if ln.strip() and not ln.lstrip().startswith("!")
                    ]
                    if platform == "arista_eos":
                        lines = [
                            "configure session fabline-remediate",
                            *lines,
                            "show session-config diffs",
                            "commit",
                        ]
                    else:
                        lines = ["configure terminal", *lines, "end"]
                    text = interactive(addresses[name], password, lines)
                    assert "% " not in text, (name, f, text)
                    got.append(text)
        elif platform == "linux":
            out, err, code = run(addresses[name], password, files[f"{name}.sh"])
            assert code == 0, (name, out, err)
            got.append(out)
        else:
            raise AssertionError(f"no way to apply a {platform} change")
        answers[name] = got
    return answers
