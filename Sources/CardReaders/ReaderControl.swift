// The LED and buzzer of ACS readers, through escape commands on a direct connection.
import ISO7816
import PCSC

/// LED and buzzer of ACS readers (ACR122U, and the ACR1252U through its ACR122U command set),
/// through escape commands: `SCardControl` with `SCARD_CTL_CODE(3500)` on a direct connection,
/// so no card is needed (ACS "API ACR122U" §6: `FF 00 40` LED/buzzer, `FF 00 52` buzzer on
/// card detection).
public enum ReaderControl {
    /// pcsclite's SCARD_CTL_CODE(3500): the escape the ccid and acsccid drivers pass on.
    public static let escapeCode: UInt32 = controlCode(3500)

    /// `FF 00 52 xx 00`: the beep the reader gives on every card it detects, on or off.
    public static func beepOnCardCommand(_ on: Bool) -> [UInt8] { [0xFF, 0x00, 0x52, on ? 0xFF : 0x00, 0x00] }

    /// `FF 00 40 state 04 T1 T2 repetitions buzzer`: blink the red/green LEDs and sound the
    /// buzzer. Durations in units of 100 ms; `buzzer` 0 none, 1 during T1, 2 during T2, 3 both.
    public static func signalCommand(red: Bool, green: Bool, on: UInt8 = 1, off: UInt8 = 1, repetitions: UInt8 = 1, buzzer: UInt8 = 1) -> [UInt8] {
        // Final state bits 0-1 (red, green), masks 2-3, blink state 4-5, blink masks 6-7.
        let state: UInt8 = (red ? 0x01 : 0) | (green ? 0x02 : 0) | 0x0C | (red ? 0x10 : 0) | (green ? 0x20 : 0) | (red ? 0x40 : 0) | (green ? 0x80 : 0)
        return [0xFF, 0x00, 0x40, state, 0x04, on, off, repetitions, buzzer & 0x03]
    }

    /// Why an escape command failed, and how to allow escapes.
    public struct Refused: Error, CustomStringConvertible {
        public var reader: String
        public var reason: String
        public var description: String {
            "\(reader) refused the escape command (\(reason)); the ccid driver passes escapes only when allowed: set ifdDriverOptions to 0x0001 in "
                + "/usr/lib/pcsc/drivers/ifd-ccid.bundle/Contents/Info.plist (or the acsccid bundle's Info.plist) and restart pcscd"
        }
    }

    /// Sends an escape command to the reader on a direct connection (no card needed) and
    /// returns the answer; a refusal says how to enable escapes.
    /// - Throws: `Refused`, `ReaderError` for an unknown reader, `PCSCError` for pcscd.
    public static func escape(_ command: [UInt8], reader requested: String?) throws -> (reader: String, answer: [UInt8]) {
        let selection = try ReaderSelection()
        let readers = try selection.context.readers()
        guard !readers.isEmpty else { throw ReaderError.noReaders }
        let reader: String
        if let requested { reader = try selection.match(requested, in: readers) } else if readers.count == 1 { reader = readers[0] } else {
            throw ReaderError.ambiguousReader("", matches: readers)
        }
        let card: Card
        do { card = try selection.context.connect(reader: reader, share: .direct, protocols: Protocols(rawValue: 0)) } catch {
            throw Refused(reader: reader, reason: "direct connection: \(error)")
        }
        defer { try? card.disconnect() }
        do { return (reader, try card.control(escapeCode, command)) } catch {
            throw Refused(reader: reader, reason: "\(error)")
        }
    }
}
