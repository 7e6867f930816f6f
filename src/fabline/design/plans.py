"""Files ``fabline design --out DIR`` writes: design.yml, the Ansible inventory, the cabling plan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from fabline.design.model import Design, dump_design
from fabline.design.topology import Topology

CABLING_HEADER = "device,port,peer_device,peer_port,rail,plane"

_Dumper: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def inventory_dict(design: Design, topo: Topology | None = None) -> dict[str, Any]:
    """An Ansible YAML inventory of every switch and GPU server, with the vars the checks read.

    Switches: ``fabline_role``, ``fabline_platform``, ``plane``, leaves ``rail``, ``ansible_host``
    (the loopback), ``bgp_asn``, ``cable_length_m`` (the pfc-headroom check reads it),
    ``fabline_os_version`` (the release its config is rendered for), leaves ``fabline_ecmp_prefix``
    (:func:`ecmp_probes`). Servers: ``rail_interfaces`` (NIC ports in rail order).
    """
    topo = topo or Topology(design)
    spines: dict[str, Any] = {}
    leaves: dict[str, Any] = {}
    probes = ecmp_probes(design)
    for sw in design.switches:
        hv: dict[str, Any] = {
            "ansible_host": sw.loopback,
            "fabline_platform": sw.platform,
            "fabline_role": sw.role,
            "plane": sw.plane,
            "bgp_asn": sw.asn,
            "cable_length_m": getattr(design.qos, sw.role).cable_length_m,
            # The release its config is rendered for: the collector sends only the commands it has.
            "fabline_os_version": design.os_version.get(sw.platform, ""),
        }
        if sw.role == "leaf":
            hv["rail"] = sw.rail
            if sw.name in probes:
                hv["fabline_ecmp_prefix"] = probes[sw.name]
            leaves[sw.name] = hv
        else:
            spines[sw.name] = hv
    rails = topo.host_rails()
    hosts = {topo.host_name(h): None for h in range(design.hosts.count)}
    return {
        "all": {
            "children": {
                "fabric": {"children": {"spine": {"hosts": spines}, "leaf": {"hosts": leaves}}},
                "gpu_hosts": {
                    "hosts": hosts,
                    "vars": {
                        "fabline_platform": design.hosts.platform,
                        "fabline_role": "host",
                        "rail_interfaces": rails,
                    },
                },
            }
        }
    }


def ecmp_probes(design: Design) -> dict[str, str]:
    """Each leaf's ECMP probe prefix: the loopback of the next leaf of its plane (none when alone).

    The route there crosses every spine of the plane, so it must have one path per spine
    (``ecmp-fanout``).

    Example:
        >>> from fabline.design.model import generate
        >>> from fabline.design.sizing import SizingInput
        >>> probes = ecmp_probes(generate(SizingInput(gpus=16, switch_ports=8)))
        >>> probes["leaf-r0-000"], probes["leaf-r7-000"]
        ('10.0.0.6/32', '10.0.0.5/32')
    """
    by_plane: dict[int, list[Any]] = {}
    for sw in design.switches:
        if sw.role == "leaf":
            by_plane.setdefault(sw.plane, []).append(sw)
    out = {}
    for leaves in by_plane.values():
        if len(leaves) > 1:
            for i, sw in enumerate(leaves):
                out[sw.name] = f"{leaves[(i + 1) % len(leaves)].loopback}/32"
    return out


def cabling_csv(topo: Topology) -> str:
    """The cabling plan ``fabline check --cabling`` reads: one row per link, header first.

    Example:
        >>> from fabline.design.model import generate
        >>> from fabline.design.sizing import SizingInput
        >>> text = cabling_csv(Topology(generate(SizingInput(gpus=16, switch_ports=8))))
        >>> text.splitlines()[:2]
        ['device,port,peer_device,peer_port,rail,plane', 'gpu-00001,eth0,leaf-r0-000,Ethernet0,0,0']
    """
    rows = [CABLING_HEADER]
    for link in topo.links():
        rail = "" if link.rail is None else str(link.rail)
        rows.append(f"{link.device},{link.port},{link.peer_device},{link.peer_port},{rail},{link.plane}")
    return "\n".join(rows) + "\n"


def write_plans(design: Design, out: Path) -> list[Path]:
    """Write ``design.yml``, ``inventory.yml`` and ``cabling.csv`` into ``out``; returns the paths."""
    out.mkdir(parents=True, exist_ok=True)
    topo = Topology(design)
    files = {
        "design.yml": dump_design(design),
        "inventory.yml": "# fabline inventory generated from design.yml (fabline design --out)\n"
        + yaml.dump(inventory_dict(design, topo), Dumper=_Dumper, sort_keys=False, default_flow_style=False),
        "cabling.csv": cabling_csv(topo),
    }
    written = []
    for name, text in files.items():
        path = out / name
        path.write_text(text, "utf-8")
        written.append(path)
    return written
