"""The CLIs (kraft-storage, recover) and the test harness's own helpers."""
