// The Swift side of Scripts/bench: the same loops as Scripts/bench-src/*.c and the Python
// baselines, through the library. Past 500 lines because each bench is one small function here
// beside the dispatch at the end; it is a benchmark driver, not a product, and splitting it would
// spread one loop per file.
import EMV
import ISO7816
import MRTD
import NDEF
import NFCTags
import PCSC
import SUN
import TagReader
import VirtualCard

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

/// `apdu-bench type4 READER ROUNDS`: reads the tag's NDEF message ROUNDS times (detection
/// included) and measures the round trip of one READ BINARY of MLe bytes. Prints
/// "apdus nlen mle read_median_us rtt_median_us".
func benchType4(reader: String, rounds: Int) throws -> Never {
    let card = try Context().connect(reader: reader)
    var count = 0
    let transport = APDUTransport(channel: PCSCChannel(card: card)) { _ in count += 1 }
    var times: [Double] = []
    var nlen = 0
    var mle = 0
    for _ in 0..<rounds {
        count = 0
        let start = nowMicroseconds()
        let tag = try Type4Tag.detect(transport)
        nlen = try tag.readNDEF().count
        times.append(nowMicroseconds() - start)
        mle = tag.capabilityContainer.mle
    }
    let apdus = count
    // One READ BINARY of a full MLe chunk, the kind of exchange the read is made of.
    let chunk = min(mle, 65536)
    let read = CommandAPDU(cla: 0, ins: 0xB0, p1: 0, p2: 0, ne: chunk).bytes
    var rtts: [Double] = []
    for _ in 0..<max(200, rounds * 10) {
        let start = nowMicroseconds()
        _ = try card.transmit(read)
        rtts.append(nowMicroseconds() - start)
    }
    times.sort()
    rtts.sort()
    print("\(apdus) \(nlen) \(mle) \(times[times.count / 2]) \(rtts[rtts.count / 2])")
    exit(0)
}

/// Resident set size now and at peak (kB), and open file descriptors, from /proc/self.
func processFigures() -> (rss: Int, peak: Int, fds: Int) {
    var rss = 0, peak = 0
    if let f = fopen("/proc/self/status", "r") {
        var line = [CChar](repeating: 0, count: 256)
        while fgets(&line, 256, f) != nil {
            let s = String(cString: line)
            let value = Int(s.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "") ?? 0
            if s.hasPrefix("VmRSS:") { rss = value }
            if s.hasPrefix("VmHWM:") { peak = value }
        }
        fclose(f)
    }
    var fds = 0
    if let d = opendir("/proc/self/fd") {
        while readdir(d) != nil { fds += 1 }
        closedir(d)
    }
    return (rss, peak, fds - 3)  // minus ".", ".." and the directory itself
}

/// `apdu-bench soak READER APDUS CYCLES`: APDUS transmits on one connection, then CYCLES of
/// connect/transmit/disconnect (each with its own context), reporting memory and fds as it goes.
func soak(reader: String, apdus: Int, cycles: Int) throws -> Never {
    let select: [UInt8] = [0x00, 0xA4, 0x04, 0x00, 0x06, 0xF0, 0x61, 0x70, 0x64, 0x75, 0x01, 0x00]
    let echo: [UInt8] = [0x00, 0xEE, 0x00, 0x00, 0x04, 0xDE, 0xAD, 0xBE, 0xEF]
    func report(_ label: String) {
        let f = processFigures()
        print("  \(label): RSS \(f.rss) kB, peak \(f.peak) kB, open fds \(f.fds)")
    }
    report("start")
    do {
        let card = try Context().connect(reader: reader)
        _ = try card.transmit(select)
        for i in 1...apdus {
            let r = try card.transmit(echo)
            if r.count != 6 { print("bad answer at \(i)"); exit(74) }
            if i == 1_000 { report("after 1,000 APDUs (warm)") }
            if i % (apdus / 4) == 0 { report("after \(i) APDUs") }
        }
        try card.disconnect()
    }
    report("after the APDU soak")
    for i in 1...cycles {
        let context = try Context()
        let card = try context.connect(reader: reader)
        _ = try card.transmit(select)
        try card.disconnect()
        try context.release()
        if i == 100 { report("after 100 cycles (warm)") }
        if i % (cycles / 4) == 0 { report("after \(i) connect/transmit/disconnect cycles") }
    }
    exit(0)
}

