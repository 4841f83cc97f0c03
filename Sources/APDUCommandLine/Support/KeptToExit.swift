// A value a command keeps to the end of the process on purpose.

/// Holds a value that is never freed: `Unmanaged.passRetained(KeptToExit(lines))`. For what a
/// command made by the thousand (a script's lines, `send`'s APDUs) and uses until it ends: the
/// process ends with it, and freeing them one by one costs more than making them (issue 50).
final class KeptToExit<Value> {
    let value: Value
    init(_ value: Value) { self.value = value }
}
