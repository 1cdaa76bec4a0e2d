"""URLs that are safe to print."""

from __future__ import annotations

from urllib.parse import urlsplit, urlunsplit


def public_url(url: str) -> str:
    """``url`` without any user:password part (safe to put in messages and logs)."""
    parts = urlsplit(url)
    if parts.username is None and parts.password is None:
        return url
    host = (parts.hostname or "") + (f":{parts.port}" if parts.port is not None else "")
    return urlunsplit((parts.scheme, host, parts.path, parts.query, parts.fragment))
