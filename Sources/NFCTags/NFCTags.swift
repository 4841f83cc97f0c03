// The NFCTags module: filled by its issue (see docs/ and ../shared/design.md).
