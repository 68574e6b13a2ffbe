"""The server's per-index lock is fair: steps in the order they asked, a request's first step first."""

from __future__ import annotations

import threading
import time

from ppkit.serve.engine import FairLock


def _queued(lock: FairLock, n: int) -> None:
    """Wait until ``n`` threads wait for ``lock`` (a safety bound, not a timing assertion)."""
    end = time.monotonic() + 30
    while lock.waiting() < n:
        assert time.monotonic() < end, "a thread never queued for the lock"
        time.sleep(0.001)


def _run_in_order(asks: list[tuple[str, bool]]) -> list[str]:
    """Hold the lock, queue each (name, urgent) in turn, release: the order the names got it."""
    lock, order = FairLock(), []
    threads = []
    with lock.hold():
        for i, (name, urgent) in enumerate(asks):
            def take(name=name, urgent=urgent):
                with lock.hold(urgent=urgent):
                    order.append(name)
            t = threading.Thread(target=take)
            t.start()
            threads.append(t)
            _queued(lock, i + 1)
    for t in threads:
        t.join(30)
    assert lock.waiting() == 0
    return order


def test_waiting_steps_get_the_lock_in_the_order_they_asked():
    names = [f"step{i}" for i in range(6)]
    assert _run_in_order([(n, False) for n in names]) == names


def test_a_first_step_goes_before_waiting_later_steps_and_first_steps_keep_their_order():
    asks = [("later1", False), ("later2", False), ("first1", True), ("later3", False), ("first2", True)]
    assert _run_in_order(asks) == ["first1", "first2", "later1", "later2", "later3"]


def test_a_holder_that_fails_releases_the_lock():
    lock = FairLock()
    try:
        with lock.hold():
            raise ValueError("a step failed")
    except ValueError:
        pass
    with lock.hold(urgent=True):  # would wait forever if the failure had kept it
        assert lock.waiting() == 0
