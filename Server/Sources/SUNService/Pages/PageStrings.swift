// The words of the verdict page (issue 51): one file per language beside this one
// (PageStrings+en.swift, PageStrings+de.swift), chosen from the request's Accept-Language.

/// Every text the built-in verdict page shows, in one language.
public struct PageStrings: Sendable {
    /// BCP 47 primary tag: the page's `lang`.
    public var language: String
    public var genuine: String
    public var genuineDetail: String
    public var replay: String
    public var replayDetail: String
    public var notGenuine: String
    public var notGenuineDetail: String
    /// 400: the link is not a tag's.
    public var malformedDetail: String
    /// 404: the link names no product line the service knows.
    public var unknownGroupDetail: String
    public var tryAgain: String
    public var rateLimitedDetail: String
    public var unavailableDetail: String
    public var uid: String
    public var counter: String
    public var seal: String
    public var sealIntact: String
    public var sealOpened: String
    public var sealReclosed: String
    public var sealNotEnabled: String
    public var sealUnknown: String
    public var time: String
    public var reason: String
    /// "Continue to %@": the brand's name replaces `%@`.
    public var continueTo: String

    /// The languages the page speaks, English first (the fallback).
    public static let all: [PageStrings] = [.english, .german]

    /// The best language of `Accept-Language` (RFC 9110 §12.5.4: quality values, primary tags
    /// compared without case), English when none fits. Never throws on a malformed header.
    public static func negotiate(_ header: String?) -> PageStrings {
        guard let header, !header.isEmpty else { return .english }
        var best: (PageStrings, Double)?
        for item in header.utf8.split(separator: UInt8(ascii: ","), maxSplits: 16) {
            let fields = item.split(separator: UInt8(ascii: ";"))
            guard let range = fields.first else { continue }
            let tag = String(decoding: range, as: UTF8.self).trimmingSpaces.lowercased()
            var q = 1.0
            for f in fields.dropFirst() {
                let p = String(decoding: f, as: UTF8.self).trimmingSpaces
                // An unreadable or out-of-range quality drops the entry (RFC 9110 §12.4.2).
                if p.hasPrefix("q=") { q = Double(p.dropFirst(2)).flatMap { (0...1).contains($0) ? $0 : nil } ?? 0 }
            }
            guard q > 0 else { continue }
            let primary = tag.split(separator: "-").first.map(String.init) ?? tag
            guard let strings = all.first(where: { $0.language == primary }) else { continue }
            if best == nil || q > best!.1 { best = (strings, q) }
        }
        return best?.0 ?? .english
    }
}

extension String {
    var trimmingSpaces: String {
        var s = Substring(self)
        while s.first == " " || s.first == "\t" { s = s.dropFirst() }
        while s.last == " " || s.last == "\t" { s = s.dropLast() }
        return String(s)
    }
}
