import socket

import pytest


def test_sockets_are_refused_for_the_whole_suite() -> None:
    with pytest.raises(OSError, match="refused"):
        socket.create_connection(("127.0.0.1", 9))
    s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        with pytest.raises(OSError, match="refused"):
            s.connect(("93.184.216.34", 80))
    finally:
        s.close()
