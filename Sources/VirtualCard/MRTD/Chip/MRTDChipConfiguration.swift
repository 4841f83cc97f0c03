// Where the emulated eMRTD chip can behave as different real chips do: access control,
// passwords, lengths and answers.
import ISO7816

extension MRTDChip {
    /// Where real chips differ, and tests need them to.
    public struct Configuration: Sendable, Hashable {
        /// Which access control opens the application.
        public enum AccessControl: String, Sendable, Hashable, CaseIterable {
            /// BAC only: EF.CardAccess is not there (6A82) and MSE:Set AT for PACE is refused.
            case bac
            /// PACE only: EXTERNAL AUTHENTICATE is refused (6982), as on ID cards.
            case pace
            /// Both, as most passports since 2014: PACE when EF.CardAccess offers it.
            case bacAndPACE
        }

        /// A PACE password (Part 11 §9.5.3, MSE:Set AT DO 83).
        public enum PACEPassword: String, Sendable, Hashable, CaseIterable {
            case mrz, can
        }

        /// How a protected command asking for more than `largestLe` bytes is answered.
        public enum OversizedLeAnswer: String, Sendable, Hashable, CaseIterable {
            /// `6700` inside secure messaging (DO 99 and a MAC), the counter advanced for the
            /// command and the answer: the command passed secure messaging and failed after,
            /// as any other error does (Part 11 §9.8.7 leaves the bare answer for SM errors).
            /// The US passports in gmrtd #457 stay in step with a reader that counts so.
            case protected
            /// A bare `6700`, the counter where it was before the command, the session kept:
            /// a chip that refuses the length before secure messaging (the Chinese passport
            /// of gmrtd #457 does so with extended APDUs).
            case unprotected
        }

        public var accessControl: AccessControl = .bacAndPACE
        /// The passwords PACE accepts (a PACEInfo offers the protocol; these say with which
        /// password); the CAN needs `MRTDDocument.can`.
        public var pacePasswords: Set<PACEPassword> = [.mrz, .can]
        /// Answer `6A87` to MSE:Set AT without a parameter id (DO 84) when EF.CardAccess lists
        /// more than one PACEInfo, as older Ukrainian passports do (gmrtd #108).
        public var requiresParameterIDWhenSeveral = false
        /// Accept extended-length APDUs (else a bare `6700` for any of them), and announce the
        /// buffer sizes in EF.ATR/INFO.
        public var extendedLength = true
        /// The largest Ne a READ BINARY may ask for; more is `6700` (some chips refuse more than
        /// 192: gmrtd PR #410). Short APDUs are also bound by the 256 bytes they can carry.
        public var largestLe = 65536
        public var oversizedLe: OversizedLeAnswer = .protected
        /// Answer a read that reaches the end of the file before Ne bytes with `6282` (ISO
        /// 7816-4 §7.2.3); false answers `9000` with the bytes there are.
        public var endOfFileWarning = true
        /// Data groups present but readable only after terminal authentication (EAC), which
        /// this chip does not offer: `6982` even after BAC or PACE.
        public var eacProtectedDataGroups: Set<Int> = [3, 4]
        /// BAC's EXTERNAL AUTHENTICATE when the terminal's MAC does not verify (a wrong MRZ):
        /// `63 00` as ICAO 9303 Part 11 §4.3 suggests, or `69 88` (incorrect secure messaging
        /// data objects) as some chips answer (issue 48).
        public var bacWrongMACAnswer: StatusWord = .verificationFailed
        public var atr: [UInt8] = MRTDChip.defaultATR

        public init() {}
    }
}
