// Package recordbundle writes a case's record as one zip archive that
// anyone can check offline: manifest.json names every file of the bundle
// with its size and SHA-256, and manifest.jws is a compact detached JWS
// over the manifest's bytes by the award keys (libs/award, published at
// GET /api/awards/keys), as an award is signed.
//
// The archive is reproducible: the same record gives the same bytes. Its
// entries come in a fixed order, every entry carries the record's closing
// instant as its time, and nothing is compressed (Store): the exhibits are
// mostly compressed already, and a deflate stream is only as stable as
// the library writing it. Exhibits are streamed from object storage and
// checked against their recorded digest on the way; a file that does not
// match fails the download rather than ship a bundle its manifest
// contradicts.
package recordbundle

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"time"

	"github.com/pcourt/pcourt/libs/jcs"
)

// SchemaVersion names the manifest's form.
const SchemaVersion = "record-bundle-v1"

// Entry is one file of the bundle, as the manifest lists it.
type Entry struct {
	Path      string `json:"path"`
	MediaType string `json:"mediaType"`
	Size      int64  `json:"size"`
	SHA256    string `json:"sha256"`
}

// Manifest describes the bundle. Files is in archive order.
type Manifest struct {
	SchemaVersion  string  `json:"schemaVersion"`
	CaseID         string  `json:"caseId"`
	RulesVersion   string  `json:"rulesVersion"`
	RulesHash      string  `json:"rulesHash"`
	RecordClosedAt string  `json:"recordClosedAt"`
	SummaryDigest  string  `json:"summaryDigest"`
	DocketSequence int64   `json:"docketSequence"`
	Files          []Entry `json:"files"`
}

// Part is one file to write: small ones carry their bytes, an exhibit
// opens its stored original.
type Part struct {
	Entry
	bytes []byte
	open  func() (io.ReadCloser, error)
}

// Bytes is a part whose content the service holds (the summary, the
// docket, a submission's text).
func Bytes(path, mediaType string, b []byte) Part {
	sum := sha256.Sum256(b)
	return Part{Entry: Entry{Path: path, MediaType: mediaType, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])}, bytes: b}
}

// Stored is a part read from storage when it is written, with the size
// and digest the record holds for it.
func Stored(path, mediaType string, size int64, sha256Hex string, open func() (io.ReadCloser, error)) Part {
	return Part{Entry: Entry{Path: path, MediaType: mediaType, Size: size, SHA256: sha256Hex}, open: open}
}

// ManifestBytes fills m.Files from parts and returns the manifest's RFC
// 8785 canonical bytes: what the JWS signs.
func ManifestBytes(m Manifest, parts []Part) ([]byte, error) {
	m.SchemaVersion = SchemaVersion
	m.Files = make([]Entry, len(parts))
	for i, p := range parts {
		m.Files[i] = p.Entry
	}
	return jcs.Canonicalize(m)
}

// Write writes the archive: manifest.json, manifest.jws, then the parts in
// order, each entry stamped with modified.
func Write(w io.Writer, manifest []byte, jws string, parts []Part, modified time.Time) error {
	zw := zip.NewWriter(w)
	create := func(name string) (io.Writer, error) {
		return zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store, Modified: modified.UTC()})
	}
	for _, f := range []struct {
		name string
		b    []byte
	}{{"manifest.json", manifest}, {"manifest.jws", []byte(jws)}} {
		fw, err := create(f.name)
		if err != nil {
			return err
		}
		if _, err := fw.Write(f.b); err != nil {
			return err
		}
	}
	for _, p := range parts {
		fw, err := create(p.Path)
		if err != nil {
			return err
		}
		if err := p.writeTo(fw); err != nil {
			return fmt.Errorf("record bundle, %s: %w", p.Path, err)
		}
	}
	return zw.Close()
}

func (p Part) writeTo(w io.Writer) error {
	if p.open == nil {
		_, err := w.Write(p.bytes)
		return err
	}
	r, err := p.open()
	if err != nil {
		return err
	}
	defer r.Close()
	sum := sha256.New()
	n, err := io.Copy(io.MultiWriter(w, sum), r)
	if err != nil {
		return err
	}
	return p.check(n, sum)
}

// check holds a streamed file to the size and digest the manifest gave.
func (p Part) check(n int64, sum hash.Hash) error {
	if got := hex.EncodeToString(sum.Sum(nil)); n != p.Size || got != p.SHA256 {
		return fmt.Errorf("stored file is %d bytes with SHA-256 %s; the record says %d bytes, %s", n, got, p.Size, p.SHA256)
	}
	return nil
}
