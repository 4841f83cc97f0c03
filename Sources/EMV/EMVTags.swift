// The EMV data dictionary (EMV 4.4 Books 1-4, Annex A; the contactless kernels C-2 to C-7): each
// tag's name, format and privacy, with the tags kernels give different meanings named by kernel.

/// The contactless kernel an application runs on (EMV Book C; 9F2A in the FCI, or the AID's RID).
public enum EMVKernel: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Book C-2.
    case mastercard
    /// Book C-3.
    case visa
    /// Book C-4.
    case amex
    /// Book C-5.
    case jcb
    /// Book C-6.
    case discover
    /// Book C-7.
    case unionpay

    public var description: String { rawValue }

    /// The kernel a Kernel Identifier (9F2A, first byte) names (EMV Book B §3.3.2.5).
    public init?(kernelIdentifier: UInt8) {
        switch kernelIdentifier {
        case 0x02: self = .mastercard
        case 0x03: self = .visa
        case 0x04: self = .amex
        case 0x05: self = .jcb
        case 0x06: self = .discover
        case 0x07: self = .unionpay
        default: return nil
        }
    }

    /// The kernel a payment system's RID implies (EMV Book B Table 3-6, the default kernels).
    public init?(rid: [UInt8]) {
        switch rid {
        case [0xA0, 0x00, 0x00, 0x00, 0x04]: self = .mastercard
        case [0xA0, 0x00, 0x00, 0x00, 0x03]: self = .visa
        case [0xA0, 0x00, 0x00, 0x00, 0x25]: self = .amex
        case [0xA0, 0x00, 0x00, 0x00, 0x65]: self = .jcb
        case [0xA0, 0x00, 0x00, 0x01, 0x52]: self = .discover
        case [0xA0, 0x00, 0x00, 0x03, 0x33]: self = .unionpay
        default: return nil
        }
    }
}

/// How a data element's value is written (EMV Book 3 §4.3).
public enum EMVFormat: String, Sendable, Hashable {
    /// `b`: binary.
    case binary
    /// `n`: numeric, BCD, right-justified with leading zeros.
    case numeric
    /// `cn`: compressed numeric, BCD, left-justified and padded with F.
    case compressedNumeric
    /// `an` / `ans`: text.
    case text
    /// A template of other data objects.
    case template
    /// A data object list (tag and length pairs).
    case dol
}

/// What must not be shown unless asked (`--show-pan`), and is redacted by value in traces.
public enum EMVPrivacy: String, Sendable, Hashable {
    /// The PAN: shown as its first 6 and last 4 digits.
    case pan
    /// Track data and the data that contains the PAN (ICC certificate): hidden.
    case track
    /// The cardholder's name.
    case name
}

/// One data element of the dictionary.
public struct EMVTagInfo: Sendable, Hashable {
    public var tag: [UInt8]
    public var name: String
    public var format: EMVFormat
    public var privacy: EMVPrivacy?

    public init(_ tag: [UInt8], _ name: String, _ format: EMVFormat, privacy: EMVPrivacy? = nil) {
        self.tag = tag
        self.name = name
        self.format = format
        self.privacy = privacy
    }
}

/// The EMV data dictionary.
public enum EMVTags {
    /// The element `tag` is, for `kernel` where kernels disagree (nil: the name without a kernel
    /// lists each kernel's meaning).
    public static func info(_ tag: [UInt8], kernel: EMVKernel? = nil) -> EMVTagInfo? {
        if let byKernel = ambiguous[tag] {
            if let kernel, let name = byKernel.names[kernel] {
                return EMVTagInfo(tag, name, byKernel.format, privacy: byKernel.privacy[kernel])
            }
            let names = EMVKernel.allCases.compactMap { k in byKernel.names[k].map { "\(k): \($0)" } }
            return EMVTagInfo(tag, names.joined(separator: " / "), byKernel.format,
                              privacy: byKernel.privacy.values.contains(.track) ? .track : nil)
        }
        return common[tag]
    }

