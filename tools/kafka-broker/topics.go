package main

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// recoverTopics adds to the data directory's topics.json every topic whose
// partitions are on disk but which the file does not name, before kfake
// loads the directory.
//
// kfake writes topics.json when a topic is created by a CreateTopics
// request, but not when a producer's metadata request creates it, which
// is how the services' topics come to exist; only a clean stop saves it
// then. After a SIGKILL such a topic was forgotten: kfake loaded none of
// its records, created it again empty, and consumers found their committed
// offsets past its end ("Offset Out Of Range") or, once new records were
// appended to the old segment files at positions kfake counted from zero,
// "unsupported magic byte" where old bytes were read as new batches.
//
// The layout is kfake's (pkg/kfake persist.go): partitions/<topic, path
// escaped>-<n>/ per partition, and topics.json {"version", "topics":
// [{"name", "id" (16 bytes, base64), "partitions", "replicas"}]}. It returns
// one line per topic added.
func recoverTopics(dataDir string) ([]string, error) {
	metaRaw, err := os.ReadFile(filepath.Join(dataDir, "meta.json"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil // nothing persisted yet: kfake starts afresh
	}
	if err != nil {
		return nil, err
	}
	var meta struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(metaRaw, &meta); err != nil {
		return nil, fmt.Errorf("reading meta.json: %w", err)
	}

	path := filepath.Join(dataDir, "topics.json")
	file := struct {
		Version int               `json:"version"`
		Topics  []json.RawMessage `json:"topics"`
	}{Version: meta.Version}
	known := map[string]bool{}
	raw, err := os.ReadFile(path)
	switch {
	case err == nil:
		if err := json.Unmarshal(raw, &file); err != nil {
			return nil, fmt.Errorf("reading topics.json: %w", err)
		}
		for _, t := range file.Topics {
			var named struct {
				Name string `json:"name"`
			}
			if err := json.Unmarshal(t, &named); err != nil {
				return nil, fmt.Errorf("reading topics.json: %w", err)
			}
			known[named.Name] = true
		}
	case !errors.Is(err, os.ErrNotExist):
		return nil, err
	}

	onDisk, err := partitionsOnDisk(dataDir)
	if err != nil {
		return nil, err
	}
	var added []string
	for _, topic := range slices.Sorted(maps.Keys(onDisk)) {
		if known[topic] {
			continue
		}
		var id [16]byte
		if _, err := rand.Read(id[:]); err != nil {
			return nil, err
		}
		entry, err := json.Marshal(map[string]any{
			"name": topic, "id": base64.StdEncoding.EncodeToString(id[:]),
			"partitions": onDisk[topic], "replicas": 1,
		})
		if err != nil {
			return nil, err
		}
		file.Topics = append(file.Topics, entry)
		added = append(added, fmt.Sprintf("%s (%d partitions)", topic, onDisk[topic]))
	}
	if len(added) == 0 {
		return nil, nil
	}
	out, err := json.Marshal(file)
	if err != nil {
		return nil, err
	}
	return added, writeSynced(path, out)
}

// partitionsOnDisk returns, per topic, one more than the highest partition
// number that has a directory.
func partitionsOnDisk(dataDir string) (map[string]int, error) {
	dirs, err := os.ReadDir(filepath.Join(dataDir, "partitions"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	counts := map[string]int{}
	for _, d := range dirs {
		cut := strings.LastIndexByte(d.Name(), '-')
		if !d.IsDir() || cut < 0 {
			continue
		}
		n, err := strconv.Atoi(d.Name()[cut+1:])
		if err != nil || n < 0 {
			continue
		}
		topic, err := url.PathUnescape(d.Name()[:cut])
		if err != nil {
			continue
		}
		counts[topic] = max(counts[topic], n+1)
	}
	return counts, nil
}

// writeSynced replaces path with data through a synced temporary file, so
// a kill leaves the old file or the new one.
func writeSynced(path string, data []byte) error {
	tmp := path + ".tmp" // kfake removes a .tmp a kill left behind
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
