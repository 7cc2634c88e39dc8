"""Deterministic simulation of a KRaft quorum built from ``RaftNode`` cores.

``cluster.Simulation`` runs N nodes on a simulated clock and network (loss, delay,
reordering, partitions), crashes and restarts nodes (the in-memory log loses what
was not flushed; quorum-state survives), jumps the clock, takes snapshots, and
sends every message through the generated codec at a negotiated version. After
every step ``invariants.Checker`` verifies what Kafka's RaftEventSimulationTest
and the KIP-853 TLA+ spec check. Run ``python -m tests.simulation --help``.
"""
