package conformance

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// kcatHeaders are the headers kcat puts on every record: -H sets them per
// run, not per record.
var kcatHeaders = []header{
	{Key: "origin", Value: []byte("weir-conformance")},
	{Key: "client", Value: []byte("kcat")},
}

// kcatFormat prints each consumed record as partition, offset, timestamp,
// key length, value length, key, value and headers, tab-separated, one per
// line; the lengths make key and value unambiguous whatever they hold.
const kcatFormat = `%p\t%o\t%T\t%K\t%S\t%k\t%s\t%h\n`

// TestKcat runs the suite with librdkafka through the kcat binary (the
// Debian package kcat; librdkafka 2.0.2 there). kcat has no admin API, so
// topics are created by kadm. It produces lines "key:value" from stdin
// (-K:) with two headers (-H), at the librdkafka default acks=all, acks=1
// (-X acks=1) and each codec (-z); librdkafka stamps the records itself.
// It consumes each partition with -C -p N -o beginning -e, with
// librdkafka's default isolation level read_committed.
func TestKcat(t *testing.T) {
	runSuite(t, driver{
		name:             "kcat",
		available:        kcatAvailable,
		variants:         append(acksVariants(), codecVariants(allCodecs...)...),
		createTopic:      kadmCreateTopic,
		produce:          kcatProduce,
		consume:          kcatConsume,
		staticHeaders:    kcatHeaders,
		clientTimestamps: true,
	})
}

func kcatAvailable() error {
	_, err := exec.LookPath("kcat")
	return err
}

func kcatProduce(ctx context.Context, addr, topic string, v variant, recs []record) ([]location, error) {
	args := []string{"-P", "-b", addr, "-t", topic, "-K:"}
	for _, h := range kcatHeaders {
		args = append(args, "-H", h.Key+"="+string(h.Value))
	}
	if v.acks != "" {
		args = append(args, "-X", "acks="+v.acks)
	}
	if v.codec != "" {
		args = append(args, "-z", v.codec)
	}
	var in bytes.Buffer
	for _, r := range recs {
		in.Write(r.Key)
		in.WriteByte(':')
		in.Write(r.Value)
		in.WriteByte('\n')
	}
	_, stderr, err := runTool(ctx, "kcat", args, &in)
	if err != nil {
		return nil, err
	}
	// kcat reports failed deliveries on stderr; its exit status alone
	// does not always tell.
	if strings.Contains(stderr, "Delivery failed") || strings.Contains(stderr, "ERROR") {
		return nil, fmt.Errorf("kcat %s reported errors:\n%s", strings.Join(args, " "), tail(stderr))
	}
	return nil, nil
}

func kcatConsume(ctx context.Context, addr, topic string, n int32) ([]record, error) {
	// One kcat per partition, all at once.
	parts := make([][]record, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for p := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			args := []string{"-C", "-b", addr, "-t", topic, "-p", strconv.Itoa(int(p)), "-o", "beginning", "-e", "-q", "-f", kcatFormat}
			stdout, _, err := runTool(ctx, "kcat", args, nil)
			if err != nil {
				errs[p] = err
				return
			}
			if parts[p], err = parseKcat([]byte(stdout)); err != nil {
				errs[p] = fmt.Errorf("partition %d: %w", p, err)
			}
		}()
	}
	wg.Wait()
	return slices.Concat(parts...), errors.Join(errs...)
}

// parseKcat parses records printed with kcatFormat.
func parseKcat(b []byte) ([]record, error) {
	var out []record
	for len(b) > 0 {
		r, rest, err := parseKcatRecord(b)
		if err != nil {
			return out, fmt.Errorf("record %d of kcat's output: %w", len(out), err)
		}
		out = append(out, r)
		b = rest
	}
	return out, nil
}

// parseKcatRecord parses one record of kcatFormat at the start of b.
func parseKcatRecord(b []byte) (record, []byte, error) {
	var nums [5]int64 // partition, offset, timestamp, key length, value length
	for i := range nums {
		field, rest, ok := bytes.Cut(b, []byte("\t"))
		if !ok {
			return record{}, nil, errors.New("truncated numeric fields")
		}
		n, err := strconv.ParseInt(string(field), 10, 64)
		if err != nil {
			return record{}, nil, fmt.Errorf("field %d: %w", i, err)
		}
		nums[i], b = n, rest
	}
	r := record{Partition: int32(nums[0]), Offset: nums[1], Timestamp: nums[2], TimestampType: -1}
	var err error
	if r.Key, b, err = takeField(b, nums[3], '\t'); err != nil {
		return r, nil, fmt.Errorf("key: %w", err)
	}
	if r.Value, b, err = takeField(b, nums[4], '\t'); err != nil {
		return r, nil, fmt.Errorf("value: %w", err)
	}
	line, rest, ok := bytes.Cut(b, []byte("\n"))
	if !ok {
		return r, nil, errors.New("headers: no line end")
	}
	if len(line) > 0 {
		for _, kv := range strings.Split(string(line), ",") {
			k, v, _ := strings.Cut(kv, "=")
			r.Headers = append(r.Headers, header{Key: k, Value: []byte(v)})
		}
	}
	return r, rest, nil
}

// takeField takes n bytes (none for -1, a null) followed by sep.
func takeField(b []byte, n int64, sep byte) ([]byte, []byte, error) {
	var v []byte
	if n >= 0 {
		if int64(len(b)) < n {
			return nil, nil, fmt.Errorf("%d bytes left, want %d", len(b), n)
		}
		v, b = b[:n], b[n:]
	}
	if len(b) == 0 || b[0] != sep {
		return nil, nil, fmt.Errorf("no separator after %d bytes", n)
	}
	return v, b[1:], nil
}

// runTool runs a client program with stdin and returns its output; a
// failure to run or a non-zero exit is an error holding stderr's tail.
func runTool(ctx context.Context, name string, args []string, stdin *bytes.Buffer) (stdout, stderr string, err error) {
	cmd := exec.CommandContext(ctx, name, args...)
	if stdin != nil {
		cmd.Stdin = stdin
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		return out.String(), errOut.String(), fmt.Errorf("%s %s: %w\n%s", name, strings.Join(args, " "), err, tail(errOut.String()))
	}
	return out.String(), errOut.String(), nil
}

// tail returns the last lines of a program's output for an error.
func tail(s string) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > 20 {
		lines = lines[len(lines)-20:]
	}
	return strings.Join(lines, "\n")
}
