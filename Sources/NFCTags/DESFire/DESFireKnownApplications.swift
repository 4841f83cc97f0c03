/// A few well-known DESFire applications, for naming what `ls` finds: the NFC Forum NDEF
/// application and transit cards whose application identifiers are public (collected by
/// proxmark3's `aid_desfire.json` and Metrodroid). An application's presence names what the card
/// was issued for; it proves nothing (anyone can create an application with any number).
public enum DESFireKnownApplications {
    public struct Entry: Sendable, Hashable {
        public var aid: DESFireApplicationID
        public var name: String
        public var place: String
    }

    /// By AID, as written by proxmark3 and NXP (most significant digit first).
    public static let entries: [Entry] = [
        ("000001", "NFC Forum NDEF (NXP AN11004)", ""),
        ("F21190", "Clipper", "San Francisco Bay Area"),
        ("F21030", "ORCA", "Seattle"),
        ("F213F0", "ORCA", "Seattle"),
        ("534531", "Opal", "Sydney"),
        ("2211AF", "Leap", "Dublin"),
        ("F210F0", "myki", "Melbourne"),
        ("F21100", "myki", "Melbourne"),
        ("F210E0", "Hop Fastpass", "Portland"),
        ("F206B0", "metroCARD", "Adelaide"),
        ("554000", "AT HOP", "Auckland"),
        ("F21381", "Ventra", "Chicago"),
        ("F21420", "PRESTO", "Ontario"),
        ("F21450", "Breeze", "Atlanta"),
        ("EF2011", "HSL card", "Helsinki"),
        ("EF2014", "HSL card", "Helsinki"),
        ("4F5931", "Oyster", "London"),
        ("A00216", "ITSO", "United Kingdom"),
        ("012242", "Istanbulkart", "Istanbul"),
        ("784000", "nol", "Dubai"),
        ("7D0005", "Rejsekort", "Denmark"),
    ].compactMap { aid, name, place in DESFireApplicationID(hex: aid).map { Entry(aid: $0, name: name, place: place) } }

    /// The entry for `aid`, if it is a known one.
    public static func name(of aid: DESFireApplicationID) -> Entry? { entries.first { $0.aid == aid } }
}
