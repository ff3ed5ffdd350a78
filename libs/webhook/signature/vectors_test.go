package signature_test

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/webhook/signature"
)

var update = flag.Bool("update", false, "rewrite testdata/conformance.json (and the copy under docs/) from the generator")

const (
	vectorsPath = "testdata/conformance.json"
	// docsCopyPath is the copy published beside docs/webhook-signatures.md.
	docsCopyPath = "../../../docs/webhook-signature-vectors.json"
)

// conformanceFile is the JSON shape of testdata/conformance.json.
type conformanceFile struct {
	Description      string `json:"description"`
	SignatureVersion string `json:"signatureVersion"`
	SchemaVersion    string `json:"schemaVersion"`
	ToleranceSeconds int    `json:"toleranceSeconds"`
	// EndpointID is the receiver's own endpoint id: every vector is
	// verified as that endpoint's receiver would.
	EndpointID string             `json:"endpointId"`
	Reasons    []signature.Reason `json:"reasons"`
	Keys       []vectorKey        `json:"keys"`
	JWKS       signature.JWKS     `json:"jwks"`
	Vectors    []vector           `json:"vectors"`
}

// vectorKey is one fixed test key. Published keys are in the file's jwks.
type vectorKey struct {
	Name         string `json:"name"`
	KeyID        string `json:"keyId"`
	SeedHex      string `json:"seedHex"`
	PublicKeyHex string `json:"publicKeyHex"`
	Published    bool   `json:"published"`
}

// vector is one delivery and the verdict every verifier must reach.
type vector struct {
	Name        string `json:"name"`
	Description string `json:"description"`
	// Now is the verifier's clock.
	Now string `json:"now"`
	// Body is the body as text, for reading; BodyBase64 is authoritative.
	Body       string `json:"body"`
	BodyBase64 string `json:"bodyBase64"`
	// Headers are field lines in order; a name may repeat or be absent.
	Headers [][2]string `json:"headers"`
	// CanonicalInput is what the sender signed (absent where no signature
	// was made over a canonical input, or the vector is about its absence).
	CanonicalInput string `json:"canonicalInput,omitempty"`
	// Expect is accept or refuse; Reason names the refusal.
	Expect string           `json:"expect"`
	Reason signature.Reason `json:"reason,omitempty"`
}

type testKey struct {
	name      string
	kid       string
	seed      []byte
	priv      ed25519.PrivateKey
	published bool
}

// newTestKey makes a conformance key. Its seed is published with the
// vectors, so its kid says so: no one can take it for a key of a
// deployment (whose kids are pcwh_<environment>_…) and trust it.
func newTestKey(name, kid string, published bool) testKey {
	seed := sha256.Sum256([]byte("pcourt webhook conformance " + name))
	priv := ed25519.NewKeyFromSeed(seed[:])
	return testKey{name: name, kid: kid, seed: seed[:], priv: priv, published: published}
}

// The endpoint ids of the vectors: the receiver's own, and another
// partner's endpoint, which a delivery may be replayed from.
const (
	receiverEndpoint = "we_01JD8QA4TQ6W2Z8X3C5V7B9N1M"
	otherEndpoint    = "we_01JD8QB7YH3K5M7P9R1T3V5X7Z"
)

// delivery is one attempt under construction: the body and the field lines.
type delivery struct {
	now     time.Time
	body    []byte
	headers [][2]string
	input   string
}

func (d delivery) clone() delivery {
	d.body = bytes.Clone(d.body)
	d.headers = append([][2]string(nil), d.headers...)
	return d
}

// set replaces every field line of name (compared case-insensitively) with
// one line holding value, in the place of the first.
func (d delivery) set(name, value string) delivery {
	d = d.clone()
	out := d.headers[:0]
	done := false
	for _, h := range d.headers {
		if strings.EqualFold(h[0], name) {
			if !done {
				out = append(out, [2]string{h[0], value})
				done = true
			}
			continue
		}
		out = append(out, h)
	}
	if !done {
		out = append(out, [2]string{name, value})
	}
	d.headers = out
	return d
}

func (d delivery) get(name string) string {
	for _, h := range d.headers {
		if strings.EqualFold(h[0], name) {
			return h[1]
		}
	}
	return ""
}

func (d delivery) without(name string) delivery {
	d = d.clone()
	out := d.headers[:0]
	for _, h := range d.headers {
		if !strings.EqualFold(h[0], name) {
			out = append(out, h)
		}
	}
	d.headers = out
	return d
}

