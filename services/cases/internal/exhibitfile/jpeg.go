package exhibitfile

import (
	"bufio"
	"os"
)

// jpegPaddingBytes is how many bytes of padding (0x00 or 0xFF) after a
// JPEG's end are tolerated: some encoders and cameras pad the file; a
// second file hidden there is neither that short nor that plain.
const jpegPaddingBytes = 1024

// maxJPEGImages is how many JPEGs one file may chain: a camera's
// multi-picture file (MPF: a preview, a depth map) stores its images one
// after another, each a complete JPEG.
const maxJPEGImages = 8

// checkJPEG walks the JPEG's segments from SOI to EOI: every marker in its
// place, every segment's length inside the file, a frame header before the
// first scan and at least one scan, the entropy-coded data of each scan
// read through to the next marker. After EOI the file may hold
// further complete JPEGs (multi-picture files) and then padding; anything
// else after the end is a second file and refuses as a polyglot.
func checkJPEG(f *os.File, size int64) (*Refusal, error) {
	var off int64
	for image := 0; ; image++ {
		w := jpegWalk{r: reader(f, off, size), off: off}
		if ref, err := w.image(); ref != nil || err != nil {
			return ref, err
		}
		off = w.off
		if off == size {
			return nil, nil
		}
		rest := reader(f, off, size)
		if next, _ := rest.Peek(3); string(next) == "\xff\xd8\xff" && image+1 < maxJPEGImages {
			continue
		}
		if size-off > jpegPaddingBytes {
			return refuse(CodePolyglot, "%d bytes follow the JPEG's end", size-off), nil
		}
		for i := off; i < size; i++ {
			c, err := rest.ReadByte()
			if err != nil {
				return nil, err
			}
			if c != 0x00 && c != 0xff {
				return refuse(CodePolyglot, "%d bytes follow the JPEG's end", size-off), nil
			}
		}
		return nil, nil
	}
}

// jpegWalk reads one JPEG, counting the bytes it consumes.
type jpegWalk struct {
	r   *bufio.Reader
	off int64
}

func (w *jpegWalk) byte() (byte, error) {
	c, err := w.r.ReadByte()
	if err == nil {
		w.off++
	}
	return c, err
}

// image reads from SOI through EOI.
func (w *jpegWalk) image() (*Refusal, error) {
	start := w.off
	if a, err := w.byte(); err != nil || a != 0xff {
		return refuse(CodeContentInvalid, "the JPEG at byte %d does not start with SOI", start), nil
	}
	if b, err := w.byte(); err != nil || b != 0xd8 {
		return refuse(CodeContentInvalid, "the JPEG at byte %d does not start with SOI", start), nil
	}
	var marker byte // a marker the entropy-coded data ended at, still to handle
	var frame, scan bool
	for {
		if marker == 0 {
			c, err := w.byte()
			if err != nil {
				return invalidOr(err, "the JPEG ends at byte %d without EOI", w.off)
			}
			if c != 0xff {
				return refuse(CodeContentInvalid, "the JPEG has no marker at byte %d", w.off-1), nil
			}
			for c == 0xff { // fill bytes
				if c, err = w.byte(); err != nil {
					return invalidOr(err, "the JPEG ends at byte %d without EOI", w.off)
				}
			}
			marker = c
		}
		m := marker
		marker = 0
		switch {
		case m == 0xd9: // EOI
			if !scan {
				return refuse(CodeContentInvalid, "the JPEG at byte %d has no image data", start), nil
			}
			return nil, nil
		case m == 0x00, m == 0xd8:
			return refuse(CodeContentInvalid, "the JPEG has a misplaced marker 0x%02X at byte %d", m, w.off-1), nil
		case m == 0x01, m >= 0xd0 && m <= 0xd7: // TEM, RSTn: no length
			continue
		}
		hi, err1 := w.byte()
		lo, err2 := w.byte()
		if err1 != nil || err2 != nil {
			return refuse(CodeContentInvalid, "the JPEG ends inside a segment header at byte %d", w.off), nil
		}
		length := int(hi)<<8 | int(lo)
		if length < 2 {
			return refuse(CodeContentInvalid, "the JPEG segment 0x%02X at byte %d has an impossible length", m, w.off-2), nil
		}
		n, err := w.r.Discard(length - 2)
		w.off += int64(n)
		if err != nil {
			return invalidOr(err, "the JPEG segment 0x%02X runs past the end of the file", m)
		}
		if isSOF(m) {
			frame = true
		}
		if m != 0xda { // not SOS: the next marker follows
			continue
		}
		if !frame {
			return refuse(CodeContentInvalid, "the JPEG at byte %d has a scan before its frame header", start), nil
		}
		scan = true
		// SOS: entropy-coded data up to the next marker that is not a
		// stuffed 0xFF00 or a restart marker.
		for marker == 0 {
			c, err := w.byte()
			if err != nil {
				return invalidOr(err, "the JPEG ends inside its image data at byte %d", w.off)
			}
			if c != 0xff {
				continue
			}
			for c == 0xff {
				if c, err = w.byte(); err != nil {
					return invalidOr(err, "the JPEG ends inside its image data at byte %d", w.off)
				}
			}
			if c != 0x00 && (c < 0xd0 || c > 0xd7) {
				marker = c
			}
		}
	}
}

// isSOF reports a start-of-frame marker: SOF0 to SOF15 but DHT (C4), JPG
// (C8) and DAC (CC), which share the range.
func isSOF(m byte) bool {
	return m >= 0xc0 && m <= 0xcf && m != 0xc4 && m != 0xc8 && m != 0xcc
}
