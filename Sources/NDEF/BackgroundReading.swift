// Whether iOS background tag reading acts on a message, judged from its first URI.

/// Whether an iPhone acts on a tag in background tag reading, as iOS decides it.
///
/// iOS looks at the first URI of the message: the first URI record, or the URI of a first Smart
/// Poster. It acts on https (a universal link opens its app, otherwise Safari) and http, on
/// `mailto:`, `sms:`, `tel:`, `facetime:`, `facetime-audio:`, Apple Maps links and HomeKit
/// `X-HM://` codes. Custom URL schemes are not opened from background reading.
public struct BackgroundReadingVerdict: Hashable, Sendable {
    public var eligible: Bool
    /// The URI iOS would consider, when there is one.
    public var uri: String?
    public var reason: String

    public static let schemes: [String: String] = [
        "https": "https link: opens the app that claims it as a universal link, else Safari",
        "http": "http link: opens in Safari",
        "mailto": "mailto: opens Mail",
        "sms": "sms: opens Messages",
        "tel": "tel: offers a phone call",
        "facetime": "facetime: offers a FaceTime call",
        "facetime-audio": "facetime-audio: offers a FaceTime audio call",
        "x-hm": "X-HM: HomeKit setup code",
    ]

    public init(eligible: Bool, uri: String?, reason: String) {
        self.eligible = eligible
        self.uri = uri
        self.reason = reason
    }

    public init(message: NDEFMessage) {
        var firstURI: String?
        for record in message.records {
            switch (try? record.content(strict: false)) ?? .other {
            case let .uri(u): firstURI = u
            case let .smartPoster(p): firstURI = p.uri
            default: continue
            }
            break
        }
        guard let uri = firstURI else {
            self.init(eligible: false, uri: nil, reason: "no URI record: iOS background reading only acts on URIs")
            return
        }
        guard !uri.isEmpty else {
            self.init(eligible: false, uri: uri, reason: "the first URI record is empty")
            return
        }
        guard let colon = uri.firstIndex(of: ":") else {
            self.init(eligible: false, uri: uri, reason: "the first URI has no scheme")
            return
        }
        let scheme = uri[..<colon].lowercased()
        if scheme == "http" || scheme == "https" {
            let rest = uri[uri.index(after: colon)...]
            let host = rest.drop { $0 == "/" }.prefix { $0 != "/" && $0 != "?" && $0 != "#" && $0 != ":" }.lowercased()
            if host.isEmpty {
                self.init(eligible: false, uri: uri, reason: "the first URI is an http(s) link without a host")
                return
            }
            if host == "maps.apple.com" {
                self.init(eligible: true, uri: uri, reason: "Apple Maps link: opens Maps")
                return
            }
        }
        if let why = Self.schemes[scheme] {
            self.init(eligible: true, uri: uri, reason: why)
        } else {
            self.init(eligible: false, uri: uri, reason: "custom scheme '\(scheme):' is not opened by background reading (only http(s), mailto, sms, tel, facetime, facetime-audio, Maps and X-HM)")
        }
    }
}