func (d delivery) add(name, value string) delivery {
	d = d.clone()
	d.headers = append(d.headers, [2]string{name, value})
	return d
}

func (d delivery) withBody(body string) delivery {
	d = d.clone()
	d.body = []byte(body)
	return d
}

func (d delivery) at(now time.Time) delivery {
	d.now = now
	return d
}

// signRaw signs like the sender, for the receiver's endpoint and a case
// fact, but without the Signer's refusals, so that a vector can carry a
// valid signature over inputs that a verifier must refuse for an earlier
// reason. timestamp is used as given.
func signRaw(k testKey, kid, eventID, timestamp string, body []byte) delivery {
	return signRawTo(k, kid, eventID, timestamp, receiverEndpoint, "false", body)
}

// signRawTo is signRaw for any endpoint id and x-pc-test value.
func signRawTo(k testKey, kid, eventID, timestamp, endpointID, test string, body []byte) delivery {
	digest := signature.ContentDigest(body)
	input := signature.CanonicalInput(eventID, timestamp, kid, endpointID, test, digest)
	sig := ed25519.Sign(k.priv, input)
	return delivery{
		body: body,
		headers: [][2]string{
			{signature.HeaderContentDigest, digest},
			{signature.HeaderEventID, eventID},
			{signature.HeaderEventTimestamp, timestamp},
			{signature.HeaderKeyID, kid},
			{signature.HeaderSchemaVersion, signature.SchemaVersion},
			{signature.HeaderSignatureVersion, signature.SignatureVersion},
			{signature.HeaderSignature, "ed25519=:" + base64.StdEncoding.EncodeToString(sig) + ":"},
			{signature.HeaderEndpointID, endpointID},
			{signature.HeaderTest, test},
		},
		input: string(input),
	}
}

// signWith signs through the public Signer, as the sender does, for the
// receiver's endpoint and a case fact.
func signWith(t testing.TB, k testKey, body string, eventID string, at, now time.Time) delivery {
	t.Helper()
	return signWithTo(t, k, body, eventID, signature.Recipient{EndpointID: receiverEndpoint}, at, now)
}

// signWithTo is signWith for any recipient.
func signWithTo(t testing.TB, k testKey, body string, eventID string, to signature.Recipient, at, now time.Time) delivery {
	t.Helper()
	s, err := signature.NewSigner(k.kid, k.priv)
	require.NoError(t, err)
	h, err := s.Sign([]byte(body), eventID, to, at)
	require.NoError(t, err)
	return delivery{
		now:  now,
		body: []byte(body),
		headers: [][2]string{
			{signature.HeaderContentDigest, h.ContentDigest},
			{signature.HeaderEventID, h.EventID},
			{signature.HeaderEventTimestamp, h.EventTimestamp},
			{signature.HeaderKeyID, h.KeyID},
			{signature.HeaderSchemaVersion, h.SchemaVersion},
			{signature.HeaderSignatureVersion, h.SignatureVersion},
			{signature.HeaderSignature, h.Signature},
			{signature.HeaderEndpointID, h.EndpointID},
			{signature.HeaderTest, h.Test},
		},
		input: string(h.CanonicalInput()),
	}
}

func caseEvent(eventID, schema string, sequence int) string {
	return fmt.Sprintf(`{"schemaVersion":%q,"eventId":%q,"deliveryId":"dlv_01JD8Q4A0B1C2D3E4F5G6H7J8K","sequence":%d,"type":"case.opened","occurredAt":"2026-11-23T10:14:58.000Z","caseId":"case_7Q2M9X4K","externalCaseId":"partner-order-4411","actionRequired":false}`,
		schema, eventID, sequence)
}

