"""Shared pytest hooks: the header names the seeds this run's sweeps draw; under
pytest-xdist every worker draws the same ones; strict skips fail the run."""
from __future__ import annotations

import resource

import pytest


def pytest_configure(config):
    # Under pytest-xdist the controller settles the fresh seeds before it starts the
    # workers, which inherit its environment: every worker then collects the same sweep
    # ids (xdist requires it) and the header's replay seed is the one the workers ran,
    # even where no git checkout makes each process draw its own by chance.
    # The same for the fresh seeds other modules draw (tests/support/fresh_seeds.py).
    import os
    if os.environ.get("PYTEST_XDIST_WORKER") is None and getattr(config.option, "numprocesses", None):
        from tests.simulation.seeds import fresh_first_seed
        from tests.support.fresh_seeds import ENV, draw_run_seed
        os.environ.setdefault("SIM_FIRST_SEED", str(fresh_first_seed()[0]))
        os.environ.setdefault(ENV, draw_run_seed())


def pytest_report_header(config):
    from tests.simulation.seeds import fresh_first_seed
    first, source = fresh_first_seed()
    return [f"simulation: fresh seeds from {first} (derived from {source}); "
            f"replay this run's sweep with SIM_FIRST_SEED={first}"]


# Skip reasons that name something ``make test`` installs itself (the Makefile's venv
# stamp: a JDK, Maven, kcat; the `spark` extra; tools.kafka_dist: the pinned jars).
# Under KRAFT_STRICT_SKIPS=1 (set by `make test` and `make test-slow`) a test skipped
# for one of them fails the run, so a green CI means every real-peer test ran. Skips
# for a peer that lacks a message (kio, kafka-python), the absent Docker engine or the
# pure-Python codecs stay skips.
FIXABLE_SKIPS = ("no JDK", "no java on PATH", "mvn is not on PATH", "kcat is not installed",
                 "extra) is not installed", "jar not found", "jars cannot be resolved")
FIXABLE_SKIPS += ("chromium is not installed",)  # Debian's chromium and chromium-driver


def fixable_skips(reports) -> list[str]:
    """``nodeid: reason`` of each skipped report whose reason names something the
    Makefile installs."""
    out = []
    for rep in reports:
        reason = rep.longrepr[2] if isinstance(rep.longrepr, tuple) else str(rep.longrepr)
        if any(s in reason for s in FIXABLE_SKIPS):
            out.append(f"{rep.nodeid}: {reason}")
    return out


def time_per_file(reports) -> list[tuple[float, str]]:
    """(seconds, file) for each test file, setup + call + teardown summed, longest first.
    Under ``--dist loadfile`` a file runs on one worker: the longest is the suite's floor."""
    totals: dict[str, float] = {}
    for rep in reports:
        path = rep.nodeid.split("::", 1)[0]
        totals[path] = totals.get(path, 0.0) + (getattr(rep, "duration", 0.0) or 0.0)
    return sorted(((t, p) for p, t in totals.items()), reverse=True)


def _cpu_s() -> float:
    """CPU seconds of this process and of the children it has reaped (nodes, JVMs, tools)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


_CPU_MARK = [0.0]  # one test at a time per process: the CPU count at the end of the last phase


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logstart(nodeid, location):
    _CPU_MARK[0] = _cpu_s()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """Each phase's CPU goes with its report (xdist carries user_properties to the
    controller): this hook runs right after the phase it reports."""
    spent = _cpu_s() - _CPU_MARK[0]
    outcome = yield
    outcome.get_result().user_properties.append(("cpu_s", round(spent, 3)))
    _CPU_MARK[0] = _cpu_s()


def cpu_per_file(reports) -> list[tuple[float, str]]:
    """(CPU seconds, file) summed over a file's phases, most first."""
    totals: dict[str, float] = {}
    for rep in reports:
        cpu = dict(getattr(rep, "user_properties", ()) or ()).get("cpu_s")
        if cpu is not None:
            path = rep.nodeid.split("::", 1)[0]
            totals[path] = totals.get(path, 0.0) + cpu
    return sorted(((t, p) for p, t in totals.items()), reverse=True)


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    import os
    reports = [r for stat in terminalreporter.stats.values() for r in stat if hasattr(r, "nodeid")]
    longest = time_per_file(reports)[:12]
    if longest:
        terminalreporter.write_sep("=", "longest test files (s, summed over their tests)")
        for seconds, path in longest:
            terminalreporter.write_line(f"{seconds:8.1f}  {path}")
    cpu = cpu_per_file(reports)
    if cpu:
        total = sum(t for t, _ in cpu)
        terminalreporter.write_sep("=", f"most CPU (s of the worker and its reaped children; {total:.0f} s in all)")
        for seconds, path in cpu[:15]:
            terminalreporter.write_line(f"{seconds:8.1f}  {path}")
    if os.environ.get("KRAFT_STRICT_SKIPS") != "1":
        return
    bad = fixable_skips(terminalreporter.stats.get("skipped", []))
    if bad:
        terminalreporter.write_line(
            f"KRAFT_STRICT_SKIPS: {len(bad)} test(s) skipped for something the Makefile installs:", red=True)
        for line in bad:
            terminalreporter.write_line(f"  {line}", red=True)


def pytest_sessionfinish(session, exitstatus):
    import os
    if os.environ.get("KRAFT_STRICT_SKIPS") != "1":
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    if reporter is not None and fixable_skips(reporter.stats.get("skipped", [])) and exitstatus == 0:
        session.exitstatus = 1
