#!/usr/bin/env python3
"""An independent verifier of pc-webhook-ed25519-v1 case event callbacks.

Written from docs/webhook-signatures.md alone (not from the Go code), it
checks every vector of a conformance file: accepted vectors must verify,
refused ones must fail at the named step. It proves that a receiver built
from the docs agrees with the reference implementation.

Usage: verify.py [conformance.json]   (exit 0 when every vector agrees)
Needs Python 3 and the `cryptography` package.
"""

import base64
import binascii
import datetime
import hashlib
import json
import re
import sys

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

HEADERS = [
    "content-digest",
    "x-pc-event-id",
    "x-pc-event-timestamp",
    "x-pc-key-id",
    "x-pc-schema-version",
    "x-pc-signature-version",
    "x-pc-signature",
    "x-pc-endpoint-id",
    "x-pc-test",
]
SCHEMA_VERSION = "case-event-v2"
SIGNATURE_VERSION = "pc-webhook-ed25519-v1"
TOLERANCE_MS = 5 * 60 * 1000

ID_RE = re.compile(r"[A-Za-z0-9._:-]{1,160}", re.ASCII)
B64_RE = re.compile(r"[A-Za-z0-9+/]*={0,2}", re.ASCII)
TS_RE = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\.[0-9]{3}Z", re.ASCII)
EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


class Refused(Exception):
    def __init__(self, reason, detail=""):
        super().__init__(f"{reason}: {detail}")
        self.reason = reason


def canonical_b64(text, size):
    """Decode standard padded base64 of exactly size bytes; refuse any
    other spelling (decode, encode again, compare)."""
    if not B64_RE.fullmatch(text):
        return None
    try:
        raw = base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        return None
    if len(raw) != size or base64.b64encode(raw).decode("ascii") != text:
        return None
    return raw


def wrapped(value, prefix, size):
    if not (value.startswith(prefix) and value.endswith(":")) or len(value) < len(prefix) + 1:
        return None
    return canonical_b64(value[len(prefix):-1], size)


def parse_ts(text):
    """Milliseconds since the epoch of a canonical timestamp, or None."""
    if not TS_RE.fullmatch(text):
        return None
    try:
        dt = datetime.datetime.strptime(text, "%Y-%m-%dT%H:%M:%S.%fZ").replace(tzinfo=datetime.timezone.utc)
    except ValueError:
        return None
    again = (f"{dt.year:04d}-{dt.month:02d}-{dt.day:02d}T{dt.hour:02d}:{dt.minute:02d}:"
             f"{dt.second:02d}.{dt.microsecond // 1000:03d}Z")
    if again != text:
        return None
    return (dt - EPOCH) // datetime.timedelta(milliseconds=1)


def no_duplicates(pairs):
    obj = {}
    for k, v in pairs:
        if k in obj:
            raise ValueError(f"member {k!r} repeated")
        obj[k] = v
    return obj


def refuse_constant(name):
    raise ValueError(f"{name} is not JSON")


def read_body(body):
    try:
        doc = json.loads(body.decode("utf-8"), object_pairs_hook=no_duplicates, parse_constant=refuse_constant)
    except (UnicodeDecodeError, ValueError) as e:
        raise Refused("body_format", str(e))
    if not isinstance(doc, dict):
        raise Refused("body_format", "not an object")
    for name in ("schemaVersion", "eventId"):
        if name in doc and not isinstance(doc[name], str):
            raise Refused("body_format", f"{name} is not a string")
    return doc


def jwks_keys(jwks):
    keys = {}
    for k in jwks["keys"]:
        if k.get("kty") != "OKP" or k.get("crv") != "Ed25519" or "d" in k:
            raise ValueError(f"not an Ed25519 public key: {k}")
        x = k["x"]
        raw = base64.urlsafe_b64decode(x + "=" * (-len(x) % 4))
        if len(raw) != 32 or base64.urlsafe_b64encode(raw).decode().rstrip("=") != x:
            raise ValueError(f"bad x: {x}")
        keys[k["kid"]] = Ed25519PublicKey.from_public_bytes(raw)
    return keys


