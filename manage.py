#!/usr/bin/env python
import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.local")
    # Django's, with `manage.py help` listing Engram's commands by Engram's apps.
    from apps.core.management.utility import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
