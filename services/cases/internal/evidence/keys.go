package evidence

// Where an exhibit's bytes live in object storage (libs/objectstore). The
// keys are derived from ids the service made, never from a file name a
// caller sent.

// ObjectKey is the key of an exhibit's original file.
func ObjectKey(caseID, exhibitID string) string {
	return "cases/" + caseID + "/exhibits/" + exhibitID + "/original"
}

// TextKey is the key of an exhibit's extracted text (UTF-8), stored only
// where the format gives text.
func TextKey(caseID, exhibitID string) string {
	return "cases/" + caseID + "/exhibits/" + exhibitID + "/text"
}
