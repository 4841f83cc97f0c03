extension DESFireCard {
    /// Uncommitted changes of the selected application: writes to backup files, credits and
    /// debits, written and cleared records. Reads see the committed contents (libfreefare's
    /// test_mifare_desfire: a backup file, a value and the newest record read unchanged until
    /// CommitTransaction). Volatile: a reset, an error, SelectApplication or AbortTransaction
    /// drops it.
    struct Transaction {
        let aid: UInt32
        /// The files' contents as they will be after the commit.
        var contents: [UInt8: FileContent] = [:]
        /// Record files whose new record this transaction has begun: every WriteRecord of one
        /// transaction writes into that same record.
        var newRecord: Set<UInt8> = []
        /// Record files cleared in this transaction: no WriteRecord may follow (91 9D).
        var cleared: Set<UInt8> = []
        /// Sum of the debits of each value file: the next LimitedCredit's ceiling.
        var debits: [UInt8: Int64] = [:]
        var limitedCredits: Set<UInt8> = []

        var isEmpty: Bool { contents.isEmpty }
    }
}

extension DESFireCard.State {
    /// A file's content as the transaction sees it (the pending change, else the committed one).
    func staged(_ file: DESFireCard.File) -> DESFireCard.FileContent {
        guard let t = transaction, t.aid == selected else { return file.content }
        return t.contents[file.number] ?? file.content
    }

    /// Records a pending change of the selected application's file.
    mutating func stage(_ number: UInt8, _ content: DESFireCard.FileContent, _ update: (inout DESFireCard.Transaction) -> Void = { _ in }) {
        guard let aid = selected else { return }
        var t = transaction.flatMap { $0.aid == aid ? $0 : nil } ?? DESFireCard.Transaction(aid: aid)
        t.contents[number] = content
        update(&t)
        transaction = t
    }

    /// The transaction's bookkeeping for the selected application (a new one if none).
    var currentTransaction: DESFireCard.Transaction {
        guard let aid = selected else { return DESFireCard.Transaction(aid: 0) }
        return transaction.flatMap { $0.aid == aid ? $0 : nil } ?? DESFireCard.Transaction(aid: aid)
    }
}
