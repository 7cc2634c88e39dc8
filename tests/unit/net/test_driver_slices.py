"""The Ready loop's turns: observers' Fetch answers left over by a Ready are sent by
slice turns; any arrival, a flush, a HWM move or the end of the slices brings back a
whole turn, and the controller's and timers' polls run in a whole turn only when the
core's progress mark moved, a deadline of theirs is due, or ``wake`` asked."""
from __future__ import annotations

from kraft_server.raft.boundary import Ready
from kraft_server.shell.driver import Driver
from tests.support.net_fakes import FakeLog


class SlicingCore:
    """Answers ``slices`` more slices after the first Ready (as a leader with many
    parked observers does)."""

    def __init__(self, slices: int):
        self.slices = slices
        self.high_watermark = 10
        self.readies = self.steps = 0
        self.flush_next = False

    def step(self, item, now_ms):
        self.steps += 1

    def tick(self, now_ms):
        pass

    def ready(self):
        self.readies += 1
        flush, self.flush_next = self.flush_next, False
        return Ready(flush=flush)

    def advance(self, ready, now_ms):
        if self.readies > 1 and self.slices:
            self.slices -= 1
        return self.slices > 0

    def answers_deferred(self):
        return self.slices > 0

    def progress_mark(self):
        return (self.high_watermark,)


class CountingController:
    def __init__(self):
        self.polls = 0

    def poll(self, now_ms):
        self.polls += 1
        return False, None

    def note_time(self, now_ms):
        pass


def driver(core, controller):
    return Driver(core, FakeLog(), make_dispatcher=lambda submit: None, deliver=lambda r: None,
                  listeners=[], controller=controller, clock=lambda: 1000)


def test_slices_skip_the_controller_poll_then_a_whole_turn():
    core, controller = SlicingCore(slices=4), CountingController()
    d = driver(core, controller)
    d.submit("request")
    polls = []
    for _ in range(6):
        busy, _ = d._cycle()
        polls.append(controller.polls)
    # a whole turn, the four slice turns, then (slices over) a whole turn again, whose
    # polls are skipped too: nothing they look at moved
    assert polls == [1, 1, 1, 1, 1, 1], polls
    assert core.readies == 6 and core.steps == 1
    assert not d._slice_turn


def test_an_arrival_is_stepped_at_once_and_a_moved_high_watermark_brings_back_the_polls():
    core, controller = SlicingCore(slices=10), CountingController()
    d = driver(core, controller)
    d._cycle()
    d._cycle()  # a slice turn
    assert controller.polls == 1
    d.submit("an observer's Fetch")
    d._cycle()  # stepped at once; nothing the polls look at moved
    assert controller.polls == 1 and core.steps == 1
    d._cycle()
    assert controller.polls == 1
    core.high_watermark = 11  # moved during the next slice: the turn after is whole
    orig = core.advance
    core.advance = lambda ready, now: (setattr(core, "high_watermark", 12), orig(ready, now))[1]
    d._cycle()
    core.advance = orig
    d._cycle()
    assert controller.polls == 2


def test_a_wake_or_a_due_deadline_brings_back_the_polls():
    core = SlicingCore(slices=0)

    class TimedController(CountingController):
        def poll(self, now_ms):
            self.polls += 1
            return False, 1500

    controller = TimedController()
    clock = [1000]
    d = Driver(core, FakeLog(), make_dispatcher=lambda submit: None, deliver=lambda r: None,
               listeners=[], controller=controller, clock=lambda: clock[0])
    assert d._cycle() == (False, 1500) and controller.polls == 1
    d.submit("a Fetch")
    # stepped; nothing left for another turn (the Fetch parked), and the polls are
    # skipped: nothing they watch moved and their deadline stands
    assert d._cycle() == (False, 1500) and controller.polls == 1
    d.wake()  # work handed to the controller from outside the loop
    d._cycle()
    assert controller.polls == 2
    clock[0] = 1500
    d._cycle()
    assert controller.polls == 3


def test_a_wake_during_the_polls_is_kept_for_the_next_turn():
    core = SlicingCore(slices=0)
    d = driver(core, None)

    class WakingController(CountingController):
        def poll(self, now_ms):
            self.polls += 1
            if self.polls == 1:
                d.wake()  # e.g. a send that failed at once and answered the controller
            return False, None

    d.controller = controller = WakingController()
    assert d._cycle()[0] is True and controller.polls == 1  # busy: another turn at once
    d._cycle()
    assert controller.polls == 2
    assert d._cycle() == (False, None) and controller.polls == 2