if arguments.count == 5, arguments[1] == "soak", let n = Int(arguments[3]), let c = Int(arguments[4]), n >= 4000, c >= 400 {
    do { try soak(reader: arguments[2], apdus: n, cycles: c) } catch { print("\(error)"); exit(74) }
}

/// `apdu-bench type2 READER`: reads the tag's NDEF message once, counting READ BINARY.
/// Prints "reads data_area_bytes message_bytes".
func benchType2(reader: String) throws -> Never {
    let card = try Context().connect(reader: reader)
    var reads = 0
    let transport = APDUTransport(channel: PCSCChannel(card: card)) { e in if e.command.count > 1 && e.command[1] == 0xB0 { reads += 1 } }
    let tag = try Type2Tag.detect(transport, atr: (try? card.status().atr) ?? [])
    let message = try tag.readNDEF()
    print("\(reads) \(tag.capabilityContainer.dataAreaSize) \(message.count)")
    exit(0)
}

/// `apdu-bench type2-write READER BYTES`: replaces the tag's message with BYTES bytes, counting
/// the APDUs by purpose. Prints "lock_reads other_reads updates pages_changed".
func benchType2Write(reader: String, bytes: Int) throws -> Never {
    let card = try Context().connect(reader: reader)
    var reads = 0, updates = 0
    var written = Set<UInt8>()
    let transport = APDUTransport(channel: PCSCChannel(card: card)) { e in
        if e.command.count > 1 && e.command[1] == 0xB0 { reads += 1 }
        if e.command.count > 3 && e.command[1] == 0xD6 { updates += 1; written.insert(e.command[3]) }
    }
    let tag = try Type2Tag.detect(transport, atr: (try? card.status().atr) ?? [])
    let readsBeforeLocks = reads
    _ = try tag.readLockState()
    let lockReads = reads - readsBeforeLocks
    try tag.replaceNDEF(with: (0..<bytes).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ bytes) }) { _ in }
    print("\(lockReads) \(reads - lockReads) \(updates) \(written.count)")
    exit(0)
}

if arguments.count == 4, arguments[1] == "type2-write", let bytes = Int(arguments[3]) {
    do { try benchType2Write(reader: arguments[2], bytes: bytes) } catch { print("\(error)"); exit(74) }
}

/// `apdu-bench fastread READER ROUNDS`: reads every page of the tag through the reader's native
/// path, with the library's dump (FAST_READ in frames as large as the reader carries) and with a
/// READ loop (4 pages per frame, what a tool without FAST_READ sends). Counts the tag frames and
/// the pseudo-APDUs of the reads alone (session and identification excluded, reported apart) and
/// times each, median of ROUNDS. Prints "pages fast_frames fast_apdus fast_us read_frames
/// read_apdus read_us setup_apdus".
func benchFastRead(reader: String, rounds: Int) throws -> Never {
    let card = try Context().connect(reader: reader)
    var apdus = 0
    let transport = APDUTransport(channel: PCSCChannel(card: card)) { _ in apdus += 1 }
    let atr = (try? card.status().atr) ?? []
    let commands = try TagCommandChannel.open(transport: transport, readerName: reader)
    defer { commands.endSession() }
    let tag = try Type2Tag.detect(transport, atr: atr, commands: commands)
    guard let pages = tag.chip.chip?.pages, tag.version != nil else { print("the tag did not answer GET_VERSION"); exit(69) }
    let setup = apdus
    var fast: [Double] = [], slow: [Double] = []
    var fastFrames = 0, fastAPDUs = 0, readFrames = 0, readAPDUs = 0
    for _ in 0..<rounds {
        // The whole tag as `ultralight read` reads it, from nothing (a detected tag keeps what it read:
        // a second dump of it would cost no frame): GET_VERSION and the FAST_READs.
        var (f0, a0, t0) = (commands.framesSent, apdus, nowMicroseconds())
        let rows = try Type2Tag.pageMap(transport, atr: atr, pages: 0...(pages - 1), commands: commands).rows
        fast.append(nowMicroseconds() - t0)
        (fastFrames, fastAPDUs) = (commands.framesSent - f0, apdus - a0)
        guard rows.count == pages, rows.allSatisfy({ $0.bytes != nil }) else { print("the dump missed pages"); exit(74) }
        (f0, a0, t0) = (commands.framesSent, apdus, nowMicroseconds())
        for page in stride(from: 0, to: pages, by: 4) { guard try commands.readPages(at: UInt8(page)) != nil else { print("READ \(page) refused"); exit(74) } }
        slow.append(nowMicroseconds() - t0)
        (readFrames, readAPDUs) = (commands.framesSent - f0, apdus - a0)
    }
    func median(_ v: [Double]) -> Int { Int(v.sorted()[v.count / 2]) }
    print("\(pages) \(fastFrames) \(fastAPDUs) \(median(fast)) \(readFrames) \(readAPDUs) \(median(slow)) \(setup)")
    exit(0)
}

