package exhibitfile_test

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"os"

	"github.com/pcourt/pcourt/services/cases/internal/exhibitfile"
)

// The HTTP handler's part: read the multipart body as a stream, hand the
// file part to Take, store an accepted file from its spool and Close it;
// map a refusal to its problem.
func ExampleTake() {
	// A request body as a browser sends it.
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	part, _ := mw.CreatePart(map[string][]string{
		"Content-Disposition": {`form-data; name="file"; filename="statement.txt"`},
		"Content-Type":        {"text/plain"},
	})
	io.WriteString(part, "We delivered on 2 March.\n")
	mw.Close()

	spoolDir, _ := os.MkdirTemp("", "spool")
	defer os.RemoveAll(spoolDir)
	policy := exhibitfile.Policy{MaxFileBytes: 10 << 20, Allowed: exhibitfile.DefaultAllowed()}

	mr := multipart.NewReader(&body, mw.Boundary())
	p, _ := mr.NextPart()
	file, err := exhibitfile.Take(spoolDir, p, p.Header.Get("Content-Type"), p.FileName(), policy)
	var refusal *exhibitfile.Refusal
	if errors.As(err, &refusal) {
		fmt.Println(refusal.Code.Status(), refusal.Code, refusal.Detail) // a problem+json answer
		return
	}
	if err != nil {
		fmt.Println("500:", err)
		return
	}
	defer file.Close() // removes the spool file, after the store has its copy

	// store.Put(ctx, key, file.Reader(), file.Size, file.MediaType, file.SHA256)
	fmt.Println(file.Name, file.MediaType, file.Size)
	fmt.Println(file.SHA256)
	fmt.Println(file.Processing.SuggestedDescription)
	// Output:
	// statement.txt text/plain 25
	// 179760581355852eb7d041fd5dbe3cb83f3729ab542ab7c4b97b8e6cd20a0531
	// We delivered on 2 March.
}
