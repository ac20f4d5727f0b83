import sys

try:
    from ctsgen.cli import main
except KeyboardInterrupt:  # Ctrl-C while the command line loads: one line, as a later Ctrl-C gives
    sys.stderr.write("ctsgen: interrupted\n")
    sys.exit(130)

sys.exit(main())
