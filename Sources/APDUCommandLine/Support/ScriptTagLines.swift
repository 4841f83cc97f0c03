// What a script's `tag` lines need that only the tag families have (the reader's raw path), so
// that `apdu script` can live among the core commands and run a plain APDU script in `apdu`.
import ISO7816

/// One tag frame sent by a script and the tag's answer, ready to print.
package struct ScriptTagAnswer {
    /// How the tag answered, as an expectation names it.
    package var kind: APDUScript.TagAnswerKind
    /// The `tag>` line: the frame in hex, a password shown as `**` unless secrets are shown.
    package var frame: String
    /// The `tag<` line: the data with its ASCII, `ACK`, `NAK n (meaning)` or no answer.
    package var text: String
    /// The answer in a mismatch line (`ACK`, `NAK 4`, `16 bytes`).
    package var summary: String
    /// The step's JSON members: frame, answer, the NAK and its meaning, the bytes.
    package var json: [(String, JSON)]

    package init(kind: APDUScript.TagAnswerKind, frame: String, text: String, summary: String, json: [(String, JSON)]) {
        self.kind = kind
        self.frame = frame
        self.text = text
        self.summary = summary
        self.json = json
    }
}

/// The reader's raw path for a script's tag lines, opened at the first one.
package protocol ScriptTagChannel: AnyObject {
    /// Sends `frame` (native, without CRC) through the reader's raw path.
    func transceive(_ frame: [UInt8], showSecrets: Bool) throws -> ScriptTagAnswer
    /// Ends the raw path's session (before a reset, and at the end on every path).
    func end()
}

/// Where `apdu script` finds the channel for tag lines. `apdu-tags` sets `open` before it parses
/// its arguments; in `apdu`, where it stays nil, a script with tag lines is handed to
/// `apdu-tags` (`FamilyDoor`) before anything is sent.
package enum ScriptTagLines {
    /// Opens the raw path over the script's transport, for the reader named.
    nonisolated(unsafe) package static var open: ((_ transport: APDUTransport, _ reader: String) throws -> any ScriptTagChannel)?
}
