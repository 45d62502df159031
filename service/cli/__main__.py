"""`python -m service.cli`: the same as the `ricochet` command."""

import sys

from . import main

sys.exit(main())