    /// The name of `tag`, or "unknown tag XX".
    public static func name(_ tag: [UInt8], kernel: EMVKernel? = nil) -> String {
        info(tag, kernel: kernel)?.name ?? "unknown tag \(tag.map { String($0, radix: 16, uppercase: true) }.map { $0.count == 1 ? "0" + $0 : $0 }.joined())"
    }

    /// Tags whose value is private under any kernel (what traces redact by value).
    public static var privateTags: [[UInt8]] {
        common.values.filter { $0.privacy != nil }.map(\.tag) + ambiguous.filter { !$0.value.privacy.isEmpty }.map(\.key)
    }

    struct KernelNames: Sendable {
        var format: EMVFormat
        var names: [EMVKernel: String]
        var privacy: [EMVKernel: EMVPrivacy] = [:]
    }

    /// Tags the kernels use for different things (EMV Book C-2 Annex A, C-3 Annex A, C-4 …).
    static let ambiguous: [[UInt8]: KernelNames] = [
        [0x9F, 0x66]: KernelNames(format: .binary, names: [.visa: "Terminal Transaction Qualifiers (TTQ)", .discover: "Terminal Transaction Qualifiers (TTQ)",
                                                           .unionpay: "Terminal Transaction Qualifiers (TTQ)", .jcb: "Terminal Transaction Qualifiers (TTQ)"]),
        [0x9F, 0x6B]: KernelNames(format: .binary, names: [.mastercard: "Track 2 Data", .visa: "Card CVM Limit"], privacy: [.mastercard: .track]),
        [0x9F, 0x6C]: KernelNames(format: .binary, names: [.visa: "Card Transaction Qualifiers (CTQ)", .mastercard: "Mag Stripe Application Version Number (Card)"]),
        [0x9F, 0x6D]: KernelNames(format: .binary, names: [.mastercard: "Mag-stripe Application Version Number (Reader)", .amex: "Contactless Reader Capabilities"]),
        [0x9F, 0x6E]: KernelNames(format: .binary, names: [.visa: "Form Factor Indicator", .mastercard: "Third Party Data",
                                                           .amex: "Enhanced Contactless Reader Capabilities", .jcb: "Device Information"]),
        [0x9F, 0x69]: KernelNames(format: .binary, names: [.visa: "Card Authentication Related Data", .mastercard: "UDOL"]),
        [0x9F, 0x7C]: KernelNames(format: .binary, names: [.visa: "Customer Exclusive Data", .mastercard: "Merchant Custom Data"]),
        [0x9F, 0x5D]: KernelNames(format: .binary, names: [.visa: "Available Offline Spending Amount", .mastercard: "Application Capabilities Information"]),
        [0x9F, 0x5B]: KernelNames(format: .binary, names: [.visa: "Issuer Script Results", .mastercard: "DSDOL"]),
        [0x9F, 0x5E]: KernelNames(format: .binary, names: [.mastercard: "DS ID", .visa: "Consumer Exclusive Data"]),
        [0x9F, 0x6A]: KernelNames(format: .numeric, names: [.mastercard: "Unpredictable Number (Numeric)", .amex: "Unpredictable Number"]),
        [0x9F, 0x70]: KernelNames(format: .binary, names: [.amex: "Card Interface Capabilities", .mastercard: "Protected Data Envelope 1"]),
        [0x9F, 0x71]: KernelNames(format: .binary, names: [.amex: "Mobile CVM Results", .mastercard: "Protected Data Envelope 2"]),
        [0x9F, 0x60]: KernelNames(format: .binary, names: [.mastercard: "CVC3 (Track 1)", .visa: "Card Verification Results"]),
        [0x9F, 0x61]: KernelNames(format: .binary, names: [.mastercard: "CVC3 (Track 2)"]),
        [0x9F, 0x62]: KernelNames(format: .binary, names: [.mastercard: "PCVC3 (Track 1)"]),
        [0x9F, 0x63]: KernelNames(format: .binary, names: [.mastercard: "PUNATC (Track 1)", .visa: "Offline Counter Initial Value"]),
        [0x9F, 0x64]: KernelNames(format: .binary, names: [.mastercard: "NATC (Track 1)"]),
        [0x9F, 0x65]: KernelNames(format: .binary, names: [.mastercard: "PCVC3 (Track 2)"]),
        [0x9F, 0x67]: KernelNames(format: .binary, names: [.mastercard: "NATC (Track 2)"]),
        [0x9F, 0x68]: KernelNames(format: .binary, names: [.visa: "Card Additional Processes", .mastercard: "Mag Stripe CVM List"]),
        [0xDF, 0x60]: KernelNames(format: .binary, names: [.visa: "Transaction Log Entry (VLP)", .mastercard: "DS Input (Card)"]),
    ]

