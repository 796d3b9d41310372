"""The layer's Lambda entry points: each builds the services of its function and hands its event on
(`lambda_handler`: API Gateway's requests; `push`: fan-out, first attempts, retries, the operation log; `monitoring`:
the scheduled sampler and alarms). Nothing in the layer imports them."""
