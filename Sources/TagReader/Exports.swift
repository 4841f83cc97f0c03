// TagReader brings CardReaders with it: a program that imports TagReader has the reader layer
// (ReaderSelection, PCSCChannel, ReaderMonitor, ReaderControl, the allowlist file) as before.
@_exported import CardReaders
