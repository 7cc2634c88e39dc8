"""UpdateFeatures (57, v0-2): who answers it.

A request that names only kraft.version (or names nothing) stays with the Raft core
(``raft/rpc/update_features.py``), as before the metadata controller existed. Any
other feature goes to the active controller's write queue
(``controller/features/control.py``), which also handles kraft.version when it comes
along (``kafka-features upgrade --release-version`` sends both). A node with no
controller leaves everything to the core.
"""
from __future__ import annotations

from kraft_server.common.features import SUPPORTED
from kraft_server.controller.features.control import KRAFT_VERSION, update_features_op


def forwarded_to_controller(call, view) -> bool:
    """Submit ``call`` to the active controller and say True, or say False (the core's)."""
    controller = view.controller
    names = {u.feature for u in call.body.feature_updates}
    if controller is None or names <= {KRAFT_VERSION}:
        return False
    run, fail = update_features_op(call.body, call.api_version, controller.core, SUPPORTED,
                                   controller.settings.node_id)

    def respond(body) -> None:
        if not call.done:
            call.respond(body)
    controller.submit_write("UpdateFeatures", run, fail, respond)
    return True
