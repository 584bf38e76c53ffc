"""What the scripts that start the production stack by hand share (prod_check.py, fuzz_api.py)."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def recreate_database(admin_url: str, name: str) -> str:
    """Drop and create PostgreSQL database ``name`` through ``admin_url``; its URL."""
    import psycopg

    with psycopg.connect(
        admin_url.replace("postgres://", "postgresql://"), autocommit=True
    ) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{name}"')
    return admin_url.rsplit("/", 1)[0] + f"/{name}"
