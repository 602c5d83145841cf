"""``python -m generator`` runs the specgen command line."""

try:
    from generator.cli import main
except KeyboardInterrupt:  # hostile89: Ctrl-C while the command line loads: no traceback, the code Ctrl-C exits with
    import signal
    import sys

    try:  # hostile91: a Ctrl-C more while saying so (the key held down) is held, not a traceback
        if hasattr(signal, "pthread_sigmask"):
            signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGINT})
    except KeyboardInterrupt:
        pass
    print("\nAborted!", file=sys.stderr)
    sys.exit(130)

main()
