import sys

from fxstudio.cli import run

sys.exit(run())
