"""The repository's rules: import rules between rooms, docs that name real paths, strict skips."""
