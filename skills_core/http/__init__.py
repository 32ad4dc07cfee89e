"""Streamable HTTP without I/O: both halves of the transport and the session codec."""

from __future__ import annotations

__all__: list[str] = []
