"""Lowering: checked HLO module + signature -> Program (see pipeline.py)."""
