// An NDEF message built from record options in the order given on the command line.
import Dispatch
import FoundationEssentials
import Glibc
import ISO7816
import NDEF

/// Builds a message from record options given in order, as `ndef encode` (and later
/// `ndef-write`) take them: the order on the command line is the order of the records, which
/// matters (iPhones look at the first URI).
package struct NDEFBuilder {
    package static let help = """
        Records, in the order given:
          --uri URI                              URI record (longest identifier-code prefix)
          --text TEXT [--lang LANG] [--utf16]    Text record (language default en)
          --mime TYPE (--data HEX | --file F)    MIME record
          --json-payload FILE                    application/json record (the file must be JSON)
          --external TYPE --data HEX             NFC Forum external type (domain:type)
          --smart-poster URI [--title T [--lang L]]... [--action do|save|open]
          --aar PACKAGE                          Android Application Record
          --absolute-uri URI                     absolute-URI record (TNF 3)
          --id ID                                sets the ID of the record before it
        """

    package struct Problem: Error, CustomStringConvertible {
        package var message: String
        package var isBadData = false
        package var description: String { message }
    }

    package static func build(_ items: [String]) throws -> [NDEFRecord] {
        var records: [NDEFRecord] = []
        var i = 0
        func value(_ option: String) throws -> String {
            guard i + 1 < items.count else { throw Problem(message: "\(option) needs a value") }
            i += 1
            return items[i]
        }
        func peek(_ option: String) -> Bool { i + 1 < items.count && items[i + 1] == option }
        func hexData(_ option: String) throws -> [UInt8] {
            let text = try value(option)
            do { return try Hex.decode(text, allowEmpty: true) } catch { throw Problem(message: "\(option): \(error)") }
        }
        func fileData(_ option: String) throws -> [UInt8] {
            let path = try value(option)
            guard let data = FileManager.default.contents(atPath: path) else {
                throw Problem(message: "\(option): cannot read '\(Terminal.safe(path))'")
            }
            return [UInt8](data)
        }
        func language() throws -> String {
            if peek("--lang") { i += 1; return try value("--lang") }
            return "en"
        }
        func record(_ make: () throws(NDEFError) -> NDEFRecord) throws -> NDEFRecord {
            do { return try make() } catch { throw Problem(message: "\(error)") }
        }

        while i < items.count {
            let option = items[i]
            switch option {
            case "--uri":
                records.append(.uri(try value(option)))
            case "--text":
                let text = try value(option)
                let lang = try language()
                var encoding = TextEncoding.utf8
                if peek("--utf16") { i += 1; encoding = .utf16 }
                records.append(try record { () throws(NDEFError) in try .text(text, language: lang, encoding: encoding) })
            case "--mime":
                let type = try value(option)
                guard type.contains("/"), type.utf8.count <= 255 else { throw Problem(message: "--mime: '\(Terminal.safe(type))' is not a media type like text/plain") }
                let payload: [UInt8]
                if peek("--data") { i += 1; payload = try hexData("--data") }
                else if peek("--file") { i += 1; payload = try fileData("--file") }
                else { throw Problem(message: "--mime \(type) needs --data HEX or --file FILE after it") }
                records.append(.mime(type, payload))
            case "--json-payload":
                let payload = try fileData(option)
                guard (try? JSONDecoder().decode(AnyJSON.self, from: Data(payload))) != nil else {
                    throw Problem(message: "--json-payload: '\(Terminal.safe(items[i]))' is not valid JSON", isBadData: true)
                }
                records.append(.mime("application/json", payload))
            case "--external":
                let type = try value(option)
                guard type.contains(":"), type.utf8.count <= 255 else { throw Problem(message: "--external: '\(Terminal.safe(type))' is not an external type like example.com:thing") }
                guard peek("--data") else { throw Problem(message: "--external \(type) needs --data HEX after it") }
                i += 1
                records.append(.external(type, try hexData("--data")))
            case "--smart-poster":
                let uri = try value(option)
                var titles: [(language: String, text: String)] = []
                var action: UInt8?
                while true {
                    if peek("--title") {
                        i += 1
                        let t = try value("--title")
                        titles.append((try language(), t))
                    } else if peek("--action") {
                        i += 1
                        let a = try value("--action")
                        guard let code = ["do": UInt8(0), "save": 1, "open": 2][a] else {
                            throw Problem(message: "--action: '\(Terminal.safe(a))' is not do, save or open")
                        }
                        action = code
                    } else { break }
                }
                records.append(try record { () throws(NDEFError) in try .smartPoster(uri: uri, titles: titles, action: action) })
            case "--aar":
                records.append(.androidApplication(try value(option)))
            case "--absolute-uri":
                let uri = try value(option)
                guard uri.utf8.count <= 255 else { throw Problem(message: "--absolute-uri: longer than 255 bytes") }
                records.append(NDEFRecord(tnf: .absoluteURI, type: Array(uri.utf8)))
            case "--id":
                let id = try value(option)
                guard !records.isEmpty else { throw Problem(message: "--id must follow the record it names") }
                guard id.utf8.count <= 255 else { throw Problem(message: "--id: longer than 255 bytes") }
                records[records.count - 1].id = Array(id.utf8)
            case "--lang", "--title", "--action", "--data", "--file", "--utf16":
                throw Problem(message: "\(option) must follow the record option it belongs to")
            default:
                throw Problem(message: "unknown record option '\(Terminal.safe(option))'\n" + help)
            }
            i += 1
        }
        return records
    }
}

/// Any JSON value, decoded only to check that a payload is JSON.
private struct AnyJSON: Decodable {
    package init(from decoder: any Decoder) throws {
        if var array = try? decoder.unkeyedContainer() {
            while !array.isAtEnd { _ = try array.decode(AnyJSON.self) }
        } else if let object = try? decoder.container(keyedBy: AnyKey.self) {
            for key in object.allKeys { _ = try object.decode(AnyJSON.self, forKey: key) }
        } else {
            let value = try decoder.singleValueContainer()
            if value.decodeNil() { return }
            if (try? value.decode(Bool.self)) != nil || (try? value.decode(Double.self)) != nil { return }
            _ = try value.decode(String.self)
        }
    }

    private struct AnyKey: CodingKey {
        package var stringValue: String
        package var intValue: Int? { nil }
        package init(stringValue: String) { self.stringValue = stringValue }
        package init?(intValue: Int) { nil }
    }
}
