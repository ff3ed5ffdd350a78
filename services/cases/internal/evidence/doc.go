// Package evidence is the case's exhibits as a pure domain: files a side
// uploads, discloses to the other side, describes, and whose authenticity
// the other side may challenge and the tribunal resolves; and the
// processing defects a side reports against an exhibit's processing
// record, which the tribunal resolves.
//
// It decides on its own part of the case record (a State, stored with the
// case) from the facts of the case it needs (Facts), and returns the next
// state with notes that internal/procedure turns into case events with
// their recipients. The bytes of a file never pass through here: the
// use-case package (internal/evidenceflow) validates and stores them in
// object storage first and hands Decide the metadata (Upload).
//
// An undisclosed exhibit is the side's working material, not yet part of
// the proceedings: only its own side may know it exists, so uploading it,
// and describing it while it is undisclosed, are quiet (no case event,
// since the docket is one list both sides read). Disclosure puts it in the
// record and on the docket; every later act on it is an event.
package evidence
