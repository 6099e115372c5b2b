package main

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// groupPlan is the reset plan of one group.
type groupPlan struct {
	group   string
	offsets []plannedOffset
	// warnings are the plan's warnings, in Kafka's words.
	warnings []string
}

// writeResetCSV prints plans as --export does in Kafka's tool: one line
// per partition, topic,partition,offset when one group was named with
// --group, else group,topic,partition,offset. No header: --from-file
// reads the lines back.
func writeResetCSV(w io.Writer, plans []groupPlan, withGroup bool) error {
	cw := csv.NewWriter(w)
	for _, g := range plans {
		for _, p := range g.offsets {
			row := []string{p.topic, strconv.Itoa(int(p.partition)), strconv.FormatInt(p.offset, 10)}
			if withGroup {
				row = append([]string{g.group}, row...)
			}
			if err := cw.Write(row); err != nil {
				return fmt.Errorf("write csv: %w", err)
			}
		}
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return fmt.Errorf("write csv: %w", err)
	}
	return nil
}

// fileOffset is one line of a --from-file plan.
type fileOffset struct {
	topic     string
	partition int32
	offset    int64
}

// parseResetCSV reads a --from-file plan, as writeResetCSV prints it, into
// each group's offsets. Lines of three fields (topic,partition,offset)
// belong to single, the one group named with --group, and are refused
// without one; lines of four start with the group. A partition may appear
// once per group.
func parseResetCSV(r io.Reader, single string) (map[string][]fileOffset, error) {
	cr := csv.NewReader(r)
	cr.TrimLeadingSpace = true
	out := make(map[string][]fileOffset)
	seen := make(map[string]map[string]bool)
	for {
		row, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		line, _ := cr.FieldPos(0)
		var group string
		switch len(row) {
		case 3:
			if single == "" {
				return nil, fmt.Errorf("line %d: topic,partition,offset lines need exactly one --group; for several groups give group,topic,partition,offset", line)
			}
			group = single
		case 4:
			group, row = row[0], row[1:]
		default:
			return nil, fmt.Errorf("line %d: %d fields, want topic,partition,offset or group,topic,partition,offset", line, len(row))
		}
		p, perr := strconv.ParseInt(row[1], 10, 32)
		o, oerr := strconv.ParseInt(row[2], 10, 64)
		switch {
		case row[0] == "":
			return nil, fmt.Errorf("line %d: no topic", line)
		case perr != nil || p < 0:
			return nil, fmt.Errorf("line %d: bad partition %q", line, row[1])
		case oerr != nil || o < 0:
			return nil, fmt.Errorf("line %d: bad offset %q, want 0 or more", line, row[2])
		}
		key := fmt.Sprintf("%s-%d", row[0], p)
		if seen[group] == nil {
			seen[group] = make(map[string]bool)
		}
		if seen[group][key] {
			return nil, fmt.Errorf("line %d: partition %s of group '%s' appears twice", line, key, group)
		}
		seen[group][key] = true
		out[group] = append(out[group], fileOffset{topic: row[0], partition: int32(p), offset: o})
	}
	return out, nil
}
