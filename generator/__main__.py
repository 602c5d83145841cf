"""``python -m generator`` runs the specgen command line."""

try:
    from generator.cli import main
except KeyboardInterrupt:  # hostile89: Ctrl-C while the command line loads: no traceback, the code Ctrl-C exits with
    import sys

    print("\nAborted!", file=sys.stderr)
    sys.exit(130)

main()
