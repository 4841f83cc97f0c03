// The verdict page in German.

extension PageStrings {
    public static let german = PageStrings(
        language: "de",
        genuine: "Echt",
        genuineDetail: "Dieses Etikett ist echt, und dieser Link wurde zum ersten Mal geöffnet.",
        replay: "Bereits verwendet: dieser Link wurde schon einmal geöffnet",
        replayDetail: "Das Etikett ist echt, aber genau dieser Link wurde schon geprüft. Halten Sie das Telefon erneut an das Etikett; zeigt es dasselbe, wurde der Link kopiert.",
        notGenuine: "Nicht echt",
        notGenuineDetail: "Dieser Link stammt nicht von einem echten Etikett, oder er wurde verändert.",
        malformedDetail: "Dies ist kein Link eines Etiketts: ein Teil fehlt oder ist beschädigt.",
        unknownGroupDetail: "Dieser Link nennt keine Produktlinie, die dieser Dienst kennt.",
        tryAgain: "Bitte versuchen Sie es erneut",
        rateLimitedDetail: "Zu viele Prüfungen von dieser Verbindung. Warten Sie einen Moment und versuchen Sie es erneut.",
        unavailableDetail: "Die Prüfung konnte gerade nicht abgeschlossen werden. Halten Sie das Telefon gleich noch einmal an das Etikett.",
        uid: "Etikett",
        counter: "Lesezähler",
        seal: "Siegel",
        sealIntact: "Siegel unversehrt",
        sealOpened: "Siegel geöffnet",
        sealReclosed: "Siegel geöffnet (inzwischen wieder geschlossen)",
        sealNotEnabled: "Kein Siegel überwacht",
        sealUnknown: "Siegelstatus unlesbar",
        time: "Geprüft",
        reason: "Einzelheiten",
        continueTo: "Weiter zu %@"
    )
}
