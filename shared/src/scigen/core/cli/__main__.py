"""``python -m scigen.core.cli``: the ``scigen`` command."""

from scigen.core.cli.main import main

if __name__ == "__main__":  # importing the module (as autosummary does) runs nothing
    main()