/// `apdu-bench family READER`: detects the tag and reads its NDEF message the way `ndef-read`
/// does, counting the pseudo-APDUs and the tag frames inside them, and the frames a reader that
/// fetched one block (page, FeliCa block) per command would need for the same bytes. Prints
/// "kind length apdus frames one_block_frames".
func benchFamily(reader: String) throws -> Never {
    let card = try Context().connect(reader: reader)
    var apdus = 0
    let transport = APDUTransport(channel: PCSCChannel(card: card)) { _ in apdus += 1 }
    let atr = (try? card.status().atr) ?? []
    let commands = usesTagCommands(atr: atr) ? try TagCommandChannel.open(transport: transport, readerName: reader) : nil
    defer { commands?.endSession() }
    let tag = try detectNDEFTag(transport, atr: atr, commands: commands)
    let message = try tag.readNDEF()
    var oneBlock = 0
    switch tag {
    case let t5 as Type5Tag: oneBlock = 1 + (t5.capabilityContainer.size + 4 + message.count + t5.blockSize - 1) / t5.blockSize
    case is Type3Tag: oneBlock = 2 + (message.count + 15) / 16
    case is Type2Tag: oneBlock = 1 + (16 + 4 + message.count + 15) / 16
    default: oneBlock = 0
    }
    print("\(tag.kind) \(message.count) \(apdus) \(commands?.framesSent ?? 0) \(oneBlock)")
    exit(0)
}

/// `apdu-bench type1`: Type 1 tags behind each reader form, in process (the frames are what
/// the tag receives, whatever carries them): the frames `ndef-read` sends for a full Topaz 512
/// (462 bytes), and `ndef-write` for a 400-byte message, each against the minimum the form
/// allows. Read minimum: RID (for the UID) and the four segments by RSEG where the form has it
/// (nfcpy and Android: RID, RALL, READ8 of block F, 3 RSEG); a form without RSEG past segment 0
/// cannot read it all. Write minimum: RID, one RSEG per segment the old or the new message spans
/// (a byte is written only where the tag is known to hold something else, and the old message
/// is backed up), the magic number to 00 and back, one WRITE-E8 per changed data block (block
/// 1's bytes one by one), one RSEG per segment written to read it back. Prints "form chip what
/// frames minimum" lines.
func benchType1() throws -> Never {
    func tagFrames(_ form: Type1Reader.Form, _ model: Type1TagModel, _ body: (Type1Tag) throws -> Void) throws -> Int {
        let reader = Type1Reader(form, tag: model)
        let transport = APDUTransport(channel: EmulatedChannel(card: reader))
        let commands = form == .acs ? TagCommandChannel(transport: transport, dialect: .acr122u, readerName: "ACR122U") : nil
        let before = model.commands.count
        try body(try Type1Tag.detect(transport, atr: reader.atr, commands: commands))
        return model.commands.count - before
    }
    for form in Type1Reader.Form.allCases {
        // A full Topaz 512, written through a form that reaches it all.
        let full = Type1TagModel(chip: .topaz512)
        _ = try tagFrames(.scm, full) { try $0.writeNDEF([UInt8](repeating: 0x61, count: 462)) }
        let fullImage = full.contents
        if form == .acs {
            print("\(form.rawValue) topaz512 read-462 - unreachable")
        } else {
            let reads = try tagFrames(form, Type1TagModel(chip: .topaz512, memory: fullImage)) { _ = try $0.readNDEF() }
            print("\(form.rawValue) topaz512 read-462 \(reads) 5")
        }
        // 400 bytes over a 100-byte message.
        let model = Type1TagModel(chip: .topaz512)
        _ = try tagFrames(.scm, model) { try $0.writeNDEF([UInt8](repeating: 0x62, count: 100)) }
        let start = model.contents
        if form == .acs {
            print("\(form.rawValue) topaz512 write-400 - unreachable")
            continue
        }
        let mark = model.commands.count
        let writes = try tagFrames(form, model) { try $0.writeNDEF([UInt8](repeating: 0x63, count: 400)) }
        if getenv("APDU_BENCH_TRACE") != nil { print(model.commands[mark...].map { Hex.encode([$0]) }.joined(separator: " ")) }
        let after = model.contents
        let changedBlocks = (2..<64).filter { b in (b * 8..<(b * 8 + 8)).contains { start[$0] != after[$0] } }
        let block1Bytes = (9..<16).filter { start[$0] != after[$0] }.count
        // Segments read first: those the old message and the new one span (a byte is written only
        // when the tag is known to hold something else there); read back: those written.
        let oldEnd = 0x80 + (100 + 4 + 1 - (0x68 - 0x16)), newEnd = 0x80 + (400 + 4 + 1 - (0x68 - 0x16))
        let readFirst = (max(oldEnd, newEnd) - 1) / 128 + 1
        let readBack = Set(changedBlocks.map { $0 / 16 }).count
        print("\(form.rawValue) topaz512 write-400 \(writes) \(1 + readFirst + 2 + changedBlocks.count + block1Bytes + readBack)")
    }
    // A Topaz 96 through the PN532: RID and RALL read it all; a write is byte by byte.
    let small = Type1TagModel(chip: .topaz96)
    let reads = try tagFrames(.acs, small) { _ = try $0.readNDEF() }
    print("acs topaz96 read-90 \(reads) 2")
    exit(0)
}

