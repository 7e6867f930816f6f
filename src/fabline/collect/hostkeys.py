"""Host-key policy: trust on first use into a known_hosts file, refuse a changed key.

``accept-new`` (the default) records the key of a device seen for the first time and refuses a
device whose key changed, like OpenSSH's ``StrictHostKeyChecking=accept-new``; ``strict`` refuses
any device not already in the file; ``ignore`` checks nothing and records nothing (labs only).
The file is OpenSSH's format (``[host]:port`` for non-22 ports), so ``ssh-keygen -R`` works on it.
"""

from __future__ import annotations

import threading
from pathlib import Path

import paramiko

from fabline.collect.defaults import HOST_KEY_POLICIES
from fabline.errors import ConfigError


class HostKeyRefused(paramiko.SSHException):  # type: ignore[misc]
    """The device's host key is unknown under ``strict`` (a changed key is paramiko's BadHostKeyException)."""


class HostKeyStore:
    """The known_hosts file of a run, shared by every worker thread.

    The file is read once; each connection gets only its own host's entries (so 10k devices do not
    each parse the whole file), and new keys are appended under a lock as they are learnt.
    """

    def __init__(self, path: Path | None, policy: str = "accept-new") -> None:
        if policy not in HOST_KEY_POLICIES:
            raise ConfigError(f"host key policy {policy!r} is not one of {', '.join(HOST_KEY_POLICIES)}")
        self.path = path
        self.policy = policy
        self._lock = threading.Lock()
        self._keys = paramiko.HostKeys()
        if policy != "ignore" and path is not None and path.exists():
            try:
                self._keys.load(str(path))
            except (OSError, paramiko.SSHException, ValueError) as exc:
                raise ConfigError(f"cannot read known_hosts: {exc}", file=path) from None
        if policy == "strict" and (path is None or not path.exists()):
            raise ConfigError(
                "--host-key-policy strict needs an existing known_hosts file (--known-hosts FILE)",
                file=path,
            )

    @staticmethod
    def entry_name(host: str, port: int) -> str:
        """The known_hosts name of an address.

        Example:
            >>> HostKeyStore.entry_name("10.0.0.1", 22), HostKeyStore.entry_name("127.10.0.1", 2222)
            ('10.0.0.1', '[127.10.0.1]:2222')
        """
        return host if port == 22 else f"[{host}]:{port}"

    def prepare(self, client: paramiko.SSHClient, host: str, port: int) -> None:
        """Load this host's known keys into a client and set the policy for an unknown one."""
        if self.policy == "ignore":
            client.set_missing_host_key_policy(_IgnorePolicy())
            return
        name = self.entry_name(host, port)
        with self._lock:
            known = self._keys.lookup(name)
        if known is not None:
            for keytype in known:
                client.get_host_keys().add(name, keytype, known[keytype])
        client.set_missing_host_key_policy(_StorePolicy(self) if self.policy == "accept-new" else _Refuse())

    def learn(self, hostname: str, key: paramiko.PKey) -> None:
        """Record a first-seen key (in memory and appended to the file)."""
        with self._lock:
            if self._keys.lookup(hostname) is not None:
                return
            self._keys.add(hostname, key.get_name(), key)
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("a", encoding="utf-8") as fh:
                    fh.write(f"{hostname} {key.get_name()} {key.get_base64()}\n")


class _StorePolicy(paramiko.MissingHostKeyPolicy):  # type: ignore[misc]
    def __init__(self, store: HostKeyStore) -> None:
        self.store = store

    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        self.store.learn(hostname, key)


class _Refuse(paramiko.MissingHostKeyPolicy):  # type: ignore[misc]
    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        raise HostKeyRefused(f"host key of {hostname} is not in known_hosts (policy strict)")


class _IgnorePolicy(paramiko.MissingHostKeyPolicy):  # type: ignore[misc]
    def missing_host_key(self, client: paramiko.SSHClient, hostname: str, key: paramiko.PKey) -> None:
        return None
