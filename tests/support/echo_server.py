"""A loopback TCP server that echoes every byte back, one thread per connection: the far
end of a proxied link in the chaos harnesses' own tests."""
from __future__ import annotations

import socket
import threading


def echo_server() -> socket.socket:
    """Listening on a free loopback port; close it to stop accepting."""
    srv = socket.create_server(("127.0.0.1", 0))

    def echo_back(conn):
        with conn:
            try:
                while data := conn.recv(1000):
                    conn.sendall(data)
            except OSError:
                pass  # the proxy reset the connection (a refused link)

    def serve():
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            threading.Thread(target=echo_back, args=(conn,), daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    return srv
