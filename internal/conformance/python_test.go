package conformance

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// python is the interpreter that has the Debian client packages; the
// python3 first on PATH may be another one without them.
const python = "/usr/bin/python3"

// TestKafkaPython runs the suite with kafka-python 2.0.2 (Debian
// python3-kafka) through testdata/kafka_python_client.py: topics by
// KafkaAdminClient; produce at its default acks=1, acks=all and each codec
// (python3-snappy, python3-lz4 and python3-zstandard provide them);
// consume assigned partitions after seek_to_beginning, without a group.
func TestKafkaPython(t *testing.T) {
	runSuite(t, pythonDriver("kafka-python", "kafka_python_client.py", "kafka, snappy, lz4, zstandard"))
}

// TestConfluentKafka runs the suite with confluent-kafka-python 1.7.0
// (Debian python3-confluent-kafka, librdkafka 2.0.2) through
// testdata/confluent_kafka_client.py: topics by AdminClient; produce at
// librdkafka's default acks=all, acks=1 and each codec, with delivery
// reports; consume assigned partitions from offset 0 (see the script for
// the group.id the client insists on).
func TestConfluentKafka(t *testing.T) {
	runSuite(t, pythonDriver("confluent-kafka", "confluent_kafka_client.py", "confluent_kafka"))
}

// pythonDriver adapts one of the testdata scripts; modules are what the
// client needs to import.
func pythonDriver(name, script, modules string) driver {
	s := pythonScript{name: name, path: filepath.Join("testdata", script)}
	return driver{
		name:      name,
		variants:  append(acksVariants(), codecVariants(allCodecs...)...),
		available: func() error { return pythonAvailable(modules) },
		createTopic: func(ctx context.Context, addr, topic string, n int32) error {
			_, err := s.run(ctx, s.config("create", addr, topic, n), nil)
			return err
		},
		produce: s.produce,
		consume: s.consume,
	}
}

// pythonAvailable checks that the interpreter imports modules.
func pythonAvailable(modules string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := os.Stat(python); err != nil {
		return err
	}
	_, _, err := runTool(ctx, python, []string{"-c", "import " + modules}, nil)
	return err
}

// pythonScript runs one testdata script.
type pythonScript struct {
	name string
	path string
}

// pyConfig is the JSON configuration a script reads from argv.
type pyConfig struct {
	Op          string `json:"op"`
	Bootstrap   string `json:"bootstrap"`
	Topic       string `json:"topic"`
	Partitions  int32  `json:"partitions"`
	Acks        string `json:"acks"`
	Compression string `json:"compression"`
	TimeoutS    int    `json:"timeout_s"`
}

// pyRecord is a record on a script's stdin or stdout; encoding/json
// base64-encodes the byte slices as the scripts expect.
type pyRecord struct {
	Partition     int32      `json:"p"`
	Offset        int64      `json:"o"`
	Key           []byte     `json:"k"`
	Value         []byte     `json:"v"`
	Headers       [][]string `json:"h"`
	Timestamp     int64      `json:"ts"`
	TimestampType int8       `json:"tt"`
}

func (s pythonScript) config(op, addr, topic string, n int32) pyConfig {
	// The scripts' own deadlines end before opTimeout kills them, so
	// their errors say what they were waiting for.
	return pyConfig{Op: op, Bootstrap: addr, Topic: topic, Partitions: n, TimeoutS: int(opTimeout/time.Second) - 30}
}

func (s pythonScript) produce(ctx context.Context, addr, topic string, v variant, recs []record) ([]location, error) {
	cfg := s.config("produce", addr, topic, partitions)
	cfg.Acks, cfg.Compression = v.acks, v.codec
	var in bytes.Buffer
	enc := json.NewEncoder(&in)
	for _, r := range recs {
		pr := pyRecord{Key: r.Key, Value: r.Value, Timestamp: r.Timestamp, Headers: [][]string{}}
		for _, h := range r.Headers {
			pr.Headers = append(pr.Headers, []string{h.Key, base64.StdEncoding.EncodeToString(h.Value)})
		}
		if err := enc.Encode(pr); err != nil {
			return nil, err
		}
	}
	out, err := s.run(ctx, cfg, &in)
	if err != nil {
		return nil, err
	}
	if len(out) != len(recs) {
		return nil, fmt.Errorf("%s reported %d acknowledgements for %d records", s.name, len(out), len(recs))
	}
	locs := make([]location, len(out))
	for i, o := range out {
		locs[i] = location{Partition: o.Partition, Offset: o.Offset}
	}
	return locs, nil
}

func (s pythonScript) consume(ctx context.Context, addr, topic string, n int32) ([]record, error) {
	out, err := s.run(ctx, s.config("consume", addr, topic, n), nil)
	recs := make([]record, 0, len(out))
	for _, o := range out {
		r := record{
			Partition:     o.Partition,
			Offset:        o.Offset,
			Key:           o.Key,
			Value:         o.Value,
			Timestamp:     o.Timestamp,
			TimestampType: o.TimestampType,
		}
		for _, h := range o.Headers {
			if len(h) != 2 {
				return recs, fmt.Errorf("%s printed a bad header %q", s.name, h)
			}
			v, err := base64.StdEncoding.DecodeString(h[1])
			if err != nil {
				return recs, fmt.Errorf("%s printed a bad header %q: %w", s.name, h, err)
			}
			r.Headers = append(r.Headers, header{Key: h[0], Value: v})
		}
		recs = append(recs, r)
	}
	return recs, err
}

// run runs the script with cfg and stdin and decodes the JSON lines it
// prints.
func (s pythonScript) run(ctx context.Context, cfg pyConfig, stdin *bytes.Buffer) ([]pyRecord, error) {
	arg, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	stdout, _, runErr := runTool(ctx, python, []string{s.path, string(arg)}, stdin)
	var out []pyRecord
	sc := bufio.NewScanner(strings.NewReader(stdout))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var r pyRecord
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return out, fmt.Errorf("%s printed %q: %w", s.name, sc.Text(), err)
		}
		out = append(out, r)
	}
	if runErr != nil {
		return out, runErr
	}
	return out, sc.Err()
}
