// `apdu emulate FAMILY [MODEL] [options]`, one form per card, and the flags of before kept as
// hidden aliases: each old form starts the same card as its new one, through pcscd.
import Foundation
import Testing
import TestSupport

@Suite("apdu emulate: one form per family, the old flags as aliases")
struct CLIEmulateFormsTests {
    struct Pair: CustomTestStringConvertible, Sendable {
        let old: [String]
        let new: [String]
        /// A command whose JSON output tells the card apart (besides the ATR).
        let probe: [String]
        var testDescription: String { new.joined(separator: " ") + " = " + old.joined(separator: " ") }
    }

    static let pairs: [Pair] = [
        Pair(old: [], new: ["demo"], probe: ["send", "--json", "00A4040006F06170647501"]),
        Pair(old: ["--get-response"], new: ["demo", "--get-response"], probe: ["send", "--json", "--raw", "00A4040006F06170647501"]),
        Pair(old: ["--type2", "ntag215", "--reader-model", "acr122u", "--uid", "04112233445566"],
             new: ["type2", "ntag215", "--reader-model", "acr122u", "--uid", "04112233445566"], probe: ["tag-info", "--json"]),
        Pair(old: ["--type3", "felica-lite-s"], new: ["type3", "felica-lite-s"], probe: ["ndef-status", "--json"]),
        Pair(old: ["--type4", "--mle", "64", "--file-size", "512"], new: ["type4", "--mle", "64", "--file-size", "512"], probe: ["ndef-status", "--json"]),
        Pair(old: ["--type5", "icode-slix"], new: ["type5", "icode-slix"], probe: ["ndef-status", "--json"]),
        Pair(old: ["--classic", "classic-1k", "--formatted"], new: ["classic", "classic-1k", "--formatted"], probe: ["ndef-status", "--json"]),
        Pair(old: ["--ntag424"], new: ["ntag424"], probe: ["ndef-status", "--json"]),
        Pair(old: ["--desfire", "transit", "--desfire-generation", "ev2"], new: ["desfire", "transit", "--generation", "ev2"], probe: ["desfire", "info", "--json"]),
        Pair(old: ["--mrtd", "--mrtd-access", "bac"], new: ["mrtd", "--access", "bac"], probe: ["mrtd", "info", "--json"]),
    ]

    /// Starts `arguments` in `slot`, returns the start line, the ATR and the probe's output.
    func observe(_ arguments: [String], probe: [String], in slot: ReaderSlot) throws -> (start: String, atr: String, probe: String) {
        let ((atr, probed), stderr) = try withEmulator(arguments, in: slot) {
            (try runAPDU(["atr", "--json", "-r", slot.reader]), try runAPDU(probe + ["-r", slot.reader]))
        }
        let start = stderr.split(separator: "\n").first.map(String.init) ?? ""
        // The port is the slot's either way; the rest of the line describes the card.
        return (start.replacingOccurrences(of: String(slot.port), with: "PORT"), atr.stdout, probed.stdout)
    }

    @Test("each old flag form starts the card its new form starts: the same start line, ATR and answers", arguments: pairs)
    func sameCard(_ pair: Pair) async throws {
        try await withEmptySlot { slot in
            let new = try observe(pair.new, probe: pair.probe, in: slot)
            let old = try observe(pair.old, probe: pair.probe, in: slot)
            #expect(new.start.hasPrefix("apdu: emulating "), "\(new.start)")
            #expect(new.start == old.start)
            #expect(!new.atr.isEmpty && new.atr == old.atr, "\(new.atr) / \(old.atr)")
            #expect(!new.probe.isEmpty && new.probe == old.probe, "\(new.probe) / \(old.probe)")
        }
    }

    @Test("apdu emulate --help lists every form; each form's help documents its model and options")
    func help() throws {
        let help = try runAPDU(["emulate", "--help"])
        #expect(help.status == 0)
        for form in ["demo", "script", "replay", "type1", "type2", "type3", "type4", "type5", "classic", "ntag424", "desfire", "mrtd"] {
            #expect(help.stdout.contains("  \(form) "), "\(form) missing: \(help.stdout)")
            let own = try runAPDU(["emulate", form, "--help"])
            #expect(own.status == 0 && own.stdout.contains("USAGE: apdu emulate \(form)") && own.stdout.contains("--port"), "\(form): \(own.stdout)")
        }
        // The old flags are hidden from the help, not gone.
        #expect(!help.stdout.contains("  --type2 <") && !help.stdout.contains("--desfire-generation") && !help.stdout.contains("--mrtd-can"), "\(help.stdout)")
        #expect(!help.stdout.contains("  flags "), "the old flags' form is not listed")
        #expect(try runAPDU(["emulate", "type2", "--help"]).stdout.contains("<chip>"))
        #expect(try runAPDU(["emulate", "desfire", "--help"]).stdout.contains("--generation"))
        #expect(try runAPDU(["emulate", "mrtd", "--help"]).stdout.contains("--save-specimen"))
        #expect(try runAPDU(["emulate", "type1", "--help"]).stdout.contains("--reader-form"))
    }

    @Test("usage errors of the forms: one message naming the problem, exit 64")
    func usage() throws {
        for (arguments, message) in [(["type2", "ntag999"], "unknown type2 chip 'ntag999'"), (["type2"], "<chip>"),
                                     (["type5", "icode-slix", "--reader-model", "acr122u"], "no ISO 15693"),
                                     (["desfire", "nope"], "'nope' is invalid"), (["mrtd", "--can", "12a"], "--can: a card access number"),
                                     (["mrtd", "--data", "/tmp", "--can", "1"], "--data serves a document of its own"),
                                     (["type4", "--save"], "--save needs --ndef"), (["demo", "--port", "0"], "--port must be 1-65535"),
                                     (["classic", "classic-9k"], "'classic-9k' is invalid"),
                                     (["type1", "topaz1k"], "unknown type1 chip 'topaz1k'"), (["type1", "topaz96", "--reader-form", "pn533"], "'pn533' is invalid"),
                                     (["type1", "topaz96", "--uid", "0102"], "--uid must be 7 bytes")] {
            // --port 1: a form that wrongly accepts its arguments fails to reach vpcd instead of serving.
            let r = try runAPDU(["emulate"] + arguments + (arguments.contains("--port") ? [] : ["--port", "1", "--once"]))
            #expect(r.status == 64 && r.stderr.contains(message), "\(arguments): \(r.stderr)")
            #expect(!r.stderr.contains("Fatal error"))
        }
    }
}
