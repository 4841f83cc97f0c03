// The Swift side of Scripts/bench transmit: the same loop as Scripts/bench-src/transmit.c,
// through PCSC.Card.transmit. Prints "median_us mean_us".
import NDEF
import PCSC

#if canImport(Glibc)
import Glibc
#endif

func nowMicroseconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) * 1e6 + Double(ts.tv_nsec) / 1e3
}

let arguments = CommandLine.arguments

/// `apdu-bench ndef FILE SECONDS`: decodes the message again and again, each record interpreted
/// (URI, text…) as ndeflib's message_decoder does. Prints "records_per_second bytes_per_second".
func benchNDEF(path: String, seconds: Double) -> Never {
    guard let file = fopen(path, "rb") else { print("cannot open \(path)"); exit(66) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
        let n = fread(&buffer, 1, buffer.count, file)
        if n <= 0 { break }
        bytes += buffer[0..<n]
    }
    fclose(file)
    var records = 0, rounds = 0, checksum = 0
    let decodeOnly = getenv("APDU_BENCH_DECODE_ONLY") != nil
    let start = nowMicroseconds()
    var elapsed = 0.0
    repeat {
        guard let message = try? NDEFMessage(decoding: bytes) else { print("not a valid NDEF message"); exit(65) }
        if decodeOnly { records += message.records.count; rounds += 1; elapsed = (nowMicroseconds() - start) / 1e6; continue }
        for record in message.records {
            switch try? record.content() {
            case let .uri(u)?: checksum &+= u.utf8.count
            case let .text(t, _, _)?: checksum &+= t.utf8.count
            case let .mime(_, text)?: checksum &+= text?.utf8.count ?? record.payload.count
            default: checksum &+= 1
            }
        }
        records += message.records.count
        rounds += 1
        elapsed = (nowMicroseconds() - start) / 1e6
    } while elapsed < seconds
    print("\(Double(records) / elapsed) \(Double(rounds * bytes.count) / elapsed) \(checksum % 7)")
    exit(0)
}

if arguments.count == 4, arguments[1] == "ndef", let seconds = Double(arguments[3]) {
    benchNDEF(path: arguments[2], seconds: seconds)
}
guard arguments.count == 4, arguments[1] == "transmit", let n = Int(arguments[3]), n > 0 else {
    print("usage: apdu-bench transmit READER N | apdu-bench ndef FILE SECONDS")
    exit(64)
}
do {
    let card = try Context().connect(reader: arguments[2])
    let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x06, 0xF0, 0x61, 0x70, 0x64, 0x75, 0x01, 0x00]
    let echo: [UInt8] = [0x00, 0xEE, 0x00, 0x00, 0x02, 0xCA, 0xFE]
    _ = try card.transmit(select)
    var times = [Double](repeating: 0, count: n)
    var total = 0.0
    for i in 0..<n {
        let start = nowMicroseconds()
        let answer = try card.transmit(echo)
        times[i] = nowMicroseconds() - start
        total += times[i]
        if answer.count != 4 { print("transmit failed at \(i)"); exit(74) }
    }
    times.sort()
    let median = times[n / 2], mean = total / Double(n)
    print("\((median * 100).rounded() / 100) \((mean * 100).rounded() / 100)")
} catch {
    print("\(error)")
    exit(74)
}
