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

    /// By AID as a number, most significant byte first, as `ls` prints it and Metrodroid writes it
    /// (Clipper 0x9011F2, Opal 0x314553). proxmark3's `aid_desfire.json` lists the same AIDs in the
    /// order the bytes go on the wire, least significant first (Clipper `F21190`).
    public static let entries: [Entry] = [
        ("000001", "NFC Forum NDEF (NXP AN11004)", ""),
        ("9011F2", "Clipper", "San Francisco Bay Area"),
        ("3010F2", "ORCA", "Seattle"),
        ("F013F2", "ORCA", "Seattle"),
        ("314553", "Opal", "Sydney"),
        ("AF1122", "Leap", "Dublin"),
        ("F010F2", "myki", "Melbourne"),
        ("0011F2", "myki", "Melbourne"),
        ("E010F2", "Hop Fastpass", "Portland"),
        ("B006F2", "metroCARD", "Adelaide"),
        ("004055", "AT HOP", "Auckland"),
        ("8113F2", "Ventra", "Chicago"),
        ("2014F2", "PRESTO", "Ontario"),
        ("5014F2", "Breeze", "Atlanta"),
        ("1120EF", "HSL card", "Helsinki"),
        ("1420EF", "HSL card", "Helsinki"),
        ("31594F", "Oyster", "London"),
        ("1602A0", "ITSO", "United Kingdom"),
        ("422201", "Istanbulkart", "Istanbul"),
        ("004078", "nol", "Dubai"),
        ("05007D", "Rejsekort", "Denmark"),
    ].compactMap { aid, name, place in DESFireApplicationID(hex: aid).map { Entry(aid: $0, name: name, place: place) } }

    /// The entry for `aid`, if it is a known one.
    public static func name(of aid: DESFireApplicationID) -> Entry? { entries.first { $0.aid == aid } }
}
