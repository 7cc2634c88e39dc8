"""The node's configuration, metrics and console."""
