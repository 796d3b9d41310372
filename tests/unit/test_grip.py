"""GRIP at the origin (`mnsd.grip`): Grip-Sig verified, the hold's headers, the deadline a held receive carries."""

import pytest

from mnsd import errors, grip

NOW = 1_800_000_000.0


def test_a_grip_sig_verifies_with_its_key_until_it_expires() -> None:
    token = grip.sign("key", NOW, lifetime=60)
    assert grip.verify(token, "key", NOW)
    assert not grip.verify(token, "other", NOW)
    assert not grip.verify(token, "key", NOW + 61)
    header, claims, mac = token.split(".")
    assert not grip.verify(f"{header}.{claims}.{mac[:-2]}AA", "key", NOW)
    assert not grip.verify("not.a.jwt", "key", NOW) and not grip.verify("", "key", NOW)


def test_a_request_without_grip_sig_or_without_a_key_is_not_the_tiers() -> None:
    assert grip.held_wait({}, "key", NOW) is None
    assert grip.held_wait({"grip-sig": "anything"}, "", NOW) is None  # the tier is off: the header means nothing


def test_a_forged_grip_sig_is_access_denied() -> None:
    with pytest.raises(errors.AccessDenied):
        grip.held_wait({"grip-sig": grip.sign("forged", NOW)}, "key", NOW)


def test_the_deadline_counts_from_the_first_arrival_and_never_passes_the_last_claim() -> None:
    first = grip.held_wait({"grip-sig": grip.sign("key", NOW)}, "key", NOW)
    assert first is not None and first.first_deadline_ms is None
    assert first.deadline(1_000_000, 10, 28) == 1_010_000
    assert first.deadline(1_000_000, 30, 28) == 1_028_000
    again = grip.held_wait(
        {"grip-sig": grip.sign("key", NOW), "mns-wait-deadline": "1_010_000".replace("_", "")}, "key", NOW
    )
    assert again is not None and again.deadline(1_005_000, 10, 28) == 1_010_000


def test_a_hold_names_its_channel_timeout_deadline_and_the_next_due_time_within_it() -> None:
    held = grip.Held(grip.channel("q:1/x"), deadline_ms=1_020_400, now_ms=1_000_000, due_ms=1_003_000)
    assert held.headers() == {
        "Grip-Hold": "response",
        "Grip-Channel": "mns.q_1_x",
        "Grip-Timeout": "20",
        grip.DEADLINE_HEADER: "1020400",
        grip.DUE_HEADER: "1003000",
    }
    assert grip.DUE_HEADER not in grip.Held("mns.q", 1_020_000, 1_000_000, 1_030_000).headers()
    assert held.timeout_answer().code == "MessageNotExist"
