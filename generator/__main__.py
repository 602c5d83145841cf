"""``python -m generator`` runs the specgen command line."""

from generator.cli import main

main()
