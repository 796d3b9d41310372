"""What a message costs in write units, send + receive + delete, with batches packed and without
(`bench/pack_units.py`, the figures of `bench/results/pack_units.md`): over the DynamoDB double, which bills as
DynamoDB does."""

from __future__ import annotations

from bench.pack_units import units


def test_packed_batches_of_16_cost_at_most_the_issues_figures_on_an_indexed_queue():
    assert units(1024, 16, 64, packed=True)[0] <= 1.25  # 1 KB incompressible bodies (7 unpacked)
    assert units(64, 16, 64, packed=True)[0] <= 0.5  # 64 B (7 unpacked)


def test_single_sends_cost_what_they_did():
    for size in (64, 1024):
        # The lease put, claimed, deleted (3) and its index entry put, rewritten in place by the claim, deleted (3).
        assert units(size, 1, 16, packed=True)[0] == units(size, 1, 16, packed=False)[0] == 6.0


def test_a_fifo_batch_of_16_in_one_group_costs_at_most_2_write_units_a_message_packed():
    # a pack (`group_packs`): its body item, the pack put, its claim and delete each one transaction of the group
    # item and the pack (billed double), the group's counter once (5.3 unpacked)
    assert units(1024, 16, 64, fifo=True, packed=True)[0] <= 1.4375  # 1 KB incompressible bodies: 23 units / 16
    assert units(64, 16, 64, fifo=True, packed=True)[0] <= 0.6875  # 64 B: 11 units / 16


def test_a_fifo_single_send_costs_what_it_did():
    assert units(1024, 1, 16, fifo=True, packed=True)[0] == units(1024, 1, 16, fifo=True, packed=False)[0] == 10.0


def test_a_fifo_batch_delete_of_a_run_is_one_transaction():
    # put 1, the claim's transaction 2, the delete's 2 (a transaction per message made it 4), and the group item's
    # shares of the three
    assert units(64, 16, 64, fifo=True)[0] < 5.5


def test_a_queues_receivers_share_its_batches_body_items():
    # a batch of 16 to a queue with 2 receivers, received and deleted on all three: the body item written once
    # (13 units) and each queue's pack and index writes (7 units each): 34 units for 16 messages (3.75 when each
    # receiver's copies wrote their own body item)
    assert units(1024, 16, 32, packed=True, receivers=2)[0] <= 2.125
