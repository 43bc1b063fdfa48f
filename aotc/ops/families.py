"""Imports every op family so its rules register; add new families here."""
from . import data, dot, elementwise, reduce, shape_ops  # noqa: F401