// buildVectors returns the whole conformance file. It is deterministic:
// fixed seeds, fixed clocks, and Ed25519 signatures are deterministic.
func buildVectors(t testing.TB) conformanceFile {
	t.Helper()
	keyA := newTestKey("key A", "conformance-key-a.seed-is-public.not-a-real-key", true)
	keyB := newTestKey("key B", "conformance-key-b.seed-is-public.not-a-real-key", true)
	keyC := newTestKey("key C (not published)", "conformance-key-c.seed-is-public.not-a-real-key", false)

	now := time.Date(2026, 11, 23, 10, 15, 30, 123_000_000, time.UTC)
	signedAt := now.Add(-2 * time.Second)
	ts := signature.FormatTimestamp(signedAt)
	const eid = "evt_01JD8Q3K7M2N4P5R6S7T8V9W0X"
	body := caseEvent(eid, signature.SchemaVersion, 7)
	base := signWith(t, keyA, body, eid, signedAt, now)
	raw := func(k testKey, kid, eventID, timestamp, body string) delivery {
		return signRaw(k, kid, eventID, timestamp, []byte(body)).at(now)
	}

	var vs []vector
	accept := func(name, desc string, d delivery) {
		vs = append(vs, toVector(name, desc, d, "accept", ""))
	}
	refuse := func(name, desc string, reason signature.Reason, d delivery) {
		vs = append(vs, toVector(name, desc, d, "refuse", reason))
	}

	// Accepted deliveries.
	accept("accept_basic", "A delivery signed with key A two seconds before the verifier's clock. The worked example of the docs.", base)
	accept("accept_rotated_key", "Signed with key B, the next key, published beside key A during a rotation.",
		signWith(t, keyB, body, eid, signedAt, now))
	accept("accept_header_names_any_case", "Header names are case-insensitive.", func() delivery {
		d := base.clone()
		for i, name := range []string{"Content-Digest", "X-PC-Event-ID", "X-Pc-Event-Timestamp", "X-PC-KEY-ID", "x-Pc-Schema-Version", "X-PC-Signature-Version", "X-Pc-Signature", "X-PC-Endpoint-ID", "X-Pc-Test"} {
			d.headers[i][0] = name
		}
		return d
	}())
	accept("accept_window_edge_past", "The timestamp is exactly 5 minutes before the verifier's clock.",
		signWith(t, keyA, body, eid, now.Add(-5*time.Minute), now))
	accept("accept_window_edge_future", "The timestamp is exactly 5 minutes after the verifier's clock.",
		signWith(t, keyA, body, eid, now.Add(5*time.Minute), now))
	longID := "evt_" + strings.Repeat("a1.B2_c3:D4-", 13)
	accept("accept_event_id_160_characters", "An event id of the maximum length, 160 characters, using every allowed punctuation character.",
		signWith(t, keyA, caseEvent(longID, signature.SchemaVersion, 7), longID, signedAt, now))
	pretty := "{\n  \"schemaVersion\": \"case-event-v2\",\n  \"eventId\": \"" + eid + "\",\n  \"deliveryId\": \"dlv_01JD8Q4A0B1C2D3E4F5G6H7J8K\",\n  \"sequence\": 8,\n  \"type\": \"case.deadline_set\",\n  \"occurredAt\": \"2026-11-23T10:14:58.000Z\",\n  \"caseId\": \"case_7Q2M9X4K\",\n  \"externalCaseId\": \"commande-n\u00b0-4411-\u00e9t\u00e9\",\n  \"actionRequired\": true,\n  \"deadlineAt\": \"2026-11-30T23:59:59.999Z\"\n}\n"
	accept("accept_test_event", "A test event a partner asked for: x-pc-test is true, signed like the rest; a receiver accepts it and knows no case fact stands behind it.",
		signWithTo(t, keyA, body, eid, signature.Recipient{EndpointID: receiverEndpoint, Test: true}, signedAt, now))
	accept("accept_pretty_printed_utf8_body", "The digest covers the exact bytes: indentation, a trailing newline and non-ASCII UTF-8 are signed as sent.",
		signWith(t, keyA, pretty, eid, signedAt, now))

	// header_missing: each of the nine headers.
	for _, name := range signature.SignedHeaderNames {
		refuse("missing_"+strings.ReplaceAll(name, "-", "_"), "The "+name+" header is absent.", signature.ReasonHeaderMissing, base.without(name))
	}

	// header_format.
	tooLong := longID + "x"
	refuse("event_id_161_characters", "An event id one character over the limit (body and header agree, signature valid).", signature.ReasonHeaderFormat,
		raw(keyA, keyA.kid, tooLong, ts, caseEvent(tooLong, signature.SchemaVersion, 7)))
	refuse("event_id_slash", "An event id with a character outside A-Z a-z 0-9 . _ : - (body and header agree, signature valid).", signature.ReasonHeaderFormat,
		raw(keyA, keyA.kid, "evt/01", ts, caseEvent("evt/01", signature.SchemaVersion, 7)))
	refuse("event_id_empty", "An empty x-pc-event-id field line is present but not 1 to 160 characters.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderEventID, ""))
	refuse("key_id_space", "A key id with a space (signature valid over it).", signature.ReasonHeaderFormat,
		raw(keyA, "pcwh sandbox", eid, ts, body))
	refuse("endpoint_id_space", "An endpoint id with a space (signature valid over it).", signature.ReasonHeaderFormat,
		signRawTo(keyA, keyA.kid, eid, ts, "we 01", "false", []byte(body)).at(now))
	refuse("endpoint_id_header_twice", "Two x-pc-endpoint-id field lines: the receiver's and another.", signature.ReasonHeaderFormat,
		base.add(signature.HeaderEndpointID, otherEndpoint))
	refuse("test_flag_yes", "x-pc-test is exactly true or false.", signature.ReasonHeaderFormat,
		signRawTo(keyA, keyA.kid, eid, ts, receiverEndpoint, "yes", []byte(body)).at(now))
	refuse("test_flag_upper_case", "x-pc-test is compared exactly: TRUE is not true.", signature.ReasonHeaderFormat,
		signRawTo(keyA, keyA.kid, eid, ts, receiverEndpoint, "TRUE", []byte(body)).at(now))
	refuse("event_id_header_twice", "Two x-pc-event-id field lines, even with the same value.", signature.ReasonHeaderFormat,
		base.add(signature.HeaderEventID, eid))
	refuse("timestamp_header_twice", "Two x-pc-event-timestamp field lines.", signature.ReasonHeaderFormat,
		base.add(signature.HeaderEventTimestamp, ts))
	refuse("signature_header_twice", "Two x-pc-signature field lines, the first one valid.", signature.ReasonHeaderFormat,
		base.add(signature.HeaderSignature, signWith(t, keyB, body, eid, signedAt, now).get(signature.HeaderSignature)))
	digest := base.get(signature.HeaderContentDigest)
	digestB64 := strings.TrimSuffix(strings.TrimPrefix(digest, "sha-256=:"), ":")
	sum512 := sha256.Sum256([]byte(body))
	refuse("digest_sha512", "A content-digest with another algorithm.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderContentDigest, "sha-512=:"+base64.StdEncoding.EncodeToString(append(sum512[:], sum512[:]...))+":"))
	refuse("digest_uppercase_algorithm", "The algorithm key is lower case sha-256.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderContentDigest, "SHA-256=:"+digestB64+":"))
	refuse("digest_without_colons", "The byte sequence must be wrapped in colons.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderContentDigest, "sha-256="+digestB64))
	refuse("digest_hex", "The digest is base64, not hex.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderContentDigest, "sha-256=:"+hex.EncodeToString(sum512[:])+":"))
	refuse("digest_two_members", "Exactly one sha-256 member; a dictionary of several digests is refused.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderContentDigest, digest+", sha-256=:"+digestB64+":"))
	sigHeader := base.get(signature.HeaderSignature)
	sigB64 := strings.TrimSuffix(strings.TrimPrefix(sigHeader, "ed25519=:"), ":")
	if !strings.ContainsAny(sigB64, "+/") {
		t.Fatalf("the base signature has no + or /; pick another base event id so that signature_base64url tests something")
	}
	refuse("signature_base64url", "The signature in the base64url alphabet instead of standard base64.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderSignature, "ed25519=:"+strings.NewReplacer("+", "-", "/", "_").Replace(sigB64)+":"))
	refuse("signature_noncanonical_base64", "The last base64 character before == carries non-zero unused bits: decoding and re-encoding does not give the same text.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderSignature, "ed25519=:"+noncanonical(sigB64)+":"))
	refuse("signature_without_padding", "The == padding is required.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderSignature, "ed25519=:"+strings.TrimSuffix(sigB64, "==")+":"))
	refuse("signature_without_prefix", "The value must be ed25519=:<base64>:.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderSignature, sigB64))
	refuse("signature_63_bytes", "The signature must be 64 bytes.", signature.ReasonHeaderFormat,
		base.set(signature.HeaderSignature, "ed25519=:"+base64.StdEncoding.EncodeToString(mustB64(sigB64)[:63])+":"))

	// signature_version.
	refuse("signature_version_v2", "An unknown signature version.", signature.ReasonSignatureVersion,
		base.set(signature.HeaderSignatureVersion, "pc-webhook-ed25519-v2"))
	refuse("signature_version_upper_case", "The constant is compared exactly.", signature.ReasonSignatureVersion,
		base.set(signature.HeaderSignatureVersion, "PC-WEBHOOK-ED25519-V1"))

	// body_format.
	dupBody := strings.Replace(body, `"deliveryId"`, `"eventId":"evt_other","deliveryId"`, 1)
	refuse("body_repeats_event_id", "The body has two eventId members; the first equals the header (signature valid).", signature.ReasonBodyFormat,
		raw(keyA, keyA.kid, eid, ts, dupBody))
	refuse("body_not_json", "The body is cut short (signature valid over the cut bytes).", signature.ReasonBodyFormat,
		raw(keyA, keyA.kid, eid, ts, body[:len(body)-1]))
	refuse("body_json_array", "The body is a JSON array, not an object.", signature.ReasonBodyFormat,
		raw(keyA, keyA.kid, eid, ts, "["+body+"]"))
	refuse("body_two_objects", "Data after the object.", signature.ReasonBodyFormat,
		raw(keyA, keyA.kid, eid, ts, body+body))
	refuse("body_event_id_number", "The body eventId is a number.", signature.ReasonBodyFormat,
		raw(keyA, keyA.kid, "42", ts, strings.Replace(body, `"eventId":"`+eid+`"`, `"eventId":42`, 1)))

	// schema_version.
	v1 := raw(keyA, keyA.kid, eid, ts, caseEvent(eid, "case-event-v1", 7))
	refuse("schema_version_header_v1", "The header and body both say case-event-v1.", signature.ReasonSchemaVersion,
		v1.set(signature.HeaderSchemaVersion, "case-event-v1"))
	refuse("schema_version_body_differs", "The header says case-event-v2 and the body case-event-v3 (signature valid).", signature.ReasonSchemaVersion,
		raw(keyA, keyA.kid, eid, ts, caseEvent(eid, "case-event-v3", 7)))
	refuse("schema_version_body_absent", "The body has no schemaVersion.", signature.ReasonSchemaVersion,
		raw(keyA, keyA.kid, eid, ts, strings.Replace(body, `"schemaVersion":"case-event-v2",`, "", 1)))

	// event_id_mismatch.
	refuse("event_id_mismatch", "The header names another event than the body (signature valid over the header's id).", signature.ReasonEventIDMismatch,
		raw(keyA, keyA.kid, "evt_01JD8Q3K7M2N4P5R6S7T8V9W0Y", ts, body))
	refuse("event_id_body_absent", "The body has no eventId.", signature.ReasonEventIDMismatch,
		raw(keyA, keyA.kid, eid, ts, strings.Replace(body, `"eventId":"`+eid+`",`, "", 1)))
	refuse("event_id_case_differs", "Ids are compared exactly, case included.", signature.ReasonEventIDMismatch,
		raw(keyA, keyA.kid, strings.ToLower(eid), ts, body))

	// recipient_mismatch.
	refuse("another_recipient", "A valid delivery signed for another endpoint (another partner's receiver got it and replays it here).", signature.ReasonRecipientMismatch,
		signWithTo(t, keyA, body, eid, signature.Recipient{EndpointID: otherEndpoint, Test: true}, signedAt, now))
	refuse("another_recipient_case_differs", "Endpoint ids are compared exactly, case included (signature valid).", signature.ReasonRecipientMismatch,
		signRawTo(keyA, keyA.kid, eid, ts, strings.ToUpper(receiverEndpoint), "false", []byte(body)).at(now))

	// timestamp_format: each signed over the non-canonical value itself.
	for _, c := range []struct{ name, ts, desc string }{
		{"timestamp_no_millis", "2026-11-23T10:15:28Z", "No fractional digits."},
		{"timestamp_offset", "2026-11-23T10:15:28.123+00:00", "+00:00 instead of Z."},
		{"timestamp_4_digits", "2026-11-23T10:15:28.1230Z", "Four fractional digits."},
		{"timestamp_2_digits", "2026-11-23T10:15:28.12Z", "Two fractional digits."},
		{"timestamp_6_digits", "2026-11-23T10:15:28.123000Z", "Six fractional digits."},
		{"timestamp_lowercase_z", "2026-11-23T10:15:28.123z", "A lower-case z."},
		{"timestamp_space", "2026-11-23 10:15:28.123Z", "A space instead of T."},
		{"timestamp_no_zone", "2026-11-23T10:15:28.123", "No zone."},
		{"timestamp_february_30", "2026-02-30T10:15:28.123Z", "Not a real date: re-serializing the parsed instant cannot give it back."},
		{"timestamp_hour_24", "2026-11-23T24:00:00.000Z", "Hour 24."},
		{"timestamp_unix_seconds", "1795436128", "Unix seconds."},
	} {
		refuse(c.name, c.desc, signature.ReasonTimestampFormat, raw(keyA, keyA.kid, eid, c.ts, body))
	}

	// timestamp_window.
	refuse("timestamp_past_window", "The timestamp is 5 minutes and 1 millisecond before the verifier's clock.", signature.ReasonTimestampWindow,
		signWith(t, keyA, body, eid, now.Add(-5*time.Minute-time.Millisecond), now))
	refuse("timestamp_future_window", "The timestamp is 5 minutes and 1 millisecond after the verifier's clock.", signature.ReasonTimestampWindow,
		signWith(t, keyA, body, eid, now.Add(5*time.Minute+time.Millisecond), now))
	refuse("timestamp_replayed_next_day", "accept_basic replayed a day later.", signature.ReasonTimestampWindow,
		base.at(now.Add(24*time.Hour)))

	// digest_mismatch.
	refuse("body_tampered", "The sequence was changed after signing; the headers are those of accept_basic.", signature.ReasonDigestMismatch,
		base.withBody(caseEvent(eid, signature.SchemaVersion, 8)))
	refuse("body_trailing_newline", "A newline was appended after signing: the digest covers the exact bytes.", signature.ReasonDigestMismatch,
		base.withBody(body+"\n"))
	refuse("digest_of_other_body", "A well-formed digest of other bytes.", signature.ReasonDigestMismatch,
		base.set(signature.HeaderContentDigest, signature.ContentDigest([]byte("{}"))))

	// unknown_key.
	refuse("unknown_key", "Signed with key C, whose key id is not in the JWKS.", signature.ReasonUnknownKey,
		signWith(t, keyC, body, eid, signedAt, now))

	// bad_signature.
	refuse("signed_by_other_key", "Signed by key C under key A's id.", signature.ReasonBadSignature,
		raw(keyC, keyA.kid, eid, ts, body))
	refuse("key_id_swapped", "Signed by key A but sent under key B's id.", signature.ReasonBadSignature,
		base.set(signature.HeaderKeyID, keyB.kid))
	refuse("endpoint_id_changed_after_signing", "Signed for another endpoint, then sent with the receiver's endpoint id in x-pc-endpoint-id.", signature.ReasonBadSignature,
		signWithTo(t, keyA, body, eid, signature.Recipient{EndpointID: otherEndpoint}, signedAt, now).set(signature.HeaderEndpointID, receiverEndpoint))
	refuse("test_flag_changed_after_signing", "A test event sent with x-pc-test changed to false, to pass for a case fact.", signature.ReasonBadSignature,
		signWithTo(t, keyA, body, eid, signature.Recipient{EndpointID: receiverEndpoint, Test: true}, signedAt, now).set(signature.HeaderTest, "false"))
	refuse("timestamp_changed_after_signing", "The timestamp was moved one second after signing (still canonical and in the window).", signature.ReasonBadSignature,
		base.set(signature.HeaderEventTimestamp, signature.FormatTimestamp(signedAt.Add(time.Second))))
	refuse("signature_bit_flipped", "One bit of the signature flipped.", signature.ReasonBadSignature,
		base.set(signature.HeaderSignature, "ed25519=:"+flipBit(sigB64)+":"))
	refuse("input_trailing_newline", "The sender signed the canonical input with a trailing newline.", signature.ReasonBadSignature,
		withInput(keyA, base, base.input+"\n"))
	refuse("input_crlf", "The sender joined the lines with CRLF.", signature.ReasonBadSignature,
		withInput(keyA, base, strings.ReplaceAll(base.input, "\n", "\r\n")))
	refuse("input_with_signature_version", "The sender added the signature-version line to the input.", signature.ReasonBadSignature,
		withInput(keyA, base, base.input+"\nx-pc-signature-version: "+signature.SignatureVersion))
	refuse("input_without_recipient_lines", "The sender signed the five lines of the first draft, without the x-pc-endpoint-id and x-pc-test lines.", signature.ReasonBadSignature,
		withInput(keyA, base, strings.Replace(base.input, "x-pc-endpoint-id: "+receiverEndpoint+"\nx-pc-test: false\n", "", 1)))
	refuse("input_digest_value_only", "The sender put only the base64 digest, not the whole content-digest value, in the last line.", signature.ReasonBadSignature,
		withInput(keyA, base, strings.Replace(base.input, "content-digest: "+digest, "content-digest: "+digestB64, 1)))

	f := conformanceFile{
		Description: "Conformance vectors of pc-webhook-ed25519-v1 case event callbacks (case-event-v2). " +
			"For each vector, verify the headers and the exact body bytes (bodyBase64) as the receiver of endpoint endpointId, against the keys of jwks, with the clock at now and a tolerance of toleranceSeconds; " +
			"the keys' seeds are published here on purpose: never trust them outside tests. " +
			"accepted vectors must verify, refused ones must fail at the named reason (reasons lists the verification steps in order). Generated by libs/webhook/signature (go test -run TestGenerateVectors -update); see docs/webhook-signatures.md.",
		SignatureVersion: signature.SignatureVersion,
		SchemaVersion:    signature.SchemaVersion,
		ToleranceSeconds: int(signature.DefaultTolerance / time.Second),
		EndpointID:       receiverEndpoint,
		Reasons:          signature.Reasons(),
		Vectors:          vs,
	}
	for _, k := range []testKey{keyA, keyB, keyC} {
		pub := k.priv.Public().(ed25519.PublicKey)
		f.Keys = append(f.Keys, vectorKey{Name: k.name, KeyID: k.kid, SeedHex: hex.EncodeToString(k.seed), PublicKeyHex: hex.EncodeToString(pub), Published: k.published})
		if k.published {
			f.JWKS.Keys = append(f.JWKS.Keys, signature.NewJWK(k.kid, pub))
		}
	}
	return f
}

func toVector(name, desc string, d delivery, expect string, reason signature.Reason) vector {
	return vector{
		Name:           name,
		Description:    desc,
		Now:            signature.FormatTimestamp(d.now),
		Body:           string(d.body),
		BodyBase64:     base64.StdEncoding.EncodeToString(d.body),
		Headers:        d.headers,
		CanonicalInput: d.input,
		Expect:         expect,
		Reason:         reason,
	}
}

// withInput re-signs d over a wrong canonical input, as a faulty sender would.
func withInput(k testKey, d delivery, input string) delivery {
	sig := ed25519.Sign(k.priv, []byte(input))
	d = d.set(signature.HeaderSignature, "ed25519=:"+base64.StdEncoding.EncodeToString(sig)+":")
	d.input = input
	return d
}

func mustB64(s string) []byte {
	b, err := base64.StdEncoding.DecodeString(s)
	if err != nil {
		panic(err)
	}
	return b
}

// noncanonical sets an unused low bit of the last base64 character before
// the padding: a lenient decoder yields the same bytes, a strict one refuses.
func noncanonical(b64 string) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	i := strings.IndexByte(b64, '=') - 1
	v := strings.IndexByte(alphabet, b64[i])
	return b64[:i] + string(alphabet[v|1]) + b64[i+1:]
}

func flipBit(b64 string) string {
	b := mustB64(b64)
	b[10] ^= 0x01
	return base64.StdEncoding.EncodeToString(b)
}

func encodeVectors(t testing.TB, f conformanceFile) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	require.NoError(t, enc.Encode(f))
	return buf.Bytes()
}

// TestGenerateVectors rewrites the conformance file with -update and
// otherwise checks that the file on disk is what the generator makes, so
// that the published vectors never drift from the code.
func TestGenerateVectors(t *testing.T) {
	want := encodeVectors(t, buildVectors(t))
	if *update {
		require.NoError(t, os.WriteFile(vectorsPath, want, 0o644))
		if _, err := os.Stat(filepath.Dir(docsCopyPath)); err == nil {
			require.NoError(t, os.WriteFile(docsCopyPath, want, 0o644))
		}
		return
	}
	got, err := os.ReadFile(vectorsPath)
	require.NoError(t, err)
	require.Equal(t, string(want), string(got), "%s is stale: run go test -run TestGenerateVectors -update", vectorsPath)
	if docs, err := os.ReadFile(docsCopyPath); err == nil {
		require.Equal(t, string(want), string(docs), "%s differs from %s: run go test -run TestGenerateVectors -update", docsCopyPath, vectorsPath)
	} else {
		t.Logf("no published copy at %s (outside a full checkout): %v", docsCopyPath, err)
	}
}
