// NTAG 424 DNA tags that break a rule of NXP's data sheet (NT4H2421Gx) by their own choice, for
// the hostile matrix: each answers a change as a tag that made it does (91 00 with a MAC that
// verifies) and keeps what it had. Only a proof afterwards can tell.

extension NTAG424TagModel {
    /// Ways this tag misbehaves.
    public enum Hostile: String, Sendable, CaseIterable {
        /// ChangeKey of a key other than 0 is answered 91 00 with its MAC (NT4H2421Gx §10.6.1:
        /// the answer follows the change) and the old key is kept.
        case changeKeyDropped = "change-key-dropped"
        /// ChangeFileSettings is answered 91 00 with its MAC (§10.7.1) and the old settings kept.
        case changeFileSettingsDropped = "change-file-settings-dropped"
    }
}
