// What `apdu emulate` asks of a tag or card family: its own flags, and the card they describe.
import APDUCommandLine
import ArgumentParser
import VirtualCard

/// A family's part of the CLI: its `apdu emulate NAME` form, the old flags that make `apdu
/// emulate` put one of its cards into a virtual reader (kept, hidden), and its subcommand group.
/// Each family declares one in its own folder and is listed once, in `Families`.
protocol EmulatedFamily: ParsableArguments {
    /// The family's subcommand group (`apdu ultralight`, `apdu classic`), nil for none.
    static var commands: (any ParsableCommand.Type)? { get }
    /// `apdu emulate NAME [MODEL] [options]`: the family's form of the emulator.
    static var emulateForm: any EmulateForm.Type { get }
    /// The top-level names its commands had before the family became a group (`classic-dump`).
    static var legacyCommands: [any ParsableCommand.Type] { get }
    /// The flag that chose this family, when one did ("--type2").
    var chosenBy: String? { get }
    /// Every flag that chooses this family, for "… exclude each other".
    static var choosingFlags: [String] { get }
    /// Whether its cards sit behind a reader model (`--reader-model`).
    static var takesReaderModel: Bool { get }
    /// Checks the family's flags together with the shared ones (called for every family; a
    /// family's own flags given without its choosing flag are an error here).
    func validate(shared: EmulationOptions) throws
    /// The card and its description for the start line; called only for the chosen family.
    func emulatedCard(shared: EmulationOptions) throws -> (card: any EmulatedCard, description: String)
}

extension EmulatedFamily {
    static var commands: (any ParsableCommand.Type)? { nil }
    static var takesReaderModel: Bool { false }
    static var legacyCommands: [any ParsableCommand.Type] { [] }
    func validate(shared: EmulationOptions) throws {}
    var sitsBehindReaderModel: Bool { Self.takesReaderModel }
}

/// The old flags of `apdu emulate` that several families share (the forms have their own).
struct EmulationOptions: ParsableArguments {
    @Option(help: ArgumentHelp("The reader around a --type2/3/5 tag: storage (pseudo-APDUs only; Type 2's default), transparent (PC/SC Part 3 transparent exchange; Types 5 and 3's default) or acr122u.", valueName: "model"))
    var readerModel: ContactlessReader.Dialect?

    @Option(help: ArgumentHelp("Type 2 and --classic: load the memory image from this hex file and save every change back to it.", valueName: "file"))
    var memory: String?

    /// `--get-response`, `--strict-get-response-cla`, `--wrong-le`, as the forms take them.
    @OptionGroup var host: HostBehaviourOptions

    /// The host behaviour the ISO 7816 cards (demo, Type 4) are given.
    var hostBehaviour: HostBehaviour { host.behaviour }
}

/// Lets `Families` find each family's type behind its `@OptionGroup`, by reflection.
protocol FamilyOptionGroup {
    var family: any EmulatedFamily { get }
    static var familyType: any EmulatedFamily.Type { get }
}

extension OptionGroup: FamilyOptionGroup where Value: EmulatedFamily {
    var family: any EmulatedFamily { wrappedValue }
    static var familyType: any EmulatedFamily.Type { Value.self }
}
