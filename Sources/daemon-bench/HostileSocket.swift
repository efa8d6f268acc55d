// What hostile clients do to a connection besides asking and reading answers: raw bytes that may not be
// text, writes that give up when the daemon stops reading, half-closes, resets, partial reads.

#if canImport(Glibc)
    import Glibc
#endif

/// How a write of raw bytes ended.
enum WriteOutcome {
    /// Every byte went out.
    case sent
    /// The daemon took no more for the send timeout (it stopped reading): how many bytes went out.
    case blocked(sent: Int)
    /// The connection failed (the daemon hung up, say).
    case failed(SystemCallError)
}

extension Connection {
    /// Sends `bytes` as they are, never raising SIGPIPE.
    func write(_ bytes: [UInt8]) -> WriteOutcome {
        var offset = 0
        while offset < bytes.count {
            let (sent, code) = bytes.withUnsafeBytes { raw in
                let sent = Glibc.send(
                    self.descriptor, raw.baseAddress! + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                return (sent, errno)
            }
            if sent >= 0 {
                offset += sent
            } else if code == EAGAIN || code == EWOULDBLOCK {
                return .blocked(sent: offset)
            } else if code != EINTR {
                return .failed(SystemCallError(function: "send", code: code))
            }
        }
        return .sent
    }

    /// Sets how long one send may wait for room (`SO_SNDTIMEO`).
    func setSendTimeout(milliseconds: Int) {
        self.setTimeout(SO_SNDTIMEO, milliseconds: milliseconds)
    }

    /// Sets how long one read may wait for bytes (`SO_RCVTIMEO`).
    func setReceiveTimeout(milliseconds: Int) {
        self.setTimeout(SO_RCVTIMEO, milliseconds: milliseconds)
    }

    private func setTimeout(_ option: Int32, milliseconds: Int) {
        var timeout = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        _ = setsockopt(self.descriptor, SOL_SOCKET, option, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Ends the sending side: the daemon reads the end of its input and may still answer.
    func shutdownWrite() {
        _ = shutdown(self.descriptor, Int32(SHUT_WR))
    }

    /// Makes closing the connection reset it (`SO_LINGER` 0): the daemon sees ECONNRESET instead of the
    /// end of its input, with its answers unsent.
    func resetOnClose() {
        var option = linger(l_onoff: 1, l_linger: 0)
        _ = setsockopt(self.descriptor, SOL_SOCKET, SO_LINGER, &option, socklen_t(MemoryLayout<linger>.size))
    }

    /// Reads and drops up to `count` bytes of whatever arrives within the receive timeout; returns how
    /// many bytes came, or nil when the connection ended or failed.
    func discard(upTo count: Int) -> Int? {
        var chunk = [UInt8](repeating: 0, count: min(count, 65536))
        var total = 0
        while total < count {
            let (read, code) = chunk.withUnsafeMutableBytes { raw in
                let read = Glibc.read(self.descriptor, raw.baseAddress, min(raw.count, count - total))
                return (read, errno)
            }
            if read > 0 {
                total += read
            } else if read == 0 {
                return nil
            } else if code == EAGAIN || code == EWOULDBLOCK {
                return total
            } else if code != EINTR {
                return nil
            }
        }
        return total
    }

    /// Reads and drops everything until the daemon closes the connection; false if it has not closed
    /// it within `milliseconds`.
    func waitForClose(milliseconds: Int) -> Bool {
        let deadline = monotonicNanoseconds() + Int64(milliseconds) * 1_000_000
        self.setReceiveTimeout(milliseconds: 100)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while monotonicNanoseconds() < deadline {
            let (read, code) = chunk.withUnsafeMutableBytes { raw in
                let read = Glibc.read(self.descriptor, raw.baseAddress, raw.count)
                return (read, errno)
            }
            if read == 0 { return true }
            if read < 0 && code != EAGAIN && code != EWOULDBLOCK && code != EINTR {
                // ECONNRESET and the like: the daemon is gone from this connection too.
                return true
            }
        }
        return false
    }
}
