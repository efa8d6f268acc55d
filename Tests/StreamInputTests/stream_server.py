#!/usr/bin/env python3
"""A loopback HTTP server for StreamInput's tests: raw sockets, so that it can break HTTP on purpose.

Prints "PORT <n>" on its first line (and, given `--cert FILE --key FILE`, "TLSPORT <n>" on the next: the
same paths over TLS), then serves until killed or until its standard input closes. The audio bytes of a stream are a
pattern: the byte at offset i (from the connection's start, metadata not counted) is i % 251, so that
a test can check what it received. Paths:

  /stream   query: bytes=N (total audio bytes; endless when absent), metaint=M and titles=A|B|C (a
            metadata block after every M audio bytes; the title changes at each block, `every=K` blocks;
            enc=latin1 sends them as Latin-1), framing=close|length|chunked (default close),
            rate=BYTES_PER_SECOND (default: as fast as the client reads), type=TYPE (default audio/mpeg),
            name=, genre= (icy-name, icy-genre), drop=N (close after N audio bytes; times=K: only on
            the first K connections of key=KEY), stall=N (stop sending after N bytes and keep the socket
            open for=S seconds; times/key as for drop), icy=1 (answer "ICY 200 OK"), empty=1 (an empty
            StreamTitle after the titles), then=CODE (answer CODE on the connections after the first
            `times` of key).
  /redirect query: n=K, to=PATH (a chain of K 302s then PATH; relative Locations on odd steps)
  /loop     302 to itself.
  /status   query: code=N (that status, a short text/plain body).
  /html     200 text/html, a page.
  /giant    200 with about 100 KB of header lines.
  /endless  200, then header lines (1 kB each, every 10 ms) for ever.
  /slowloris  accepts and sends nothing.
  /doc      query: text=TEXT (a document, text/plain; or type=), framing as /stream; size=N (N bytes of "#").
  /count    query: key=KEY: how many connections KEY saw, as the body.
"""
import os
import socket
import ssl
import sys
import threading
import time
import urllib.parse

connections = {}
lock = threading.Lock()


def pattern(start, count):
    return bytes((start + i) % 251 for i in range(count))


def head(conn, status, fields):
    lines = [status] + [f"{k}: {v}" for k, v in fields]
    conn.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))


def serve_stream(conn, q, key_count):
    total = int(q["bytes"]) if "bytes" in q else None
    metaint = int(q.get("metaint", "0"))
    titles = q["titles"].split("|") if "titles" in q else []
    every = int(q.get("every", "1"))
    enc = q.get("enc", "utf-8")
    framing = q.get("framing", "close")
    rate = float(q.get("rate", "0"))
    times = int(q.get("times", "1000000"))
    drop = int(q["drop"]) if "drop" in q and key_count <= times else None
    stall = int(q["stall"]) if "stall" in q and key_count <= times else None
    if "then" in q and key_count > times:
        code = int(q["then"])
        head(conn, f"HTTP/1.1 {code} Gone Away", [("Content-Length", "0")])
        return
    fields = [("Content-Type", q.get("type", "audio/mpeg"))]
    if "name" in q:
        fields.append(("icy-name", q["name"]))
    if "genre" in q:
        fields.append(("icy-genre", q["genre"]))
    if metaint:
        fields.append(("icy-metaint", str(metaint)))
    if framing == "length" and total is not None:
        wire = total
        if metaint:
            raise ValueError("length with metaint is not supported here")
        fields.append(("Content-Length", str(wire)))
    if framing == "chunked":
        fields.append(("Transfer-Encoding", "chunked"))
    status = "ICY 200 OK" if q.get("icy") == "1" else ("HTTP/1.1 200 OK" if framing == "chunked" else "HTTP/1.0 200 OK")
    head(conn, status, fields)

    sent = 0
    block = 0
    started = time.monotonic()
    chunk_sizes = [1, 7, 300, 4096, 13, 1000]
    chunk_index = 0

    def send(data):
        nonlocal chunk_index
        if framing != "chunked":
            conn.sendall(data)
            return
        while data:
            size = chunk_sizes[chunk_index % len(chunk_sizes)]
            chunk_index += 1
            part, data = data[:size], data[size:]
            conn.sendall(b"%x;ext=1\r\n" % len(part) + part + b"\r\n")

    while total is None or sent < total:
        n = 4096
        if total is not None:
            n = min(n, total - sent)
        if metaint:
            n = min(n, metaint - sent % metaint)
        if drop is not None:
            if sent >= drop:
                return
            n = min(n, drop - sent)
        if stall is not None:
            if sent >= stall:
                time.sleep(float(q.get("for", "30")))
                return
            n = min(n, stall - sent)
        if rate:
            ahead = sent / rate - (time.monotonic() - started)
            if ahead > 0:
                time.sleep(ahead)
        data = pattern(sent, n)
        sent += n
        if metaint and sent % metaint == 0:
            meta = b""
            if titles:
                index = block // every
                if index < len(titles):
                    meta = f"StreamTitle='{titles[index]}';StreamUrl='';".encode(enc)
                elif q.get("empty") == "1":
                    meta = b"StreamTitle='';"
                else:
                    meta = f"StreamTitle='{titles[-1]}';".encode(enc)
            block += 1
            blocks = (len(meta) + 15) // 16
            data += bytes([blocks]) + meta + b"\0" * (blocks * 16 - len(meta))
        send(data)
    if framing == "chunked":
        conn.sendall(b"0\r\nX-Trailer: 1\r\n\r\n")


