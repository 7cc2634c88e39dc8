"""Our node for ``bench/membership/membership.py``'s node 1: ``kraft_server``'s own ``main`` with
the request dispatcher's DEBUG line ("received <Request> on <listener>") switched on,
so the bench can read when AddRaftVoter reached the leader. Everything else logs at
``KRAFT_LOG_LEVEL`` (INFO) as ``python -m kraft_server`` does.

    python bench/membership/membership_ournode.py <server.properties>
"""
import logging
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

if __name__ == "__main__":
    from kraft_server.__main__ import main
    logging.getLogger("kraft_server.api.dispatch").setLevel(logging.DEBUG)
    sys.exit(main(sys.argv[1:]))
