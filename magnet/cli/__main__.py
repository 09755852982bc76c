"""``python -m magnet.cli``: the ``magnet`` command."""

from magnet.cli import main

if __name__ == "__main__":
    main()
