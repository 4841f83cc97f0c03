import ISO7816
import NFCTags
import Testing
import VirtualCard

/// A keyless middle who rewrites AuthenticateFirst's block number (`70 BNr 00`, in the clear:
/// RndA' proves the key's value, not which block holds it) and may withhold the write or refuse
/// an authentication: the cases the review of the key proof found (a helper, 2026-12-07), which
/// the matrix's mutations, which change answers only, cannot play.
final class AuthenticationRedirect: CardChannel {
    enum Act { case pass, redirect(UInt16), refuse }
    let card: MifarePlusModel
    let plan: [Act]
    let withholdWrite: Bool
    private var written = false
    private var tries = 0
    var supportsExtendedLength: Bool { true }

    /// `plan`: what becomes of each AuthenticateFirst after the write, in order (then: pass).
    init(card: MifarePlusModel, plan: [Act], withholdWrite: Bool = false) {
        self.card = card
        self.plan = plan
        self.withholdWrite = withholdWrite
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
        if written, code == 0x70 {
            let act = tries < plan.count ? plan[tries] : .pass
            tries += 1
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
        var blocks = M.sl3().blocks
        for (n, v) in changes { blocks[n] = v }
        return MifarePlusModel(.ev1, level: .sl3, sectors: 32, readerForm: form, blocks: blocks, hostile: hostile)
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

    @Test("key A written under key B, whose value differs: the block itself proven; a card that drops it, redirected to key B, is not written")
    func siblingExcluded() {
        let honest = Self.card(Self.keyBWrites)
        let proof = Self.write(AuthenticationRedirect(card: honest, plan: []), under: 0x4003)
        #expect((try? proof.get()) == .keyOpensSector && honest.block(0x4002) == M.new, "\(proof)")
        let dropping = Self.card(Self.keyBWrites, hostile: .keyWriteDropped)
        let result = Self.write(AuthenticationRedirect(card: dropping, plan: [.redirect(0x4003)]), under: 0x4003)
        #expect(dropping.block(0x4002) == M.keyBytes)
        guard case .failure(let e as MifarePlusInterrupted) = result else { Issue.record("reported written: \(result)"); return }
        #expect(e.state.contains("old value or the new one"), "\(e)")
    }

    @Test("the limit, stated: key A written under itself while key B holds the new value, a card that drops it and a middle that names key B: the answer's MAC and the sector, never 'new key authenticates'")
    func siblingNotTold() {
        let model = Self.card([0x4003: M.new], hostile: .keyWriteDropped)
        let result = Self.write(AuthenticationRedirect(card: model, plan: [.redirect(0x4003)]))
        #expect(model.block(0x4002) == M.keyBytes)
        #expect((try? result.get()) == .sectorOpens, "\(result)")
    }
}
