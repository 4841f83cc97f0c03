// A test tool that prints valid SUN tap URLs, one a line, for the benchmarks and the service.
import Foundation
import SUN

// sun-taps: fresh, valid SUN tap URLs (one a line), for Scripts/bench sun-serve and the
// service's tests. Each line is a distinct UID (04 ‖ 6 bytes counting up from --first) at
// --counter, as a tag with the given keys would serve it.
//
//   sun-taps --count N [--first N] [--counter N] [--path /GROUP] [--keys META:FILE | --master META:MASTER:SYSTEMID]
//
// Keys are hex; the default is the factory keys (all zero). Not shipped.

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("sun-taps: \(message)\n".utf8))
    exit(64)
}

func orFail<T>(_ value: T?, _ message: String) -> T {
    guard let value else { fail(message) }
    return value
}

func hexBytes(_ s: Substring) -> [UInt8] {
    let digits = Array(s.utf8)
    guard digits.count % 2 == 0 else { fail("odd-length hex") }
    return stride(from: 0, to: digits.count, by: 2).map { i in
        guard let v = UInt8(String(decoding: digits[i..<(i + 2)], as: UTF8.self), radix: 16) else { fail("not hex: \(s)") }
        return v
    }
}

var count = 1000, first = 1, counter = 1, path = "/"
var keys: SDMKeys = try! SDMKeys(metaRead: [UInt8](repeating: 0, count: 16), fileRead: [UInt8](repeating: 0, count: 16))
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst() else { fail("\(flag) needs a value") }
    switch flag {
    case "--count": count = orFail(Int(value), "--count: a number")
    case "--first": first = orFail(Int(value), "--first: a number")
    case "--counter": counter = orFail(Int(value), "--counter: a number")
    case "--path": path = value
    case "--keys":
        let parts = value.split(separator: ":")
        guard parts.count == 2 else { fail("--keys META:FILE") }
        keys = orFail((try? SDMKeys(metaRead: hexBytes(parts[0]), fileRead: hexBytes(parts[1]))), "--keys: two 16-byte keys")
    case "--master":
        let parts = value.split(separator: ":", omittingEmptySubsequences: false)
        guard parts.count == 3 else { fail("--master META:MASTER:SYSTEMID") }
        keys = orFail((try? SDMKeys(metaRead: hexBytes(parts[0]), fileReadMaster: hexBytes(parts[1]), systemIdentifier: hexBytes(parts[2]))), "--master: bad keys")
    default: fail("unknown option \(flag)")
    }
}
var out = ""
out.reserveCapacity(count * 64)
for i in 0..<count {
    let n = UInt64(first + i)
    let uid: [UInt8] = [0x04] + (0..<6).map { UInt8(truncatingIfNeeded: n >> (8 * (5 - $0))) }
    let padding: [UInt8] = (0..<5).map { _ in UInt8.random(in: 0...255) }
    out += orFail((try? keys.simulatedTap(uid: uid, counter: counter, padding: padding, base: path)), "counter out of range")
    out += "\n"
    if out.utf8.count > 1 << 20 {
        FileHandle.standardOutput.write(Data(out.utf8))
        out = ""
    }
}
FileHandle.standardOutput.write(Data(out.utf8))
