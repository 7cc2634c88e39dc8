"""The shell: performs what the core asks for (see ``loop.py``)."""
