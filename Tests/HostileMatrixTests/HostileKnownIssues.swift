import Foundation
import TestSupport
import Testing

/// Product defects the matrix found that are not fixed yet, by case: each stays visible as a
/// known issue (Swift Testing fails the test when it no longer occurs, so the mark is removed
/// with the fix).
enum HostileKnownIssues {
    /// (case name prefix, invariant, what the product does)
    static let known: [(prefix: String, invariant: HostileInvariant, issue: String)] = []

    static func expectNoFailures(_ report: HostileReport, sourceLocation: SourceLocation = #_sourceLocation) {
        var unknown: [HostileFailure] = [], byIssue: [String: [HostileFailure]] = [:]
        for f in report.failures {
            if let k = known.first(where: { f.caseName.hasPrefix($0.prefix) && f.invariant == $0.invariant }) {
                byIssue[k.issue, default: []].append(f)
            } else {
                unknown.append(f)
            }
        }
        #expect(unknown.isEmpty, "\(report.family) \(report.operation): \(unknown.count) failures\n\(unknown.prefix(30).map { "  \($0)" }.joined(separator: "\n"))\n\(report)",
                sourceLocation: sourceLocation)
        for (issue, failures) in byIssue.sorted(by: { $0.key < $1.key }) {
            withKnownIssue(Comment(rawValue: issue)) {
                Issue.record("\(failures.count) cases: \(failures.prefix(5).map(\.description).joined(separator: "; "))", sourceLocation: sourceLocation)
            }
        }
        // A known issue whose operation ran and did not show it: the mark is stale.
        for k in known where report.failures.isEmpty && "\(report.family) \(report.operation)".hasPrefix(k.prefix) {
            withKnownIssue(Comment(rawValue: k.issue)) {}
        }
    }
}

/// The matrix's size, summed over every operation run in this process, printed at the end of a
/// suite (Scripts/stress greps "hostile matrix:").
enum HostileMatrixLog {
    static let lock = NSLock()
    nonisolated(unsafe) static var reports: [HostileReport] = []

    static func record(_ report: HostileReport) {
        lock.lock(); reports.append(report); lock.unlock()
        let caught = HostileInvariant.allCases.map { "\($0.rawValue):\(report.caught($0))" }.joined(separator: " ")
        print("hostile matrix: \(report.family) / \(report.operation): \(report.runs) runs, \(report.exchanges) exchanges, \(report.mutations.count) mutations, "
              + "\(report.exchangesSent) sent, threw \(report.threw), withheld \(report.verdictWithheld), same \(report.sameAnswer), "
              + "caught \(caught), \(String(format: "%.1f", report.seconds)) s; mutations: \(report.mutations.keys.sorted().joined(separator: ","))")
    }
}
