// The verdict page in English (the fallback language).

extension PageStrings {
    public static let english = PageStrings(
        language: "en",
        genuine: "Genuine",
        genuineDetail: "This tag is authentic, and this is the first time this link was opened.",
        replay: "Already used: this link was opened before",
        replayDetail: "The tag is authentic, but this exact link was checked before. Tap the tag again for a fresh check; if it says the same, the link was copied.",
        notGenuine: "Not genuine",
        notGenuineDetail: "This link did not come from an authentic tag, or it was changed.",
        malformedDetail: "This is not the link of a tag: a part is missing or damaged.",
        unknownGroupDetail: "This link names no product line this service knows.",
        tryAgain: "Please try again",
        rateLimitedDetail: "Too many checks from this connection. Wait a moment, then try again.",
        unavailableDetail: "The check could not be completed right now. Tap the tag again in a moment.",
        uid: "Tag",
        counter: "Read count",
        seal: "Seal",
        sealIntact: "Seal intact",
        sealOpened: "Seal opened",
        sealReclosed: "Seal opened (closed again since)",
        sealNotEnabled: "No seal watched",
        sealUnknown: "Seal status unreadable",
        time: "Checked",
        reason: "Details",
        continueTo: "Continue to %@"
    )
}
