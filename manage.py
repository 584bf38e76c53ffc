#!/usr/bin/env python
"""Django's command-line utility for GPU Atlas (production settings unless
DJANGO_SETTINGS_MODULE says otherwise; on a laptop: DJANGO_SETTINGS_MODULE=config.settings.local)."""

import os
import sys

# Commands whose answer depends on the code alone (the models), never on the deployment: without
# DJANGO_SETTINGS_MODULE they run on the local settings, so `manage.py makemigrations --check`
# works on a checkout with no secret key. Every other command keeps the production default.
CODE_ONLY_COMMANDS = frozenset({"makemigrations"})


def default_settings(argv: list[str]) -> str:
    """The settings module ``manage.py`` uses when DJANGO_SETTINGS_MODULE is not set."""
    command = argv[1] if len(argv) > 1 else ""
    if command in CODE_ONLY_COMMANDS:
        return "config.settings.local"
    return "config.settings.production"


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", default_settings(sys.argv))
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
