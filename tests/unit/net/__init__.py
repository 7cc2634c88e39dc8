"""Sockets and the Ready loop: connections, limits, the pipeline, scatter-gather writes."""
