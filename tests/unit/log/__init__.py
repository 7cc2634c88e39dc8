"""Storage: segments, the batch index, snapshots on disk, disk faults, the memory log."""
