"""TokenControl: delegation tokens (``control.py``: the decisions, ``ops.py``: the write-queue operations and answers)."""