if arguments.count == 2, arguments[1] == "type1" {
    do { try benchType1() } catch { print("\(error)"); exit(74) }
}

/// `apdu-bench emv`: the library's reader against each emulated payment card, in process.
/// Prints, per profile, "profile info-exchanges info-minimum read-exchanges read-minimum
/// oda-microseconds-per-read"; then "tlv BYTES NANOSECONDS-PER-DECODE" for every TLV answer of
/// the five cards decoded by the reader's decoder (`EMVTLV`, every nested object), and writes those
/// bytes as hex to the file in $APDU_BENCH_TLV_OUT (for pyemv's run on the same bytes).
func benchEMV() throws -> Never {
    let keys = CAPublicKeys(try CAPublicKeys.parse(capkFile: PaymentCardModel.caKeyFile, test: true))
    var answers: [UInt8] = []
    for profile in PaymentCardModel.Profile.allCases {
        let card = PaymentCardModel(profile)
        final class Recorder: EmulatedCard, @unchecked Sendable {
            let card: PaymentCardModel
            var answers: [[UInt8]] = []
            init(_ card: PaymentCardModel) { self.card = card }
            var atr: [UInt8] { card.atr }
            func reset() { card.reset() }
            func process(_ apdu: [UInt8]) -> [UInt8] { let a = card.process(apdu); answers.append(a); return a }
        }
        let recorder = Recorder(card)
        func reader() -> PaymentCardReader {
            PaymentCardReader(transport: APDUTransport(channel: EmulatedChannel(card: recorder)), caKeys: keys, terminal: TerminalData(date: [0x26, 0x11, 0x27]))
        }
        let info = reader()
        let apps = try info.applications()
        // info's minimum: the directory's SELECT, a PSE's records and the READ RECORD that ends
        // them, one SELECT per listed application; on the AID list, every known AID (and the
        // SELECT next a partial one needs).
        let source = apps.first?.source
        let directory: Int
        switch source {
        case .ppse?: directory = 1
        case .pse?: directory = 2 + 2      // PPSE (absent), PSE, its one record, the record that ends it
        default: directory = info.exchanges
        }
        let infoMinimum = directory + (source == .aidList ? 0 : apps.count)
        let r = reader()
        let read = try r.read()
        // read's minimum: the directory, one SELECT of the application (and of each blocked one
        // before it), one GPO, one READ RECORD per AFL record, 4 GET DATA, the log's records, one
        // INTERNAL AUTHENTICATE for DDA.
        let blockedBefore = apps.prefix { $0.blocked }.count
        let readMinimum = directory + 1 + blockedBefore + 1 + read.records.count + read.unreadableRecords.count + 4 + read.log.count + (read.oda.method == .dda ? 1 : 0)
        // The card's TLV answers (FCIs, GPO answers, records; not the log's raw entries).
        answers += recorder.answers.map { Array($0.dropLast(2)) }.filter { [0x6F, 0x70, 0x77, 0x80].contains($0.first) && (try? BERTLV.decode($0)) != nil }.flatMap { $0 }
        // ODA's CPU per read: the certificate chain and the signature, from the read's data.
        let rounds = 200
        let start = processCPUMicroseconds()
        for _ in 0..<rounds { _ = try r.authenticateAgain(read) }
        let oda = (processCPUMicroseconds() - start) / Double(rounds)
        let odaText = read.oda.method == .dda ? "-" : String(Int(oda.rounded()))
        print("\(profile.rawValue) \(info.exchanges) \(infoMinimum) \(r.exchanges) \(readMinimum) \(odaText)")
    }
    let rounds = 20000
    let start = nowMicroseconds()
    for _ in 0..<rounds { _ = try EMVTLV.objects(in: answers) }
    let elapsed = nowMicroseconds() - start
    let perDecode = Int((elapsed * 1000 / Double(rounds)).rounded())
    print("tlv \(answers.count) \(perDecode)")
    if let path = getenv("APDU_BENCH_TLV_OUT"), let file = fopen(path, "w") {
        fputs(Hex.encode(answers), file)
        fclose(file)
    }
    exit(0)
}

