// Offline data authentication as a read can do it (EMV Book 2, Book 3 §10.3; Visa fDDA): the
// CA key by RID and index, the issuer and ICC certificates, then SDA's signature, DDA's
// INTERNAL AUTHENTICATE or fDDA's signature from the GPO answer, with expiry, issuer
// identifier and PAN checked. CDA signs GENERATE AC, which a read never sends.
import ISO7816

extension PaymentCardReader {
    /// Offline data authentication over a read's data again, sending nothing (fDDA, SDA; DDA's
    /// INTERNAL AUTHENTICATE is not repeated: its result is kept). For measurements.
    public func authenticateAgain(_ read: PaymentCardRead) throws -> ODAResult {
        guard read.oda.method == .fdda || read.oda.method == .sda || read.oda.method == .cda else { return read.oda }
        var staticData: [UInt8] = []
        for r in read.records {
            let afl = try? ApplicationFileLocator(parsing: read.data[[0x94]] ?? [])
            guard let signed = afl?.records.first(where: { $0.sfi == r.sfi && $0.record == r.record })?.signed, signed else { continue }
            staticData += r.sfi <= 10 ? ((try? BERTLV.decode(r.bytes))?.first?.value ?? []) : r.bytes
        }
        return try authenticate(app: read.application, data: read.data, staticData: staticData, gpoSDAD: read.data[[0x9F, 0x4B]], pan: read.pan)
    }

    func authenticate(app: PaymentApplication, data: [[UInt8]: [UInt8]], staticData records: [UInt8], gpoSDAD: [UInt8]?, pan: String?) throws -> ODAResult {
        let aip = data[[0x82]] ?? [0, 0]
        var offered: [ODAResult.Method] = []
        if gpoSDAD != nil { offered.append(.fdda) }
        if aip[0] & 0x01 != 0 { offered.append(.cda) }
        if aip[0] & 0x20 != 0 { offered.append(.dda) }
        if aip[0] & 0x40 != 0 && data[[0x93]] != nil { offered.append(.sda) }
        let method: ODAResult.Method = offered.contains(.fdda) ? .fdda : offered.contains(.dda) ? .dda : offered.contains(.sda) ? .sda : offered.contains(.cda) ? .cda : .none
        var result = ODAResult(method: method, result: .notOffered, offered: offered)
        guard method != .none else { return result }
        func fail(_ why: String) -> ODAResult { var r = result; r.result = .failed; r.reason = why; return r }

        guard let index = data[[0x8F]]?.first else { return fail("the card offers \(method.rawValue) but gives no CA public key index (8F)") }
        result.caIndex = index
        guard let ca = caKeys.key(rid: Array(app.aid.prefix(5)), index: index) else {
            result.result = .noCAKey
            result.reason = "no CA public key \(Array(app.aid.prefix(5)).hexString) index \(Hex.encode([index])) is known (--ca-keys FILE adds keys)"
            return result
        }
        result.caKeyIsTest = ca.test
        // The static data: the signed records, then the AIP if 9F4A asks for it (and nothing else).
        var staticData = records
        if let list = data[[0x9F, 0x4A]] {
            guard list == [0x82] else { return fail("the static data authentication tag list (9F4A) is \(list.hexString); only 82 (the AIP) is allowed") }
            staticData += aip
        }
        let month = EMVMonth(year: 2000 + (EMVMonth.bcd(terminal.date[0]) ?? 0), month: EMVMonth.bcd(terminal.date[1]) ?? 1)
        let issuer: IssuerCertificate
        do {
            guard let cert = data[[0x90]], let exponent = data[[0x9F, 0x32]] else { return fail("the issuer public key certificate (90) or exponent (9F32) is missing") }
            issuer = try EMVCertificates.issuerKey(certificate: cert, remainder: data[[0x92]] ?? [], exponent: exponent, ca: ca.key)
        } catch { return fail(error.message) }
        if issuer.expiry < month { return fail("the issuer certificate expired in \(issuer.expiry)") }
        if let pan, !EMVCertificates.issuerIdentifier(issuer.issuerIdentifier, matches: pan) {
            return fail("the issuer certificate is for issuer \(EMVCertificates.digits(issuer.issuerIdentifier)), not this card's PAN")
        }
        if method == .sda {
            do {
                result.dataAuthenticationCode = try EMVCertificates.staticDataAuthenticationCode(ssad: data[[0x93]]!, issuer: issuer.key, staticData: staticData)
            } catch { return fail(error.message) }
            result.result = .verified
            return result
        }
        let icc: ICCCertificate
        do {
            guard let cert = data[[0x9F, 0x46]], let exponent = data[[0x9F, 0x47]] else { return fail("the ICC public key certificate (9F46) or exponent (9F47) is missing") }
            icc = try EMVCertificates.iccKey(certificate: cert, remainder: data[[0x9F, 0x48]] ?? [], exponent: exponent, issuer: issuer.key, staticData: staticData)
        } catch { return fail(error.message) }
        if icc.expiry < month { return fail("the ICC certificate expired in \(icc.expiry)") }
        if let pan, EMVCertificates.digits(icc.pan) != pan { return fail("the ICC certificate is for another PAN") }
        switch method {
        case .cda:
            result.result = .notVerified
            result.reason = "CDA signs the answer to GENERATE AC, which this tool never sends; the certificates up to the ICC key verified"
            return result
        case .fdda:
            // Visa fDDA: UN ‖ amount ‖ currency ‖ card authentication related data (9F69), format 95.
            let values = terminal.values(cardCountry: data[[0x5F, 0x28]], cardCurrency: data[[0x9F, 0x42]])
            let related = data[[0x9F, 0x69]]
            let signed = terminal.unpredictableNumber + (related == nil ? [] : values[[0x9F, 0x02]]! + values[[0x5F, 0x2A]]! + related!)
            do {
                result.iccDynamicNumber = try EMVCertificates.dynamicData(sdad: gpoSDAD!, icc: icc.key, terminalData: signed, format: related == nil ? 0x05 : 0x95).iccDynamicNumber
            } catch { return fail(error.message) }
        default:
            // DDA: INTERNAL AUTHENTICATE with the DDOL (default 9F37 04).
            let ddol: DataObjectList
            do throws(EMVFormatError) { ddol = try DataObjectList(parsing: data[[0x9F, 0x49]] ?? [0x9F, 0x37, 0x04]) } catch { return fail("the DDOL (9F49): \(error.message)") }
            let ddolData = ddol.build(terminal.values(cardCountry: data[[0x5F, 0x28]], cardCurrency: data[[0x9F, 0x42]]))
            let r = try send(CommandAPDU(cla: 0x00, ins: 0x88, p1: 0, p2: 0, data: ddolData, ne: 256))
            guard r.statusWord == .success else { return fail("the card refused INTERNAL AUTHENTICATE: \(r.statusWord) (\(r.statusWord.meaning.text))") }
            let objects = (try? BERTLV.decode(r.data)) ?? []
            guard let sdad = objects.first(where: { $0.tag == [0x80] })?.value ?? objects.first(where: { $0.tag == [0x77] })?.children?.first(where: { $0.tag == [0x9F, 0x4B] })?.value else {
                return fail("the INTERNAL AUTHENTICATE answer holds no signed dynamic data")
            }
            do {
                result.iccDynamicNumber = try EMVCertificates.dynamicData(sdad: sdad, icc: icc.key, terminalData: ddolData).iccDynamicNumber
            } catch { return fail(error.message) }
        }
        result.result = .verified
        return result
    }
}
