"""`python -m aotc`: the same command line as the installed `aotc` program."""
from .cli import main

if __name__ == "__main__":
    main(prog_name="aotc")