if arguments.count == 2, arguments[1] == "emv" {
    do { try benchEMV() } catch { print("\(error)"); exit(74) }
}

if arguments.count == 3, arguments[1] == "family" {
    do { try benchFamily(reader: arguments[2]) } catch { print("\(error)"); exit(74) }
}

if arguments.count == 4, arguments[1] == "fastread", let rounds = Int(arguments[3]) {
    do { try benchFastRead(reader: arguments[2], rounds: rounds) } catch { print("\(error)"); exit(74) }
}

if arguments.count == 3, arguments[1] == "type2" {
    do { try benchType2(reader: arguments[2]) } catch { print("\(error)"); exit(74) }
}

if arguments.count == 4, arguments[1] == "type4", let rounds = Int(arguments[3]) {
    do { try benchType4(reader: arguments[2], rounds: rounds) } catch { print("\(error)"); exit(74) }
}

/// `apdu-bench pagemap READER`: what `ultralight read` costs for the whole tag on a fresh connection:
/// the tag frames that read pages, the identity frames (GET_VERSION) and the minimum,
/// ⌈bytes / frame limit⌉. Prints "pages reads identity minimum".
func benchPageMap(reader: String) throws -> Never {
    let card = try Context().connect(reader: reader)
    var reads = 0, identity = 0
    let transport = APDUTransport(channel: PCSCChannel(card: card)) { e in
        // The tag frame inside the dialect's wrapper: after DO 95 (transparent) or D4 42 (ACR122U).
        let c = e.command
        let frame: [UInt8]? = c.starts(with: [0xFF, 0xC2, 0x00, 0x01]) && c.count > 7 && c[5] == 0x95 ? Array(c[7...])
            : c.starts(with: [0xFF, 0x00, 0x00, 0x00]) && c.count > 7 && c[5] == 0xD4 && c[6] == 0x42 ? Array(c[7...]) : nil
        guard e.purpose == .command, let first = frame?.first else { return }
        if first == 0x30 || first == 0x3A { reads += 1 } else if first == 0x60 { identity += 1 }
    }
    let atr = (try? card.status().atr) ?? []
    let commands = try TagCommandChannel.open(transport: transport, readerName: reader)
    let map = try commands.session { c in try Type2Tag.pageMap(transport, atr: atr, pages: nil, commands: c) }
    let bytes = map.rows.count * 4
    print("\(map.rows.count) \(reads) \(identity) \((bytes + commands.maxAnswerBytes - 1) / commands.maxAnswerBytes)")
    exit(0)
}

