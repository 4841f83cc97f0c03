"""The usual Python SUN verifier, written for Scripts/bench sun: parse the URL, AES-CBC-decrypt
the PICC data with pycryptodome, derive the session MAC key with CMAC over SV2, CMAC the MAC
input, compare the truncated MAC; decrypt the file data with the session ENC key. The same work
per tap as swift-apdu's SUN module. Prints "picc_per_s file_per_s". Also imported by
sun_flask.py, the Flask baseline of Scripts/bench sun-serve."""
import hmac
import sys
import time
from urllib.parse import urlparse, parse_qs

from Crypto.Cipher import AES
from Crypto.Hash import CMAC

ZERO = bytes(16)


def verify(url, meta_key, file_key):
    query = urlparse(url).query
    params = parse_qs(query)
    picc = bytes.fromhex((params.get("e") or params.get("picc_data"))[0])
    mac = bytes.fromhex((params.get("c") or params.get("cmac"))[0])
    enc = params.get("enc")
    plain = AES.new(meta_key, AES.MODE_CBC, IV=ZERO).decrypt(picc)
    if plain[0] & 0x8F != 0x87:
        raise ValueError("unsupported PICC data")
    uid, ctr = plain[1:8], plain[8:11]
    data = uid + ctr
    sv2 = (b"\x3C\xC3\x00\x01\x00\x80" + data).ljust(16, b"\x00")
    ses_mac = CMAC.new(file_key, msg=sv2, ciphermod=AES).digest()
    mac_input = b""
    if enc:
        start = query.index(enc[0])
        mac_input = query[start:query.index("=", start + len(enc[0]) + 1) + 1].encode()
    full = CMAC.new(ses_mac, msg=mac_input, ciphermod=AES).digest()
    if not hmac.compare_digest(full[1::2], mac):
        raise ValueError("invalid MAC")
    file_data = None
    if enc:
        sv1 = (b"\xC3\x3C\x00\x01\x00\x80" + data).ljust(16, b"\x00")
        ses_enc = CMAC.new(file_key, msg=sv1, ciphermod=AES).digest()
        iv = AES.new(ses_enc, AES.MODE_ECB).encrypt(ctr + bytes(13))
        file_data = AES.new(ses_enc, AES.MODE_CBC, IV=iv).decrypt(bytes.fromhex(enc[0]))
    return uid, int.from_bytes(ctr, "little"), file_data


def main():
    n = int(sys.argv[1])
    urls = ["https://ntag.nxp.com/424?e=EF963FF7828658A599F3041510671E88&c=94EED9EE65337086",
            "https://www.my424dna.com/?picc_data=FD91EC264309878BE6345CBE53BADF40&enc=CEE9A53E3E463EF1F459635736738962&cmac=ECC1E7F6C6C73BF6"]
    assert verify(urls[0], ZERO, ZERO)[1] == 61
    assert verify(urls[1], ZERO, ZERO)[2] == b"x" * 16
    rates = []
    for url in urls:
        best = 0.0
        for _ in range(3):
            start = time.perf_counter()
            for _ in range(n):
                verify(url, ZERO, ZERO)
            best = max(best, n / (time.perf_counter() - start))
        rates.append(int(best))
    print(rates[0], rates[1])


if __name__ == "__main__":
    main()
