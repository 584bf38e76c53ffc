#!/usr/bin/env python
"""Django's command-line utility for GPU Atlas (production settings unless
DJANGO_SETTINGS_MODULE says otherwise; on a laptop: DJANGO_SETTINGS_MODULE=config.settings.local)."""

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.production")
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
