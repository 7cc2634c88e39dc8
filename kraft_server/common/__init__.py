"""Values shared by the log and the Raft core, owned by neither (so ``log/`` needs
nothing from ``raft/`` and the core nothing from ``log/``)."""
