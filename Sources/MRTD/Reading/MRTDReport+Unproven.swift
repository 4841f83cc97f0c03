// Why a document is not proven as far as asked: what `apdu mrtd read` and `mrtd verify` exit on,
// kept beside the verdicts so that the hostile matrix judges the exit status the CLI gives.

extension MRTDReport {
    /// Why the document is not proven as far as asked, one line each; empty for exit 0. The
    /// chain counts only when `chainAsked` (a trust store was given); a step that could not run
    /// (no EF.SOD, no data group) is not a proof either, and neither is a chip proof the
    /// document offers that failed, was withheld or refused, or could not finish (one left out
    /// with `--no-…` was not asked for). A live read that is not `genuine` always has a line
    /// here when `chainAsked`: a man in the middle must not bring a genuine document to an
    /// unproven exit 0 (issue 49's downgrade clause).
    public func unproven(chainAsked: Bool) -> [String] {
        var out: [String] = []
        let passive = passiveAuthentication
        if passive.hashes.status != .verified { out.append("data group hashes: \(passive.hashes.reason)") }
        if passive.signature.status != .verified { out.append("signature: \(passive.signature.reason)") }
        if chainAsked && passive.chain.status != .verified { out.append("certificate chain: \(passive.chain.reason)") }
        // A group EF.SOD lists (or DG1, DG2) that the chip withheld is a hash never compared.
        if let withheld = withheldLine { out.append(withheld) }
        if let accessDowngrade { out.append("access \(accessDowngrade)") }
        out += unprovenChipProofs
        for (_, result) in verification.dataGroups.sorted(by: { $0.key < $1.key }) {
            if case let .failure(error) = result { out.append(error.description) }
        }
        return out
    }
}
