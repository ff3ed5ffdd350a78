package main

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"path/filepath"
	"strings"
)

// kfake's on-disk layout (pkg/kfake persist.go): partitions/<topic>-<n>/
// holds <base>.dat segments of raw Kafka record batches back to back and a
// <base>.idx beside each, one 15-byte entry per batch.
const (
	indexEntrySize = 15
	// batchHeaderSize is a record batch's FirstOffset (8) and Length (4);
	// Length counts the bytes after them.
	batchHeaderSize = 12
	// A v2 batch's magic byte is at 16 and its CRC-32C, over everything
	// from byte 21 on, at 17.
	magicAt, crcAt, crcFrom = 16, 17, 21
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// repairSegments cuts, from every segment file under dataDir, a tail that
// is not a whole record batch with a valid checksum (a write torn by a
// kill), and from its index the entries past the batches kept, synced to
// disk. It runs before kfake opens the directory. kfake cuts a torn tail
// itself while loading, but then takes the active segment's size from a
// stat of the file and appends at positions counted from it: a size that
// still counted the torn bytes would put every later batch where its index
// does not say, which consumers read as "unsupported magic byte". Cut here
// first, the files kfake loads are whole. It returns one line per file it
// cut.
func repairSegments(dataDir string) ([]string, error) {
	segments, err := filepath.Glob(filepath.Join(dataDir, "partitions", "*", "*.dat"))
	if err != nil {
		return nil, err
	}
	var repaired []string
	for _, seg := range segments {
		raw, err := os.ReadFile(seg)
		if err != nil {
			return repaired, err
		}
		valid, batches := wholeBatches(raw)
		if valid < len(raw) {
			if err := truncateSynced(seg, int64(valid)); err != nil {
				return repaired, err
			}
			repaired = append(repaired, fmt.Sprintf("%s: cut %d bytes after %d whole batches", seg, len(raw)-valid, batches))
		}
		idx := strings.TrimSuffix(seg, ".dat") + ".idx"
		info, err := os.Stat(idx)
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return repaired, err
		}
		if want := int64(batches * indexEntrySize); info.Size() > want {
			if err := truncateSynced(idx, want); err != nil {
				return repaired, err
			}
			repaired = append(repaired, fmt.Sprintf("%s: cut %d index bytes past %d batches", idx, info.Size()-want, batches))
		}
	}
	return repaired, nil
}

// wholeBatches returns the length of raw's prefix made of whole v2 record
// batches with valid checksums, and how many batches that is.
func wholeBatches(raw []byte) (valid, batches int) {
	for {
		rest := raw[valid:]
		if len(rest) < batchHeaderSize {
			return valid, batches
		}
		size := batchHeaderSize + int(binary.BigEndian.Uint32(rest[8:batchHeaderSize]))
		if size < crcFrom || size > len(rest) || rest[magicAt] != 2 ||
			binary.BigEndian.Uint32(rest[crcAt:crcFrom]) != crc32.Checksum(rest[crcFrom:size], castagnoli) {
			return valid, batches
		}
		valid += size
		batches++
	}
}

func truncateSynced(path string, size int64) error {
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	return f.Sync()
}
