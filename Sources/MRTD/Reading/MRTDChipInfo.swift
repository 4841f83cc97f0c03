// What a passport or ID card says about itself without any key: the master file's free files
// (EF.CardAccess, EF.DIR, EF.ATR/INFO) and whether the eMRTD application answers.
import ISO7816

/// A chip's self-description, read without access control. Nothing in it is signed: it says what
/// the chip offers, never that the document is genuine.
public struct MRTDChipInfo: Sendable, Hashable {
    /// EF.CardAccess as read; nil when the chip has none (BAC-only documents).
    public var cardAccess: [UInt8]?
    /// EF.CardAccess parsed, when it parses.
    public var securityInfos: SecurityInfos?
    /// Why EF.CardAccess does not parse; nil when it does or is absent.
    public var cardAccessError: String?
    /// EF.DIR as read, when present.
    public var directory: [UInt8]?
    /// EF.ATR/INFO as read, when present.
    public var atrInfo: [UInt8]?
    /// What the chip announced about extended length (its historical bytes or EF.ATR/INFO); nil
    /// when it said nothing.
    public var extendedLength: Bool?
    /// Whether SELECT of the eMRTD application (`A0000002471001`) answered 90 00.
    public var hasApplication: Bool

    /// The PACE protocol `apdu mrtd read` would run with `.auto`, when there is one.
    public var preferredPACE: PACEInfo? { securityInfos.flatMap(MRTDReader.preferredPACEInfo) }

    /// The application identifiers EF.DIR lists (DO 4F inside DO 61 templates), as hex.
    public var directoryApplications: [String] {
        guard let directory, let objects = try? BERTLV.decode(directory) else { return [] }
        return objects.filter { $0.tag == [0x61] }.flatMap { template in
            (template.children ?? []).filter { $0.tag == [0x4F] }.map { Hex.encode($0.value) }
        }
    }

    /// Whether this looks like an eMRTD: the application answers, or EF.CardAccess offers PACE.
    public var isMRTD: Bool { hasApplication || !(securityInfos?.paceInfos.isEmpty ?? true) }
}

extension MRTDReader {
    /// Reads EF.CardAccess, EF.DIR and EF.ATR/INFO at MF level, then SELECTs the eMRTD
    /// application: everything a chip shows without a key. A chip's refusal of one of them is an
    /// absence, not an error. Run it on its own connection: on a BAC-only chip, MF reads before
    /// BAC may upset the access control that follows (gmrtd #226).
    public func readChipInfo(historicalBytes: [UInt8] = []) throws -> MRTDChipInfo {
        learnExtendedLength(historicalBytes: historicalBytes)
        func tolerant(_ body: () throws -> [UInt8]?) throws -> [UInt8]? {
            do { return try body() } catch let error as MRTDProtocolError where error.statusWord != nil || error.kind == .malformed {
                return nil
            }
        }
        let cardAccess = try tolerant { try readCardAccess() }
        var parsed: SecurityInfos?, parseError: String?
        if let cardAccess {
            do { parsed = try SecurityInfos(encoded: cardAccess) } catch { parseError = error.message }
        }
        let directory = try tolerant { try readDirectory() }
        let atrInfo = try tolerant { try readATRInfo() }
        let hasApplication: Bool
        do {
            try selectApplication()
            hasApplication = true
        } catch let error as MRTDProtocolError where error.statusWord != nil {
            hasApplication = false
        }
        return MRTDChipInfo(cardAccess: cardAccess, securityInfos: parsed, cardAccessError: parseError, directory: directory,
                            atrInfo: atrInfo, extendedLength: options.chipSupportsExtendedLength, hasApplication: hasApplication)
    }
}
