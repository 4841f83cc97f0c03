"""p50 and p99 from two scrapes of apdu-sun-server's /metrics: the difference of the
sun_verification_duration_seconds buckets, interpolated linearly inside the bucket that holds
the quantile. Prints "count p50_ms p99_ms"."""
import re
import sys


def buckets(path):
    out = {}
    for line in open(path):
        m = re.match(r'sun_verification_duration_seconds_bucket\{le="([^"]+)"\} (\d+)', line)
        if m:
            out[float("inf") if m.group(1) == "+Inf" else float(m.group(1))] = int(m.group(2))
    return out


before, after = buckets(sys.argv[1]), buckets(sys.argv[2])
bounds = sorted(after)
cumulative = [after[b] - before.get(b, 0) for b in bounds]
total = cumulative[-1]


def quantile(q):
    rank = q * total
    lower, below = 0.0, 0
    for bound, count in zip(bounds, cumulative):
        if count >= rank:
            if bound == float("inf"):
                return lower * 1000
            inside = count - below
            return (lower + (bound - lower) * ((rank - below) / inside if inside else 1)) * 1000
        lower, below = bound, count
    return lower * 1000


print(total, f"{quantile(0.5):.3f}", f"{quantile(0.99):.3f}")
