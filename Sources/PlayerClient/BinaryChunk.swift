/// One chunk of a binary answer (`albumart`, `readpicture`): its fields and its bytes.
public struct BinaryChunk: Sendable, Hashable {
    /// The fields before `binary:`, in order: `size` (the whole object's), and `type` for `readpicture`.
    public var fields: [(key: String, value: String)]
    /// The chunk's bytes.
    public var data: [UInt8]

    /// Creates a chunk from its parts.
    public init(fields: [(key: String, value: String)], data: [UInt8]) {
        self.fields = fields
        self.data = data
    }

    /// The whole object's size in bytes (`size:`), or nil when the answer did not say.
    public var totalSize: Int? { self.fields.first { $0.key == "size" }.flatMap { Int($0.value) } }

    /// The MIME type (`type:`, which `readpicture` sends), or nil.
    public var type: String? { self.fields.first { $0.key == "type" }?.value }

    public static func == (left: BinaryChunk, right: BinaryChunk) -> Bool {
        left.data == right.data && left.fields.elementsEqual(right.fields) { $0.key == $1.key && $0.value == $1.value }
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(self.data)
        for field in self.fields {
            hasher.combine(field.key)
            hasher.combine(field.value)
        }
    }
}

/// A whole picture read chunk by chunk: its bytes and, when the server said, its MIME type.
public struct Picture: Sendable, Hashable {
    /// The image file's bytes.
    public var data: [UInt8]
    /// `image/png`, `image/jpeg` ...; nil when the server did not say (`albumart` never does).
    public var type: String?
}

extension MPDConnection {
    /// The cover (`albumart`) or embedded picture (`readpicture`) of `uri`, read in chunks: nil when
    /// there is none (ACK 50 for `albumart`, an empty answer for `readpicture`). A picture larger than
    /// `maximumSize` is `ClientError.malformed`, so that a huge file never fills memory.
    public func picture(
        _ command: String, of uri: String, maximumSize: Int = 16 << 20
    ) throws(ClientError) -> Picture? {
        var data: [UInt8] = []
        var type: String?
        while true {
            let chunk: BinaryChunk?
            do {
                chunk = try self.binaryCommand(command, [uri, String(data.count)])
            } catch {
                if case .refused(code: 50, _, _) = error { return nil }
                throw error
            }
            guard let chunk else {
                return data.isEmpty ? nil : Picture(data: data, type: type)
            }
            guard let total = chunk.totalSize, total <= maximumSize else {
                throw .malformed("a picture of \(chunk.totalSize.map { "\($0) bytes" } ?? "unknown size")")
            }
            type = type ?? chunk.type
            data += chunk.data
            if data.count >= total || chunk.data.isEmpty {
                return total == 0 ? nil : Picture(data: data, type: type)
            }
        }
    }
}