def handle(conn):
    try:
        conn.settimeout(60)
        request = b""
        while b"\r\n\r\n" not in request:
            data = conn.recv(4096)
            if not data:
                return
            request += data
        line = request.split(b"\r\n", 1)[0].decode()
        target = line.split(" ")[1]
        parsed = urllib.parse.urlsplit(target)
        path = parsed.path
        q = dict(urllib.parse.parse_qsl(parsed.query, keep_blank_values=True))
        key = q.get("key", path)
        with lock:
            connections[key] = connections.get(key, 0) + 1
            key_count = connections[key]
        if path == "/stream":
            serve_stream(conn, q, key_count)
        elif path == "/redirect":
            n = int(q.get("n", "1"))
            to = q.get("to", "/stream")
            if n <= 1:
                location = to
            else:
                rest = urllib.parse.urlencode({"n": n - 1, "to": to})
                location = ("redirect?" if n % 2 else "/redirect?") + rest
            head(conn, "HTTP/1.1 302 Found", [("Location", location), ("Content-Length", "0")])
        elif path == "/loop":
            head(conn, "HTTP/1.1 302 Found", [("Location", "/loop"), ("Content-Length", "0")])
        elif path == "/status":
            code = int(q.get("code", "404"))
            body = b"no such thing\n"
            reason = {404: "Not Found", 500: "Internal Server Error", 403: "Forbidden"}.get(code, "Status")
            head(conn, f"HTTP/1.1 {code} {reason}", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
            conn.sendall(body)
        elif path == "/html":
            body = b"<html><body>Not a stream</body></html>\n"
            head(conn, "HTTP/1.1 200 OK", [("Content-Type", "text/html; charset=utf-8"), ("Content-Length", str(len(body)))])
            conn.sendall(body)
        elif path == "/giant":
            fields = [("Content-Type", "audio/mpeg")] + [(f"X-Filler-{i}", "x" * 90) for i in range(1100)]
            head(conn, "HTTP/1.1 200 OK", fields)
            time.sleep(5)
        elif path == "/endless":
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: audio/mpeg\r\n")
            for i in range(100000):
                conn.sendall(b"X-Endless-%d: %s\r\n" % (i, b"y" * 1000))
                time.sleep(0.01)
        elif path == "/slowloris":
            time.sleep(30)
        elif path == "/doc":
            body = q["text"].encode() if "text" in q else b"#" * int(q.get("size", "0"))
            fields = [("Content-Type", q.get("type", "text/plain"))]
            if q.get("framing", "length") == "length":
                fields.append(("Content-Length", str(len(body))))
            head(conn, "HTTP/1.0 200 OK", fields)
            conn.sendall(body)
        elif path == "/count":
            with lock:
                body = str(connections.get(q.get("of", ""), 0)).encode()
            head(conn, "HTTP/1.0 200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(len(body)))])
            conn.sendall(body)
        else:
            head(conn, "HTTP/1.1 404 Not Found", [("Content-Length", "0")])
    except (OSError, ValueError):
        pass
    finally:
        try:
            conn.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        conn.close()


def exit_when_orphaned():
    """Exits when standard input closes: the test process is gone."""
    while sys.stdin.buffer.read(1):
        pass
    os._exit(0)


def main():
    threading.Thread(target=exit_when_orphaned, daemon=True).start()
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind(("127.0.0.1", 0))
    server.listen(64)
    print(f"PORT {server.getsockname()[1]}", flush=True)
    if "--cert" in sys.argv:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(sys.argv[sys.argv.index("--cert") + 1], sys.argv[sys.argv.index("--key") + 1])
        tls_server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        tls_server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        tls_server.bind(("127.0.0.1", 0))
        tls_server.listen(64)
        print(f"TLSPORT {tls_server.getsockname()[1]}", flush=True)
        threading.Thread(target=accept_loop, args=(tls_server, context), daemon=True).start()
    accept_loop(server, None)


def handle_tls(conn, context):
    try:
        conn.settimeout(10)
        conn = context.wrap_socket(conn, server_side=True)
    except (OSError, ssl.SSLError):
        conn.close()
        return
    handle(conn)


def accept_loop(server, context):
    while True:
        conn, _ = server.accept()
        if context is None:
            threading.Thread(target=handle, args=(conn,), daemon=True).start()
        else:
            threading.Thread(target=handle_tls, args=(conn, context), daemon=True).start()


if __name__ == "__main__":
    main()
