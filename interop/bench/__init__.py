"""`python -m interop bench`: the matrix's speed beside the physical floor (run.py)."""
