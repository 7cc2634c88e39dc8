"""``Column``: one of a segment's int64 columns (where each batch starts, the offset
after each batch), read like one sequence.

The entries a valid batch index vouches for at start-up stay in the index file,
mapped read-only (``head``): nothing is copied and no page is touched until it is
read, so opening a segment of a million batches costs what opening a small one
does. Later entries go to an ``array('q')`` (``tail``). Cutting into the mapped
part copies what is kept into the array and unmaps the file first (the index file
is truncated next), so the map never covers a truncated page. A closed segment's
column is unmapped: reading its head then raises ValueError. Each mapped column
keeps one descriptor open (Python's ``mmap`` holds a duplicate of the file's): two a
segment opened from its index, besides the segment's own.

Index, slice (a copy), ``len``, iterate, ``append``, ``del c[i:]`` and
``bisect_right`` (in C on each part); ``bisect.bisect_right(column, ...)`` works too,
through ``__getitem__``.
"""
from __future__ import annotations

from array import array
from bisect import bisect_right as _bisect_right
from itertools import chain


class Column:
    __slots__ = ("head", "tail", "_mapped")

    def __init__(self, mapped=None, head: memoryview | None = None):
        self._mapped = mapped  # the mmap behind ``head``, closed by ``release``
        self.head = head if head is not None and len(head) else None  # memoryview of 'q'
        self.tail = array("q")

    def __len__(self) -> int:
        head = self.head
        return len(self.tail) if head is None else len(head) + len(self.tail)

    def __getitem__(self, i):
        head = self.head
        if head is None:
            return self.tail[i]
        n0 = len(head)
        if type(i) is int and 0 <= i < n0:  # the common case first
            return head[i]
        if isinstance(i, slice):
            start, stop, step = i.indices(n0 + len(self.tail))
            if step != 1:
                raise ValueError("Column slices take step 1")
            out = array("q")
            if start < min(stop, n0):
                out.frombytes(head[start:min(stop, n0)].cast("B"))
            if stop > n0:
                out.extend(self.tail[max(start - n0, 0):stop - n0])
            return out
        if i < 0:
            i += n0 + len(self.tail)
            if i < 0:
                raise IndexError("Column index out of range")
        return head[i] if i < n0 else self.tail[i - n0]

    def __iter__(self):
        head = self.head
        return iter(self.tail) if head is None else chain(head, self.tail)

    def append(self, value: int) -> None:
        self.tail.append(value)

    def __delitem__(self, key) -> None:
        """``del column[i:]`` only (a segment is cut at its end)."""
        if not isinstance(key, slice) or key.stop is not None or key.step not in (None, 1):
            raise TypeError("Column supports del column[i:] only")
        start = key.indices(len(self))[0]
        head = self.head
        if head is None:
            del self.tail[start:]
        elif start >= len(head):
            del self.tail[start - len(head):]
        else:
            kept = array("q")
            kept.frombytes(head[:start].cast("B"))
            self.release()
            self.head, self.tail = None, kept

    def bisect_right(self, x: int, lo: int = 0, hi: int | None = None) -> int:
        """``bisect.bisect_right`` over the whole column, each part searched in C."""
        head, tail = self.head, self.tail
        if head is None:
            return _bisect_right(tail, x, lo) if hi is None else _bisect_right(tail, x, lo, hi)
        n0 = len(head)
        if hi is None:
            hi = n0 + len(tail)
        if lo < n0 and (hi <= n0 or x < head[n0 - 1]):  # the answer lies in the head
            return _bisect_right(head, x, lo, min(hi, n0))
        return n0 + _bisect_right(tail, x, max(lo - n0, 0), hi - n0)

    def last(self, default: int) -> int:
        """The last entry, or ``default`` when the column is empty."""
        tail = self.tail
        if tail:
            return tail[-1]
        head = self.head
        return default if head is None else head[-1]

    def release(self) -> None:
        """Unmap the head (the segment is closed): reading it then raises ValueError."""
        if self.head is not None:
            self.head.release()
        if self._mapped is not None:
            self._mapped.close()
            self._mapped = None
