"""The same example from Python: compile, load through cffi, call with numpy."""
import os
import sys

import numpy as np

import aotc

here = os.path.dirname(os.path.abspath(__file__))
out = os.path.join(sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, "build"), "libmatmul")
lib = aotc.compile(os.path.join(here, "matmul.hlo"), config=os.path.join(here, "matmul.yaml"), out=out)
model = aotc.load(lib)
x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)
y = np.arange(7, 13, dtype=np.float32).reshape(3, 2)
(prod,) = model(x, y)
print("Success" if prod[0, 0] == 58 else "Failed", prod.tolist())
sys.exit(0 if prod[0, 0] == 58 else 1)
