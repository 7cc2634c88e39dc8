"""Stands in for the ``cython`` module when Cython is not installed: ``compiled`` is False.

Modules compiled by Cython in pure-Python mode (``wire/native.py``) import ``cython`` for
``cython.compiled``; without Cython they import this instead and take their Python branch."""
compiled = False
