"""The frozen app's entry point (PyInstaller runs this script): fxstudio's command line."""

import os
import sys

# Started from a desktop session without a locale (env -i, some launchers): Qt wants UTF-8.
if not any(os.environ.get(k) for k in ("LC_ALL", "LC_CTYPE", "LANG")):
    os.environ["LC_CTYPE"] = "C.UTF-8"

from fxstudio.cli import main  # noqa: E402 - after the locale is set

if __name__ == "__main__":
    sys.exit(main())
