// DG1 (ICAO 9303 Part 10 §4.7.1): the MRZ, as printed on the document, without line breaks.

/// The machine-readable zone as the chip holds it. The description names the format only.
public struct DataGroup1: Sendable, Hashable, CustomStringConvertible {
    /// The MRZ, parsed; check-digit failures are in `mrz.checkDigitFailures` rather than thrown,
    /// so a chip's data is shown next to the failure.
    public var mrz: MachineReadableZone

    /// A DG1 holding `mrz` (for tests and emulators).
    public init(mrz: MachineReadableZone) {
        self.mrz = mrz
    }

    /// Decodes DG1 (template `61`, the MRZ in `5F1F`).
    public init(decoding bytes: [UInt8]) throws(LDSError) {
        let elements = try LDSTemplate.open(bytes, tag: 0x61, file: "DG1")
        guard let data = elements.first(where: { $0.tagNumber == 0x5F1F }) else {
            throw LDSError(.structure, file: "DG1", "the MRZ data element (5F1F) is missing")
        }
        guard data.value.allSatisfy({ $0 < 0x80 }) else {
            throw LDSError(.structure, file: "DG1", "the MRZ holds bytes that are not ASCII")
        }
        do {
            mrz = try MachineReadableZone(parsing: String(decoding: data.value, as: UTF8.self), checkDigits: .report)
        } catch {
            throw LDSError(.structure, file: "DG1", error.message)
        }
    }

    public var description: String { "DG1 (\(mrz))" }
}