/// `apdu-bench provision`: the exchanges of `NTAG424Tag.provisionSDM` on an emulated factory
/// NTAG 424 DNA, by kind. Prints "total select getversion getfilesettings authenticate type4 changefilesettings readback
/// originality" (originality: GetCardUID and Read_Sig in the first session).
func benchProvision() throws -> Never {
    let model = NTAG424TagModel()
    var kinds: [String: Int] = [:]
    var phase = "detect"
    let transport = APDUTransport(channel: EmulatedChannel(card: ApplicationHost(applications: [model], uid: model.uid))) { e in
        let c = e.command
        let kind: String
        switch (c[0], c[1]) {
        case (0x90, 0x60), (0x90, 0xAF) where phase == "detect": kind = "getversion"
        case (0x90, 0x71), (0x90, 0xAF): kind = "authenticate"
        case (0x90, 0xF5): kind = "getfilesettings"
        case (0x90, 0x5F): kind = "changefilesettings"
        case (0x90, 0x51), (0x90, 0x3C): kind = "originality"
        case (0x00, 0xA4) where c.count > 4 && c[2] == 0x04: kind = "select"
        default: kind = phase == "readback" ? "readback" : "type4"
        }
        kinds[kind, default: 0] += 1
        if c[0] == 0x90 && c[1] == 0x5F { phase = "readback" }
        if c[0] == 0x90 && c[1] == 0xF5 { phase = "write" }
    }
    let tag = try NTAG424Tag.detect(transport)!
    let plan = try SUNURLTemplate("https://example.com/t?e={picc}&c={mac}")
    _ = try tag.provisionSDM(plan, key: [UInt8](repeating: 0, count: 16)) { _ in }
    let order = ["select", "getversion", "getfilesettings", "authenticate", "type4", "changefilesettings", "readback", "originality"]
    print(([kinds.values.reduce(0, +)] + order.map { kinds[$0] ?? 0 }).map(String.init).joined(separator: " "))
    exit(0)
}

if arguments.count == 2, arguments[1] == "provision" {
    do { try benchProvision() } catch { print("\(error)"); exit(74) }
}

/// `apdu-bench sun N`: N verifications of a SUN URL in the library on one thread, parsing
/// included: the AN12196 tap (PICC data and MAC) and the one with encrypted file data, with
/// fresh session keys every time (as every real tap needs). Prints "picc_per_s file_per_s".
func benchSUN(count: Int) throws -> Never {
    let zero = [UInt8](repeating: 0, count: 16)
    let keys = try SDMKeys(metaRead: zero, fileRead: zero)
    let urls = ["https://ntag.nxp.com/424?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086",
                "https://www.my424dna.com/?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF6"]
    var rates: [Int] = []
    for url in urls {
        var best = 0.0
        for _ in 0..<3 {
            let start = nowMicroseconds()
            var valid = 0
            for _ in 0..<count where (try? SUNMessage(url: url).verify(keys: keys)) != nil { valid += 1 }
            guard valid == count else { print("a verification failed"); exit(74) }
            best = max(best, Double(count) / ((nowMicroseconds() - start) / 1_000_000))
        }
        rates.append(Int(best))
    }
    print("\(rates[0]) \(rates[1])")
    exit(0)
}

if arguments.count == 3, arguments[1] == "sun", let n = Int(arguments[2]) {
    do { try benchSUN(count: n) } catch { print("\(error)"); exit(74) }
}

if arguments.count == 3, arguments[1] == "pagemap" {
    do { try benchPageMap(reader: arguments[2]) } catch { print("\(error)"); exit(74) }
}

if arguments.count == 4, arguments[1] == "ndef", let seconds = Double(arguments[3]) {
    benchNDEF(path: arguments[2], seconds: seconds)
}

/// An emulated card whose processing time (process CPU) is counted apart, so a handshake's CPU
/// can be split between the terminal (the library) and the chip.
final class TimedCard: EmulatedCard, @unchecked Sendable {
    let card: any EmulatedCard
    var cpuMicroseconds = 0.0
    init(_ card: any EmulatedCard) { self.card = card }
    var atr: [UInt8] { card.atr }
    func reset() { card.reset() }
    func powerOff() { card.powerOff() }
    func process(_ apdu: [UInt8]) -> [UInt8] {
        let start = processCPUMicroseconds()
        defer { cpuMicroseconds += processCPUMicroseconds() - start }
        return card.process(apdu)
    }
}

func processCPUMicroseconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts)
    return Double(ts.tv_sec) * 1e6 + Double(ts.tv_nsec) / 1e3
}

