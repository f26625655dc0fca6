"""The project's scripts (benchmarks, demos, tools), run as ``python scripts/NAME.py``.

The top layer: they may import everything. Tests import them as ``scripts.NAME`` (never by file path).
"""
