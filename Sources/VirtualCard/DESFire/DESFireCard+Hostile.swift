// DESFire cards that break a rule of their own data sheet by choice (issue 49's hostile matrix):
// each answers with the session's correct MACs, so only what it says is wrong.

extension DESFireCard {
    /// A DESFire that breaks one rule of NXP's data sheets (MF3ICD81 DESFire EV1, MF3D(H)x2
    /// DESFire EV2) or application notes (AN12752, AN12343), each answer protected as the session
    /// requires: what it says is the fault, not how it says it.
    public enum Hostile: String, Sendable, CaseIterable {
        /// GetFileSettings announces each standard and backup data file half as large again as
        /// the file is (an 80-byte file as 120 bytes), while ReadData and WriteData keep to the
        /// real size. Breaks MF3ICD81 §GetFileSettings: the file size field is the size the file
        /// was created with (CreateStdDataFile, CreateBackupDataFile).
        case fileSizeLarger = "file-size-larger"
        /// GetFileSettings announces each standard and backup data file half its size (80 bytes
        /// as 40), while ReadData with length 0 ("the entire file", MF3ICD81 §ReadData) returns
        /// all of it. Breaks the same clause as `fileSizeLarger`.
        case fileSizeSmaller = "file-size-smaller"
        /// CommitTransaction answers 91 00, MACed as the session requires, and drops every
        /// pending change instead of making it valid. Breaks MF3ICD81 §CommitTransaction: "validates
        /// all previous write access on backup data files, value files and record files" (AN12752:
        /// the changes take effect at the commit, all or none).
        case commitIgnored = "commit-ignored"
        /// GetVersion names an EV2 (hardware 12, software 2.1), and AuthenticateEV2First (71) and
        /// AuthenticateEV2NonFirst (77) are refused as unknown commands (91 1C), as an EV1 refuses
        /// them. Breaks the EV2 data sheet and AN12343: an EV2 takes AuthenticateEV2First with an
        /// AES key of any application.
        case ev2WithoutEV2First = "ev2-without-ev2first"
    }

    /// The size GetFileSettings announces for a data file of `size` bytes.
    func announcedSize(_ size: Int) -> Int {
        switch hostile {
        case .fileSizeLarger?: return size + size / 2
        case .fileSizeSmaller?: return max(1, size / 2)
        default: return size
        }
    }

    /// Whether the chip takes AuthenticateEV2First/NonFirst.
    func takesEV2Authentication(_ s: State) -> Bool {
        s.image.chip.generation.hasEV2SecureMessaging && hostile != .ev2WithoutEV2First
    }
}
