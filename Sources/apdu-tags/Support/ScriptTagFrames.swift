// `apdu script`'s tag lines in `apdu-tags`: the reader's raw path (TagCommandChannel), as
// `apdu transceive` uses it, behind the hook the core command looks for.
import APDUCommandLine
import ISO7816
import NFCTags

/// A script's tag lines over the reader's raw path: opened at the first tag line, its session
/// ended before a reset and at the end.
final class ScriptTagFrames: ScriptTagChannel {
    let channel: TagCommandChannel

    init(transport: APDUTransport, reader: String) throws {
        channel = try TagCommandChannel.open(transport: transport, readerName: reader)
    }

    /// Installs the raw path for `apdu script` (before the arguments are parsed).
    static func install() {
        ScriptTagLines.open = { transport, reader in try ScriptTagFrames(transport: transport, reader: reader) }
    }

    func transceive(_ frame: [UInt8], showSecrets: Bool) throws -> ScriptTagAnswer {
        // PWD_AUTH's password never reaches a trace unless asked.
        let answer = try channel.transceive(frame, secretFrom: frame.first == 0x1B && !showSecrets ? 1 : nil)
        return ScriptTagAnswer(kind: answer.kind, frame: APDUCommand.Transceive.shown(frame, showSecrets: showSecrets),
                               text: APDUCommand.Transceive.text(answer), summary: answer.description,
                               json: APDUCommand.Transceive.jsonMembers(frame, answer, showSecrets: showSecrets))
    }

    func end() { channel.endSession() }
}
