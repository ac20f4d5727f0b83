import sys

from ctsgen.cli import main

sys.exit(main())
