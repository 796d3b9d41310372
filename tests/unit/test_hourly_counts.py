"""Hourly counts for the console's charts: the pure aggregation over operation-log events."""

from mnsd.log.metrics import HOUR_MS, QUEUE_SERIES, LogEvent, Window, queue_hourly, subscription_hourly

NOW = 1_700_000_000.0  # 22:13:20 UTC
HOUR = int(NOW * 1000) // HOUR_MS * HOUR_MS  # the current hour's start


def test_the_window_ends_now_and_starts_on_a_whole_hour() -> None:
    window = Window.ending(NOW, 3)
    assert window.end_ms == int(NOW * 1000)
    assert window.hour_starts() == [HOUR - 2 * HOUR_MS, HOUR - HOUR_MS, HOUR]
    assert window.first_hour_ms % HOUR_MS == 0


def test_queue_events_are_counted_in_their_hour() -> None:
    window = Window.ending(NOW, 2)
    events = [
        LogEvent(HOUR - HOUR_MS + 5, "send"),
        LogEvent(HOUR - 1, "receive", dequeue_count=1),  # last ms of the previous hour
        LogEvent(HOUR, "send"),
        LogEvent(HOUR + 10, "receive", dequeue_count=2),  # a redelivery
        LogEvent(HOUR + 20, "delete"),
        LogEvent(HOUR + 30, "expire"),
        LogEvent(HOUR + 40, "change_visibility"),  # not charted
        LogEvent(HOUR - 2 * HOUR_MS, "send"),  # before the window
    ]
    previous, current = queue_hourly(events, window)
    assert previous.hour_ms == HOUR - HOUR_MS and current.hour_ms == HOUR
    assert previous.counts == {"Sends": 1, "Receives": 1, "Deletes": 0, "Redeliveries": 0, "Expired": 0}
    assert current.counts == {"Sends": 1, "Receives": 1, "Deletes": 1, "Redeliveries": 1, "Expired": 1}


def test_hours_without_events_are_zeros() -> None:
    hourly = queue_hourly([], Window.ending(NOW, 24))
    assert len(hourly) == 24
    assert all(h.counts == dict.fromkeys(QUEUE_SERIES, 0) for h in hourly)


def push(time: int, message: str, attempt: int, outcome: str, subscription: str = "s1") -> LogEvent:
    return LogEvent(time, "push", message, subscription=subscription, attempt=attempt, outcome=outcome)


def test_subscription_counts_follow_the_analytics_definitions() -> None:
    events = [
        push(HOUR + 1, "m1", 1, "failure"),
        push(HOUR + 2, "m1", 2, "success"),  # delivered by its first retry
        push(HOUR + 3, "m2", 1, "success"),  # delivered at once
        push(HOUR + 4, "m2", 2, "success"),  # delivered again (its first answer came too late): one delivery
        push(HOUR + 5, "m3", 1, "failure"),
        LogEvent(HOUR + 6, "drop", "m3", subscription="s1"),
        push(HOUR + 7, "m1", 1, "success", subscription="other"),  # another subscription
        LogEvent(HOUR + 8, "publish", "m1"),
    ]
    (hour,) = subscription_hourly(events, Window.ending(NOW, 1), "s1")
    assert hour.counts["Deliveries"] == 2  # distinct messages delivered
    assert hour.counts["FirstTrySuccesses"] == 1
    assert hour.counts["Retries"] == 2
    assert hour.counts["Failures"] == 2
    assert hour.counts["Drops"] == 1
