"""`python -m aotc.coverage [--markdown] [--list]`: what aotc compiles, opcode by opcode,
against what XLA:CPU accepts (aotc/coverage/xla_cpu.json).

The default output is a table: each opcode, the element types XLA:CPU accepts it on, those
aotc compiles, and what is missing. `--markdown` prints the README's "What compiles" section;
`--list` one line per probe with aotc's outcome. The exit status is 0, or 4 if aotc crashed on a
probe (a bug: it must refuse with a located error instead).
"""
from __future__ import annotations

import os
import sys

from .markdown import markdown, table
from .probes import probes
from .report import CRASHED, compile_probe, summarize, xla_record


def main(argv: list[str]) -> int:
    if any(a not in ("--markdown", "--list") for a in argv):
        print("usage: python -m aotc.coverage [--markdown] [--list]", file=sys.stderr)
        return 2
    outcomes = [compile_probe(p) for p in probes()]
    record = xla_record()
    if "--list" in argv:
        for o in outcomes:
            x = record.get(o.probe.name, {})
            first = o.message.splitlines()[0] if o.message else ""
            print(f"{o.probe.name}\txla={'accepts' if x.get('accepted') else 'rejects'}\taotc={o.status}\t{first}")
    summary = summarize(outcomes, record)
    print(markdown(summary) if "--markdown" in argv else table(summary))
    return 4 if any(o.status == CRASHED for o in outcomes) else 0


if __name__ == "__main__":
    try:
        status = main(sys.argv[1:])
        sys.stdout.flush()
    except BrokenPipeError:  # `python -m aotc.coverage | head`: the reader left, not an error
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        status = 0
    sys.exit(status)
