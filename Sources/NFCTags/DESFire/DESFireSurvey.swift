// A survey of what a DESFire shows, keyless or keyed: applications, key settings, files and their
// contents.
import ISO7816

/// What a card shows: its applications, their key settings and files, and (where free or keyed)
/// the files' contents, each part with the reason it could not be read when it could not.
public struct DESFireSurvey: Sendable {
    public struct File: Sendable {
        public var number: UInt8
        public var settings: DESFireFileSettings?
        /// The contents, when asked for and readable: a data file's bytes, a value's 4 bytes (LSB
        /// first), the records one after another.
        public var contents: DESFireFileContents?
        /// Why the settings or contents could not be read.
        public var problem: String?
    }

    public struct Application: Sendable {
        public var aid: DESFireApplicationID
        public var known: DESFireKnownApplications.Entry?
        public var keys: DESFireKeyInfo?
        /// nil when the files could not be listed (`problem` says why).
        public var files: [File]?
        public var problem: String?
        /// The key the application was read with, if any.
        public var authenticatedWith: UInt8?
    }

    /// The card's own key settings, when it shows them.
    public var card: DESFireKeyInfo?
    public var applications: [Application]
    /// Why the applications could not be listed (the card master key is needed).
    public var problem: String?
}

/// A file's contents, typed by the file.
public enum DESFireFileContents: Sendable, Hashable {
    case data([UInt8])
    case value(Int32)
    case records([[UInt8]])
}

extension DESFireCard {
    /// Reads what the card shows: the card's key settings, its applications and, per
    /// application, its key settings and files with their settings. With `readContents`, every
    /// file readable (free access, or with the key given for its application) is read too. A
    /// refusal (91 9D, 91 AE) for one part is noted and the survey goes on: a transit card
    /// without keys shows what it lets anyone see, as Metrodroid reads it.
    ///
    /// Costs one SelectApplication per application, one GetFileSettings per file, and no
    /// authentication where none is given.
    /// - Parameters:
    ///   - readContents: read every file the survey may read, not only its settings.
    ///   - cardKey: the card master key, to authenticate with at card level first.
    ///   - keys: for an application, the key number and key to authenticate with first.
    public func survey(readContents: Bool = false, cardKey: DESFireKey? = nil,
                       keys: [DESFireApplicationID: (number: UInt8, key: DESFireKey)] = [:]) throws -> DESFireSurvey {
        try selectApplication(.picc)
        if let cardKey { try authenticate(keyNumber: 0, key: cardKey) }
        let cardKeys = try refusable { try keySettings() }
        var survey = DESFireSurvey(card: cardKeys.value, applications: [], problem: nil)
        let aids = try refusable { try applicationIDs() }
        guard let list = aids.value else {
            survey.problem = aids.problem
            return survey
        }
        for aid in list {
            var app = DESFireSurvey.Application(aid: aid, known: DESFireKnownApplications.name(of: aid))
            do {
                try selectApplication(aid)
            } catch let e as DESFireError {
                app.problem = e.message
                survey.applications.append(app)
                continue
            }
            if let (number, key) = keys[aid] {
                do {
                    try authenticate(keyNumber: number, key: key)
                    app.authenticatedWith = number
                } catch let e as DESFireError where e.status != nil || e.kind == .badCryptogram {
                    app.problem = e.message
                    try selectApplication(aid)
                }
            }
            let settings = try refusable { try keySettings() }
            app.keys = settings.value
            let ids = try refusable { try fileIDs() }
            guard let fileIDs = ids.value else {
                app.problem = app.problem ?? ids.problem
                survey.applications.append(app)
                continue
            }
            var files: [DESFireSurvey.File] = []
            for id in fileIDs {
                var file = DESFireSurvey.File(number: id)
                let s = try refusable { try fileSettings(id) }
                file.settings = s.value
                file.problem = s.problem
                if readContents, let fs = s.value, fs.access.allowsRead(with: session?.keyNumber) {
                    let c = try refusable { try contents(id, settings: fs) }
                    file.contents = c.value
                    file.problem = c.problem
                    if c.problem != nil, let key = app.authenticatedWith, let k = keys[aid]?.key {
                        // A refusal ends the session: open it again for the next files.
                        try selectApplication(aid)
                        try authenticate(keyNumber: key, key: k)
                    }
                }
                files.append(file)
            }
            app.files = files
            survey.applications.append(app)
        }
        return survey
    }

    /// The whole contents of a file: a data file's bytes (the whole file, as many as its settings
    /// announce, or an error), a value, all records.
    public func contents(_ file: UInt8, settings: DESFireFileSettings) throws -> DESFireFileContents {
        let mode = readMode(settings)
        switch settings.type {
        case .standardData, .backupData:
            let size = settings.size ?? 0
            return .data(size == 0 ? [] : try readWholeData(file, size: size, mode: mode))
        case .value:
            return .value(try getValue(file, mode: mode))
        case .linearRecord, .cyclicRecord:
            guard let r = settings.records, r.currentRecords > 0 else { return .records([]) }
            return .records(try readRecords(file, count: r.currentRecords, recordSize: r.recordSize, mode: mode))
        case .transactionMAC:
            throw DESFireError(.illegalCommand, "a transaction MAC file is read by its own commands")
        }
    }

    /// Runs `body`; a card's refusal (a status, not an I/O error) becomes a problem to note, as
    /// does a data file whose contents disagree with its announced size (a boundary error
    /// without a status). A refusal ends any session and may leave nothing selected: the caller
    /// selects again.
    private func refusable<T>(_ body: () throws -> T) throws -> (value: T?, problem: String?) {
        do { return (try body(), nil) } catch let e as DESFireError where e.status != nil || e.kind == .boundaryError {
            return (nil, e.message)
        }
    }
}
