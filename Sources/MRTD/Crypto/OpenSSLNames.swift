// libcrypto's object table: OIDs to the NIDs and short names its EC functions take.
internal import COpenSSL

enum OpenSSLNames {
    static func nid(dotted: String) -> Int32 { OBJ_txt2nid(dotted) }
    static func shortName(nid: Int32) -> String? { OBJ_nid2sn(nid).map { String(cString: $0) } }
}
