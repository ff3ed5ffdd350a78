// Package evidenceflow is the evidence's use cases: taking in an uploaded
// exhibit (validated whole in a spool file, then stored in object storage,
// then recorded on the case), a side's or the tribunal's act on an
// exhibit, and reading an exhibit's file and extracted text back.
//
// The order of an upload is what keeps "nothing half-stored": no byte
// reaches the bucket before the whole file has arrived and passed every
// check (internal/exhibitfile), and no record names a file before the
// bucket has it. A refused or failed record step deletes what was put;
// the one gap left is a crash between the put and the record, which leaves
// an object no record names (under cases/<id>/exhibits/<new id>/), never
// a record without its file.
package evidenceflow

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/pcourt/pcourt/libs/objectstore"
	"github.com/pcourt/pcourt/services/cases/internal/caseflow"
	"github.com/pcourt/pcourt/services/cases/internal/evidence"
	"github.com/pcourt/pcourt/services/cases/internal/exhibitfile"
	"github.com/pcourt/pcourt/services/cases/internal/procedure"
	"github.com/pcourt/pcourt/services/cases/internal/store"
)

// Service applies evidence acts.
type Service struct {
	flow     *caseflow.Service
	cases    *store.Cases
	files    objectstore.Store
	spoolDir string
	now      func() time.Time
}

// New returns a Service that spools uploads in spoolDir and keeps files in
// files; now may be nil for time.Now.
func New(flow *caseflow.Service, cases *store.Cases, files objectstore.Store, spoolDir string, now func() time.Time) *Service {
	if now == nil {
		now = time.Now
	}
	return &Service{flow: flow, cases: cases, files: files, spoolDir: spoolDir, now: now}
}

// Upload is one exhibit as a side sends it.
type Upload struct {
	Side          string
	ParticipantID string
	// File is the file's bytes as they arrive (a multipart part); it is
	// read once, to its end or the rules' per-file limit.
	File         io.Reader
	DeclaredType string
	FileName     string
	// Description is the side's; empty takes the processing's suggestion.
	Description string
}

// Uploaded is the outcome of an upload.
type Uploaded struct {
	Result  caseflow.Result
	Exhibit evidence.Exhibit
	// Replay says the side had uploaded these bytes under this name
	// already: nothing changed, and Exhibit is the one recorded then.
	Replay bool
}

// Precheck refuses an upload the case cannot take now, before any byte of
// the file is read: a refusal here costs the caller no upload.
func (s *Service) Precheck(c procedure.Case, side string) error {
	return evidence.CanUpload(c.Evidence, c.EvidenceFacts(), side)
}

// Upload takes in one exhibit. Refusals are *exhibitfile.Refusal (the
// file) or *evidence.RefusalError (the case); nothing is kept after
// either.
func (s *Service) Upload(ctx context.Context, caseID string, u Upload) (Uploaded, error) {
	l, err := s.cases.Load(ctx, caseID)
	if err != nil {
		return Uploaded{}, err
	}
	if err := s.Precheck(l.Case, u.Side); err != nil {
		return Uploaded{}, err
	}
	limits := l.Case.EvidenceFacts().Limits
	file, err := exhibitfile.Take(s.spoolDir, u.File, u.DeclaredType, u.FileName,
		exhibitfile.Policy{MaxFileBytes: limits.MaxFileBytes, Allowed: exhibitfile.DefaultAllowed()})
	if err != nil {
		return Uploaded{}, err
	}
	defer file.Close()

	ex := evidence.Exhibit{ID: newID("exh_"), FileName: file.Name, MediaType: file.MediaType, Size: file.Size, SHA256: file.SHA256,
		Description: u.Description, Processing: evidence.Processing{PageCount: file.Processing.PageCount}}
	if strings.TrimSpace(ex.Description) == "" {
		ex.Description = file.Processing.SuggestedDescription
	}
	stored, err := s.store(ctx, caseID, file, &ex)
	// What was put is removed if it is not recorded: on a refusal, a
	// failure, or a replay (the bytes are already kept under the first id).
	// The caller may have gone; the removal still runs.
	remove := func() {
		for _, key := range stored {
			_ = s.files.Delete(context.WithoutCancel(ctx), key)
		}
	}
	if err != nil {
		remove()
		return Uploaded{}, err
	}
	now := s.now()
	var out evidence.Outcome
	res, err := s.flow.Change(ctx, caseID, func(c procedure.Case) (procedure.Outcome, error) {
		var err error
		out, err = evidence.Decide(c.Evidence, c.EvidenceFacts(), evidence.Act{Kind: evidence.ActUpload, Side: u.Side, ParticipantID: u.ParticipantID, Upload: &ex}, now)
		if err != nil {
			return procedure.Outcome{Case: c}, err
		}
		if out.Replay {
			return procedure.Outcome{Case: c}, caseflow.ErrNothingToStore
		}
		return c.WithEvidence(out, now), nil
	})
	if err != nil || out.Replay {
		remove()
	}
	if err != nil {
		return Uploaded{}, err
	}
	return Uploaded{Result: res, Exhibit: out.Exhibit, Replay: out.Replay}, nil
}

