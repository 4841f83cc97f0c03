// The Swift side of Scripts/bench transmit: the same loop as Scripts/bench-src/transmit.c,
// through PCSC.Card.transmit. Prints "median_us mean_us".
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
guard arguments.count == 4, arguments[1] == "transmit", let n = Int(arguments[3]), n > 0 else {
    print("usage: apdu-bench transmit READER N")
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
