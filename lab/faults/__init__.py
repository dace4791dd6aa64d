"""Fault injection against real processes (``manage.py fault_suite``; docs/operators.md)."""
