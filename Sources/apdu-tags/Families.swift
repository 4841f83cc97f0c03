// The tag and card families the CLI knows: the one place a family is listed.
import APDUCommandLine
import ArgumentParser

/// Every family, one line each: the type named here brings the family's `apdu emulate` flags and
/// its subcommand group (see `EmulatedFamily`). Adding a family is its folder and one line here.
struct Families: ParsableArguments {
    @OptionGroup var type1: Type1Family
    @OptionGroup var type2: Type2Family
    @OptionGroup var type3: Type3Family
    @OptionGroup var type4: Type4Family
    @OptionGroup var type5: Type5Family
    @OptionGroup var classic: MifareClassicFamily
    @OptionGroup var ntag424: NTAG424Family
    @OptionGroup var desfire: DESFireFamily
    @OptionGroup var mrtd: MRTDFamily
    @OptionGroup var emv: EMVFamily
    @OptionGroup var plus: MifarePlusFamily
    @OptionGroup var gp: GlobalPlatformFamily

    /// The families, in the order above, as parsed.
    var all: [any EmulatedFamily] { Mirror(reflecting: self).children.compactMap { ($0.value as? any FamilyOptionGroup)?.family } }

    /// The family types, without parsing anything (for the subcommand list).
    static var types: [any EmulatedFamily.Type] {
        Mirror(reflecting: Families()).children.compactMap { (type(of: $0.value) as? any FamilyOptionGroup.Type)?.familyType }
    }

    /// The families' subcommand groups.
    static var commandGroups: [any ParsableCommand.Type] { types.compactMap { $0.commands } }

    /// The names the families' commands had at the top level, kept working and hidden.
    static var legacyCommands: [any ParsableCommand.Type] { types.flatMap { $0.legacyCommands } }
}
