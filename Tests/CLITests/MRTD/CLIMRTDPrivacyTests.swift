import CardCrypto
import Foundation
import ISO7816
import MRTD
import Testing
import TestSupport
import VirtualCard

/// The MRZ, the CAN and every key made from them never reach a trace, a recording or the output;
/// BAC's and PACE's password cryptograms are redacted so that a trace cannot test MRZ guesses.
@Suite("apdu mrtd: the key never shows")
struct CLIMRTDPrivacyTests {
    let specimen = CLIMRTDSpecimens.standard

    /// What must never appear: the MRZ as typed, its MRZ_information, the CAN, K_seed, BAC's
    /// K_Enc/K_MAC, PACE's K_π for the MRZ and the CAN, and every session key the chip used.
    func secrets(_ chip: MRTDChip) -> [String: [UInt8]] {
        let information = Array(specimen.mrzInformation.utf8)
        let seed = Array(Digest.sha1.hash(information).prefix(16))
        var out: [String: [UInt8]] = [
            "MRZ line 1": Array(specimen.mrz[0].utf8), "MRZ line 2": Array(specimen.mrz[1].utf8), "MRZ_information": information,
            "CAN": Array("123456".utf8), "K_seed": seed,
            "BAC K_Enc": KeyDerivation.derive(seed, purpose: .encryption, cipher: .tdes2),
            "BAC K_MAC": KeyDerivation.derive(seed, purpose: .mac, cipher: .tdes2),
            "K_pi (MRZ)": KeyDerivation.derive(Digest.sha1.hash(information), purpose: .password, cipher: .aes128),
            "K_pi (CAN)": KeyDerivation.derive(Array("123456".utf8), purpose: .password, cipher: .aes128),
        ]
        for (i, key) in chip.sessionKeysUsed.enumerated() { out["session key \(i)"] = key }
        return out
    }

    /// Every spelling of `bytes` a trace or recording could hold: as text (printable secrets
    /// only), and as hex with or without spaces.
    static func spellings(_ bytes: [UInt8]) -> [String] {
        var out = [Hex.encode(bytes), Hex.encode(bytes, separator: " "), Hex.encode(bytes).lowercased()]
        if bytes.allSatisfy({ (0x20..<0x7F).contains($0) }) { out.append(String(decoding: bytes, as: UTF8.self)) }
        return out
    }

    /// Whether `text` holds `word` not as part of a longer run of hex digits (a recording's hex
    /// may hold "123456" by chance; the CAN typed would stand alone).
    static func contains(_ text: String, _ word: String) -> Bool {
        var searchRange = text.startIndex..<text.endIndex
        while let found = text.range(of: word, range: searchRange) {
            let before = found.lowerBound > text.startIndex ? text[text.index(before: found.lowerBound)] : " "
            let after = found.upperBound < text.endIndex ? text[found.upperBound] : " "
            if !before.isHexDigit && !after.isHexDigit { return true }
            searchRange = found.upperBound..<text.endIndex
        }
        return false
    }

    /// The byte runs of a trace (`trace: > 0C B0 …`) or a recording (`"command":"0CB0…"`).
    static func byteRuns(_ text: String) -> [[UInt8]] {
        var runs: [[UInt8]] = []
        for line in text.split(separator: "\n") {
            if line.hasPrefix("trace: ") {
                let hex = line.dropFirst(9).split(separator: "(").first.map(String.init) ?? ""
                if let bytes = try? Hex.decode(hex.replacingOccurrences(of: " ", with: "")) { runs.append(bytes) }
            } else if let data = line.data(using: .utf8), let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] {
                for key in ["command", "response"] { if let hex = object[key] as? String, let bytes = try? Hex.decode(hex) { runs.append(bytes) } }
            }
        }
        return runs
    }

    /// Whether any 40 bytes of `runs` are E ‖ M with M the retail MAC of E under `macKey`: BAC's
    /// cryptograms, with which an MRZ guess can be tested offline.
    static func holdsBACCryptogram(_ runs: [[UInt8]], macKey: [UInt8]) -> Bool {
        runs.contains { run in
            guard run.count >= 40 else { return false }
            return (0...(run.count - 40)).contains { i in
                let e = Array(run[i..<(i + 32)]), m = Array(run[(i + 32)..<(i + 40)])
                return (try? RetailMAC.mac(key: macKey, data: Padding.pad(e, blockSize: 8))) == m
            }
        }
    }

    @Test("--trace and --record with the MRZ (PACE and BAC) and the CAN: no key, no MRZ, no CAN anywhere; the access cryptograms are **; --show-secrets shows them")
    func nothingLeaks() async throws {
        let chip = MRTDChip(document: specimen.document)
        let recording = mrtdTemp("record") + ".jsonl"
        defer { try? FileManager.default.removeItem(atPath: recording) }
        var transcripts: [(name: String, text: String, stdout: String)] = []
        try await withInsertedCard(chip) { inserted in
            let runs: [(String, [String], [String: String])] = [
                ("PACE with the MRZ", ["--trace"], ["APDU_MRTD_MRZ": specimen.mrzText]),
                ("BAC", ["--trace", "--access", "bac", "--mrz", specimen.mrzText], [:]),
                ("PACE with the CAN", ["--trace", "--can", "123456"], [:]),
                ("a wrong MRZ", ["--trace", "--access", "bac", "--document-number", "L898902C", "--birth", "690807", "--expiry", specimen.expiry], [:]),
            ]
            for (name, arguments, environment) in runs {
                let r = try runAPDU(["mrtd", "read", "-r", inserted.reader, "--record", recording] + arguments, environment: environment)
                #expect(r.status == 0 || name == "a wrong MRZ", "\(name): \(r.stderr)")
                let recorded = (try? String(contentsOfFile: recording, encoding: .utf8)) ?? ""
                #expect(recorded.contains("\"type\":\"exchange\""))
                transcripts.append((name, r.stderr + "\n" + recorded, r.stdout))
            }
        }
        let keys = secrets(chip)
        #expect(keys.count >= 9 + 6, "the chip used session keys: \(keys.count)")
        for (name, text, stdout) in transcripts {
            for (secret, bytes) in keys {
                for spelling in Self.spellings(bytes) where spelling.count >= 6 {
                    #expect(!Self.contains(text, spelling), "\(name): \(secret) in the trace or recording")
                    // The output holds the document's data (its number and dates), never the typed MRZ, the CAN or a key.
                    #expect(!Self.contains(stdout, spelling), "\(name): \(secret) in the output")
                }
            }
            #expect(!Self.holdsBACCryptogram(Self.byteRuns(text), macKey: keys["BAC K_MAC"]!), "\(name): a BAC cryptogram is in the trace")
        }
        let bac = transcripts[1].text
        #expect(bac.contains("trace: > 00 82 00 00 28 ** ** **") && bac.contains("\"response\":\"****"), "\(bac)")
        #expect(transcripts[0].text.contains("trace: > 10 86 00 00 02 7C 00 00") && transcripts[0].text.contains("trace: < ** ** ** **"), "PACE's encrypted nonce shows as **")

        // The control: with --show-secrets the cryptograms are there, and the check above finds them.
        let shown = try await withInsertedCard(MRTDChip(document: specimen.document)) { inserted in
            try runAPDU(["mrtd", "read", "-r", inserted.reader, "--trace", "--show-secrets", "--access", "bac", "--mrz", specimen.mrzText])
        }
        #expect(Self.holdsBACCryptogram(Self.byteRuns(shown.stderr), macKey: keys["BAC K_MAC"]!), "the check finds BAC's cryptogram when it is shown")
    }
}
