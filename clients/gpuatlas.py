"""Placeholder replaced by the CLI."""


def main() -> int:
    return 0
