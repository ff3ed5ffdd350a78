// Package exhibitfile takes in one uploaded exhibit file safely: streamed to
// a spool file on local disk, hashed and counted on the way, checked whole,
// and handed on only when every check has passed.
//
// [Take] is the one entry. The HTTP handler gives it the multipart file
// part's reader, its declared Content-Type and its file name; Take refuses
// a bad name before reading a byte, copies the part through one 32 KiB
// buffer into the spool file and a SHA-256 at once, stops at the policy's
// per-file limit plus one byte, then checks the spooled file against the
// allowlist and the structure of its type (see check), and reads its
// processing record (see Processing). Memory per upload is that buffer and
// a few fixed windows of the file, never the file: the checks read the
// spool file with ReadAt and bounded buffered readers; only the extracted
// text, capped at MaxTextRunes characters, is held.
//
// The outcome is all or nothing. A refusal is a *[Refusal] whose Code is one
// of [Codes], in the order Take checks them, with a Detail safe to show the
// uploader; an error that is not a Refusal is the machine's (a 500). Either
// way the spool file is gone before Take returns. Only a *[File] exists on
// disk, and the caller stores it (its Reader, Size and SHA256) and then
// Closes it, which removes it: a file is never stored half, because the
// store sees it only after it has been read to its end and checked.
//
// What is refused, and why, is listed with each code (refusal.go) and each
// check (name.go, check.go, and one file per format: pdf.go, png.go,
// jpeg.go, text.go). The download side must still serve a stored exhibit
// as an attachment with X-Content-Type-Options: nosniff: the checks make a
// disguised file unlikely, the headers make it harmless.
//
// The package does no network I/O and knows no case: the per-case total is
// the caller's, which passes the smaller of the per-file limit and what is
// left of the case's allowance as Policy.MaxFileBytes.
package exhibitfile
