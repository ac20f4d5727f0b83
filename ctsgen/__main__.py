"""``python -m ctsgen`` and the installed ``ctsgen`` script (``run``): a Ctrl-C while the command
line loads is one line and exit status 130, as a later Ctrl-C gives (:func:`ctsgen.cli.main`)."""

import sys


def run() -> None:
    try:
        from ctsgen.cli import main  # local: startup
    except KeyboardInterrupt:
        sys.stderr.write("ctsgen: interrupted\n")
        sys.exit(130)
    sys.exit(main())


if __name__ == "__main__":
    run()
