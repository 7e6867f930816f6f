"""Ansible-compatible inventory: read what ``ansible-inventory`` reads, resolve fabline devices.

The loader mirrors ansible-core's own rules (``inventory/data.py``, the ``yaml`` and ``ini``
inventory plugins, the ``host_group_vars`` vars plugin and ``VariableManager.get_vars``) so that
:meth:`Inventory.to_ansible_list` prints the same JSON as ``ansible-inventory -i PATH --list``:

* sources: a YAML/JSON file, an INI file, or a directory of them (sorted, recursively, skipping
  hidden files, ``group_vars``/``host_vars``, and Ansible's ignored extensions such as ``.retry``,
  ``.orig``, ``~``, ``.md``);
* ``group_vars/`` and ``host_vars/`` beside the inventory file or inside the inventory directory:
  the first of ``NAME``, ``NAME.yml``, ``NAME.yaml``, ``NAME.json`` (a directory ``NAME/`` is read
  file by file in sorted order);
* precedence, lowest first: ``all`` vars, other group vars from the inventory (by depth, then
  ``ansible_group_priority``, then name), ``group_vars/all``, ``group_vars/<group>`` (same order),
  the host's inventory vars, ``host_vars/<host>``.

fabline is stricter than Ansible where Ansible only warns: unknown keys in a YAML group, a name that
is both a host and a group, an unparsable file in an inventory directory, an empty host range and a
``--limit`` term matching nothing are :class:`~fabline.errors.ConfigError`.

Example:
    >>> import tempfile, pathlib
    >>> d = pathlib.Path(tempfile.mkdtemp())
    >>> _ = (d / "hosts.ini").write_text("[leaf]\\nleaf[01:02] fabline_role=leaf\\n")
    >>> inv = load_inventory(d / "hosts.ini")
    >>> list(inv.hosts), inv.host_groups("leaf02"), inv.host_vars("leaf01")
    (['leaf01', 'leaf02'], ['leaf'], {'fabline_role': 'leaf'})

The package has one module per job: :mod:`~fabline.inventory.sources` (YAML/INI sources),
:mod:`~fabline.inventory.files` (reading files, YAML tags), :mod:`~fabline.inventory.groups` (group
closure), :mod:`~fabline.inventory.varsdirs` (``group_vars``/``host_vars``),
:mod:`~fabline.inventory.patterns` (host ranges and patterns), :mod:`~fabline.inventory.varstemplates`
(templated variables), :mod:`~fabline.inventory.model` (hosts, groups, devices) and
:mod:`~fabline.inventory.core` (the loaded :class:`Inventory` and :func:`load_inventory`).
"""

from __future__ import annotations

from fabline.inventory.core import INTERNAL_STATIC_VARS, Inventory, Sources, load_inventory, sources_label
from fabline.inventory.model import ROLES, Device, Group, HostEntry, HostVars, Named
from fabline.platforms.spec import platform_for_network_os

__all__ = [
    "INTERNAL_STATIC_VARS",
    "ROLES",
    "Device",
    "Group",
    "HostEntry",
    "HostVars",
    "Inventory",
    "Named",
    "Sources",
    "load_inventory",
    "platform_for_network_os",
    "sources_label",
]