def verify(field_lines, body, keys, now_ms, endpoint_id):
    values = {name: [] for name in HEADERS}
    for name, value in field_lines:
        if name.lower() in values:
            values[name.lower()].append(value)
    # 1. header_missing
    for name in HEADERS:
        if not values[name]:
            raise Refused("header_missing", name)
    # 2. header_format
    for name in HEADERS:
        if len(values[name]) != 1:
            raise Refused("header_format", f"{name} has {len(values[name])} field lines")
    h = {name: values[name][0] for name in HEADERS}
    if wrapped(h["content-digest"], "sha-256=:", 32) is None:
        raise Refused("header_format", "content-digest")
    if not ID_RE.fullmatch(h["x-pc-event-id"]):
        raise Refused("header_format", "x-pc-event-id")
    if not ID_RE.fullmatch(h["x-pc-key-id"]):
        raise Refused("header_format", "x-pc-key-id")
    sig = wrapped(h["x-pc-signature"], "ed25519=:", 64)
    if sig is None:
        raise Refused("header_format", "x-pc-signature")
    if not ID_RE.fullmatch(h["x-pc-endpoint-id"]):
        raise Refused("header_format", "x-pc-endpoint-id")
    if h["x-pc-test"] not in ("true", "false"):
        raise Refused("header_format", "x-pc-test")
    # 3. signature_version
    if h["x-pc-signature-version"] != SIGNATURE_VERSION:
        raise Refused("signature_version", h["x-pc-signature-version"])
    # 4. body_format
    doc = read_body(body)
    # 5. schema_version
    if h["x-pc-schema-version"] != SCHEMA_VERSION or doc.get("schemaVersion") != h["x-pc-schema-version"]:
        raise Refused("schema_version")
    # 6. event_id_mismatch
    if doc.get("eventId") != h["x-pc-event-id"]:
        raise Refused("event_id_mismatch")
    # 7. recipient_mismatch
    if h["x-pc-endpoint-id"] != endpoint_id:
        raise Refused("recipient_mismatch", h["x-pc-endpoint-id"])
    # 8. timestamp_format
    ts_ms = parse_ts(h["x-pc-event-timestamp"])
    if ts_ms is None:
        raise Refused("timestamp_format", h["x-pc-event-timestamp"])
    # 9. timestamp_window
    if abs(now_ms - ts_ms) > TOLERANCE_MS:
        raise Refused("timestamp_window", f"{now_ms - ts_ms} ms")
    # 10. digest_mismatch
    if wrapped(h["content-digest"], "sha-256=:", 32) != hashlib.sha256(body).digest():
        raise Refused("digest_mismatch")
    # 11. unknown_key
    key = keys.get(h["x-pc-key-id"])
    if key is None:
        raise Refused("unknown_key", h["x-pc-key-id"])
    # 12. bad_signature
    lines = [
        "x-pc-event-id: " + h["x-pc-event-id"],
        "x-pc-event-timestamp: " + h["x-pc-event-timestamp"],
        "x-pc-key-id: " + h["x-pc-key-id"],
        "x-pc-schema-version: " + SCHEMA_VERSION,
        "x-pc-endpoint-id: " + h["x-pc-endpoint-id"],
        "x-pc-test: " + h["x-pc-test"],
        "content-digest: " + h["content-digest"],
    ]
    try:
        key.verify(sig, "\n".join(lines).encode("utf-8"))
    except InvalidSignature:
        raise Refused("bad_signature")


def main(path):
    with open(path, "rb") as f:
        data = json.load(f)
    keys = jwks_keys(data["jwks"])
    failures = 0
    for v in data["vectors"]:
        body = base64.b64decode(v["bodyBase64"], validate=True)
        now_ms = parse_ts(v["now"])
        try:
            verify(v["headers"], body, keys, now_ms, data["endpointId"])
            got = "accept"
        except Refused as e:
            got = "refuse " + e.reason
        want = "accept" if v["expect"] == "accept" else "refuse " + v["reason"]
        if got == want:
            print(f"ok    {v['name']}: {got}")
        else:
            failures += 1
            print(f"FAIL  {v['name']}: got {got}, want {want}")
    print(f"{len(data['vectors']) - failures}/{len(data['vectors'])} vectors agree")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "conformance.json"))
