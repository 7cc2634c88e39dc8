"""The controller: its image, loader and snapshots, and each decision room."""
