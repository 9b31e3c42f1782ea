"""Reading one HTTP request off a raw socket, for the tests' misbehaving servers (record's)."""

from __future__ import annotations

import socket


def read_request(conn: socket.socket) -> bytes:
    """The request's head, after reading its body to the end (by Content-Length)."""
    data = b""
    while b"\r\n\r\n" not in data and (chunk := conn.recv(65536)):
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                   if line.lower().startswith(b"content-length:")), 0)
    while len(body) < length and (chunk := conn.recv(65536)):
        body += chunk
    return head
