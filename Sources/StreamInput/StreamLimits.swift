/// The bounds of one station's stream: sizes and times.
public struct StreamLimits: Sendable, Equatable {
    /// Bytes held ahead of the decoder, at most.
    public var bufferBytes: Int = 1 << 20
    /// Bytes buffered before the decoder is asked to start (or the body's end).
    public var prebufferBytes: Int = 16 * 1024
    /// TCP + TLS + the response head.
    public var connectSeconds: Double = 10
    /// From `start()` to the prebuffer full, per connection.
    public var firstAudioSeconds: Double = 15
    /// No byte for this long while reading: the connection is dropped and made again.
    public var stallSeconds: Double = 10
    /// Reconnecting goes on this long before the station is given up.
    public var reconnectSeconds: Double = 60
    /// The first wait before a connection is made again; each further wait doubles it, up to 8 s.
    /// (An addition to the contract, for tests that cannot wait half a second per retry.)
    public var backoffSeconds: Double = 0.5
    /// Redirects followed, at most.
    public var maxRedirects: Int = 5
    /// The response head, all fields together.
    public var maxHeaderBytes: Int = 16 * 1024
    /// A station list fetched.
    public var maxDocumentBytes: Int = 256 * 1024

    public init() {}
}
