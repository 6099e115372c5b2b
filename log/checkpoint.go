package log

import (
	"bytes"
	"encoding/base64"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Per-directory checkpoint files, in Kafka's text format: version 0, the entry
// count, then one "topic partition offset" line per partition.
const (
	recoveryPointFile  = "recovery-point-offset-checkpoint"
	logStartOffsetFile = "log-start-offset-checkpoint"
	cleanerOffsetFile  = "cleaner-offset-checkpoint"
	cleanShutdownFile  = ".kafka_cleanshutdown"
	epochCheckpoint    = "leader-epoch-checkpoint"
	partitionMetadata  = "partition.metadata"
)

// TopicPartition names one partition.
type TopicPartition struct {
	Topic     string
	Partition int32
}

// String is the partition's directory name, "<topic>-<partition>".
func (tp TopicPartition) String() string { return tp.Topic + "-" + strconv.Itoa(int(tp.Partition)) }

// parseTopicPartition splits a directory name "<topic>-<partition>".
func parseTopicPartition(name string) (TopicPartition, bool) {
	i := strings.LastIndexByte(name, '-')
	if i <= 0 || i == len(name)-1 {
		return TopicPartition{}, false
	}
	p, err := strconv.ParseInt(name[i+1:], 10, 32)
	if err != nil || p < 0 || strconv.FormatInt(p, 10) != name[i+1:] {
		return TopicPartition{}, false
	}
	return TopicPartition{Topic: name[:i], Partition: int32(p)}, true
}

// checkpointLines splits a checkpoint file into its entries' fields, checking
// the version, the count and the number of fields per line.
func checkpointLines(path string, data []byte, fields int) ([][]string, error) {
	lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
	if len(lines) < 2 || lines[0] != "0" {
		return nil, fmt.Errorf("%w: %s: missing version 0 header", ErrCorrupt, path)
	}
	n, err := strconv.Atoi(lines[1])
	if err != nil || n != len(lines)-2 {
		return nil, fmt.Errorf("%w: %s: count %q does not match %d entries", ErrCorrupt, path, lines[1], len(lines)-2)
	}
	out := make([][]string, 0, n)
	for i, l := range lines[2:] {
		f := strings.Fields(l)
		if len(f) != fields {
			return nil, fmt.Errorf("%w: %s: entry %d %q: want %d fields", ErrCorrupt, path, i, l, fields)
		}
		out = append(out, f)
	}
	return out, nil
}

// encodeOffsetCheckpoint renders a per-directory offset checkpoint.
func encodeOffsetCheckpoint(offsets map[TopicPartition]int64) []byte {
	keys := make([]TopicPartition, 0, len(offsets))
	for tp := range offsets {
		keys = append(keys, tp)
	}
	sort.Slice(keys, func(i, j int) bool {
		if keys[i].Topic != keys[j].Topic {
			return keys[i].Topic < keys[j].Topic
		}
		return keys[i].Partition < keys[j].Partition
	})
	var b bytes.Buffer
	fmt.Fprintf(&b, "0\n%d\n", len(keys))
	for _, tp := range keys {
		fmt.Fprintf(&b, "%s %d %d\n", tp.Topic, tp.Partition, offsets[tp])
	}
	return b.Bytes()
}

// decodeOffsetCheckpoint parses a per-directory offset checkpoint.
func decodeOffsetCheckpoint(path string, data []byte) (map[TopicPartition]int64, error) {
	lines, err := checkpointLines(path, data, 3)
	if err != nil {
		return nil, err
	}
	out := make(map[TopicPartition]int64, len(lines))
	for i, f := range lines {
		p, err1 := strconv.ParseInt(f[1], 10, 32)
		o, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 != nil || err2 != nil || p < 0 || o < 0 {
			return nil, fmt.Errorf("%w: %s: entry %d %v", ErrCorrupt, path, i, f)
		}
		out[TopicPartition{Topic: f[0], Partition: int32(p)}] = o
	}
	return out, nil
}

// encodePartitionMetadata renders partition.metadata: the version and the
// topic id in Kafka's Uuid string form (URL-safe base64, no padding).
func encodePartitionMetadata(topicID [16]byte) []byte {
	return fmt.Appendf(nil, "version: 0\ntopic_id: %s\n", base64.RawURLEncoding.EncodeToString(topicID[:]))
}

// decodePartitionMetadata parses partition.metadata.
func decodePartitionMetadata(path string, data []byte) ([16]byte, error) {
	var id [16]byte
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	if len(lines) != 2 || strings.TrimSpace(lines[0]) != "version: 0" {
		return id, fmt.Errorf("%w: %s: want version 0 and topic_id lines", ErrCorrupt, path)
	}
	v, ok := strings.CutPrefix(strings.TrimSpace(lines[1]), "topic_id: ")
	raw, err := base64.RawURLEncoding.DecodeString(v)
	if !ok || err != nil || len(raw) != 16 {
		return id, fmt.Errorf("%w: %s: bad topic_id %q", ErrCorrupt, path, v)
	}
	copy(id[:], raw)
	return id, nil
}