    static let common: [[UInt8]: EMVTagInfo] = {
        let list: [EMVTagInfo] = [
            // Templates and directories (Book 1, Book 3).
            .init([0x4F], "Application Identifier (AID)", .binary),
            .init([0x50], "Application Label", .text),
            .init([0x56], "Track 1 Data", .binary, privacy: .track),
            .init([0x57], "Track 2 Equivalent Data", .binary, privacy: .track),
            .init([0x5A], "Application Primary Account Number (PAN)", .compressedNumeric, privacy: .pan),
            .init([0x5F, 0x20], "Cardholder Name", .text, privacy: .name),
            .init([0x5F, 0x24], "Application Expiration Date", .numeric),
            .init([0x5F, 0x25], "Application Effective Date", .numeric),
            .init([0x5F, 0x28], "Issuer Country Code", .numeric),
            .init([0x5F, 0x2A], "Transaction Currency Code", .numeric),
            .init([0x5F, 0x2D], "Language Preference", .text),
            .init([0x5F, 0x30], "Service Code", .numeric),
            .init([0x5F, 0x34], "Application PAN Sequence Number", .numeric),
            .init([0x5F, 0x36], "Transaction Currency Exponent", .numeric),
            .init([0x5F, 0x50], "Issuer URL", .text),
            .init([0x5F, 0x53], "International Bank Account Number (IBAN)", .binary, privacy: .pan),
            .init([0x5F, 0x54], "Bank Identifier Code (BIC)", .text),
            .init([0x5F, 0x55], "Issuer Country Code (alpha2)", .text),
            .init([0x5F, 0x56], "Issuer Country Code (alpha3)", .text),
            .init([0x61], "Application Template", .template),
            .init([0x6F], "File Control Information (FCI) Template", .template),
            .init([0x70], "READ RECORD Response Message Template", .template),
            .init([0x71], "Issuer Script Template 1", .template),
            .init([0x72], "Issuer Script Template 2", .template),
            .init([0x73], "Directory Discretionary Template", .template),
            .init([0x77], "Response Message Template Format 2", .template),
            .init([0x80], "Response Message Template Format 1", .binary),
            .init([0x81], "Amount, Authorised (Binary)", .binary),
            .init([0x82], "Application Interchange Profile (AIP)", .binary),
            .init([0x83], "Command Template", .binary),
            .init([0x84], "Dedicated File (DF) Name", .binary),
            .init([0x86], "Issuer Script Command", .binary),
            .init([0x87], "Application Priority Indicator", .binary),
            .init([0x88], "Short File Identifier (SFI)", .binary),
            .init([0x89], "Authorisation Code", .text),
            .init([0x8A], "Authorisation Response Code", .text),
            .init([0x8C], "Card Risk Management Data Object List 1 (CDOL1)", .dol),
            .init([0x8D], "Card Risk Management Data Object List 2 (CDOL2)", .dol),
            .init([0x8E], "Cardholder Verification Method (CVM) List", .binary),
            .init([0x8F], "Certification Authority Public Key Index", .binary),
            .init([0x90], "Issuer Public Key Certificate", .binary),
            .init([0x91], "Issuer Authentication Data", .binary),
            .init([0x92], "Issuer Public Key Remainder", .binary),
            .init([0x93], "Signed Static Application Data (SSAD)", .binary),
            .init([0x94], "Application File Locator (AFL)", .binary),
            .init([0x95], "Terminal Verification Results (TVR)", .binary),
            .init([0x97], "Transaction Certificate Data Object List (TDOL)", .dol),
            .init([0x98], "Transaction Certificate (TC) Hash Value", .binary),
            .init([0x99], "Transaction Personal Identification Number (PIN) Data", .binary),
            .init([0x9A], "Transaction Date", .numeric),
            .init([0x9B], "Transaction Status Information (TSI)", .binary),
            .init([0x9C], "Transaction Type", .numeric),
            .init([0x9D], "Directory Definition File (DDF) Name", .binary),
            .init([0xA5], "FCI Proprietary Template", .template),
            .init([0xBF, 0x0C], "FCI Issuer Discretionary Data", .template),
            .init([0x9F, 0x01], "Acquirer Identifier", .numeric),
            .init([0x9F, 0x02], "Amount, Authorised (Numeric)", .numeric),
            .init([0x9F, 0x03], "Amount, Other (Numeric)", .numeric),
            .init([0x9F, 0x04], "Amount, Other (Binary)", .binary),
            .init([0x9F, 0x05], "Application Discretionary Data", .binary),
            .init([0x9F, 0x06], "Application Identifier (AID), terminal", .binary),
            .init([0x9F, 0x07], "Application Usage Control (AUC)", .binary),
            .init([0x9F, 0x08], "Application Version Number (card)", .binary),
            .init([0x9F, 0x09], "Application Version Number (terminal)", .binary),
            .init([0x9F, 0x0B], "Cardholder Name Extended", .text, privacy: .name),
            .init([0x9F, 0x0D], "Issuer Action Code, Default", .binary),
            .init([0x9F, 0x0E], "Issuer Action Code, Denial", .binary),
            .init([0x9F, 0x0F], "Issuer Action Code, Online", .binary),
            .init([0x9F, 0x10], "Issuer Application Data (IAD)", .binary),
            .init([0x9F, 0x11], "Issuer Code Table Index", .numeric),
            .init([0x9F, 0x12], "Application Preferred Name", .text),
            .init([0x9F, 0x13], "Last Online Application Transaction Counter (ATC) Register", .binary),
            .init([0x9F, 0x14], "Lower Consecutive Offline Limit", .binary),
            .init([0x9F, 0x15], "Merchant Category Code", .numeric),
            .init([0x9F, 0x16], "Merchant Identifier", .text),
            .init([0x9F, 0x17], "Personal Identification Number (PIN) Try Counter", .binary),
            .init([0x9F, 0x18], "Issuer Script Identifier", .binary),
            .init([0x9F, 0x1A], "Terminal Country Code", .numeric),
            .init([0x9F, 0x1B], "Terminal Floor Limit", .binary),
            .init([0x9F, 0x1C], "Terminal Identification", .text),
            .init([0x9F, 0x1D], "Terminal Risk Management Data", .binary),
            .init([0x9F, 0x1E], "Interface Device (IFD) Serial Number", .text),
            .init([0x9F, 0x1F], "Track 1 Discretionary Data", .text, privacy: .track),
            .init([0x9F, 0x20], "Track 2 Discretionary Data", .compressedNumeric, privacy: .track),
            .init([0x9F, 0x21], "Transaction Time", .numeric),
            .init([0x9F, 0x22], "Certification Authority Public Key Index (terminal)", .binary),
            .init([0x9F, 0x23], "Upper Consecutive Offline Limit", .binary),
            .init([0x9F, 0x24], "Payment Account Reference (PAR)", .text, privacy: .pan),
            .init([0x9F, 0x26], "Application Cryptogram", .binary),
            .init([0x9F, 0x27], "Cryptogram Information Data", .binary),
            .init([0x9F, 0x2A], "Kernel Identifier", .binary),
            .init([0x9F, 0x2D], "ICC PIN Encipherment Public Key Certificate", .binary),
            .init([0x9F, 0x2E], "ICC PIN Encipherment Public Key Exponent", .binary),
            .init([0x9F, 0x2F], "ICC PIN Encipherment Public Key Remainder", .binary),
            .init([0x9F, 0x32], "Issuer Public Key Exponent", .binary),
            .init([0x9F, 0x33], "Terminal Capabilities", .binary),
            .init([0x9F, 0x34], "Cardholder Verification Method (CVM) Results", .binary),
            .init([0x9F, 0x35], "Terminal Type", .numeric),
            .init([0x9F, 0x36], "Application Transaction Counter (ATC)", .binary),
            .init([0x9F, 0x37], "Unpredictable Number", .binary),
            .init([0x9F, 0x38], "Processing Options Data Object List (PDOL)", .dol),
            .init([0x9F, 0x39], "Point-of-Service (POS) Entry Mode", .numeric),
            .init([0x9F, 0x3A], "Amount, Reference Currency", .binary),
            .init([0x9F, 0x3B], "Application Reference Currency", .numeric),
            .init([0x9F, 0x3C], "Transaction Reference Currency Code", .numeric),
            .init([0x9F, 0x3D], "Transaction Reference Currency Exponent", .numeric),
            .init([0x9F, 0x40], "Additional Terminal Capabilities", .binary),
            .init([0x9F, 0x41], "Transaction Sequence Counter", .numeric),
            .init([0x9F, 0x42], "Application Currency Code", .numeric),
            .init([0x9F, 0x43], "Application Reference Currency Exponent", .numeric),
            .init([0x9F, 0x44], "Application Currency Exponent", .numeric),
            .init([0x9F, 0x45], "Data Authentication Code", .binary),
            .init([0x9F, 0x46], "ICC Public Key Certificate", .binary, privacy: .track),
            .init([0x9F, 0x47], "ICC Public Key Exponent", .binary),
            .init([0x9F, 0x48], "ICC Public Key Remainder", .binary, privacy: .track),
            .init([0x9F, 0x49], "Dynamic Data Authentication Data Object List (DDOL)", .dol),
            .init([0x9F, 0x4A], "Static Data Authentication Tag List", .binary),
            .init([0x9F, 0x4B], "Signed Dynamic Application Data (SDAD)", .binary),
            .init([0x9F, 0x4C], "ICC Dynamic Number", .binary),
            .init([0x9F, 0x4D], "Log Entry", .binary),
            .init([0x9F, 0x4E], "Merchant Name and Location", .text),
            .init([0x9F, 0x4F], "Log Format", .dol),
            .init([0x9F, 0x51], "Application Currency Code (VIS)", .numeric),
            .init([0x9F, 0x52], "Application Default Action (ADA)", .binary),
            .init([0x9F, 0x53], "Consecutive Transaction Limit (International)", .binary),
            .init([0x9F, 0x54], "Cumulative Total Transaction Amount Limit", .binary),
            .init([0x9F, 0x55], "Geographic Indicator", .binary),
            .init([0x9F, 0x56], "Issuer Authentication Indicator", .binary),
            .init([0x9F, 0x57], "Issuer Country Code (VIS)", .numeric),
            .init([0x9F, 0x58], "Lower Consecutive Offline Limit (Card Check)", .binary),
            .init([0x9F, 0x59], "Upper Consecutive Offline Limit (Card Check)", .binary),
            .init([0x9F, 0x5A], "Application Program Identifier", .binary),
            .init([0x9F, 0x5C], "Cumulative Total Transaction Amount Upper Limit", .binary),
            .init([0x9F, 0x72], "Consecutive Transaction Limit (International, Country)", .binary),
            .init([0x9F, 0x73], "Currency Conversion Factor", .binary),
            .init([0x9F, 0x74], "VLP Issuer Authorization Code", .text),
            .init([0x9F, 0x75], "Cumulative Total Transaction Amount Limit, Dual Currency", .binary),
            .init([0x9F, 0x76], "Secondary Application Currency Code", .numeric),
            .init([0x9F, 0x77], "VLP Funds Limit", .binary),
            .init([0x9F, 0x78], "VLP Single Transaction Limit", .binary),
            .init([0x9F, 0x79], "VLP Available Funds", .binary),
            .init([0x9F, 0x7D], "Application Specific Transparent Template", .binary),
            .init([0x9F, 0x7F], "Card Production Life Cycle (CPLC) History File Identifiers", .binary),
            .init([0xBF, 0x60], "Integrated Data Storage Record Update Template", .template),
        ]
        return Dictionary(uniqueKeysWithValues: list.map { ($0.tag, $0) })
    }()
}
