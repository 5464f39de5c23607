import sys

from fxstudio.cli import main

sys.exit(main())
