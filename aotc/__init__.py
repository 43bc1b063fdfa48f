"""aotc: compile XLA HLO text modules to self-contained C libraries."""
__version__ = "0.1.0"
