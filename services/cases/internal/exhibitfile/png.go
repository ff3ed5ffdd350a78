package exhibitfile

import (
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"os"
)

const pngSignature = "\x89PNG\r\n\x1a\n"

// checkPNG walks the PNG's chunks from the signature to IEND: each chunk's
// length must fit the file, its type be four ASCII letters and its CRC
// hold; the first chunk is IHDR, at least one IDAT comes before IEND.
// Bytes after IEND are a second file riding on the image (a zip, a script)
// and refuse as a polyglot.
func checkPNG(f *os.File, size int64) (*Refusal, error) {
	r := reader(f, int64(len(pngSignature)), size)
	off := int64(len(pngSignature))
	var hdr [8]byte
	sawIDAT := false
	for first := true; ; first = false {
		if _, err := io.ReadFull(r, hdr[:]); err != nil {
			return invalidOr(err, "the PNG ends at byte %d without an IEND chunk", off)
		}
		length := int64(binary.BigEndian.Uint32(hdr[:4]))
		typ := hdr[4:8]
		switch {
		case length > 1<<31-1:
			return refuse(CodeContentInvalid, "the PNG chunk at byte %d has an impossible length", off), nil
		case !isLetters(typ):
			return refuse(CodeContentInvalid, "the PNG chunk at byte %d has no valid type", off), nil
		case first && (string(typ) != "IHDR" || length != 13):
			return refuse(CodeContentInvalid, "the PNG does not start with its IHDR chunk"), nil
		}
		crc := crc32.NewIEEE()
		crc.Write(typ)
		if _, err := io.CopyN(crc, r, length); err != nil {
			return invalidOr(err, "the PNG chunk %s at byte %d runs past the end of the file", typ, off)
		}
		var sum [4]byte
		if _, err := io.ReadFull(r, sum[:]); err != nil {
			return invalidOr(err, "the PNG chunk %s at byte %d runs past the end of the file", typ, off)
		}
		if binary.BigEndian.Uint32(sum[:]) != crc.Sum32() {
			return refuse(CodeContentInvalid, "the PNG chunk %s at byte %d fails its CRC", typ, off), nil
		}
		off += 12 + length
		switch string(typ) {
		case "IDAT":
			sawIDAT = true
		case "IEND":
			if !sawIDAT {
				return refuse(CodeContentInvalid, "the PNG has no image data"), nil
			}
			if off < size {
				return refuse(CodePolyglot, "%d bytes follow the PNG's IEND chunk", size-off), nil
			}
			return nil, nil
		}
	}
}

func isLetters(b []byte) bool {
	for _, c := range b {
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') {
			return false
		}
	}
	return true
}

// invalidOr turns the end of the file inside a structure into a refusal
// with the given detail; any other read error is the machine's.
func invalidOr(err error, format string, args ...any) (*Refusal, error) {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return refuse(CodeContentInvalid, format, args...), nil
	}
	return nil, err
}
