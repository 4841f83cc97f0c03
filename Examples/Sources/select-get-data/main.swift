// SELECTs an application and asks it for a data object (GET DATA), with the AIDs this program
// may select declared up front, as an iOS app declares them in select-identifiers.
//   select-get-data AID TAG   e.g. select-get-data F06170647501 5F50
import Foundation
import ISO7816
import NDEF
import TagReader

let arguments = CommandLine.arguments
guard arguments.count == 3, let aid = try? Hex.decode(arguments[1]), let tag = try? Hex.decode(arguments[2]), (1...2).contains(tag.count) else {
    print("usage: select-get-data AID TAG (hex; TAG one or two bytes)")
    exit(64)
}
do {
    // Only this AID may be selected; any other SELECT is refused before it reaches the card.
    let session = TagReaderSession(selectIdentifiers: SelectPolicy(entries: [.init(aid: aid)]))

    guard case let .iso7816(card) = try await session.firstTag(timeout: .seconds(10)) else {
        print("not an ISO 7816 card")
        exit(1)
    }
    let select = try await card.sendCommand(.select(aid: aid))
    print("SELECT \(aid.hexString): \(select.statusWord) (\(select.statusWord.meaning.text))")
    guard select.statusWord.isSuccess else { exit(1) }

    let p1p2 = tag.count == 2 ? (tag[0], tag[1]) : (0, tag[0])
    let data = try await card.sendCommand(CommandAPDU(cla: 0x00, ins: 0xCA, p1: p1p2.0, p2: p1p2.1, ne: 256))
    print("GET DATA \(tag.hexString): \(data.statusWord) (\(data.statusWord.meaning.text))")
    if data.statusWord.isSuccess {
        print(TerminalText.escaping(String(decoding: data.data, as: UTF8.self)), "(\(data.data.hexString))")
    }

    // Any other application stays out of reach: the SELECT never leaves this process.
    do {
        _ = try await card.sendCommand(.select(aid: [0xA0, 0x00, 0x00, 0x00, 0x03, 0x10, 0x10]))
    } catch let refused as TransmitError {
        print("SELECT A0000000031010: \(refused)")
    }
} catch {
    print("select-get-data: \(error)")
    exit(1)
}