/// `apdu-bench mrtd`: a full read (EF.COM, EF.SOD, DG1, a 20 KB DG2, DG11, DG14, DG15) of the
/// emulated chip after PACE, for each reader form, by the library's reader (largest size
/// accepted, learned) and by readers with the fixed sizes of NFCPassportReader (160), JMRTD (223)
/// and gmrtd (256); then PACE's CPU time per handshake. Prints one line per reader and form:
/// "form|reader|exchanges|bytesSent|bytesReceived|minimum|worstFileAboveMinimum|ok".
func benchMRTD() throws -> Never {
    var options = MRTDSpecimen.Options()
    options.seed = Array("apdu-bench mrtd".utf8)
    options.faceSize = 21_000
    options.csca = .ecdsa(parameterID: 12)
    options.documentSigner = .ecdsa(parameterID: 12)
    let specimen = try MRTDSpecimen.generate(options)
    let line = Array(specimen.mrz[1])
    let key = try MRTDAccessKey.mrz(documentNumber: String(line[0..<9]), dateOfBirth: String(line[13..<19]), dateOfExpiry: String(line[21..<27]))
    let names = ["EF.COM", "EF.SOD", "DG1", "DG2", "DG11", "DG14", "DG15"]
    let files: [MRTD.MRTDFile] = [.com, .sod] + [1, 2, 11, 14, 15].compactMap { MRTD.MRTDFile.dataGroup($0) }
    let lengths = names.map { name in VirtualCard.MRTDFile.all.first { $0.fileName == name + ".bin" }.flatMap { specimen.document.files[$0]?.count } ?? 0 }

    struct Form {
        let name: String
        let readerExtended: Bool
        let chip: (inout MRTDChip.Configuration) -> Void
    }
    let forms = [
        Form(name: "extended length (reader and chip)", readerExtended: true, chip: { _ in }),
        Form(name: "short APDUs only (reader)", readerExtended: false, chip: { _ in }),
        Form(name: "chip without extended length", readerExtended: true, chip: { $0.extendedLength = false }),
        Form(name: "chip refusing more than 192 bytes", readerExtended: false, chip: { $0.largestLe = 192 }),
        Form(name: "chip refusing more than 192 bytes, bare 67 00", readerExtended: false, chip: { $0.largestLe = 192; $0.oversizedLe = .unprotected }),
        Form(name: "chip refusing more than 4096 bytes (extended)", readerExtended: true, chip: { $0.largestLe = 4096 }),
    ]
    let readers: [(String, [Int]?)] = [("swift-apdu", nil), ("fixed 160 (NFCPassportReader)", [160]), ("fixed 223 (JMRTD)", [223]), ("fixed 256 (gmrtd)", [256])]
    for form in forms {
        for (name, sizes) in readers {
            var configuration = MRTDChip.Configuration()
            form.chip(&configuration)
            let chip = MRTDChip(document: specimen.document, configuration: configuration)
            var readerOptions = MRTDReader.Options()
            if let sizes { readerOptions.readSizes = sizes }
            let reader = MRTDReader(transport: APDUTransport(channel: EmulatedChannel(card: chip, supportsExtendedLength: form.readerExtended)), options: readerOptions)
            var ok = true
            do {
                _ = try reader.readCardAccess()
                // The fixed-size readers do not learn extended length (none of them uses it).
                if sizes == nil { _ = try? reader.readATRInfo() }
                _ = try reader.establishAccess(.pace, key: key)
            } catch { ok = false }
            let before = reader.statistics
            var worst = 0, minimum = 0
            for (index, file) in files.enumerated() where ok {
                let start = reader.statistics.exchanges
                do {
                    guard case .read = try reader.readFile(file) else { ok = false; break }
                } catch { ok = false; break }
                let used = reader.statistics.exchanges - start
                // The fewest exchanges for this file: whole answers of the largest size this chip
                // serves this reader (the protected answer's room under AES, capped by the chip).
                let fixed = sizes?.first
                let largest = fixed.map { min($0, 223, configuration.largestLe) }
                    ?? (form.readerExtended && configuration.extendedLength ? min(configuration.largestLe, 65536) : min(223, configuration.largestLe))
                let least = (lengths[index] + largest - 1) / largest
                minimum += least
                worst = max(worst, used - least)
            }
            let s = reader.statistics
            print("\(form.name)|\(name)|\(s.exchanges - before.exchanges)|\(s.bytesSent - before.bytesSent)|\(s.bytesReceived - before.bytesReceived)|\(minimum)|\(worst)|\(ok ? "ok" : "FAILED")")
        }
    }

    // PACE's CPU per handshake, the terminal's (the library) apart from the emulated chip's.
    for (label, id) in [("brainpoolP256r1", 13), ("P-256", 12)] {
        var paceOptions = MRTDSpecimen.Options()
        paceOptions.seed = Array("apdu-bench pace \(id)".utf8)
        paceOptions.csca = .ecdsa(parameterID: 12)
        paceOptions.documentSigner = .ecdsa(parameterID: 12)
        paceOptions.activeAuthentication = nil
        paceOptions.chipAuthentication = nil
        paceOptions.pace = [.init(mapping: .genericECDH, cipher: .aes128, parameterID: id)]
        let document = try MRTDSpecimen.generate(paceOptions).document
        let card = TimedCard(MRTDChip(document: document))
        let channel = MRTDChannel(transport: APDUTransport(channel: EmulatedChannel(card: card)))
        let infos = try SecurityInfos(encoded: VirtualCard.MRTDFile.all.first { $0 == .cardAccess }.flatMap { document.files[$0] } ?? [])
        guard let info = infos.paceInfos.first else { print("no PACEInfo"); exit(65) }
        let rounds = 200
        var terminal: [Double] = []
        for _ in 0..<rounds {
            card.reset()
            card.cpuMicroseconds = 0
            let start = processCPUMicroseconds()
            _ = try PACE.perform(on: channel, key: key, info: info, securityInfos: infos)
            let total = processCPUMicroseconds() - start
            terminal.append(total - card.cpuMicroseconds)
        }
        terminal.sort()
        print("pace|\(label)|\(Int(terminal[rounds / 2]))|\(Int(terminal[rounds * 9 / 10]))")
    }
    exit(0)
}

