import ISO7816
import NFCTags
import Testing
import VirtualCard

/// A keyless middle who rewrites AuthenticateFirst's block number (`70 BNr 00`, in the clear:
/// RndA' proves the key's value, not which block holds it), that of the write's session and those
/// after the write, and may withhold the write or refuse an authentication: the cases the two
/// reviews of the key proof found (helpers, 2026-12-07), which the matrix's mutations, which
/// change answers only, cannot play.
final class AuthenticationRedirect: CardChannel {
    enum Act { case pass, redirect(UInt16), refuse }
    let card: MifarePlusModel
    let plan: [Act]
    let withholdWrite: Bool
    let writeSession: Act
    private var written = false
    private var tries = 0
    var supportsExtendedLength: Bool { true }

    /// `plan`: what becomes of each AuthenticateFirst after the write, in order (then: pass);
    /// `writeSession`: of those before it.
    init(card: MifarePlusModel, plan: [Act], withholdWrite: Bool = false, writeSession: Act = .pass) {
        self.card = card
        self.plan = plan
        self.withholdWrite = withholdWrite
        self.writeSession = writeSession
        card.reset()
    }

    func transmit(_ command: [UInt8]) throws -> [UInt8] {
        var c = command
        let wrapped = c.count > 5 && c[0] == 0x90
        let code = wrapped ? c[1] : c.first
        let at = wrapped ? 5 : 1
        if code == 0xA0 || code == 0xA1 {
            written = true
            if withholdWrite { return wrapped ? [0x91, 0x0C] : [0x0C] }
        }
        if code == 0x70 {
            let act: Act
            if written {
                act = tries < plan.count ? plan[tries] : .pass
                tries += 1
            } else {
                act = writeSession
            }
            switch act {
            case .pass: break
            case .refuse: return wrapped ? [0x91, 0x06] : [0x06]
            case .redirect(let n):
                c[at] = UInt8(n & 0xFF)
                c[at + 1] = UInt8(n >> 8)
            }
        }
        return card.process(c)
    }
}

@Suite("Review of the MIFARE Plus key proof: AuthenticateFirst's block number rewritten")
struct MifarePlusKeyProofReviewTests {
    typealias M = MifarePlusMatrixTests

    /// The matrix's SL3 card, with `changes` to its blocks.
    static func card(_ changes: [UInt16: [UInt8]] = [:], form: MifarePlusModel.ReaderForm = .native, hostile: MifarePlusModel.Hostile? = nil) -> MifarePlusModel {
        MifarePlusModel(.ev1, level: .sl3, sectors: 32, readerForm: form, blocks: M.sl3(changes: changes).blocks, hostile: hostile)
    }

    /// Writes `new` to `block` under `number` (whose value is the matrix's key) through `middle`.
    static func write(_ middle: AuthenticationRedirect, block: UInt16 = 0x4002, under number: UInt16 = 0x4002) -> Result<MifarePlusKeyWriteProof?, any Error> {
        let card = MifarePlusCard(transport: APDUTransport(channel: middle), wrappingAllowed: true)
        return Result { try card.writeBlock(block, data: M.new, key: M.key, type: number & 1 == 0 ? .a : .b, confirmed: true,
                                            layout: MifarePlusLayout(.plus2K)) { _ in "" }.keyProof }
    }

    @Test("an honest, MAC-confirmed key write; the new key's try refused and the old key's redirected to sector 0 (same value): never 'not changed', old or new", arguments: [MifarePlusModel.ReaderForm.native, .isoOnly])
    func neverNotChanged(_ form: MifarePlusModel.ReaderForm) {
        let model = Self.card(form: form)
        let result = Self.write(AuthenticationRedirect(card: model, plan: [.refuse, .redirect(0x4000)]))
        #expect(model.block(0x4002) == M.new, "the card wrote it (the case is real)")
        guard case .failure(let e as MifarePlusInterrupted) = result else { Issue.record("\(result)"); return }
        #expect(e.state.contains("old value or the new one") && !e.state.contains("not changed"), "\(e)")
    }

    @Test("a write withheld, the new key's try redirected to sector 0's key that holds the new value: never 'holds the new key'")
    func neverNewFromAnotherSector() {
        let model = Self.card([0x4000: M.new])
        let result = Self.write(AuthenticationRedirect(card: model, plan: [.redirect(0x4000)], withholdWrite: true))
        #expect(model.block(0x4002) == M.keyBytes)
        guard case .failure(let e as MifarePlusInterrupted) = result else { Issue.record("\(result)"); return }
        #expect(e.state.contains("old value or the new one") && !e.state.contains("holds the new key"), "\(e)")
    }

    @Test("a card that drops the key, the new key's try redirected to sector 0's key that holds the new value: never written")
    func neverWrittenFromAnotherSector() {
        let model = Self.card([0x4000: M.new], hostile: .keyWriteDropped)
        let result = Self.write(AuthenticationRedirect(card: model, plan: [.redirect(0x4000)]))
        #expect(model.block(0x4002) == M.keyBytes)
        guard case .failure(let e as MifarePlusInterrupted) = result else { Issue.record("reported written: \(result)"); return }
        #expect(e.state.contains("old value or the new one"), "\(e)")
    }

