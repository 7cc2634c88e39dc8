"""The Raft core: elections, fetches, snapshots, voter changes, backpressure."""
