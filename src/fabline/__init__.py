"""fabline: configuration compliance and baseline checker for AI/GPU cluster networks.

The data flows one way: inventory -> collect -> raw evidence -> parse -> state (schema v1)
-> check engine (baseline + built-in checks) -> results -> reports.
"""

__version__ = "0.1.0"