    /// Sector 1's trailer with access bits 7F 07 88 (AN10787's NDEF sectors): key B writes both
    /// keys; key A and key B read and write the data blocks.
    static let keyBWrites: [UInt16: [UInt8]] = [7: [UInt8](repeating: 0, count: 6) + [0x7F, 0x07, 0x88, 0x40] + [UInt8](repeating: 0, count: 6)]

    @Test("key A written under key B: the answer's MAC and the sector; a card that drops it, redirected to key B (another value), is not written")
    func underTheOtherKey() {
        let honest = Self.card(Self.keyBWrites)
        let proof = Self.write(AuthenticationRedirect(card: honest, plan: []), under: 0x4003)
        #expect((try? proof.get()) == .sectorOpens && honest.block(0x4002) == M.new, "\(proof)")
        let dropping = Self.card(Self.keyBWrites, hostile: .keyWriteDropped)
        let result = Self.write(AuthenticationRedirect(card: dropping, plan: [.redirect(0x4003)]), under: 0x4003)
        #expect(dropping.block(0x4002) == M.keyBytes)
        guard case .failure(let e as MifarePlusInterrupted) = result else { Issue.record("reported written: \(result)"); return }
        #expect(e.state.contains("old value or the new one"), "\(e)")
    }

    @Test("the limit, stated: key B holding the new value, a card that drops key A and a middle that names key B in the proof (and key A in the write's own session, the second review): the answer's MAC and the sector, nothing more", arguments: [false, true])
    func otherKeyNotTold(_ writeRedirected: Bool) {
        // The user writes 4002 under key B, believing it the matrix's key; the middle names 4002 (which holds it) instead.
        let model = Self.card([0x4003: M.new], hostile: .keyWriteDropped)
        let middle = AuthenticationRedirect(card: model, plan: [.redirect(0x4003)], writeSession: writeRedirected ? .redirect(0x4002) : .pass)
        let result = Self.write(middle, under: writeRedirected ? 0x4003 : 0x4002)
        #expect(model.block(0x4002) == M.keyBytes)
        #expect((try? result.get()) == .sectorOpens, "\(result)")
    }

    @Test("the second review: an honest card, the write's session redirected from key B to key A, the write withheld, the proof redirected to key B holding the new value: never 'the card wrote it'")
    func neverWroteWhenWithheld() {
        let model = Self.card([0x4003: M.new])
        let middle = AuthenticationRedirect(card: model, plan: [.redirect(0x4003)], withholdWrite: true, writeSession: .redirect(0x4002))
        let result = Self.write(middle, under: 0x4003)
        #expect(model.block(0x4002) == M.keyBytes)
        guard case .failure(let e as MifarePlusInterrupted) = result else { Issue.record("\(result)"); return }
        #expect(e.state.contains("old value or the new one") && !e.state.contains("wrote it"), "\(e)")
    }

    @Test("a key whose access bits deny it the sector's first block: the proof reads the trailer instead (the second review)")
    func trailerWhenDataDenied() {
        // Sector 1's first block with C1C2C3 = 011 (key B alone reads and writes it), the others
        // 000, the trailer 011 (key B writes the keys; key A and B read the access bits): 6F 06 99.
        let trailer: [UInt8] = [UInt8](repeating: 0, count: 6) + [0x6F, 0x06, 0x99, 0x69] + [UInt8](repeating: 0, count: 6)
        let model = Self.card([7: trailer])
        let result = Self.write(AuthenticationRedirect(card: model, plan: []), under: 0x4003)
        #expect(model.block(0x4002) == M.new)
        #expect((try? result.get()) == .sectorOpens, "\(result)")
    }
}

/// The same middle for the hostile matrix's whole run (as `RelabellingMiddle` is for EMV): from
/// the first SL3 write on, every AuthenticateFirst of block `from` names `to` instead, native or
/// wrapped; the matrix's single mutations act on top of it.
final class AuthenticateFirstRenaming: EmulatedCard, @unchecked Sendable {
    let card: MifarePlusModel
    let from: UInt16, to: UInt16
    private var written = false

    init(_ card: MifarePlusModel, from: UInt16, to: UInt16) {
        self.card = card
        self.from = from
        self.to = to
    }

    var atr: [UInt8] { card.atr }
    func reset() { card.reset() }

    func process(_ apdu: [UInt8]) -> [UInt8] {
        var c = apdu
        let wrapped = c.count > 5 && c[0] == 0x90
        let at = wrapped ? 5 : 1
        guard let code = wrapped ? c[1] : c.first else { return card.process(c) }
        if (0xA0...0xA3).contains(code) { written = true }
        if written, code == 0x70, c.count >= at + 2, UInt16(c[at]) | UInt16(c[at + 1]) << 8 == from {
            c[at] = UInt8(to & 0xFF)
            c[at + 1] = UInt8(to >> 8)
        }
        return card.process(c)
    }
}
