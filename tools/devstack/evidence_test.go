package main

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"io"
	"mime/multipart"
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/pcourt/pcourt/libs/auth"
	"github.com/pcourt/pcourt/libs/nginxtest"
)

// TestEvidenceThroughAnIngress is issue 24's walk, as partners meet it:
// through a real nginx with its default buffer sizes (the evidence upload
// paths get the ingress's larger body limit and no request buffering, as
// the chart's upload Ingress has them) and the edge, to the cases service
// keeping files in its store. Both sides upload exhibits, one of 20 MB;
// the respondent cannot see the claimant's before disclosure and can
// after; a challenge is filed, answered and resolved by the stack's
// reviewer; and the record bundle's manifest matches every file's digest.
// Then ten 100 MB uploads stream at once, and the cases and edge
// processes' resident memory is read from /proc before and after.
func TestEvidenceThroughAnIngress(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs every service; skipped with -short")
	}
	if nginxtest.Binary() == "" {
		t.Skip("nginx is not installed (Debian: apt-get install nginx-light); skipping the test behind a real ingress")
	}
	base := stackPorts(t)
	extra := freeBlock(t, 6, 10000)
	dir := t.TempDir()
	up := runStack(t, dir, base, extra)
	t.Cleanup(func() { require.NoError(t, up.stop()) })
	ngx := nginxtest.Start(t, "127.0.0.1:"+strconv.Itoa(base))
	p := newProbe(t, stackAddrs{edge: "127.0.0.1:" + strconv.Itoa(base), redis: []string{"127.0.0.1:" + strconv.Itoa(extra+3)}})
	p.edge = ngx.URL
	reviewer := minted{token: credentialsEnv(t, dir, "PCOURT_REVIEWER_TOKEN")}

	a := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")
	b := p.mint(t, "tenant-dev", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-b", "")
	bAgent := p.mint(t, "tenant-dev", auth.Sandbox, auth.RoleRespondentAgent, "partner-b", "")
	stranger := p.mint(t, "tenant-two", auth.Sandbox, auth.RolePlatformOrchestrator, "partner-a", "")

	body := claimantInitiated()
	body["participants"].([]map[string]any)[1]["partnerId"] = "partner-b"
	body["procedure"] = map[string]any{"profile": "single_round"}
	d := p.prepare(t, a, body)
	id := p.openCase(t, a, d.DraftID, d.confirmation("p-claimant", a.cred.PublicID, "org-acme")).CaseID
	invite := p.invitation(t, a, id)
	r := p.do(t, "POST", "/api/partner-cases/"+id+"/respondent", bAgent, p.key(), nil, auth.CapabilityHeader, invite)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	r = p.do(t, "POST", "/api/cases/"+id+"/answer", b, p.key(), map[string]any{"text": "The goods were shipped."})
	require.Equal(t, http.StatusCreated, r.status, string(r.body))
	caseBase := "/api/cases/" + id

	// 1. Both sides upload; the claimant's statement is 20 MB.
	statement := bytes.Repeat([]byte("Order 4471 was paid on 2 October and never shipped; see the ledger line by line.\n"), 20<<20/81)
	claimantExhibit := p.upload(t, caseBase+"/evidence", a, "statement.txt", "text/plain", statement)
	photo := pngImage(t, 800, 600)
	respondentExhibit := p.upload(t, caseBase+"/evidence", b, "dispatch-photo.png", "image/png", photo)

	// 2. The respondent does not see the claimant's before disclosure.
	require.Equal(t, []string{respondentExhibit}, p.exhibitIDs(t, caseBase, b))
	p.unchangedCase(t, func() {
		r := p.do(t, "GET", caseBase+"/evidence/"+claimantExhibit, b, "", nil)
		require.Equal(t, http.StatusNotFound, r.status)
		require.Equal(t, "exhibit_not_found", r.code)
		r = p.do(t, "GET", caseBase+"/evidence/"+claimantExhibit, stranger, "", nil)
		require.Equal(t, "case_not_found_or_opening", r.code)
	})
	for _, disclose := range []struct {
		who minted
		id  string
	}{{a, claimantExhibit}, {b, respondentExhibit}} {
		r := p.do(t, "POST", caseBase+"/evidence/"+disclose.id+"/disclosure", disclose.who, p.key(), nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
	}
	require.ElementsMatch(t, []string{claimantExhibit, respondentExhibit}, p.exhibitIDs(t, caseBase, b))
	r = p.do(t, "GET", caseBase+"/evidence/"+claimantExhibit, b, "", nil)
	require.Equal(t, http.StatusOK, r.status)
	require.Equal(t, sha256Hex(statement), sha256Hex(r.body), "the respondent downloads the claimant's original, byte for byte")
	require.Equal(t, "nosniff", r.header.Get("X-Content-Type-Options"))

	// 3. A challenge, filed, answered, and resolved by the tribunal once
	// the record is closed.
	r = p.do(t, "POST", caseBase+"/evidence/"+respondentExhibit+"/authenticity-challenges", a, p.key(), map[string]any{"grounds": "The photo's metadata postdates the claim."})
	require.Equal(t, http.StatusCreated, r.status, string(r.body))
	var challenge struct {
		Data struct {
			ChallengeID string `json:"challengeId"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &challenge))
	r = p.do(t, "POST", caseBase+"/evidence/"+respondentExhibit+"/authenticity-challenges/"+challenge.Data.ChallengeID+"/answer", b, p.key(),
		map[string]any{"answer": "The camera's clock was never set; the courier's scan is the date."})
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	p.closeRecord(t, caseBase, a, b)
	require.Eventually(t, func() bool {
		r := p.do(t, "POST", "/api/disputes/"+id+"/evidence/"+respondentExhibit+"/challenge/resolve", reviewer, p.key(),
			map[string]any{"challengeId": challenge.Data.ChallengeID, "decision": "dismissed", "reasons": "The courier's scan dates the dispatch."})
		return r.status == http.StatusOK
	}, 60*time.Second, 500*time.Millisecond, "the reviewer, once assigned, resolves the challenge")

	// 4. The record bundle: its manifest names every file with its digest.
	r = p.do(t, "GET", caseBase+"/record-bundle", a, "", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	files := unzip(t, r.body)
	var manifest struct {
		Files []struct {
			Path   string `json:"path"`
			Size   int64  `json:"size"`
			SHA256 string `json:"sha256"`
		} `json:"files"`
	}
	require.NoError(t, json.Unmarshal(files["manifest.json"], &manifest), string(files["manifest.json"]))
	digests := map[string]bool{}
	for _, f := range manifest.Files {
		content, ok := files[f.Path]
		require.True(t, ok, "the manifest names %s, which the archive has", f.Path)
		require.Equal(t, f.SHA256, sha256Hex(content), f.Path)
		digests[f.SHA256] = true
	}
	require.True(t, digests[sha256Hex(statement)], "the claimant's exhibit is in the bundle")
	require.True(t, digests[sha256Hex(photo)], "the respondent's exhibit is in the bundle")
	// The same record gives the same bytes. The stack's tribunal goes on
	// working (the reference adjudicator proposes), and each new docket
	// event makes a new bundle whose manifest's docketSequence says so:
	// compare two downloads of one docketSequence.
	docketSequence := func(archive []byte) float64 {
		var m struct {
			DocketSequence float64 `json:"docketSequence"`
		}
		require.NoError(t, json.Unmarshal(unzip(t, archive)["manifest.json"], &m))
		return m.DocketSequence
	}
	require.Eventually(t, func() bool {
		first := p.do(t, "GET", caseBase+"/record-bundle", a, "", nil)
		again := p.do(t, "GET", caseBase+"/record-bundle", b, "", nil)
		if docketSequence(first.body) != docketSequence(again.body) {
			return false
		}
		require.Equal(t, sha256Hex(first.body), sha256Hex(again.body), "the bundle is reproducible byte for byte")
		return true
	}, 60*time.Second, time.Second)

	// 5. Ten 100 MB uploads at once, on a fresh case of each side's
	// allowance: the processes' memory stays flat.
	t.Run("ten 100 MB uploads at once", func(t *testing.T) {
		cases, edge := childPID(t, "cases"), childPID(t, "compat-edge")
		before := map[string]int64{"cases": rssKiB(t, cases, "VmRSS"), "compat-edge": rssKiB(t, edge, "VmRSS")}
		d := p.prepare(t, a, body)
		second := p.openCase(t, a, d.DraftID, d.confirmation("p-claimant", a.cred.PublicID, "org-acme")).CaseID
		invite := p.invitation(t, a, second)
		r := p.do(t, "POST", "/api/partner-cases/"+second+"/respondent", bAgent, p.key(), nil, auth.CapabilityHeader, invite)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		r = p.do(t, "POST", "/api/cases/"+second+"/answer", b, p.key(), map[string]any{"text": "Denied."})
		require.Equal(t, http.StatusCreated, r.status, string(r.body))

		var wg sync.WaitGroup
		errs := make(chan error, 10)
		start := time.Now()
		for i := range 10 {
			who := a
			if i%2 == 1 {
				who = b
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				status, err := p.streamUpload("/api/cases/"+second+"/evidence", who, fmt.Sprintf("ledger-%d.txt", i), 100_000_000, byte('a'+i))
				if err == nil && status != http.StatusCreated {
					err = fmt.Errorf("upload %d: status %d", i, status)
				}
				errs <- err
			}()
		}
		peak := map[string]int64{}
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		for waiting := true; waiting; {
			select {
			case <-done:
				waiting = false
			case <-time.After(200 * time.Millisecond):
			}
			for name, pid := range map[string]int{"cases": cases, "compat-edge": edge} {
				if n, ok := readStatusKiB(pid, "VmRSS"); ok && n > peak[name] {
					peak[name] = n
				}
			}
		}
		close(errs)
		for err := range errs {
			require.NoError(t, err)
		}
		elapsed := time.Since(start)
		for name := range before {
			t.Logf("%s: VmRSS %d KiB before, peak %d KiB while ten 100 MB uploads streamed (%.1f s)", name, before[name], peak[name], elapsed.Seconds())
			require.Less(t, peak[name]-before[name], int64(160<<10), "%s held more than 160 MiB more while ten 100 MB uploads streamed", name)
		}
	})
}

// upload sends one file as who and returns the exhibit's id.
func (p *probe) upload(t *testing.T, path string, who minted, name, contentType string, content []byte) string {
	t.Helper()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := make(map[string][]string)
	h["Content-Disposition"] = []string{fmt.Sprintf(`form-data; name="file"; filename=%q`, name)}
	h["Content-Type"] = []string{contentType}
	w, err := mw.CreatePart(h)
	require.NoError(t, err)
	_, err = w.Write(content)
	require.NoError(t, err)
	require.NoError(t, mw.Close())
	req, err := http.NewRequest("POST", p.edge+path, &body)
	require.NoError(t, err)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+who.token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusCreated, resp.StatusCode, string(raw))
	var env struct {
		Data struct {
			Exhibit struct {
				ID     string `json:"id"`
				SHA256 string `json:"sha256"`
			} `json:"exhibit"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(raw, &env))
	require.Equal(t, sha256Hex(content), env.Data.Exhibit.SHA256)
	return env.Data.Exhibit.ID
}

// streamUpload sends size bytes of one repeated line as a text exhibit,
// generated while it is sent: the test holds none of it.
func (p *probe) streamUpload(path string, who minted, name string, size int64, fill byte) (int, error) {
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		w, err := mw.CreateFormFile("file", name)
		if err == nil {
			line := append(bytes.Repeat([]byte{fill}, 99), '\n')
			for sent := int64(0); sent < size && err == nil; sent += int64(len(line)) {
				_, err = w.Write(line[:min(int64(len(line)), size-sent)])
			}
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	req, err := http.NewRequestWithContext(context.Background(), "POST", p.edge+path, pr)
	if err != nil {
		return 0, err
	}
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Authorization", "Bearer "+who.token)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, nil
}

func (p *probe) exhibitIDs(t *testing.T, caseBase string, who minted) []string {
	t.Helper()
	r := p.do(t, "GET", caseBase+"/evidence", who, "", nil)
	require.Equal(t, http.StatusOK, r.status, string(r.body))
	var env struct {
		Data struct {
			Exhibits []struct {
				ID string `json:"id"`
			} `json:"exhibits"`
		} `json:"data"`
	}
	require.NoError(t, json.Unmarshal(r.body, &env))
	ids := []string{}
	for _, e := range env.Data.Exhibits {
		ids = append(ids, e.ID)
	}
	return ids
}

// closeRecord files each side's submission for every open round, then
// both confirmations.
func (p *probe) closeRecord(t *testing.T, caseBase string, sides ...minted) {
	t.Helper()
	for range 8 {
		r := p.do(t, "GET", caseBase, sides[0], "", nil)
		require.Equal(t, http.StatusOK, r.status, string(r.body))
		var c struct {
			Data struct {
				Status string `json:"status"`
			} `json:"data"`
		}
		require.NoError(t, json.Unmarshal(r.body, &c))
		switch c.Data.Status {
		case "evidence", "rebuttal":
			for _, who := range sides {
				p.do(t, "POST", caseBase+"/submissions", who, p.key(), map[string]any{"text": "Our position, with the exhibits disclosed."})
			}
		case "awaiting_record_confirmation":
			for _, who := range sides {
				r := p.do(t, "POST", caseBase+"/record-summary/confirmations", who, p.key(), nil)
				require.Less(t, r.status, 300, string(r.body))
			}
		default:
			require.Contains(t, []string{"record_confirmed", "awarded"}, c.Data.Status)
			return
		}
	}
	t.Fatal("the record did not close")
}

func unzip(t *testing.T, archive []byte) map[string][]byte {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(archive), int64(len(archive)))
	require.NoError(t, err)
	out := map[string][]byte{}
	for _, f := range zr.File {
		rc, err := f.Open()
		require.NoError(t, err)
		b, err := io.ReadAll(rc)
		rc.Close()
		require.NoError(t, err)
		out[f.Name] = b
	}
	return out
}

// pngImage is a valid PNG of w×h grey pixels.
func pngImage(t *testing.T, w, h int) []byte {
	t.Helper()
	var b bytes.Buffer
	require.NoError(t, png.Encode(&b, image.NewGray(image.Rect(0, 0, w, h))))
	return b.Bytes()
}
