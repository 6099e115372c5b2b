package main

// resetGroupJSON is the plan of one group in `weir groups reset-offsets
// --format json`.
type resetGroupJSON struct {
	Group string `json:"group"`
	// Executed is whether the new offsets were committed (--execute).
	Executed bool              `json:"executed"`
	Offsets  []resetOffsetJSON `json:"offsets"`
	// Warnings are the plan's warnings (also printed to stderr as WARN:
	// lines): an offset held within the log, a time past the last record.
	Warnings []string `json:"warnings"`
}

// resetOffsetJSON is a row of the plan: the text's TOPIC, PARTITION and
// NEW-OFFSET, and the offset the group had committed before the reset.
type resetOffsetJSON struct {
	Topic     string `json:"topic"`
	Partition int32  `json:"partition"`
	// CurrentOffset is the committed offset before the reset; null for none.
	CurrentOffset *int64 `json:"current_offset"`
	NewOffset     int64  `json:"new_offset"`
}

// resetPlanJSON is the plans of the groups, in the order the text prints
// them.
func resetPlanJSON(plans []groupPlan, executed bool) []resetGroupJSON {
	out := make([]resetGroupJSON, 0, len(plans))
	for _, g := range plans {
		j := resetGroupJSON{Group: g.group, Executed: executed, Offsets: make([]resetOffsetJSON, 0, len(g.offsets)),
			Warnings: append([]string{}, g.warnings...)}
		for _, p := range g.offsets {
			row := resetOffsetJSON{Topic: p.topic, Partition: p.partition, NewOffset: p.offset}
			if p.committed >= 0 {
				row.CurrentOffset = &p.committed
			}
			j.Offsets = append(j.Offsets, row)
		}
		out = append(out, j)
	}
	return out
}
