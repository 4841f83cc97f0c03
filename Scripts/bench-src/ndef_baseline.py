"""Baseline for Scripts/bench ndef: nfcpy's ndeflib on the same bytes.

  python3 ndef_baseline.py make DIR      writes small.ndef (2,000 URI/Text records) and large.ndef (one 60 KiB MIME record)
  python3 ndef_baseline.py decode FILE SECONDS   prints "records_per_second bytes_per_second"
"""
import os
import sys
import time

import ndef


def make(directory):
    records = []
    for i in range(1000):
        records.append(ndef.UriRecord("https://example.com/item/%d" % i))
        records.append(ndef.TextRecord("Item number %d" % i, "en"))
    with open(os.path.join(directory, "small.ndef"), "wb") as f:
        f.write(b"".join(ndef.message_encoder(records)))
    payload = bytes((i * 7) & 0xFF for i in range(60 * 1024))
    with open(os.path.join(directory, "large.ndef"), "wb") as f:
        f.write(b"".join(ndef.message_encoder([ndef.Record("application/octet-stream", "", payload)])))


def decode(path, seconds):
    data = open(path, "rb").read()
    records = rounds = 0
    start = time.perf_counter()
    while True:
        decoded = list(ndef.message_decoder(data))
        records += len(decoded)
        rounds += 1
        elapsed = time.perf_counter() - start
        if elapsed >= seconds:
            break
    print(records / elapsed, rounds * len(data) / elapsed)


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        decode(sys.argv[2], float(sys.argv[3]))