if arguments.count == 2, arguments[1] == "mrtd" {
    do { try benchMRTD() } catch { print("\(error)"); exit(74) }
}
/// `apdu-bench transmit READER N [card|transport|async]`: N ECHO APDUs through
/// `PCSC.Card.transmit` (card), through the library's `APDUTransport` over `PCSCChannel`, the
/// engine under TagReader (transport), or through `ISO7816Tag.sendCommand`, awaited one by one
/// (async). Prints "median_us mean_us".
let mode = arguments.count == 5 ? arguments[4] : "card"
guard (4...5).contains(arguments.count), arguments[1] == "transmit", let n = Int(arguments[3]), n > 0,
      ["card", "transport", "async"].contains(mode) else {
    print("usage: apdu-bench transmit READER N [card|transport|async] | apdu-bench ndef FILE SECONDS | apdu-bench mrtd")
    exit(64)
}
do {
    let reader = arguments[2]
    let select = CommandAPDU.select(aid: [0xF0, 0x61, 0x70, 0x64, 0x75, 0x01])
    let echo = CommandAPDU(cla: 0x00, ins: 0xEE, p1: 0, p2: 0, data: [0xCA, 0xFE])
    var times = [Double](repeating: 0, count: n)
    var total = 0.0
    func record(_ i: Int, since start: Double, answer: Int) {
        times[i] = nowMicroseconds() - start
        total += times[i]
        if answer != 4 { print("transmit failed at \(i)"); exit(74) }
    }
    switch mode {
    case "card":
        let card = try Context().connect(reader: reader)
        _ = try card.transmit(select.bytes)
        let bytes = echo.bytes
        for i in 0..<n {
            let start = nowMicroseconds()
            record(i, since: start, answer: try card.transmit(bytes).count)
        }
    case "transport":
        let transport = APDUTransport(channel: PCSCChannel(card: try Context().connect(reader: reader)))
        _ = try transport.send(select)
        for i in 0..<n {
            let start = nowMicroseconds()
            record(i, since: start, answer: try transport.send(echo).bytes.count)
        }
    default:
        guard case let .iso7816(card) = try await TagReaderSession(reader: reader).firstTag(timeout: .seconds(5)) else { exit(74) }
        _ = try await card.sendCommand(select)
        for i in 0..<n {
            let start = nowMicroseconds()
            record(i, since: start, answer: try await card.sendCommand(echo).bytes.count)
        }
    }
    times.sort()
    let median = times[n / 2], mean = total / Double(n)
    print("\((median * 100).rounded() / 100) \((mean * 100).rounded() / 100)")
} catch {
    print("\(error)")
    exit(74)
}