// store puts the file and its extracted text, and returns the keys put.
func (s *Service) store(ctx context.Context, caseID string, file *exhibitfile.File, ex *evidence.Exhibit) ([]string, error) {
	var stored []string
	key := evidence.ObjectKey(caseID, ex.ID)
	if err := s.files.Put(ctx, key, file.Reader(), file.Size, file.MediaType); err != nil {
		return stored, fmt.Errorf("storing exhibit %s of case %s: %w", ex.ID, caseID, err)
	}
	stored = append(stored, key)
	if text := file.Processing.Text; text != "" {
		key := evidence.TextKey(caseID, ex.ID)
		if err := s.files.Put(ctx, key, strings.NewReader(text), int64(len(text)), "text/plain; charset=utf-8"); err != nil {
			return stored, fmt.Errorf("storing the text of exhibit %s of case %s: %w", ex.ID, caseID, err)
		}
		stored = append(stored, key)
		sum := sha256.Sum256([]byte(text))
		ex.Processing.TextChars = utf8.RuneCountInString(text)
		ex.Processing.TextDigest = hex.EncodeToString(sum[:])
		ex.Processing.TextTruncated = file.Processing.TextTruncated
	}
	return stored, nil
}

// Act applies an evidence act other than an upload at the service's
// clock. A new challenge or defect report comes with the id the caller
// minted (journaled with its answer, so a retry never mints two).
// Refusals are *evidence.RefusalError; a missing case is
// store.ErrNotFound.
func (s *Service) Act(ctx context.Context, caseID string, a evidence.Act) (caseflow.Result, evidence.Exhibit, error) {
	if a.Kind == evidence.ActUpload {
		return caseflow.Result{}, evidence.Exhibit{}, errors.New("evidenceflow: an upload goes through Upload")
	}
	now := s.now()
	var ex evidence.Exhibit
	res, err := s.flow.Change(ctx, caseID, func(c procedure.Case) (procedure.Outcome, error) {
		out, err := evidence.Decide(c.Evidence, c.EvidenceFacts(), a, now)
		if err != nil {
			return procedure.Outcome{Case: c}, err
		}
		ex = out.Exhibit
		return c.WithEvidence(out, now), nil
	})
	return res, ex, err
}

// Open streams an exhibit's original file. The caller checked that the
// exhibit is visible to whoever reads it.
func (s *Service) Open(ctx context.Context, caseID string, ex evidence.Exhibit) (io.ReadCloser, error) {
	body, _, err := s.files.Open(ctx, evidence.ObjectKey(caseID, ex.ID))
	if err != nil {
		return nil, fmt.Errorf("opening exhibit %s of case %s: %w", ex.ID, caseID, err)
	}
	return body, nil
}

// Text returns an exhibit's extracted text, "" where its format gave none.
func (s *Service) Text(ctx context.Context, caseID string, ex evidence.Exhibit) (string, error) {
	if ex.Processing.TextChars == 0 {
		return "", nil
	}
	body, _, err := s.files.Open(ctx, evidence.TextKey(caseID, ex.ID))
	if err != nil {
		return "", fmt.Errorf("reading the text of exhibit %s of case %s: %w", ex.ID, caseID, err)
	}
	defer body.Close()
	b, err := io.ReadAll(body)
	return string(b), err
}

// newID returns prefix and 20 random hex characters.
func newID(prefix string) string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return prefix + hex.EncodeToString(b[:])
}
