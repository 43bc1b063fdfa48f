"""What aotc compiles: every opcode of the opcode table on every element type, probed with a
small module (`probes`), compiled by aotc in process (`report`), summarized against the record
of what XLA:CPU accepts (`xla_cpu.json`, written by tests/coverage/gen_coverage.py from XLA
itself). `python -m aotc.coverage` prints the summary; `--markdown` the README section.
"""
