"""The validation of the replication test (``tests/support/replication_run.check``) on
made-up findings: it passes a clean run and fails each way a run can go wrong."""
from __future__ import annotations

import pytest

from tests.support.replication_run import check


def findings(**change):
    acked = {(0, 0): "0", (1, 0): "1", (0, 1): "2"}
    found = {"acked": acked, "consumed": dict(acked), "ranges": [(0, 0, 1, 2), (1, 0, 0, 1)],
             "summed": 3, "sent": 4, "errors": []}
    found.update(change)
    return found


def test_a_clean_run_passes():
    check(findings())


@pytest.mark.parametrize("change, what", [
    ({"consumed": {(0, 0): "0", (0, 1): "2"}}, "not consumed as sent"),            # lost
    ({"ranges": [(0, 0, 1, 2)]}, "outside every records_consumed range"),          # not in a summary
    ({"consumed": {(0, 0): "0", (1, 0): "1", (0, 1): "2", (1, 1): "9"},
      "ranges": [(0, 0, 1, 2), (1, 0, 1, 2)], "summed": 4}, "never sent"),        # invented
    ({"consumed": {(0, 0): "0", (1, 0): "1", (0, 1): "2", (1, 1): "0"},
      "ranges": [(0, 0, 1, 2), (1, 0, 1, 2)], "summed": 4}, "duplicate"),          # written twice
    ({"consumed": {(0, 0): "0", (1, 0): "2", (0, 1): "2"}}, "not consumed as sent"),  # other value
    ({"errors": [{"name": "producer_send_error", "value": "3"}]}, "given up"),
])
def test_each_failure_is_caught(change, what):
    with pytest.raises(AssertionError, match=what):
        check(findings(**change))
