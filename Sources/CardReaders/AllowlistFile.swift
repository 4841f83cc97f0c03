// A SELECT allowlist read from a file: one AID a line, or an iOS Info.plist or entitlements
// file with `select-identifiers`.
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816

/// Why an allowlist file cannot be used.
public struct AllowlistFileError: Error, Hashable, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

extension SelectPolicy {
    /// The key of an iOS app's Info.plist (or entitlements) that lists the AIDs it may SELECT.
    public static let iOSPlistKey = "com.apple.developer.nfc.readersession.iso7816.select-identifiers"

    /// An allowlist from a file: one AID per line (`#` comments, a trailing `*` for a prefix),
    /// or an iOS Info.plist / .entitlements (XML or binary) with `select-identifiers`, so an
    /// app's own list can be checked on the desktop. A file that lists no AID is refused: it
    /// would refuse every SELECT, and is almost surely the wrong file.
    /// - Parameters:
    ///   - data: the file's contents (a byte order mark and CRLF line ends are fine).
    ///   - name: the file's name, for messages.
    public init(allowlistFile data: Data, name: String) throws(AllowlistFileError) {
        let head = String(decoding: data.prefix(64), as: UTF8.self)
        if data.starts(with: Array("bplist".utf8)) || head.contains("<?xml") || head.contains("<plist") {
            let strings: [String]
            do { strings = try PropertyListDecoder().decode(SelectIdentifiers.self, from: data).identifiers } catch let error as DecodingError {
                switch error {
                case .keyNotFound: throw AllowlistFileError(message: "'\(name)' has no \(Self.iOSPlistKey) array")
                case .typeMismatch where !error.codingPathIsRoot:
                    throw AllowlistFileError(message: "\(Self.iOSPlistKey) in '\(name)' is not an array of strings")
                default: throw AllowlistFileError(message: "'\(name)' is not a valid property list")
                }
            } catch {
                throw AllowlistFileError(message: "'\(name)' is not a valid property list")
            }
            do { self.init(entries: try strings.map { try Entry(parsing: $0) }) } catch {
                throw AllowlistFileError(message: "'\(name)': \(error)")
            }
        } else {
            do { try self.init(list: TextInput.normalized(data)) } catch {
                throw AllowlistFileError(message: "'\(name)': \(error)")
            }
        }
        guard !entries.isEmpty else { throw AllowlistFileError(message: "'\(name)' lists no AID") }
    }
}

/// The one key of an Info.plist or .entitlements file the allowlist reads.
private struct SelectIdentifiers: Decodable {
    let identifiers: [String]

    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        identifiers = try container.decode([String].self, forKey: Key(stringValue: SelectPolicy.iOSPlistKey))
    }
}

extension DecodingError {
    /// Whether the error is about the document itself (not a dictionary), not a value inside it.
    fileprivate var codingPathIsRoot: Bool {
        switch self {
        case let .typeMismatch(_, context), let .valueNotFound(_, context), let .keyNotFound(_, context), let .dataCorrupted(context):
            return context.codingPath.isEmpty
        @unknown default: return true
        }
    }
}
