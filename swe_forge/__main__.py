"""``python -m swe_forge``."""

from swe_forge.cli import main

if __name__ == "__main__":
    main()
