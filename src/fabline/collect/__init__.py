"""Live collection over SSH: inventory-driven collectors that write a snapshot.

``profiles`` says which allow-listed commands run per platform, ``transports`` opens the sessions
(netmiko for switch CLIs, paramiko exec channels for Linux hosts), ``collector`` runs a bounded
pool over the inventory and ``snapshot`` writes ``raw/``, ``state/`` and ``manifest.json``.
"""
