"""Imports every op family so its rules register; add new families here."""
from . import control, convolution, data, dot, dynamic, elementwise, gather_scatter, reduce, shape_ops, sort, window  # noqa: F401
