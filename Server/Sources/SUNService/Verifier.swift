// One tap's URL to a verdict: the group's keys chosen, the SUN message checked, the counter
// recorded.
import Logging
import SUN
import Synchronization

/// What the service answers to one tap's URL.
public enum Verdict: Sendable {
    /// MAC valid, counter fresh (now recorded).
    case valid(SUNResult, group: String)
    /// The MAC does not verify, or the message is one this verifier cannot use.
    case invalid(code: String, reason: String, group: String)
    /// MAC valid, but the counter is not greater than the last one accepted.
    case replay(SUNResult, reason: String, group: String)
    /// Not a SUN message at all: a parameter missing, bad hex, a wrong length, a URL too long.
    case malformed(reason: String)
    /// The path names no group of the key file.
    case unknownGroup(String)
    /// The counter store did not answer in time (the update may still reach it: a retry is then
    /// a replay, never a second acceptance).
    case unavailable(detail: String)
}

/// The tap verifier of the service: picks the group's keys, verifies the message (``SUNMessage``),
/// and records the counter in the store. Keys are replaced whole on reload; a verification in
/// flight finishes with the keys it started with.
public final class Verifier: Sendable {
    private let ring: Mutex<KeyRing>
    public let store: any TapCounterStore
    public let metrics: ServiceMetrics
    /// The parameter names of groups without a template of their own.
    public let defaultTemplate: SUNTemplate

    public init(keys: KeyRing, store: any TapCounterStore, metrics: ServiceMetrics, defaultTemplate: SUNTemplate = .common) {
        ring = Mutex(keys)
        self.store = store
        self.metrics = metrics
        self.defaultTemplate = defaultTemplate
    }

    public var keys: KeyRing { ring.withLock { $0 } }

    /// Replaces the keys (SIGHUP).
    public func replaceKeys(_ keys: KeyRing) { ring.withLock { $0 = keys } }

    /// - Parameters:
    ///   - group: the group the request names: its path's one segment, or its `group`
    ///     parameter; nil for none.
    ///   - path: the request's path (`/` for the default group).
    ///   - query: the URL's query, without `?`.
    ///   - groupParameter: the `group` parameter, when the path's one segment came first: among
    ///     the groups whose template the path fits, it is preferred.
    public func verify(group requested: String?, path: String = "/", query: String, groupParameter: String? = nil) async -> Verdict {
        let keys = self.keys
        let name: String, group: KeyGroup
        if let requested, let named = keys.groups[requested] {
            (name, group) = (requested, named)
        } else if requested == nil, path == "/" || path.isEmpty {
            guard let d = keys.defaultGroup, let g = keys.groups[d] else {
                return .malformed(reason: "the key file has no default group: name one in the path, /GROUP?…")
            }
            (name, group) = (d, g)
        } else if let found = pathGroup(keys, path: path, preferring: groupParameter) {
            (name, group) = found
        } else {
            return .unknownGroup(requested ?? String(path.drop { $0 == "/" }.prefix { $0 != "/" }))
        }
        let template = group.template ?? defaultTemplate
        // A template with placeholders in the path reads the path too; others the query alone.
        let input = template.pattern?.placesInPath == true ? (query.isEmpty ? path : path + "?" + query) : query
        let message: SUNMessage
        do {
            message = try SUNMessage(url: input, template: template)
        } catch {
            return .malformed(reason: error.message)
        }
        let result: SUNResult
        do {
            result = try message.verify(keys: group.keys, tamper: group.tamper)
        } catch {
            return .invalid(code: error.kind.rawValue, reason: error.message, group: name)
        }
        guard let counter = result.counter else {
            return .invalid(code: SUNError.Kind.unsupported.rawValue, reason: "the message mirrors no read counter, so a replay cannot be told from a tap", group: name)
        }
        do {
            guard try await store.accept(uid: result.uid, counter: counter) else {
                return .replay(result, reason: "counter \(counter) is not greater than the last one accepted for this UID", group: name)
            }
        } catch {
            return .unavailable(detail: error.detail)
        }
        return .valid(result, group: name)
    }

    /// The group whose template puts placeholders in the path and whose fixed path text `path`
    /// has (a group's own template, or the server's for groups without one). When several fit
    /// (groups without a template share the server's): the one `preferring` names, else the
    /// default group, else the first by name.
    func pathGroup(_ keys: KeyRing, path: String, preferring: String?) -> (String, KeyGroup)? {
        var fitting: [(String, KeyGroup)] = []
        for name in keys.groups.keys.sorted() {
            guard let group = keys.groups[name], let pattern = (group.template ?? defaultTemplate).pattern, pattern.placesInPath, pattern.fitsPath(path) else { continue }
            fitting.append((name, group))
        }
        return fitting.first { $0.0 == preferring } ?? fitting.first { $0.0 == keys.defaultGroup } ?? fitting.first
    }
}
