"""Allow ``python -m fabline``."""

from fabline.cli import main

if __name__ == "__main__":
    main()
